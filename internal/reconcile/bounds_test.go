package reconcile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

// everySecond makes a schedule fire every second.
func everySecond(s *schedule.Settings) { s.Kind, s.Expr, s.DSTRepeat = timetable.KindEvery, "1s", "" }

// recordSink remembers whether the reconcile sent it anything.
type recordSink struct{ sent int }

func (s *recordSink) Finding(reconcile.Finding) error     { s.sent++; return nil }
func (s *recordSink) Schedule(reconcile.Summary) error    { s.sent++; return nil }
func (s *recordSink) TZWarning(reconcile.TZWarning) error { s.sent++; return nil }

// TestBoundedCost: a reconcile whose range ends far past now, or whose
// schedules are expected to fire more than the bound in the range, is
// refused before anything is walked, naming the parameter and the bound;
// a bound raised past the estimate lets the same audit run.
func TestBoundedCost(t *testing.T) {
	w := newSQLiteWorld(t, advStart)
	w.create("secondly", "", "UTC", everySecond)
	w.clk.Advance(400 * 24 * time.Hour) // a year unplanned: 34.5 million firings behind
	now := w.clk.Now()
	for _, tc := range []struct {
		name  string
		opt   reconcile.Options
		field string // "": it runs
		says  string
	}{
		{"to far past now", reconcile.Options{From: now.Add(-time.Hour), To: now.Add(399 * 24 * time.Hour), Now: now},
			"to", "more than 24 hours after now"},
		{"to just past the bound", reconcile.Options{From: now.Add(-time.Hour), To: now.Add(reconcile.MaxAhead + time.Second), Now: now},
			"to", "the bound"},
		{"a year of every second", reconcile.Options{From: advStart, To: advStart.Add(399 * 24 * time.Hour)},
			"from", "more than 1000000 expected firings, the bound"},
		{"two hours over a lowered bound", reconcile.Options{From: advStart, To: advStart.Add(2 * time.Hour), MaxFirings: 7000},
			"from", "more than 7000 expected firings"},
		{"two hours under a raised bound", reconcile.Options{From: advStart, To: advStart.Add(2 * time.Hour), MaxFirings: 8000}, "", ""},
		{"to within the bound past now", reconcile.Options{From: now.Add(-time.Hour), To: now.Add(time.Hour), Now: now}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sink recordSink
			_, err := reconcile.Run(w.ctx, w.st, tc.opt, &sink)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var in *reconcile.InputError
			if !errors.As(err, &in) || in.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v; want an input error on %s saying %q", err, tc.field, tc.says)
			}
			if sink.sent != 0 {
				t.Errorf("refused after %d results: the walk had started", sink.sent)
			}
		})
	}
}

// TestLookaheadBounded: the firings walked past the range's end to settle
// a late run that straddles it count against the bound too: a late run
// two days long, seen from a range that ends inside it, is refused under
// a bound smaller than the run and settled under a larger one.
func TestLookaheadBounded(t *testing.T) {
	w := newSQLiteWorld(t, advStart)
	w.create("secondly", "", "UTC", func(s *schedule.Settings) { everySecond(s); lateOnce(s) })
	w.clk.Advance(2 * 24 * time.Hour)
	if _, err := w.e.PlanOnce(w.ctx); err != nil {
		t.Fatal(err)
	}
	from, to := advStart, advStart.Add(time.Hour)
	var sink recordSink
	_, err := reconcile.Run(w.ctx, w.st, reconcile.Options{From: from, To: to, MaxFirings: 10_000}, &sink)
	var in *reconcile.InputError
	if !errors.As(err, &in) || in.Field != "to" || !strings.Contains(err.Error(), "walked 10000 firings past it, the bound") {
		t.Fatalf("%v; want an input error on to naming the bound", err)
	}
	total, err := reconcile.Run(w.ctx, w.st, reconcile.Options{From: from, To: to, MaxFirings: 1_000_000}, &sink)
	if err != nil || total.Problem() || total[reconcile.MissedCounted] != 3600 {
		t.Fatalf("under a larger bound: %v, %v; want 3600 missed_counted and no problem", total, err)
	}
}

// TestScheddBounded: schedd reconcile estimates too, under its own
// bound (OfflineMaxFirings by default, --max-firings to change it): past
// it, exit 2 naming the flag and the bound, with nothing printed.
func TestScheddBounded(t *testing.T) {
	w := newSQLiteWorld(t, advStart)
	w.create("secondly", "", "UTC", everySecond)
	w.clk.Advance(400 * 24 * time.Hour)
	w.st.Close() // schedd reconcile takes the file's lock
	rfc := func(d time.Duration) string { return advStart.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--from", rfc(0), "--to", rfc(399 * 24 * time.Hour)}, 2, "--from: the range from 2026-06-01T00:00:00Z to 2027-07-05T00:00:00Z holds more than 20000000 expected firings, the bound"},
		{[]string{"--from", rfc(0), "--to", rfc(2 * time.Hour), "--max-firings", "7000"}, 2, "more than 7000 expected firings"},
		{[]string{"--from", rfc(0), "--to", rfc(2 * time.Hour), "--max-firings", "0"}, 2, "--max-firings 0: must be 1 or more"},
		{[]string{"--from", rfc(0), "--to", rfc(2 * time.Hour), "--max-firings", "8000"}, 0, ""}, // runs: never planned, every firing is pending
	} {
		code, out, errOut := w.schedd(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) || (code == 2) != (out == "") {
			t.Errorf("%v: exit %d, stderr %q, %d bytes out; want %d saying %q", tc.args, code, errOut, len(out), tc.code, tc.says)
		}
	}
}
