package occurrence

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

var bg = context.Background()

// TestJSONFields pins the JSON field names of occurrences and attempts:
// scripts depend on them.
func TestJSONFields(t *testing.T) {
	clitest.CheckJSONFields(t, clitest.Seeded, []clitest.JSONCase{
		{Name: "occurrences", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return occurrencesRun(&OccurrencesOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true})
		}, Keys: clitest.OccurrenceKeys},
		{Name: "attempts", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return attemptsRun(&AttemptsOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, ID: "occ_01"})
		}, Keys: []string{"attempt", "claimed_at", "error", "finished_at", "lease_expires_at", "result", "worker_id"}},
	})
}

// TestEmptyListsAreArrays: JSON for nothing is [], never null (occurrences and attempts).
func TestEmptyListsAreArrays(t *testing.T) {
	for name, run := range map[string]func(*cmdutil.Factory, *clitest.Stub) error{
		"occurrences": func(f *cmdutil.Factory, s *clitest.Stub) error {
			return occurrencesRun(&OccurrencesOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true})
		},
		"attempts": func(f *cmdutil.Factory, s *clitest.Stub) error {
			return attemptsRun(&AttemptsOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, ID: "x"})
		},
	} {
		f, out, _ := clitest.NewFactory(false)
		if err := run(f, clitest.NewStub()); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out.String()) != "[]" {
			t.Errorf("%s: %q, want []", name, out)
		}
	}
}

// pagedCases are occurrences and attempts over a stub holding n rows, 2 a
// page.
func pagedCases() []clitest.PagedCase {
	return []clitest.PagedCase{
		{Name: "occurrences", List: "occurrences", IDKey: "occurrence_id", Seed: func(s *clitest.Stub, n int) {
			for i := range n {
				o := clitest.SampleOccurrence()
				o.OccurrenceID, o.ScheduledFor = fmt.Sprintf("occ_%02d", i), clitest.FixedNow.Add(time.Duration(i)*time.Minute)
				s.Occurrences = append(s.Occurrences, o)
			}
		}, Run: func(f *cmdutil.Factory, s *clitest.Stub, json bool, p cmdutil.PageFlags) error {
			return occurrencesRun(&OccurrencesOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: json, Paging: p})
		}},
		{Name: "attempts", List: "attempts", IDKey: "attempt", Seed: func(s *clitest.Stub, n int) {
			for i := range n {
				s.Attempts = append(s.Attempts, api.Attempt{Attempt: int64(i + 1), WorkerID: "w", ClaimedAt: clitest.FixedNow, LeaseExpiresAt: clitest.FixedNow})
			}
		}, Run: func(f *cmdutil.Factory, s *clitest.Stub, json bool, p cmdutil.PageFlags) error {
			return attemptsRun(&AttemptsOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: json, ID: "occ_01", Paging: p})
		}},
	}
}

// TestPaging: occurrences and attempts show one page and say more exist,
// follow tokens and --all.
func TestPaging(t *testing.T) { clitest.CheckPaging(t, clitest.NewStub, pagedCases()) }

// TestReverse: occurrences reads newest first with --reverse (attempts
// has no --reverse).
func TestReverse(t *testing.T) { clitest.CheckReverse(t, pagedCases()[:1]) }

func TestSimpleCommandFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var occ *OccurrencesOptions
	if err := clitest.Exec(t, NewCmdOccurrences(f, func(o *OccurrencesOptions) error { occ = o; return nil }),
		"--schedule", "nightly", "--state", "dead", "--queue", "q", "--limit", "5"); err != nil ||
		occ.Schedule != "nightly" || occ.State != "DEAD" || occ.Queue != "q" || occ.Paging.Limit != 5 {
		t.Errorf("occurrences: %v %+v", err, occ)
	}
	clitest.WantErr(t, clitest.Exec(t, NewCmdOccurrences(f, func(*OccurrencesOptions) error { return nil }), "--state", "done"), "--state \"done\"", cmdutil.ExitInvalid)
	clitest.WantErr(t, clitest.Exec(t, NewCmdOccurrences(f, func(*OccurrencesOptions) error { return nil }), "--limit", "-3"), "--limit -3", cmdutil.ExitInvalid)

	var at *AttemptsOptions
	if err := clitest.Exec(t, NewCmdAttempts(f, func(o *AttemptsOptions) error { at = o; return nil }), "occ_1"); err != nil || at.ID != "occ_1" {
		t.Errorf("attempts: %v %+v", err, at)
	}
}

func TestPagingFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var oc *OccurrencesOptions
	if err := clitest.Exec(t, NewCmdOccurrences(f, func(o *OccurrencesOptions) error { oc = o; return nil }),
		"--limit", "50", "--all", "--reverse", "--page", "tok"); err != nil || oc.Paging != (cmdutil.PageFlags{Limit: 50, All: true, Reverse: true, Page: "tok"}) {
		t.Errorf("occurrences: %v %+v", err, oc)
	}
	var at *AttemptsOptions
	if err := clitest.Exec(t, NewCmdAttempts(f, func(o *AttemptsOptions) error { at = o; return nil }), "occ_1", "--limit", "3", "--page", "p"); err != nil ||
		at.Paging != (cmdutil.PageFlags{Limit: 3, Page: "p"}) {
		t.Errorf("attempts: %v %+v", err, at)
	}
	clitest.WantErr(t, clitest.Exec(t, NewCmdAttempts(f, func(*AttemptsOptions) error { return nil }), "occ_1", "--limit", "-1"), "--limit -1", cmdutil.ExitInvalid)
}

func TestWatchFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var oc *OccurrencesOptions
	if err := clitest.Exec(t, NewCmdOccurrences(f, func(o *OccurrencesOptions) error { oc = o; return nil }), "-w", "--schedule", "n"); err != nil ||
		!oc.Watch.Watch {
		t.Errorf("occurrences -w: %v %+v", err, oc)
	}
}

