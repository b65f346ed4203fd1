package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testVersions pins the version history: a create writes the first row
// with the schedule, every new version closes the previous row and writes
// its own in the same transaction, and the listing pages by (schedule,
// version) with its filters.
func testVersions(t *testing.T, open func(t *testing.T) Store) {
	// The history of one schedule through its versions, the first
	// written apart (InsertSchedule, InsertScheduleVersion) or with the
	// schedule by a bulk create (InsertSchedules, which may keep it in
	// the schedule's row until the second version): the rows read back
	// are the same.
	for _, how := range []string{"apart", "with the schedule"} {
		t.Run("WrittenWithEachVersion/"+how, func(t *testing.T) { t.Parallel(); testVersionsWritten(t, open(t), how == "apart") })
	}

	// The planner completing a schedule (its cursor gone, COMPLETED, in
	// the same version) changes nothing of the first version's row, kept
	// with the schedule or not: it says what was written.
	t.Run("FirstVersionOutlivesThePlanner", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		var want []store.ScheduleVersion
		lease := mustAcquire(t, s, 7, "node-a", at(0))
		for i, apart := range []bool{false, true} {
			sc := NewSchedule("tenant-a", fmt.Sprintf("sch_done_%d", i))
			sc.Name, sc.IdempotencyKey, sc.NextRunAt = sc.ScheduleID, "", at(time.Minute)
			first := store.NewScheduleVersion(sc, sc.CreatedAt, at(0))
			if apart {
				first.WrittenAt = at(time.Second)
			}
			inTx(t, s, func(tx store.Tx) error {
				return tx.InsertSchedules(ctx, []store.NewSchedule{{Schedule: sc, First: first}})
			})
			if res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: []store.PlanItem{{
				TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: 1, Cursor: at(time.Minute),
				State: record.ScheduleCompleted, Occurrences: []record.Occurrence{NewOccurrence(sc, at(time.Minute))}}}}); err != nil || res.Applied != 1 {
				t.Fatalf("CommitPlan: %+v, %v", res, err)
			}
			if got := mustGetSchedule(t, s, "tenant-a", sc.ScheduleID); got.State != record.ScheduleCompleted || got.Version != 1 {
				t.Fatalf("after the planner: %s, version %d; want COMPLETED, version 1", got.State, got.Version)
			}
			want = append(want, first)
		}
		assertVersions(t, s, store.ListScheduleVersionsParams{TenantID: "tenant-a"}, want...)
	})

	t.Run("ListPagesAndFilters", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		var all, tenantB []store.ScheduleVersion
		for i, tenant := range []string{"tenant-a", "tenant-b", "tenant-a"} {
			sc := NewSchedule(tenant, fmt.Sprintf("sch_page_%d", i))
			sc.IdempotencyKey = ""
			for v := int64(1); v <= 3; v++ {
				sc.Version = v
				row := store.NewScheduleVersion(sc, at(time.Duration(v)*time.Second), at(0))
				if v < 3 {
					row.SupersededAt, row.EndsAt = at(time.Duration(v+1)*time.Second), time.Time{}
				}
				if err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.InsertScheduleVersion(ctx, row) }); err != nil {
					t.Fatal(err)
				}
				all = append(all, row)
				if tenant == "tenant-b" {
					tenantB = append(tenantB, row)
				}
			}
			// Between each two, a schedule made by a bulk create: its
			// first version kept with it (as a store may keep it, in its
			// row), or, the last one's written at another time, apart.
			made := NewSchedule(tenant, fmt.Sprintf("sch_page_%da", i))
			made.Name, made.IdempotencyKey = made.ScheduleID, ""
			first := store.NewScheduleVersion(made, made.CreatedAt, at(time.Second))
			if i == 2 {
				first.WrittenAt = at(time.Minute)
			}
			inTx(t, s, func(tx store.Tx) error {
				return tx.InsertSchedules(ctx, []store.NewSchedule{{Schedule: made, First: first}})
			})
			all = append(all, first)
			if tenant == "tenant-b" {
				tenantB = append(tenantB, first)
			}
		}
		page1, made1 := tenantB[:3], tenantB[3]
		for _, limit := range []int{1, 2, 4, 100} {
			var got []store.ScheduleVersion
			p := store.ListScheduleVersionsParams{Limit: limit}
			for {
				page, err := s.ListScheduleVersions(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, page...)
				if len(page) < limit {
					break
				}
				last := page[len(page)-1]
				p.AfterScheduleID, p.AfterVersion = last.ScheduleID, last.Version
			}
			if !reflect.DeepEqual(got, all) {
				t.Fatalf("pages of %d: %d rows %v, want %d", limit, len(got), versionKeys(got), len(all))
			}
		}
		assertVersions(t, s, store.ListScheduleVersionsParams{TenantID: "tenant-b"}, tenantB...)
		assertVersions(t, s, store.ListScheduleVersionsParams{TenantID: "tenant-a", ScheduleID: "sch_page_1"})
		// A schedule's rows after a keyset position: its own later
		// versions, all of them from before it, none from after it.
		assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_page_1", AfterScheduleID: "sch_page_1", AfterVersion: 1}, page1[1:]...)
		assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_page_1", AfterScheduleID: "sch_page_0", AfterVersion: 9}, page1...)
		assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_page_1", AfterScheduleID: "sch_page_2"})
		assertVersions(t, s, store.ListScheduleVersionsParams{AfterScheduleID: "sch_page_1", AfterVersion: 2}, all[6:]...)
		// The same of a schedule whose first version was kept with it.
		assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_page_1a"}, made1)
		assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_page_1a", AfterScheduleID: "sch_page_1", AfterVersion: 9}, made1)
		assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_page_1a", AfterScheduleID: "sch_page_1a", AfterVersion: 0}, made1)
		assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_page_1a", AfterScheduleID: "sch_page_1a", AfterVersion: 1})
		assertVersions(t, s, store.ListScheduleVersionsParams{TenantID: "tenant-a", ScheduleID: "sch_page_1a"})
		assertVersions(t, s, store.ListScheduleVersionsParams{AfterScheduleID: "sch_page_0", AfterVersion: 3}, all[3:]...)
		assertVersions(t, s, store.ListScheduleVersionsParams{AfterScheduleID: "sch_page_0a", AfterVersion: 1}, all[4:]...)
	})
}

