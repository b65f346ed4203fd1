package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// TestDryRuns: CheckCreate, CheckBatch and CheckUpdate answer as Create,
// CreateBatch and Update would, conflicts and quotas included, and leave
// the store as it was: no schedule, no version, no audit entry, no
// occurrence canceled.
func TestDryRuns(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T10:00:00Z")
		h := open(t, start, func(c *Config) { c.TenantDefaults.ActiveSchedules = 2 })
		s1 := h.create(every("s1", "1m"))
		h.advance(0) // s1's first firings on the queue
		before := h.snapshot(s1.ScheduleID)

		sc, created, err := h.e.Control.CheckCreate(h.ctx, tenant, "", every("s2", "5m"))
		if err != nil || !created || sc == nil || sc.Name != "s2" || sc.State != record.ScheduleActive ||
			!sc.NextRunAt.Equal(start.Add(5*time.Minute)) {
			t.Fatalf("check create: %+v %v %v; want s2 would be created, first at +5m", sc, created, err)
		}
		if _, _, err := h.e.Control.CheckCreate(h.ctx, tenant, "", every("s1", "5m")); !errors.Is(err, ErrConflict) {
			t.Errorf("check create of a live name: %v, want a conflict", err)
		}
		outs, err := h.e.Control.CheckBatch(h.ctx, tenant, []BatchItem{{Settings: every("a", "1m")}, {Settings: every("b", "1m")}})
		if err != nil || !outs[0].Created || outs[1].Created {
			t.Fatalf("check batch: %+v %v; want a, then b over the quota", outs, err)
		}
		wantQuotaError(t, outs[1].Err, QuotaActiveSchedules, 2)

		upd := every("s1", "10m")
		res, err := h.e.Control.CheckUpdate(h.ctx, tenant, "s1", upd)
		if err != nil || res.Schedule.Version != s1.Version+1 || res.Schedule.Expr != "10m" || res.Canceled == 0 {
			t.Fatalf("check update: %+v %v; want version %d every 10m, its pending firings counted as canceled", res, err, s1.Version+1)
		}
		if _, err := h.e.Control.CheckUpdate(h.ctx, tenant, "nope", upd); !errors.Is(err, ErrNotFound) {
			t.Errorf("check update of no schedule: %v, want not found", err)
		}

		if after := h.snapshot(s1.ScheduleID); after != before {
			t.Errorf("a dry run changed the store:\n before %+v\n after  %+v", before, after)
		}
		// And the real thing still answers the same.
		if _, created, err := h.e.Control.Create(h.ctx, tenant, "", every("s2", "5m")); err != nil || !created {
			t.Fatalf("create after the dry run: %v %v", created, err)
		}
	})
}

// storeSnapshot is what a dry run must leave as it was.
type storeSnapshot struct {
	schedules, audit int
	version          int64
	expr             string
	open             int
}

// snapshot counts the tenant's schedules and audit entries and reads
// schedule id's version, definition and open occurrences.
func (h *harness) snapshot(id string) storeSnapshot {
	h.t.Helper()
	scs, err := h.e.Control.List(h.ctx, store.ListSchedulesParams{TenantID: tenant, Limit: store.MaxListLimit})
	if err != nil {
		h.t.Fatal(err)
	}
	rows, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: tenant, Limit: store.MaxListLimit})
	if err != nil {
		h.t.Fatal(err)
	}
	sc := h.schedule(id)
	open := 0
	for _, o := range h.occurrences(id) {
		if o.State == record.OccurrenceEnqueued {
			open++
		}
	}
	return storeSnapshot{schedules: len(scs), audit: len(rows), version: sc.Version, expr: sc.Expr, open: open}
}
