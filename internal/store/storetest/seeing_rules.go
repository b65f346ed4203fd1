package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// testSeeingRules pins the rest of what the seeing parts of the contract
// say: the backlog's cursors of every shard, that a manual occurrence does
// not move an update's start, and the requests a store refuses without
// writing.
func testSeeingRules(t *testing.T, open func(t *testing.T) Store) {
	// The snapshot counts the planner's cursors of every shard: the first,
	// the last and those between, with gaps between the shards, however
	// many schedules a shard has outside the window.
	t.Run("SnapshotCursorsOfEveryShard", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		now := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
		want := make([]int64, 60)
		for i, shard := range []int{0, 1, 5, 6, 200, 1023} {
			for j, next := range []time.Duration{
				time.Duration(i) * time.Minute,                // in the window
				59*time.Minute + time.Duration(i)*time.Second, // its last minute
				-time.Second, // overdue: in no minute
				time.Hour,    // past the window
			} {
				sc := NewSchedule("tenant-a", fmt.Sprintf("sch_%d_%d", shard, j))
				sc.Shard, sc.NextRunAt = shard, now.Add(next)
				if err := s.InsertSchedule(t.Context(), sc); err != nil {
					t.Fatal(err)
				}
				if next >= 0 && next < time.Hour {
					want[next/time.Minute]++
				}
			}
		}
		snap, err := s.Snapshot(t.Context(), store.SnapshotParams{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(snap.DueBacklog, want) {
			t.Errorf("due backlog\n got %v\nwant %v", snap.DueBacklog, want)
		}
	})

	// A manual occurrence is not a firing of the timetable: an update
	// starts the new version after the latest timetable firing kept,
	// whatever was triggered by hand since (its time is when someone
	// asked, possibly later than firings the planner has not written yet).
	t.Run("UpdateStartsAfterTimetableNotTriggers", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		at := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
		sc := NewSchedule("tenant-a", "sch_a")
		if err := s.InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		planned := NewOccurrence(sc, at)
		planned.State = store.OccurrenceSucceeded
		manual := NewOccurrence(sc, at.Add(3*time.Hour))
		manual.TriggerKey = "by hand"
		manual.OccurrenceID = store.ManualOccurrenceID(sc.ScheduleID, manual.TriggerKey)
		mustInsertOccurrences(t, s, 2, planned, manual)
		var lastKept time.Time
		_, err := s.UpdateSchedule(ctx, store.UpdateScheduleParams{Schedule: sc, PrevVersion: 1, Now: at.Add(4 * time.Hour),
			NextRunAt: func(last time.Time) time.Time { lastKept = last; return last.Add(time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		if !lastKept.Equal(at) {
			t.Errorf("the update started after %v, want the timetable's firing at %v", lastKept, at)
		}
	})

	// Requests the engine never sends are refused, and write nothing.
	t.Run("RefusesBadRequests", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		now := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
		for _, tc := range []struct{ buckets, want int }{{0, 60}, {1, 1}, {1440, 1440}, {-1, -1}, {1441, -1}} {
			snap, err := s.Snapshot(ctx, store.SnapshotParams{Now: now, Buckets: tc.buckets})
			switch {
			case tc.want < 0 && err == nil:
				t.Errorf("Snapshot with %d buckets: no error", tc.buckets)
			case tc.want >= 0 && (err != nil || len(snap.DueBacklog) != tc.want):
				t.Errorf("Snapshot with %d buckets: %d, %v; want %d", tc.buckets, len(snap.DueBacklog), err, tc.want)
			}
		}
		for _, n := range []int{0, -1, store.MaxListLimit + 1} {
			if _, err := s.PurgeDead(ctx, store.PurgeDeadParams{TenantID: "tenant-a", Now: now, Limit: n}); err == nil {
				t.Errorf("PurgeDead with limit %d: no error", n)
			}
		}
		kept := store.StatMinute{NodeID: "node-a", Minute: now, Data: []byte("kept")}
		if err := s.WriteStatMinutes(ctx, []store.StatMinute{kept}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		for name, bad := range map[string]store.StatMinute{
			"no node":    {Minute: now, Data: []byte("x")},
			"64 KiB + 1": {NodeID: "node-b", Minute: now, Data: make([]byte, 64<<10+1)},
		} {
			// The bad row fails the write before the delete (here of
			// every row) runs.
			good := store.StatMinute{NodeID: "node-c", Minute: now, Data: []byte("c")}
			if err := s.WriteStatMinutes(ctx, []store.StatMinute{good, bad}, now.Add(time.Hour)); err == nil {
				t.Errorf("WriteStatMinutes with %s: no error", name)
			}
		}
		got, err := s.ReadStatMinutes(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].NodeID != kept.NodeID || string(got[0].Data) != "kept" {
			t.Errorf("after refused writes: %+v, want only %+v", got, kept)
		}
	})
}
