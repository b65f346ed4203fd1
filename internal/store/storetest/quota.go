package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testQuotas pins the statements of tenants' quotas and of the pacing
// (store.QuotaTx, store.PacingStore): a tenant's live count follows every
// write of its schedules (insert, a new version, the planner completing
// one), per tenant; the latest catch-up slot is that of a catch-up
// occurrence still waiting and never claimed.
func testQuotas(t *testing.T, open func(t *testing.T) Store) {
	t.Run("LiveSchedules", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		live := func(tenantID string) int64 {
			t.Helper()
			var n int64
			inTx(t, s, func(tx store.Tx) (err error) {
				if err := tx.LockTenantQuota(ctx, tenantID); err != nil {
					return err
				}
				n, err = tx.LiveSchedules(ctx, tenantID)
				return err
			})
			return n
		}
		if n := live("tenant-a"); n != 0 {
			t.Fatalf("live schedules of a tenant with none: %d", n)
		}
		var scs []*record.Schedule
		for i, shard := range []int{1, 2, 2, 3} {
			scs = append(scs, planSchedule(t, s, "tenant-a", fmt.Sprintf("sch_live_%d", i), shard, at(time.Minute)))
		}
		paused := NewSchedule("tenant-a", "sch_live_paused")
		paused.State, paused.NextRunAt = record.SchedulePaused, time.Time{}
		mustInsertSchedule(t, s, paused)
		done := NewSchedule("tenant-a", "sch_live_done")
		done.State, done.NextRunAt = record.ScheduleCompleted, time.Time{}
		mustInsertSchedule(t, s, done)
		planSchedule(t, s, "tenant-b", "sch_live_b", 1, at(time.Minute))
		if a, b := live("tenant-a"), live("tenant-b"); a != 5 || b != 1 {
			t.Fatalf("live: tenant-a %d, tenant-b %d; want 5 (4 ACTIVE, 1 PAUSED), 1", a, b)
		}

		// A new version that cancels one, and one that pauses another.
		for _, c := range []struct {
			sc    *record.Schedule
			state record.ScheduleState
		}{{scs[0], record.ScheduleCanceled}, {scs[1], record.SchedulePaused}} {
			next := *c.sc
			next.State, next.NextRunAt = c.state, time.Time{}
			inTx(t, s, func(tx store.Tx) error { _, err := tx.WriteScheduleVersion(ctx, &next, 1); return err })
		}
		if n := live("tenant-a"); n != 4 {
			t.Fatalf("live after a cancel and a pause: %d, want 4", n)
		}
		// The planner completes one.
		lease := mustAcquire(t, s, 2, "node-a", at(0))
		if _, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: []store.PlanItem{{
			TenantID: "tenant-a", ScheduleID: scs[2].ScheduleID, Version: 1, Cursor: at(time.Minute), State: record.ScheduleCompleted,
		}}}); err != nil {
			t.Fatal(err)
		}
		if n := live("tenant-a"); n != 3 {
			t.Fatalf("live after the planner completed one: %d, want 3", n)
		}
		// A rolled-back create leaves the count as it was.
		err := store.InTx(ctx, s, func(tx store.Tx) error {
			sc := NewSchedule("tenant-a", "sch_live_rolled_back")
			if err := tx.InsertSchedule(ctx, sc); err != nil {
				return err
			}
			return errRollBack
		})
		if !errors.Is(err, errRollBack) {
			t.Fatal(err)
		}
		if n := live("tenant-a"); n != 3 {
			t.Fatalf("live after a rolled-back create: %d, want 3", n)
		}
	})

	t.Run("LatestCatchUpSlot", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		if got, err := s.LatestCatchUpSlot(ctx, "tenant-a"); err != nil || !got.IsZero() {
			t.Fatalf("LatestCatchUpSlot with none: %v, %v; want zero", got, err)
		}
		sc := planSchedule(t, s, "tenant-a", "sch_catchup", 1, at(time.Minute))
		other := planSchedule(t, s, "tenant-b", "sch_catchup_b", 1, at(time.Minute))
		occ := func(sc *record.Schedule, f, avail time.Duration, lane record.Lane, state record.OccurrenceState) record.Occurrence {
			o := NewOccurrence(sc, at(f))
			o.Lane, o.State, o.AvailableAt = lane, state, at(avail)
			if state == record.OccurrenceMissed {
				o.FinishedAt = at(avail)
			}
			return o
		}
		mustInsertOccurrences(t, s, 5,
			occ(sc, 0, 3*time.Second, record.LaneCatchUp, record.OccurrenceEnqueued),
			occ(sc, time.Second, 5*time.Second, record.LaneCatchUp, record.OccurrenceEnqueued),
			occ(sc, 2*time.Second, 9*time.Second, record.LaneStrict, record.OccurrenceEnqueued), // not catch-up
			occ(sc, 3*time.Second, 8*time.Second, record.LaneCatchUp, record.OccurrenceMissed),  // not waiting
			occ(other, 0, 7*time.Second, record.LaneCatchUp, record.OccurrenceEnqueued),         // another tenant
		)
		if got, err := s.LatestCatchUpSlot(ctx, "tenant-a"); err != nil || !got.Equal(at(5*time.Second)) {
			t.Fatalf("LatestCatchUpSlot = %v, %v; want %v", got, err, at(5*time.Second))
		}
	})
}

var errRollBack = errors.New("storetest: roll back")
