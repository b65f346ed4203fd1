package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// TestReconcileRoute: GET /v1/reconcile audits the store the daemon
// injected, over the last 24 hours by default or the range asked; bad
// input, an unknown schedule among it, names its parameter.
func TestReconcileRoute(t *testing.T) {
	t.Parallel()
	var st store.Store
	h := newHarness(t, func(c *Config, _ *[]sqlite.Option) {
		c.Reconcile = func(ctx context.Context, o reconcile.Options) (*api.ReconcileReport, error) {
			return reconcile.Report(ctx, st, o)
		}
	})
	st = h.st
	created := h.create(everyMinute("minutely"))
	for range 5 {
		h.plan(time.Minute)
	}
	var rep api.ReconcileReport
	h.ok(http.StatusOK, &rep, "GET", "/v1/reconcile", nil)
	if !rep.To.Equal(h.clk.Now()) || !rep.From.Equal(rep.To.Add(-24*time.Hour)) {
		t.Errorf("default range %s to %s, want the last 24 hours up to %s", rep.From, rep.To, h.clk.Now())
	}
	// Five firings planned, none claimed yet: pending, nothing wrong.
	if rep.Problem || len(rep.Schedules) != 1 || rep.Schedules[0].ScheduleID != created.Schedule.ScheduleID ||
		rep.Totals.Pending != 5 || rep.Schedules[0].Name != "minutely" {
		t.Fatalf("report %+v", rep)
	}
	q := "/v1/reconcile?schedule=minutely&from=" + start.Add(2*time.Minute).Format(time.RFC3339) + "&to=" + start.Add(3*time.Minute).Format(time.RFC3339)
	h.ok(http.StatusOK, &rep, "GET", q, nil)
	if rep.Totals.Pending != 2 || len(rep.Schedules) != 1 {
		t.Errorf("two minutes of one schedule: %+v", rep.Totals)
	}
	h.ok(http.StatusOK, &rep, "GET", "/v1/reconcile?tenant=another", nil)
	if len(rep.Schedules) != 0 || rep.Problem {
		t.Errorf("another tenant: %+v", rep)
	}
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "from", "GET", "/v1/reconcile?from=yesterday", nil)
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "from", "GET", "/v1/reconcile?from="+start.Format(time.RFC3339)+"&to="+start.Format(time.RFC3339), nil)
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "schedule", "GET", "/v1/reconcile?schedule=nope", nil)
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "schedule", "GET", "/v1/reconcile?schedule=sch_06f80unc029skosuqsmij5iqk0", nil)
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "from", "GET", "/v1/reconcile?from=2000-01-01T00:00:00Z", nil)
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "limit", "GET", "/v1/reconcile?limit=3", nil)
}

// TestReconcileRouteUnwired: a server without a reconciler says so.
func TestReconcileRouteUnwired(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fails(http.StatusServiceUnavailable, api.CodeUnavailable, "", "GET", "/v1/reconcile", nil)
}

// occurrenceReads is the daemon's store, counting the occurrence pages
// read: a reconcile's walk reads them, its estimate does not.
type occurrenceReads struct {
	store.Store
	n atomic.Int64
}

func (s *occurrenceReads) ListOccurrences(ctx context.Context, p store.ListOccurrencesParams) ([]record.Occurrence, error) {
	s.n.Add(1)
	return s.Store.ListOccurrences(ctx, p)
}

// TestReconcileBounded: a hostile range is refused quickly, 400
// invalid_argument naming the parameter and the bound, before any firing
// is walked: a to far past now (a year of pending firings of an
// every-second schedule), before the reconciler is even called; a year
// in the past of the same schedule, by the reconciler's estimate, before
// it reads an occurrence.
func TestReconcileBounded(t *testing.T) {
	t.Parallel()
	var st occurrenceReads
	var calls atomic.Int64
	h := newHarness(t, func(c *Config, _ *[]sqlite.Option) {
		c.Reconcile = func(ctx context.Context, o reconcile.Options) (*api.ReconcileReport, error) {
			calls.Add(1)
			return reconcile.Report(ctx, &st, o)
		}
	})
	st.Store = h.st
	h.create(api.ScheduleRequest{Name: "secondly", Queue: "q", Every: "1s"})
	h.clk.Advance(400 * 24 * time.Hour) // unplanned: a year of firings behind
	now := h.clk.Now()
	rfc := func(t time.Time) string { return t.Format(time.RFC3339) }
	for _, tc := range []struct {
		name, query, field, says string
		reconciled               int64 // calls of the reconciler
	}{
		{"to a year past now", "from=" + rfc(now) + "&to=" + rfc(now.Add(399*24*time.Hour)),
			"to", "more than 24 hours after now", 0},
		{"to alone past now", "to=" + rfc(now.Add(reconcile.MaxAhead+time.Minute)), "to", "the bound", 0},
		{"a year of every second", "from=" + rfc(start) + "&to=" + rfc(start.Add(399*24*time.Hour)),
			"from", "more than 1000000 expected firings, the bound", 1},
	} {
		calls.Store(0)
		st.n.Store(0)
		d := h.fails(http.StatusBadRequest, api.CodeInvalidArgument, tc.field, "GET", "/v1/reconcile?"+tc.query, nil)
		if !strings.Contains(d.Message, tc.says) {
			t.Errorf("%s: %q, want it to say %q", tc.name, d.Message, tc.says)
		}
		if calls.Load() != tc.reconciled || st.n.Load() != 0 {
			t.Errorf("%s: reconciler called %d times, %d occurrence pages read; want %d and none (nothing walked)",
				tc.name, calls.Load(), st.n.Load(), tc.reconciled)
		}
	}
	// Within the bounds, the same schedule audits.
	var rep api.ReconcileReport
	h.ok(http.StatusOK, &rep, "GET", "/v1/reconcile?from="+rfc(now.Add(-time.Hour))+"&to="+rfc(now.Add(time.Hour)), nil)
}
