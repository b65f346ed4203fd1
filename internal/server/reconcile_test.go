package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/reconcile"
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