// TestDueWait: a not-yet-due occurrence reads "in ...", a due one nobody
// claimed "waiting ...", a due retry "due", the rest "-".
func TestDueWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    api.Occurrence
		want string
	}{
		{"not yet due", api.Occurrence{State: "ENQUEUED", AvailableAt: clitest.FixedNow.Add(12 * time.Second)}, "in 12s"},
		{"not yet due, minutes", api.Occurrence{State: "ENQUEUED", AvailableAt: clitest.FixedNow.Add(3*time.Minute + 400*time.Millisecond)}, "in 3m0s"},
		{"scheduled", api.Occurrence{State: "SCHEDULED", AvailableAt: clitest.FixedNow.Add(time.Hour)}, "in 1h0m"},
		{"waiting", api.Occurrence{State: "ENQUEUED", Due: true, AvailableAt: clitest.FixedNow.Add(-3 * time.Minute), Waiting: clitest.SP("3m0.2s")}, "waiting 3m0s"},
		{"due retry", api.Occurrence{State: "RETRY_WAIT", Due: true, AvailableAt: clitest.FixedNow.Add(-time.Second)}, "due"},
		{"retry later", api.Occurrence{State: "RETRY_WAIT", AvailableAt: clitest.FixedNow.Add(30 * time.Second)}, "in 30s"},
		{"our clock behind schedd's", api.Occurrence{State: "ENQUEUED", AvailableAt: clitest.FixedNow.Add(-time.Second)}, "due"},
		{"running", api.Occurrence{State: "RUNNING", Due: true}, "-"},
		{"done", api.Occurrence{State: "SUCCEEDED", Due: true}, "-"},
	} {
		if got := dueWait(tc.o, clitest.FixedNow); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestOccurrencesTable: the columns on a terminal, within 120 columns for
// real ids, with manual occurrences marked.
func TestOccurrencesTable(t *testing.T) {
	s := clitest.NewStub()
	s.Occurrences = []api.Occurrence{
		{OccurrenceID: "occ_14v0pdc0abcdefghijklmnop", ScheduledFor: clitest.FixedNow.Add(-2 * time.Minute), AvailableAt: clitest.FixedNow.Add(-2 * time.Minute),
			State: "SUCCEEDED", Queue: "reports", AttemptCount: 1, Due: true, ScheduleLag: clitest.SP("-59.9s"), DeliveryLag: clitest.SP("1.234s")},
		{OccurrenceID: "occ_14v0pdc1abcdefghijklmnop", ScheduledFor: clitest.FixedNow.Add(-time.Minute), AvailableAt: clitest.FixedNow.Add(-time.Minute),
			State: "ENQUEUED", Queue: "reports", Due: true, ScheduleLag: clitest.SP("84.001s"), Waiting: clitest.SP("1m0s")},
		{OccurrenceID: "occ_14v0pdc2abcdefghijklmnop", ScheduledFor: clitest.FixedNow.Add(12 * time.Second), AvailableAt: clitest.FixedNow.Add(12 * time.Second),
			State: "ENQUEUED", Queue: "reports", ScheduleLag: clitest.SP("-1m0s")},
		{OccurrenceID: "occ_zabcdefghijklmnopqrstuvwx", ScheduledFor: clitest.FixedNow, AvailableAt: clitest.FixedNow,
			State: "SKIPPED_OVERLAP", Queue: "reports", Due: true, ScheduleLag: clitest.SP("0s"), Manual: true},
	}
	f, out, _ := clitest.NewFactory(true)
	if err := occurrencesRun(&OccurrencesOptions{IO: f, API: clitest.APIOf(s), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	clitest.Golden(t, "occurrences-tty.golden", out.String())
	for _, line := range strings.Split(out.String(), "\n") {
		if len([]rune(line)) > 120 {
			t.Errorf("wider than 120 columns: %q", line)
		}
	}
	f, out, _ = clitest.NewFactory(false)
	if err := occurrencesRun(&OccurrencesOptions{IO: f, API: clitest.APIOf(s), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	if want := "occ_zabcdefghijklmnopqrstuvwx\t2027-03-13T12:00:00Z\tSKIPPED_OVERLAP\t-\tmanual\t-\t0\treports\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("plain:\n%s\nwant last row %q", out, want)
	}
}

// TestWatchSurvivesErrors: a failed poll after the first shows the error
// on stderr (once, however often it repeats) and the watch goes on; the
// next answer is drawn again. (A failed first poll ends the watch: see
// status's TestWatchFirstPollFails.)
func TestWatchSurvivesErrors(t *testing.T) {
	occ := clitest.SampleOccurrence()
	down := &client.DialError{Addr: "unix:/run/s.sock", Err: errors.New("connection refused")}
	s := &clitest.SeqAPI{Stub: clitest.NewStub(), Seq: []any{[]api.Occurrence{occ}, down, down, []api.Occurrence{occ}}}
	f, out, errOut := clitest.NewFactory(false)
	w := clitest.StartWatch(t, func(ctx context.Context, wf cmdutil.WatchFlags) error {
		return occurrencesRun(&OccurrencesOptions{IO: f, API: func() (cmdutil.API, error) { return s, nil }, Ctx: ctx, Watch: wf})
	})
	w.Ticks(3)
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	row := "OCCURRENCE\tSCHEDULED FOR\tSTATE\tDUE/WAIT\tSCHED LAG\tDELIV LAG\tTRIES\tQUEUE\n" +
		"occ_01\t2027-03-13T12:00:00Z\tSUCCEEDED\t-\tahead\t1s\t1\treports\n"
	if want := row + "\n" + row; out.String() != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if n := strings.Count(errOut.String(), "schedctl: occurrences: "); n != 1 || !strings.Contains(errOut.String(), "(asking again every 2s)") {
		t.Errorf("stderr %q, want the error once", errOut)
	}

}
