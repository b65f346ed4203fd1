package storetest

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// testStats pins store.StatsStore: the queue's snapshot, across tenants,
// and the per-minute rows the nodes write.
func testStats(t *testing.T, open func(t *testing.T) Store) {
	t.Run("SnapshotEmpty", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		// Finished occurrences are history: they are in no figure.
		sc := NewSchedule("tenant-a", "sch_snap_history")
		sc.NextRunAt = time.Time{}
		mustInsertSchedule(t, s, sc)
		now := at(time.Hour)
		var occs []record.Occurrence
		for i, st := range []record.OccurrenceState{record.OccurrenceSucceeded, record.OccurrenceMissed, record.OccurrenceCanceled, record.OccurrenceSkippedOverlap} {
			o := NewOccurrence(sc, at(time.Duration(i)*time.Minute))
			o.State, o.AvailableAt, o.FinishedAt = st, now.Add(time.Duration(i-2)*time.Minute), now
			occs = append(occs, o)
		}
		mustInsertOccurrences(t, s, len(occs), occs...)
		snap := mustSnapshot(t, s, store.SnapshotParams{Now: now})
		if len(snap.Depth) != 0 || snap.OldestReady != nil || len(snap.QueueOldestReady) != 0 {
			t.Errorf("snapshot of finished occurrences: depth %+v, oldest ready %+v, queues' oldest ready %+v; want none",
				snap.Depth, snap.OldestReady, snap.QueueOldestReady)
		}
		if want := make([]int64, 60); !slices.Equal(snap.DueBacklog, want) {
			t.Errorf("due backlog %v, want 60 empty minutes", snap.DueBacklog)
		}
	})

	t.Run("Snapshot", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		// Now is not on a minute: the buckets count from it.
		now := at(2*time.Hour + 30*time.Second + 500*time.Millisecond)
		parent := func(tenantID, scheduleID, queue string) *record.Schedule {
			t.Helper()
			sc := NewSchedule(tenantID, scheduleID)
			// No cursor: only its occurrences count. Overlap allowed, so
			// that a claim takes every ready one.
			sc.Queue, sc.NextRunAt, sc.OverlapPolicy = queue, time.Time{}, record.OverlapAllow
			mustInsertSchedule(t, s, sc)
			return sc
		}
		a := parent("tenant-a", "sch_snap_a", jobsQueue)
		m := parent("tenant-a", "sch_snap_m", "mail")
		x := parent("tenant-b", "sch_snap_x", jobsQueue)

		var occs []record.Occurrence
		names := map[string]string{}
		add := func(name string, sc *record.Schedule, lane record.Lane, st record.OccurrenceState, available time.Duration) {
			o := NewOccurrence(sc, at(time.Duration(len(occs))*time.Minute))
			o.Lane, o.State, o.AvailableAt = lane, st, now.Add(available)
			if st != record.OccurrenceScheduled {
				o.EnqueuedAt = o.ScheduledFor
			}
			switch st {
			case record.OccurrenceRunning:
				o.AttemptCount, o.FirstClaimedAt = 1, now.Add(-time.Minute)
			case record.OccurrenceDead, record.OccurrenceSucceeded, record.OccurrenceCanceled, record.OccurrenceMissed, record.OccurrenceSkippedOverlap:
				o.FinishedAt = now.Add(-time.Minute)
			}
			if st == record.OccurrenceDead {
				o.DeadReason = record.DeadPermanentFailure
			}
			occs = append(occs, o)
			names[o.OccurrenceID] = name
		}
		const ms = time.Millisecond
		add("ready", a, record.LaneStrict, record.OccurrenceEnqueued, -10*time.Minute)
		// The minutes are half-open, [now + i min, now + (i+1) min): what
		// becomes available exactly at now is ready, and in minute 0.
		add("ready at now", a, record.LaneStrict, record.OccurrenceEnqueued, 0) // bucket 0
		add("due in 1 ms", a, record.LaneStrict, record.OccurrenceEnqueued, ms) // bucket 0
		add("retry ready", a, record.LaneStrict, record.OccurrenceRetryWait, -ms)
		add("retry in 90 s", a, record.LaneStrict, record.OccurrenceRetryWait, 90*time.Second) // bucket 1
		add("running", a, record.LaneStrict, record.OccurrenceRunning, -30*time.Minute)
		add("running, later", a, record.LaneStrict, record.OccurrenceRunning, 3*time.Minute)
		add("scheduled, late", a, record.LaneStrict, record.OccurrenceScheduled, -40*time.Minute)
		add("scheduled", a, record.LaneStrict, record.OccurrenceScheduled, 59*time.Minute+59*time.Second+999*ms) // bucket 59
		add("dead", a, record.LaneStrict, record.OccurrenceDead, -50*time.Minute)
		add("dead, later", a, record.LaneStrict, record.OccurrenceDead, 4*time.Minute)
		add("flexible ready", a, record.LaneFlexible, record.OccurrenceEnqueued, -5*time.Minute)
		for _, st := range []record.OccurrenceState{record.OccurrenceSucceeded, record.OccurrenceMissed, record.OccurrenceCanceled, record.OccurrenceSkippedOverlap} {
			add(string(st), a, record.LaneStrict, st, 2*time.Minute)
		}
		add("mail dead 1", m, record.LaneStrict, record.OccurrenceDead, -time.Hour)
		add("mail dead 2", m, record.LaneStrict, record.OccurrenceDead, -time.Hour)
		add("mail in 60 min", m, record.LaneCatchUp, record.OccurrenceEnqueued, time.Hour) // bucket 60
		add("b oldest", x, record.LaneCatchUp, record.OccurrenceEnqueued, -20*time.Minute)
		add("b ready", x, record.LaneCatchUp, record.OccurrenceEnqueued, -15*time.Minute)
		add("b in 30 s", x, record.LaneStrict, record.OccurrenceScheduled, 30*time.Second) // bucket 0
		mustInsertOccurrences(t, s, len(occs), occs...)

		// Cursors: ACTIVE schedules count once, at next_run_at, in the
		// minute from now it falls in, whatever their tenant.
		cursor := func(id string, st record.ScheduleState, next time.Duration) {
			t.Helper()
			sc := NewSchedule("tenant-c", id)
			sc.State, sc.NextRunAt = st, now.Add(next)
			mustInsertSchedule(t, s, sc)
		}
		cursor("sch_next_now", record.ScheduleActive, 0)                                           // bucket 0
		cursor("sch_next_5", record.ScheduleActive, 5*time.Minute+59*time.Second+999*ms)           // bucket 5
		cursor("sch_next_6", record.ScheduleActive, 6*time.Minute)                                 // bucket 6
		cursor("sch_next_overdue", record.ScheduleActive, -ms)                                     // before now: none
		cursor("sch_next_paused", record.SchedulePaused, time.Minute)                              // not ACTIVE
		cursor("sch_next_canceled", record.ScheduleCanceled, time.Minute)                          // not ACTIVE
		cursor("sch_next_completed", record.ScheduleCompleted, time.Minute)                        // not ACTIVE
		cursor("sch_next_60", record.ScheduleActive, time.Hour)                                    // bucket 60
		cursor("sch_next_1439", record.ScheduleActive, 23*time.Hour+59*time.Minute+30*time.Second) // bucket 1439

		wantDepth := []store.DepthRow{
			{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceEnqueued, Count: 3, Ready: 2},
			{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceRetryWait, Count: 2, Ready: 1},
			{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceRunning, Count: 2},
			{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceScheduled, Count: 2},
			{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceDead, Count: 2},
			{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneFlexible, State: record.OccurrenceEnqueued, Count: 1, Ready: 1},
			{TenantID: "tenant-a", Queue: "mail", Lane: record.LaneStrict, State: record.OccurrenceDead, Count: 2},
			{TenantID: "tenant-a", Queue: "mail", Lane: record.LaneCatchUp, State: record.OccurrenceEnqueued, Count: 1},
			{TenantID: "tenant-b", Queue: jobsQueue, Lane: record.LaneCatchUp, State: record.OccurrenceEnqueued, Count: 2, Ready: 2},
			{TenantID: "tenant-b", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceScheduled, Count: 1},
		}
		backlog := func(n int, counts map[int]int64) []int64 {
			out := make([]int64, n)
			for i, c := range counts {
				if i < n {
					out[i] = c
				}
			}
			return out
		}
		all := map[int]int64{0: 4, 1: 1, 5: 1, 6: 1, 59: 1, 60: 2, 1439: 1}
		for _, tc := range []struct {
			buckets int
			want    []int64
		}{
			{0, backlog(60, all)}, // the default
			{60, backlog(60, all)},
			{1, backlog(1, all)},
			{5, backlog(5, all)},
			{61, backlog(61, all)},
			{1440, backlog(1440, all)},
		} {
			snap := mustSnapshot(t, s, store.SnapshotParams{Now: now, Buckets: tc.buckets})
			assertDepth(t, fmt.Sprintf("buckets %d", tc.buckets), snap.Depth, wantDepth)
			if !slices.Equal(snap.DueBacklog, tc.want) {
				t.Errorf("buckets %d: due backlog\n got %v\nwant %v", tc.buckets, nonZero(snap.DueBacklog), nonZero(tc.want))
			}
			if o := snap.OldestReady; o == nil || names[o.OccurrenceID] != "b oldest" || o.TenantID != "tenant-b" ||
				!o.AvailableAt.Equal(now.Add(-20*time.Minute)) || o.State != record.OccurrenceEnqueued {
				t.Errorf("buckets %d: oldest ready %+v, want tenant-b's, available 20 min ago", tc.buckets, o)
			}
			// Each queue's oldest ready, over its lanes and both
			// claimable states: tenant-a's mail has none ready (its
			// ENQUEUED one is due in an hour), so no entry.
			assertQueueOldest(t, fmt.Sprintf("buckets %d", tc.buckets), snap.QueueOldestReady, []store.QueueOldestReady{
				{TenantID: "tenant-a", Queue: jobsQueue, AvailableAt: now.Add(-10 * time.Minute)},
				{TenantID: "tenant-b", Queue: jobsQueue, AvailableAt: now.Add(-20 * time.Minute)},
			})
		}

		// Once tenant-b's are claimed, the oldest ready one is tenant-a's.
		mustClaim(t, s, "tenant-b", 10, now)
		snap := mustSnapshot(t, s, store.SnapshotParams{Now: now})
		if o := snap.OldestReady; o == nil || names[o.OccurrenceID] != "ready" || !o.AvailableAt.Equal(now.Add(-10*time.Minute)) {
			t.Errorf("oldest ready after a claim: %+v, want tenant-a's, available 10 min ago", o)
		}
		wantDepth[8] = store.DepthRow{TenantID: "tenant-b", Queue: jobsQueue, Lane: record.LaneCatchUp, State: record.OccurrenceRunning, Count: 2}
		assertDepth(t, "after a claim", snap.Depth, wantDepth)
		assertQueueOldest(t, "after a claim", snap.QueueOldestReady, []store.QueueOldestReady{
			{TenantID: "tenant-a", Queue: jobsQueue, AvailableAt: now.Add(-10 * time.Minute)},
		})
	})

	t.Run("SnapshotTenant", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		now := at(3 * time.Hour)
		// Each tenant's occurrences, of every state a snapshot counts and
		// one finished; tenant-b's ready one has waited longer than
		// tenant-a's, and both tenants have cursors on shard 7.
		type occ struct {
			queue     string
			lane      record.Lane
			state     record.OccurrenceState
			available time.Duration
		}
		type cursor struct {
			shard int
			state record.ScheduleState
			next  time.Duration
		}
		fixtures := []struct {
			tenant  string
			occs    []occ
			cursors []cursor
		}{
			{"tenant-a", []occ{
				{jobsQueue, record.LaneStrict, record.OccurrenceEnqueued, -5 * time.Minute},
				{jobsQueue, record.LaneStrict, record.OccurrenceEnqueued, 2 * time.Minute}, // bucket 2
				{jobsQueue, record.LaneStrict, record.OccurrenceRetryWait, -time.Minute},
				{jobsQueue, record.LaneStrict, record.OccurrenceRunning, -2 * time.Minute},
				{"mail", record.LaneStrict, record.OccurrenceScheduled, 30 * time.Second}, // bucket 0
				{"mail", record.LaneFlexible, record.OccurrenceDead, -time.Hour},
			}, []cursor{{7, record.ScheduleActive, time.Minute}, {3, record.ScheduleActive, 4 * time.Minute}}},
			{"tenant-b", []occ{
				{jobsQueue, record.LaneCatchUp, record.OccurrenceEnqueued, -30 * time.Minute}, // the oldest ready of all
				{jobsQueue, record.LaneStrict, record.OccurrenceRetryWait, 3 * time.Minute},   // bucket 3
				{jobsQueue, record.LaneStrict, record.OccurrenceRunning, -time.Minute},
				{"b-only", record.LaneStrict, record.OccurrenceScheduled, 10 * time.Minute}, // bucket 10
				{"b-only", record.LaneStrict, record.OccurrenceDead, -time.Hour},
				{"b-only", record.LaneStrict, record.OccurrenceDead, -2 * time.Hour},
				{jobsQueue, record.LaneStrict, record.OccurrenceSucceeded, time.Minute}, // history: in no figure
			}, []cursor{
				{7, record.ScheduleActive, time.Minute + time.Second}, // bucket 1, beside tenant-a's
				{9, record.ScheduleActive, 8 * time.Minute},           // bucket 8
				{11, record.SchedulePaused, 2 * time.Minute},          // not ACTIVE
			}},
		}
		for _, f := range fixtures {
			parents := map[string]*record.Schedule{}
			var occs []record.Occurrence
			for i, o := range f.occs {
				sc := parents[o.queue]
				if sc == nil {
					sc = NewSchedule(f.tenant, fmt.Sprintf("sch_%s_%s", f.tenant, o.queue))
					sc.Queue, sc.NextRunAt, sc.OverlapPolicy = o.queue, time.Time{}, record.OverlapAllow
					mustInsertSchedule(t, s, sc)
					parents[o.queue] = sc
				}
				r := NewOccurrence(sc, at(time.Duration(i)*time.Minute))
				r.Lane, r.State, r.AvailableAt, r.EnqueuedAt = o.lane, o.state, now.Add(o.available), r.ScheduledFor
				switch o.state {
				case record.OccurrenceRunning:
					r.AttemptCount, r.FirstClaimedAt = 1, now.Add(-time.Minute)
				case record.OccurrenceDead, record.OccurrenceSucceeded:
					r.FinishedAt = now.Add(-time.Minute)
				}
				if o.state == record.OccurrenceScheduled {
					r.EnqueuedAt = time.Time{}
				}
				if o.state == record.OccurrenceDead {
					r.DeadReason = record.DeadPermanentFailure
				}
				occs = append(occs, r)
			}
			mustInsertOccurrences(t, s, len(occs), occs...)
			for i, c := range f.cursors {
				sc := NewSchedule(f.tenant, fmt.Sprintf("sch_%s_cursor_%d", f.tenant, i))
				sc.Shard, sc.State, sc.NextRunAt = c.shard, c.state, now.Add(c.next)
				mustInsertSchedule(t, s, sc)
			}
		}

		all := mustSnapshot(t, s, store.SnapshotParams{Now: now})
		if o := all.OldestReady; o == nil || o.TenantID != "tenant-b" {
			t.Fatalf("every tenant's oldest ready %+v, want tenant-b's", o)
		}
		// tenant-b's b-only queue has nothing claimable: no entry.
		assertQueueOldest(t, "every tenant", all.QueueOldestReady, []store.QueueOldestReady{
			{TenantID: "tenant-a", Queue: jobsQueue, AvailableAt: now.Add(-5 * time.Minute)},
			{TenantID: "tenant-b", Queue: jobsQueue, AvailableAt: now.Add(-30 * time.Minute)},
		})
		backlog := func(counts map[int]int64) []int64 {
			out := make([]int64, 60)
			for i, c := range counts {
				out[i] = c
			}
			return out
		}
		for _, tc := range []struct {
			tenant      string
			oldestReady time.Duration // 0: none ready
			backlog     []int64
		}{
			{"tenant-a", -5 * time.Minute, backlog(map[int]int64{0: 1, 1: 1, 2: 1, 4: 1})},
			{"tenant-b", -30 * time.Minute, backlog(map[int]int64{1: 1, 3: 1, 8: 1, 10: 1})},
			{"tenant-none", 0, backlog(nil)},
		} {
			snap := mustSnapshot(t, s, store.SnapshotParams{Now: now, TenantID: tc.tenant})
			// The tenant's depth is the every-tenant depth's rows of it.
			want := slices.DeleteFunc(slices.Clone(all.Depth), func(d store.DepthRow) bool { return d.TenantID != tc.tenant })
			assertDepth(t, tc.tenant, snap.Depth, want)
			if tc.tenant != "tenant-none" && len(want) == 0 {
				t.Errorf("%s: no rows of its own in every tenant's depth %+v", tc.tenant, all.Depth)
			}
			if !slices.Equal(snap.DueBacklog, tc.backlog) {
				t.Errorf("%s: due backlog\n got %v\nwant %v", tc.tenant, nonZero(snap.DueBacklog), nonZero(tc.backlog))
			}
			// The tenant's queues' oldest ready are the every-tenant
			// ones of it.
			wantQueues := slices.DeleteFunc(slices.Clone(all.QueueOldestReady), func(q store.QueueOldestReady) bool { return q.TenantID != tc.tenant })
			assertQueueOldest(t, tc.tenant, snap.QueueOldestReady, wantQueues)
			o := snap.OldestReady
			switch {
			case tc.oldestReady == 0 && o != nil:
				t.Errorf("%s: oldest ready %+v, want none", tc.tenant, o)
			case tc.oldestReady != 0 && (o == nil || o.TenantID != tc.tenant || !o.AvailableAt.Equal(now.Add(tc.oldestReady))):
				t.Errorf("%s: oldest ready %+v, want its own, available at %v", tc.tenant, o, now.Add(tc.oldestReady))
			}
		}
		// The tenants' backlogs add up to every tenant's.
		sum := make([]int64, 60)
		for _, tenant := range []string{"tenant-a", "tenant-b"} {
			for i, n := range mustSnapshot(t, s, store.SnapshotParams{Now: now, TenantID: tenant}).DueBacklog {
				sum[i] += n
			}
		}
		if !slices.Equal(sum, all.DueBacklog) {
			t.Errorf("the tenants' due backlogs add up to %v, every tenant's is %v", nonZero(sum), nonZero(all.DueBacklog))
		}
	})

	t.Run("StatMinutes", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		read := func(since time.Time) []store.StatMinute {
			t.Helper()
			got, err := s.ReadStatMinutes(ctx, since)
			if err != nil {
				t.Fatalf("ReadStatMinutes(%v): %v", since, err)
			}
			return got
		}
		write := func(rows []store.StatMinute, deleteBefore time.Time) {
			t.Helper()
			if err := s.WriteStatMinutes(ctx, rows, deleteBefore); err != nil {
				t.Fatalf("WriteStatMinutes: %v", err)
			}
		}
		if got := read(time.Time{}); len(got) != 0 {
			t.Errorf("ReadStatMinutes on an empty store: %d rows", len(got))
		}
		minute := func(i int) time.Time { return at(time.Duration(i) * time.Minute) }
		row := func(node string, i int, data string) store.StatMinute {
			return store.StatMinute{NodeID: node, Minute: minute(i), Data: []byte(data)}
		}
		big := bytes.Repeat([]byte("\x00\xff{}"), 16<<10) // 64 KiB
		write([]store.StatMinute{row("node-b", 0, "b0"), row("node-a", 1, "a1"), row("node-a", 0, "a0\x00\xff")}, minute(-10))
		write([]store.StatMinute{row("node-b", 2, string(big))}, minute(-10))
		assertStatMinutes(t, "by minute, then node", read(minute(0)),
			row("node-a", 0, "a0\x00\xff"), row("node-b", 0, "b0"), row("node-a", 1, "a1"), row("node-b", 2, string(big)))
		assertStatMinutes(t, "at or after a minute", read(minute(1)), row("node-a", 1, "a1"), row("node-b", 2, string(big)))
		assertStatMinutes(t, "after the start of a minute", read(minute(1).Add(time.Second)), row("node-b", 2, string(big)))

		// An upsert by (node, minute) replaces the data; deleteBefore
		// removes every node's rows before it, and keeps the rows at it.
		write([]store.StatMinute{row("node-a", 1, "a1 again"), row("node-c", 2, "c2")}, minute(1))
		assertStatMinutes(t, "after an upsert and a delete", read(time.Time{}),
			row("node-a", 1, "a1 again"), row("node-b", 2, string(big)), row("node-c", 2, "c2"))
		// Nothing to write: only the delete.
		write(nil, minute(2))
		assertStatMinutes(t, "after a delete alone", read(time.Time{}), row("node-b", 2, string(big)), row("node-c", 2, "c2"))
	})
}

