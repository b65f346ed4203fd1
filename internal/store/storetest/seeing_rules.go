package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

// testSeeingRules pins the rest of what the seeing parts of the contract
// say: the backlog's cursors of every shard, that a manual occurrence does
// not move an update's start, the requests a store refuses without
// writing, the first firing a schedule has not delivered yet, the finish
// sent again, and a backlog counted from a minute's start.
func testSeeingRules(t *testing.T, open func(t *testing.T) Store) {
	t.Run("FirstUndelivered", func(t *testing.T) { t.Parallel(); testFirstUndelivered(t, open) })
	t.Run("FinishRepeated", func(t *testing.T) { t.Parallel(); testFinishRepeated(t, open) })
	t.Run("SnapshotBacklogFrom", func(t *testing.T) { t.Parallel(); testSnapshotBacklogFrom(t, open) })

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
		planned.State = record.OccurrenceSucceeded
		manual := NewOccurrence(sc, at.Add(3*time.Hour))
		manual.TriggerKey = "by hand"
		manual.OccurrenceID = record.ManualOccurrenceID(sc.ScheduleID, manual.TriggerKey)
		mustInsertOccurrences(t, s, 2, planned, manual)
		var lastKept time.Time
		_, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: sc, PrevVersion: 1, Now: at.Add(4 * time.Hour),
			Next: func(last time.Time) time.Time { lastKept = last; return last.Add(time.Hour) }})
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
		// The backlog counts from at or before now, never after.
		for _, from := range []time.Time{now.Add(-time.Hour), now} {
			if _, err := s.Snapshot(ctx, store.SnapshotParams{Now: now, BacklogFrom: from}); err != nil {
				t.Errorf("Snapshot with the backlog from %v, now %v: %v", from, now, err)
			}
		}
		if _, err := s.Snapshot(ctx, store.SnapshotParams{Now: now, BacklogFrom: now.Add(time.Millisecond)}); err == nil {
			t.Error("Snapshot with the backlog from after now: no error")
		}
		for _, n := range []int{0, -1, store.MaxListLimit + 1} {
			if _, err := engine.PurgeDead(ctx, s, store.PurgeDeadParams{TenantID: "tenant-a", Now: now, Limit: n}); err == nil {
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

// testFirstUndelivered: FirstUndelivered is the schedule's earliest
// firing of the version asked that no worker has been handed yet (ENQUEUED,
// never claimed, of the timetable), whatever else the schedule has, open
// or finished; zero when there is none, and for another tenant.
func testFirstUndelivered(t *testing.T, open func(t *testing.T) Store) {
	s, ctx := open(t), t.Context()
	sc := NewSchedule("tenant-a", "sch_undelivered")
	sc.Queue, sc.OverlapPolicy, sc.Version = jobsQueue, record.OverlapAllow, 2
	mustInsertSchedule(t, s, sc)
	other := queueSchedule(t, s, "tenant-a", "sch_undelivered_other", record.OverlapAllow)

	// Every occurrence but the two never claimed ones is scheduled earlier
	// than both, and none of them is claimable before 10 h: the claims
	// below take the two alone.
	later := at(10 * time.Hour)
	occ := func(sc *record.Schedule, minute int, st record.OccurrenceState, attempts int) record.Occurrence {
		o := NewOccurrence(sc, at(time.Duration(minute)*time.Minute))
		o.State, o.AttemptCount, o.AvailableAt = st, attempts, later
		if st != record.OccurrenceScheduled {
			o.EnqueuedAt = o.ScheduledFor
		}
		if attempts > 0 {
			o.FirstClaimedAt = o.ScheduledFor.Add(time.Second)
		}
		switch st {
		case record.OccurrenceSucceeded, record.OccurrenceDead, record.OccurrenceCanceled, record.OccurrenceMissed:
			o.FinishedAt = o.ScheduledFor.Add(time.Minute)
		}
		if st == record.OccurrenceDead {
			o.DeadReason = record.DeadPermanentFailure
		}
		return o
	}
	older := occ(sc, 6, record.OccurrenceEnqueued, 0)
	older.ScheduleVersion = 1
	older.OccurrenceID = record.OccurrenceID(sc.ScheduleID, 1, older.ScheduledFor)
	manual := occ(sc, 7, record.OccurrenceEnqueued, 0)
	manual.TriggerKey = "by hand"
	manual.OccurrenceID = record.ManualOccurrenceID(sc.ScheduleID, manual.TriggerKey)
	first := occ(sc, 10, record.OccurrenceEnqueued, 0)
	second := occ(sc, 12, record.OccurrenceEnqueued, 0)
	first.AvailableAt, second.AvailableAt = first.ScheduledFor, second.ScheduledFor
	occs := []record.Occurrence{
		occ(sc, 0, record.OccurrenceSucceeded, 1), // history
		occ(sc, 1, record.OccurrenceMissed, 0),
		occ(sc, 2, record.OccurrenceDead, 1),
		occ(sc, 3, record.OccurrenceRunning, 1),
		occ(sc, 4, record.OccurrenceEnqueued, 1), // claimed before: a redelivery, or a replay
		occ(sc, 5, record.OccurrenceRetryWait, 1),
		older,
		manual,
		occ(sc, 8, record.OccurrenceScheduled, 0), // not on the queue yet
		occ(other, 9, record.OccurrenceEnqueued, 0),
		second,
		first,
	}
	mustInsertOccurrences(t, s, len(occs), occs...)

	check := func(what, tenantID, scheduleID string, version int64, want time.Time) {
		t.Helper()
		got, err := s.FirstUndelivered(ctx, tenantID, scheduleID, version)
		if err != nil {
			t.Fatalf("%s: FirstUndelivered(%s, %s, %d): %v", what, tenantID, scheduleID, version, err)
		}
		if !got.Equal(want) {
			t.Errorf("%s: FirstUndelivered(%s, %s, %d) = %v, want %v", what, tenantID, scheduleID, version, got, want)
		}
	}
	check("two never claimed", "tenant-a", sc.ScheduleID, 2, first.ScheduledFor)
	check("the older version", "tenant-a", sc.ScheduleID, 1, older.ScheduledFor)
	check("a version with none", "tenant-a", sc.ScheduleID, 3, time.Time{})
	check("another schedule", "tenant-a", other.ScheduleID, 1, at(9*time.Minute))
	check("another tenant", "tenant-b", sc.ScheduleID, 2, time.Time{})
	check("no such schedule", "tenant-a", "sch_none", 2, time.Time{})

	if got := mustClaim(t, s, "tenant-a", 1, at(11*time.Minute)); len(got) != 1 || got[0].Occurrence.OccurrenceID != first.OccurrenceID {
		t.Fatalf("claim at 11 min: %d claimed, want %s", len(got), first.OccurrenceID)
	}
	check("one claimed", "tenant-a", sc.ScheduleID, 2, second.ScheduledFor)
	if got := mustClaim(t, s, "tenant-a", 1, at(13*time.Minute)); len(got) != 1 || got[0].Occurrence.OccurrenceID != second.OccurrenceID {
		t.Fatalf("claim at 13 min: %d claimed, want %s", len(got), second.OccurrenceID)
	}
	check("both claimed", "tenant-a", sc.ScheduleID, 2, time.Time{})
}

// testFinishRepeated: the same finish sent again (a retried ack or nack
// whose answer was lost) succeeds as Repeated and writes nothing, in
// FinishAttempts and FinishAndClaim, within one batch or across two; a
// finish that wrote is not Repeated, and a stale one is still an error.
func testFinishRepeated(t *testing.T, open func(t *testing.T) Store) {
	s, ctx := open(t), t.Context()
	sc := queueSchedule(t, s, "tenant-a", "sch_repeated", record.OverlapAllow)
	names := insertReady(t, s, sc, []readySpec{
		{"ack", 0, record.LaneStrict}, {"nack", 1, record.LaneStrict}, {"stale", 2, record.LaneStrict},
		{"batch", 3, record.LaneStrict}, {"and claim", 4, record.LaneStrict},
	})
	if got := mustClaim(t, s, "tenant-a", 10, at(time.Hour)); len(got) != 5 {
		t.Fatalf("claimed %d, want 5", len(got))
	}
	ack := func(name string, attempt int64, now time.Time) store.FinishParams {
		return store.FinishParams{TenantID: "tenant-a", OccurrenceID: findName(t, names, name), Attempt: attempt,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
	}
	nack := func(name string, now time.Time) store.FinishParams {
		return store.FinishParams{TenantID: "tenant-a", OccurrenceID: findName(t, names, name), Attempt: 1,
			Result: record.ResultFailedPermanent, Error: "bad input", State: record.OccurrenceDead, DeadReason: record.DeadPermanentFailure, Now: now}
	}
	check := func(what string, res store.FinishResult, repeated bool, state record.OccurrenceState) {
		t.Helper()
		if res.Err != nil || res.Repeated != repeated || res.Occurrence.State != state {
			t.Errorf("%s: repeated %v, %s, %v; want repeated %v, %s", what, res.Repeated, res.Occurrence.State, res.Err, repeated, state)
		}
	}
	// The finish again, later: the first one's time stays.
	stays := func(name string, state record.OccurrenceState, finished time.Time) {
		t.Helper()
		o := mustGetOccurrence(t, s, "tenant-a", findName(t, names, name))
		if o.State != state || !o.FinishedAt.Equal(finished) {
			t.Errorf("%s: %s, finished at %v; want %s at %v, as the first finish left it", name, o.State, o.FinishedAt, state, finished)
		}
	}

	first, again := at(time.Hour+time.Minute), at(time.Hour+2*time.Minute)
	check("ack", mustFinish(t, s, ack("ack", 1, first))[0], false, record.OccurrenceSucceeded)
	check("ack again", mustFinish(t, s, ack("ack", 1, again))[0], true, record.OccurrenceSucceeded)
	stays("ack", record.OccurrenceSucceeded, first)

	check("permanent nack", mustFinish(t, s, nack("nack", first))[0], false, record.OccurrenceDead)
	res := mustFinish(t, s, nack("nack", again))[0]
	check("permanent nack again", res, true, record.OccurrenceDead)
	if res.Occurrence.DeadReason != record.DeadPermanentFailure {
		t.Errorf("permanent nack again: reason %q, want %q", res.Occurrence.DeadReason, record.DeadPermanentFailure)
	}
	stays("nack", record.OccurrenceDead, first)

	// Twice in one batch: the first writes, the second is the same again.
	rs := mustFinish(t, s, ack("batch", 1, first), ack("batch", 1, again))
	check("ack in a batch", rs[0], false, record.OccurrenceSucceeded)
	check("the same ack later in the batch", rs[1], true, record.OccurrenceSucceeded)
	stays("batch", record.OccurrenceSucceeded, first)

	// Anything but the same finish is stale, never Repeated: another
	// attempt, or another result for the attempt.
	mustFinish(t, s, ack("stale", 1, first))
	rs, err := s.FinishAttempts(ctx, []store.FinishParams{ack("stale", 2, again), nack("stale", again), nack("ack", again)})
	if err != nil {
		t.Fatalf("FinishAttempts: %v", err)
	}
	for i, what := range []string{"ack of an attempt never made", "nack of an acked attempt", "nack of another acked attempt"} {
		wantErr(t, what, rs[i].Err, store.ErrStaleAttempt)
		if rs[i].Repeated {
			t.Errorf("%s: Repeated", what)
		}
	}
	stays("stale", record.OccurrenceSucceeded, first)

	// FinishAndClaim answers the same.
	claim := store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "worker-1", Limit: 1, Lease: testLease, Now: first}
	for i, want := range []bool{false, true, true} {
		p := ack("and claim", 1, first)
		if want {
			p.Now = again
		}
		rs, _, err := engine.FinishAndClaim(ctx, s, []store.FinishParams{p}, claim)
		if err != nil || len(rs) != 1 {
			t.Fatalf("FinishAndClaim %d: %d results, %v", i, len(rs), err)
		}
		check(fmt.Sprintf("FinishAndClaim %d", i), rs[0], want, record.OccurrenceSucceeded)
	}
	stays("and claim", record.OccurrenceSucceeded, first)
}

// testSnapshotBacklogFrom: with BacklogFrom set, the due backlog's minutes
// count from it, both its sources alike, while what is ready is still
// decided at Now.
func testSnapshotBacklogFrom(t *testing.T, open func(t *testing.T) Store) {
	s := open(t)
	now := time.Date(2027, 1, 4, 9, 59, 30, 0, time.UTC)
	from := time.Date(2027, 1, 4, 9, 59, 0, 0, time.UTC)
	sc := NewSchedule("tenant-a", "sch_from")
	sc.Queue, sc.NextRunAt, sc.OverlapPolicy = jobsQueue, time.Time{}, record.OverlapAllow // no cursor
	mustInsertSchedule(t, s, sc)
	occ := func(st record.OccurrenceState, available time.Time) record.Occurrence {
		o := NewOccurrence(sc, available)
		o.State, o.EnqueuedAt = st, available.Add(-time.Minute)
		return o
	}
	before := occ(record.OccurrenceEnqueued, from.Add(-time.Second)) // ready, before every minute
	occs := []record.Occurrence{
		before,
		occ(record.OccurrenceEnqueued, time.Date(2027, 1, 4, 9, 59, 10, 0, time.UTC)),   // ready: minute 0 from BacklogFrom
		occ(record.OccurrenceEnqueued, time.Date(2027, 1, 4, 9, 59, 40, 0, time.UTC)),   // not ready: minute 0
		occ(record.OccurrenceScheduled, time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)),   // minute 1 (0 from now)
		occ(record.OccurrenceRetryWait, time.Date(2027, 1, 4, 10, 58, 59, 0, time.UTC)), // minute 59
	}
	mustInsertOccurrences(t, s, len(occs), occs...)
	for i, next := range []time.Time{
		time.Date(2027, 1, 4, 9, 59, 0, 0, time.UTC),   // minute 0 (before now: none)
		time.Date(2027, 1, 4, 10, 58, 59, 0, time.UTC), // minute 59
		time.Date(2027, 1, 4, 10, 59, 0, 0, time.UTC),  // past the window (minute 59 from now)
	} {
		c := NewSchedule("tenant-c", fmt.Sprintf("sch_from_%d", i))
		c.NextRunAt = next
		mustInsertSchedule(t, s, c)
	}
	wantDepth := []store.DepthRow{
		{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceEnqueued, Count: 3, Ready: 2},
		{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceRetryWait, Count: 1},
		{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceScheduled, Count: 1},
	}
	for _, tc := range []struct {
		what string
		from time.Time
		want map[int]int64
	}{
		{"from the minute's start", from, map[int]int64{0: 3, 1: 1, 59: 2}},
		{"from now", time.Time{}, map[int]int64{0: 2, 59: 3}},
		{"from now, given", now, map[int]int64{0: 2, 59: 3}},
	} {
		snap := mustSnapshot(t, s, store.SnapshotParams{Now: now, BacklogFrom: tc.from})
		want := make([]int64, 60)
		for i, n := range tc.want {
			want[i] = n
		}
		if !slices.Equal(snap.DueBacklog, want) {
			t.Errorf("%s: due backlog\n got %v\nwant %v", tc.what, nonZero(snap.DueBacklog), nonZero(want))
		}
		assertDepth(t, tc.what, snap.Depth, wantDepth)
		if o := snap.OldestReady; o == nil || o.OccurrenceID != before.OccurrenceID {
			t.Errorf("%s: oldest ready %+v, want %s", tc.what, o, before.OccurrenceID)
		}
	}
}