// testVersionsWritten runs a schedule's history (see testVersions) on s;
// apart: its first version written apart from it, else with it
// (InsertSchedules).
func testVersionsWritten(t *testing.T, s Store, apart bool) {
	ctx := t.Context()
	sc := NewSchedule("tenant-a", "sch_hist")
	sc.NextRunAt = at(time.Minute)
	created := store.NewScheduleVersion(sc, sc.CreatedAt, at(0))
	if err := store.InTx(ctx, s, func(tx store.Tx) error {
		if !apart {
			return tx.InsertSchedules(ctx, []store.NewSchedule{{Schedule: sc, First: created}})
		}
		if err := tx.InsertSchedule(ctx, sc); err != nil {
			return err
		}
		return tx.InsertScheduleVersion(ctx, created)
	}); err != nil {
		t.Fatal(err)
	}
	assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", "sch_hist"), sc)
	assertVersions(t, s, store.ListScheduleVersionsParams{}, created)

	// The planner plans a firing, kept, and one after it, canceled
	// by the pause that follows; its cursor moves on to 3 min. The
	// pause closes version 1: its firings end at the one kept, and
	// the planner had got to 3 min under it (the cursor the planner
	// advanced, not the one the version was written with). Version 2
	// fires nothing.
	kept := NewOccurrence(sc, at(time.Minute))
	kept.State, kept.Lane, kept.FinishedAt = record.OccurrenceMissed, record.LaneCatchUp, at(time.Minute) // history: not canceled
	ahead := NewOccurrence(sc, at(2*time.Minute))
	ahead.State = record.OccurrenceEnqueued
	lease := mustAcquire(t, s, sc.Shard, "node-a", at(0))
	if res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: []store.PlanItem{{
		TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: 1, Cursor: at(time.Minute), NextRunAt: at(3 * time.Minute),
		State: record.ScheduleActive, Occurrences: []record.Occurrence{kept, ahead}}}}); err != nil || res.Applied != 1 {
		t.Fatalf("CommitPlan: %+v, %v", res, err)
	}
	paused := *mustGetSchedule(t, s, "tenant-a", "sch_hist")
	paused.State, paused.NextRunAt = record.SchedulePaused, time.Time{}
	if res, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &paused, PrevVersion: 1, Now: at(90 * time.Second)}); err != nil || res.Canceled != 1 {
		t.Fatalf("pause: %+v, %v; want the firing planned ahead canceled", res, err)
	}
	v1 := created
	v1.SupersededAt, v1.EndsAt, v1.PlannedUntil = at(90*time.Second), at(time.Minute), at(3*time.Minute)
	v2 := store.NewScheduleVersion(&paused, at(90*time.Second), time.Time{})
	v2.Version = 2
	assertVersions(t, s, store.ListScheduleVersionsParams{TenantID: "tenant-a"}, v1, v2)

	// A resume searches after the later of its time and the firing
	// kept: that bound is recorded, with the cursor it found. The
	// paused version records no planning: the planner skips it.
	resumed := *mustGetSchedule(t, s, "tenant-a", "sch_hist")
	resumed.State = record.ScheduleActive
	if _, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &resumed, PrevVersion: 2, Now: at(30 * time.Second),
		StartsAfter: func(last time.Time) time.Time { return last },
		Next:        func(last time.Time) time.Time { return last.Add(time.Hour) }}); err != nil {
		t.Fatal(err)
	}
	v2.SupersededAt, v2.EndsAt = at(30*time.Second), at(time.Minute)
	resumed.Version, resumed.NextRunAt = 3, at(time.Minute+time.Hour)
	v3 := store.NewScheduleVersion(&resumed, at(30*time.Second), at(time.Minute))
	assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_hist"}, v1, v2, v3)

	// An update of the resumed version, never planned: the planner
	// had got to its first firing.
	updated := *mustGetSchedule(t, s, "tenant-a", "sch_hist")
	if _, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &updated, PrevVersion: 3, Now: at(time.Hour),
		Next: func(last time.Time) time.Time { return last.Add(2 * time.Hour) }}); err != nil {
		t.Fatal(err)
	}
	v3.SupersededAt, v3.EndsAt, v3.PlannedUntil = at(time.Hour), at(time.Minute), at(time.Minute+time.Hour)
	updated.Version, updated.NextRunAt = 4, at(time.Minute+2*time.Hour)
	v4 := store.NewScheduleVersion(&updated, at(time.Hour), at(time.Minute))
	assertVersions(t, s, store.ListScheduleVersionsParams{ScheduleID: "sch_hist"}, v1, v2, v3, v4)
	resumed = updated

	// A change that loses its race writes no history.
	stale := resumed
	if _, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &stale, PrevVersion: 1, Now: at(time.Hour)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a change of version 1 when 4 is stored: %v, want ErrConflict", err)
	}
	assertVersions(t, s, store.ListScheduleVersionsParams{}, v1, v2, v3, v4)

	// A row is written once.
	err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.InsertScheduleVersion(ctx, v4) })
	wantErr(t, "the same version row twice", err, store.ErrConflict)
	// Closing a row that does not exist, or again, writes nothing.
	if err := store.InTx(ctx, s, func(tx store.Tx) error {
		if err := tx.CloseScheduleVersion(ctx, "sch_none", 1, at(0), at(0), at(0)); err != nil {
			return err
		}
		return tx.CloseScheduleVersion(ctx, "sch_hist", 1, at(time.Hour), at(time.Hour), at(time.Hour))
	}); err != nil {
		t.Fatal(err)
	}
	assertVersions(t, s, store.ListScheduleVersionsParams{}, v1, v2, v3, v4)
}

func assertVersions(t *testing.T, s Store, p store.ListScheduleVersionsParams, want ...store.ScheduleVersion) {
	t.Helper()
	got, err := s.ListScheduleVersions(t.Context(), p)
	if err != nil {
		t.Fatalf("ListScheduleVersions(%+v): %v", p, err)
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListScheduleVersions(%+v):\n got %+v\nwant %+v", p, got, want)
	}
}

func versionKeys(vs []store.ScheduleVersion) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s/v%d", v.ScheduleID, v.Version))
	}
	return out
}