func mustSnapshot(t *testing.T, s Store, p store.SnapshotParams) store.Snapshot {
	t.Helper()
	snap, err := s.Snapshot(t.Context(), p)
	if err != nil {
		t.Fatalf("Snapshot(%+v): %v", p, err)
	}
	return snap
}

// assertDepth compares depth rows in any order.
func assertDepth(t *testing.T, what string, got, want []store.DepthRow) {
	t.Helper()
	order := func(x, y store.DepthRow) int {
		return cmp.Or(cmp.Compare(x.TenantID, y.TenantID), cmp.Compare(x.Queue, y.Queue),
			cmp.Compare(x.Lane, y.Lane), cmp.Compare(x.State, y.State))
	}
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if !slices.Equal(got, want) {
		t.Errorf("%s: depth\n got %+v\nwant %+v", what, got, want)
	}
}

// assertQueueOldest compares Snapshot.QueueOldestReady, which is in
// tenant then queue order.
func assertQueueOldest(t *testing.T, what string, got, want []store.QueueOldestReady) {
	t.Helper()
	same := func(x, y store.QueueOldestReady) bool {
		return x.TenantID == y.TenantID && x.Queue == y.Queue && x.AvailableAt.Equal(y.AvailableAt)
	}
	if !slices.EqualFunc(got, want, same) {
		t.Errorf("%s: queues' oldest ready\n got %+v\nwant %+v", what, got, want)
	}
}

// nonZero shows a backlog by its busy minutes.
func nonZero(b []int64) string {
	out := fmt.Sprintf("%d buckets:", len(b))
	for i, n := range b {
		if n != 0 {
			out += fmt.Sprintf(" [%d]=%d", i, n)
		}
	}
	return out
}

func assertStatMinutes(t *testing.T, what string, got []store.StatMinute, want ...store.StatMinute) {
	t.Helper()
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		g, w := got[i], want[i]
		same = g.NodeID == w.NodeID && g.Minute.Equal(w.Minute) && g.Minute.Location() == time.UTC && bytes.Equal(g.Data, w.Data)
	}
	if !same {
		show := func(rows []store.StatMinute) string {
			out := ""
			for _, r := range rows {
				out += fmt.Sprintf(" (%s %v %d bytes)", r.NodeID, r.Minute, len(r.Data))
			}
			return out
		}
		t.Errorf("%s: stat minutes\n got%s\nwant%s", what, show(got), show(want))
	}
}
