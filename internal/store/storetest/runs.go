package storetest

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testRuns pins the statements of leased runs (store.RunTx; docs/engine.md,
// "Leased runs") on a store that offers them: the head a run moves, the
// floor every write that makes a row claimable keeps, the answers about
// runs, the fold, and the figures that merge runs. Positions (a rowid, a
// sequence) differ between drivers, so the cases take them from the
// store's own candidates, as the engine does.
func testRuns(t *testing.T, open func(t *testing.T) Store) {
	t.Run("InsertRunMovesHead", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		needRuns(t, s)
		sc := queueSchedule(t, s, "tenant-a", "sch_runs_head", record.OverlapAllow)
		insertReady(t, s, sc, readyMinutes(0, 5, record.LaneStrict))
		lane := store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict}
		now := at(10 * time.Minute)

		// A lane with claimable rows has a head from its first row on, at
		// the start of the lane; a lane that never had one has none.
		for _, tc := range []struct {
			lane store.Lane
			want store.CandidatePos
		}{
			{lane, store.CandidatePos{Set: true, AvailableAt: math.MinInt64, Pos: math.MinInt64}},
			{store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneFlexible}, store.CandidatePos{}},
			{store.Lane{TenantID: "tenant-b", Queue: jobsQueue, Lane: record.LaneStrict}, store.CandidatePos{}},
		} {
			if got := mustLaneHead(t, s, tc.lane); got != tc.want {
				t.Errorf("head of %+v: %+v, want %+v", tc.lane, got, tc.want)
			}
		}

		run, cands := leaseFirst(t, s, lane, now, 3, "worker-1")
		if got := mustLaneHead(t, s, lane); got != cands[2].After() || run.Last != got {
			t.Errorf("head after a run of 3: %+v, want %+v (the run's last)", got, cands[2].After())
		}
		// The next claim reads after it.
		_, rest := leaseFirst(t, s, lane, now, 10, "worker-2")
		if len(rest) != 2 || rest[0].Occurrence.ScheduledFor != at(3*time.Minute) {
			t.Fatalf("candidates after the head: %d, first %v; want 2 from minute 3", len(rest), rest[0].Occurrence.ScheduledFor)
		}
		head := rest[1].After()
		// A run that ends at or before the head is refused, and nothing
		// of its transaction stays.
		for _, last := range []store.CandidatePos{head, cands[0].After()} {
			err := inRunTx(t, s, func(_ store.Tx, rt store.RunTx) error {
				_, err := rt.InsertRun(t.Context(), &store.Run{Lane: lane, First: last, Last: last, N: 1, WorkerID: "w",
					ClaimedAt: now, LeaseExpiresAt: now.Add(time.Minute)})
				return err
			})
			if err == nil {
				t.Errorf("a run ending at %+v, the head %+v: no error", last, head)
			}
		}
		if got := mustLaneHead(t, s, lane); got != head {
			t.Errorf("head after the refused runs: %+v, want %+v", got, head)
		}
		if runs := mustRuns(t, s, store.RunFilter{All: true}); len(runs) != 2 {
			t.Errorf("%d runs stored, want 2", len(runs))
		}
	})

	t.Run("Floor", func(t *testing.T) { t.Parallel(); testRunFloor(t, open) })
	t.Run("Answers", func(t *testing.T) { t.Parallel(); testRunAnswers(t, open) })
	t.Run("FoldRange", func(t *testing.T) { t.Parallel(); testRunFold(t, open) })
	t.Run("Figures", func(t *testing.T) { t.Parallel(); testRunFigures(t, open) })
}

// testRunFloor: every write that makes a row claimable puts it after its
// lane's head when it would be at or before it (available_at = the head's
// + 1 ms), whatever statement writes it, and leaves every other row where
// it was written.
func testRunFloor(t *testing.T, open func(t *testing.T) Store) {
	s := open(t)
	needRuns(t, s)
	ctx := t.Context()
	sc := queueSchedule(t, s, "tenant-a", "sch_runs_floor", record.OverlapAllow)
	insertReady(t, s, sc, readyMinutes(0, 4, record.LaneStrict))
	lane := store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict}
	now := at(10 * time.Minute)
	// The head at minute 2's row; minute 3's is after it.
	_, cands := leaseFirst(t, s, lane, now, 3, "worker-1")
	headAt := at(2 * time.Minute)
	after := headAt.Add(time.Millisecond)

	minute := 100 // firings of the cases, each its own scheduled time
	occ := func(st record.OccurrenceState, availableAt time.Time) record.Occurrence {
		minute++
		o := NewOccurrence(sc, at(time.Duration(minute)*time.Minute))
		o.State, o.AvailableAt = st, availableAt
		return o
	}
	inserted := func(st record.OccurrenceState, availableAt time.Time) func(t *testing.T) string {
		return func(t *testing.T) string {
			o := occ(st, availableAt)
			mustInsertOccurrences(t, s, 1, o)
			return o.OccurrenceID
		}
	}
	// running inserts a RUNNING occurrence in lane under attempt 1 of
	// worker-9, its lease running out at lease.
	running := func(t *testing.T, lane record.Lane, lease time.Time) string {
		t.Helper()
		o := occ(record.OccurrenceEnqueued, at(-time.Hour))
		o.Lane = lane // claimed on the row path, in a lane with no head yet
		mustInsertOccurrences(t, s, 1, o)
		got, err := engine.ClaimOccurrences(ctx, s, store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "worker-9",
			Limit: 1, Lease: lease.Sub(at(-time.Hour)), Now: at(-time.Hour)})
		if err != nil || len(got) != 1 || got[0].Occurrence.OccurrenceID != o.OccurrenceID {
			t.Fatalf("claim %s on the row path: %d, %v", o.OccurrenceID, len(got), err)
		}
		return o.OccurrenceID
	}
	for _, tc := range []struct {
		name string
		// write makes an occurrence and returns its id.
		write func(t *testing.T) string
		lane  record.Lane
		want  time.Time // its available_at
	}{
		{"inserted before the head", inserted(record.OccurrenceEnqueued, at(time.Minute)), record.LaneStrict, after},
		{"inserted at the head's millisecond", inserted(record.OccurrenceEnqueued, headAt), record.LaneStrict, after},
		{"inserted to retry before the head", inserted(record.OccurrenceRetryWait, at(0)), record.LaneStrict, after},
		{"inserted after the head", inserted(record.OccurrenceEnqueued, headAt.Add(2*time.Millisecond)), record.LaneStrict,
			headAt.Add(2 * time.Millisecond)},
		{"inserted in the future", inserted(record.OccurrenceEnqueued, at(time.Hour)), record.LaneStrict, at(time.Hour)},
		// Not claimable: never moved.
		{"inserted SCHEDULED", inserted(record.OccurrenceScheduled, at(time.Minute)), record.LaneStrict, at(time.Minute)},
		{"inserted DEAD", inserted(record.OccurrenceDead, at(time.Minute)), record.LaneStrict, at(time.Minute)},
		{"requeued by a claim", func(t *testing.T) string {
			c := cands[1] // held by the run, so claimable: put it back before the head
			mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error {
				if _, _, err := rt.LaneHead(ctx, lane, true); err != nil {
					return err
				}
				return rt.RequeueRows(ctx, lane, []store.CandidatePos{c.After()}, at(time.Minute))
			})
			return c.Occurrence.OccurrenceID
		}, record.LaneStrict, after},
		{"replayed", func(t *testing.T) string {
			o := occ(record.OccurrenceDead, at(0))
			o.DeadReason, o.FinishedAt = record.DeadPermanentFailure, at(0)
			mustInsertOccurrences(t, s, 1, o)
			if _, err := engine.ReplayOccurrence(ctx, s, "tenant-a", o.OccurrenceID, at(time.Minute)); err != nil {
				t.Fatalf("replay: %v", err)
			}
			return o.OccurrenceID
		}, record.LaneStrict, after},
		// A lane whose row was claimed on the row path; a run then moves
		// its head.
		{"nacked to retry before the head", func(t *testing.T) string {
			id := running(t, record.LaneCatchUp, at(time.Hour))
			leaseLane(t, s, store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneCatchUp}, headAt)
			mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: id, Attempt: 1,
				Result: record.ResultFailedRetryable, State: record.OccurrenceRetryWait, RetryAt: at(time.Minute), Now: at(time.Minute)})
			return id
		}, record.LaneCatchUp, after},
		{"expired before the head", func(t *testing.T) string {
			id := running(t, record.LaneFlexible, at(time.Minute))
			leaseLane(t, s, store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneFlexible}, headAt)
			if _, err := engine.ExpireLeases(ctx, s, at(time.Minute), 10); err != nil {
				t.Fatalf("expire: %v", err)
			}
			return id
		}, record.LaneFlexible, after},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.write(t)
			o := mustGetOccurrence(t, s, "tenant-a", id)
			if !o.AvailableAt.Equal(tc.want) || o.Lane != tc.lane {
				t.Errorf("%s: available at %v in %s, want %v in %s", o.State, o.AvailableAt, o.Lane, tc.want, tc.lane)
			}
		})
	}

	// A lane first made claimable by an update has a head too, at the
	// start of the lane.
	other := NewSchedule("tenant-a", "sch_runs_floor_mail")
	other.Queue, other.OverlapPolicy = "mail", record.OverlapAllow
	mustInsertSchedule(t, s, other)
	dead := NewOccurrence(other, at(0))
	dead.State, dead.DeadReason, dead.FinishedAt = record.OccurrenceDead, record.DeadPermanentFailure, at(0)
	mustInsertOccurrences(t, s, 1, dead)
	mail := store.Lane{TenantID: "tenant-a", Queue: "mail", Lane: record.LaneStrict}
	if got := mustLaneHead(t, s, mail); got.Set {
		t.Errorf("head of a lane with no claimable row: %+v", got)
	}
	if _, err := engine.ReplayOccurrence(ctx, s, "tenant-a", dead.OccurrenceID, at(time.Minute)); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if got := mustLaneHead(t, s, mail); got != (store.CandidatePos{Set: true, AvailableAt: math.MinInt64, Pos: math.MinInt64}) {
		t.Errorf("head of a lane a replay made claimable: %+v, want its start", got)
	}
}

// testRunAnswers: what the store answers about runs (LeasedItems, Runs
// and its filters, RunAcks, ScheduleRuns, RunTotals, ExtendRun,
// DeleteRun).
func testRunAnswers(t *testing.T, open func(t *testing.T) Store) {
	s := open(t)
	needRuns(t, s)
	ctx := t.Context()
	sc := queueSchedule(t, s, "tenant-a", "sch_runs_answers", record.OverlapAllow)
	insertReady(t, s, sc, readyMinutes(0, 5, record.LaneStrict))
	idle := queueSchedule(t, s, "tenant-a", "sch_runs_idle", record.OverlapAllow)
	insertReady(t, s, idle, []readySpec{{"idle", 30, record.LaneStrict}})
	b := queueSchedule(t, s, "tenant-b", "sch_runs_answers_b", record.OverlapAllow)
	insertReady(t, s, b, readyMinutes(0, 2, record.LaneStrict))
	lane := store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict}
	laneB := store.Lane{TenantID: "tenant-b", Queue: jobsQueue, Lane: record.LaneStrict}
	now := at(10 * time.Minute)

	run, cands := leaseFirst(t, s, lane, now, 3, "worker-1")
	runB, _ := leaseFirst(t, s, laneB, now, 2, "worker-b")
	ackedAt := now.Add(time.Second)
	first := store.RunAck{RunID: run.ID, First: cands[0].After(), Last: cands[0].After(), N: 1, At: ackedAt}
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error { return rt.AppendRunAcks(ctx, []store.RunAck{first}) })

	ids := func(i int) string { return cands[i].Occurrence.OccurrenceID }
	// The fourth row, after the head: no run holds it.
	var fourth record.Occurrence
	for _, o := range assertOccurrenceCount(t, s, sc, 5) {
		if o.ScheduledFor.Equal(at(3 * time.Minute)) {
			fourth = o
		}
	}
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error {
		items, err := rt.LeasedItems(ctx, "tenant-a", []string{ids(0), ids(1), fourth.OccurrenceID, "occ_missing",
			listOf(t, s, b)[0].OccurrenceID})
		if err != nil {
			return err
		}
		byID := map[string]store.LeasedItem{}
		for _, it := range items {
			byID[it.OccurrenceID] = it
		}
		if len(items) != 3 {
			t.Errorf("LeasedItems: %d items, want 3 (a missing id and another tenant's are left out): %+v", len(items), items)
		}
		for _, tc := range []struct {
			id    string
			run   int64
			acked bool
		}{{ids(0), run.ID, true}, {ids(1), run.ID, false}, {fourth.OccurrenceID, 0, false}} {
			it, ok := byID[tc.id]
			if !ok {
				t.Errorf("LeasedItems: no item for %s", tc.id)
				continue
			}
			if it.RunID != tc.run || it.Acked != tc.acked || it.State != record.OccurrenceEnqueued || it.AttemptCount != 0 ||
				it.Lane != lane || !it.Pos.Set {
				t.Errorf("LeasedItems %s: %+v, want run %d acked %v, ENQUEUED, attempt 0, in %+v", tc.id, it, tc.run, tc.acked, lane)
			}
		}
		if it := byID[ids(1)]; it.Pos != cands[1].After() {
			t.Errorf("LeasedItems %s: position %+v, want %+v", ids(1), it.Pos, cands[1].After())
		}
		acks, err := rt.RunAcks(ctx, run.ID)
		if err != nil {
			return err
		}
		if !slices.EqualFunc(acks, []store.RunAck{first}, sameAck) {
			t.Errorf("RunAcks: %+v, want %+v", acks, first)
		}
		for _, tc := range []struct {
			tenant, schedule string
			want             []int64
		}{
			{"tenant-a", sc.ScheduleID, []int64{run.ID}},
			{"tenant-a", idle.ScheduleID, nil},
			{"tenant-b", sc.ScheduleID, nil}, // another tenant's schedule
			{"tenant-b", b.ScheduleID, []int64{runB.ID}},
		} {
			got, err := rt.ScheduleRuns(ctx, tc.tenant, tc.schedule)
			if err != nil {
				return err
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ScheduleRuns(%s, %s): %v, want %v", tc.tenant, tc.schedule, got, tc.want)
			}
		}
		for _, tc := range []struct {
			tenant string
			want   []store.RunTotal
		}{
			{"tenant-a", []store.RunTotal{{Lane: lane, Leased: 3, Acked: 1}}},
			{"tenant-b", []store.RunTotal{{Lane: laneB, Leased: 2}}},
			{"tenant-c", nil},
			{"", []store.RunTotal{{Lane: lane, Leased: 3, Acked: 1}, {Lane: laneB, Leased: 2}}},
		} {
			got, err := rt.RunTotals(ctx, tc.tenant)
			if err != nil {
				return err
			}
			slices.SortFunc(got, func(x, y store.RunTotal) int { return compareLanes(x.Lane, y.Lane) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("RunTotals(%q): %+v, want %+v", tc.tenant, got, tc.want)
			}
		}
		return nil
	})

	// The filters of Runs.
	lease := run.LeaseExpiresAt
	for _, tc := range []struct {
		name string
		f    store.RunFilter
		want []int64
	}{
		{"by id", store.RunFilter{IDs: []int64{runB.ID, run.ID, run.ID + runB.ID + 1}}, []int64{run.ID, runB.ID}},
		{"no ids", store.RunFilter{IDs: []int64{}}, nil},
		{"all", store.RunFilter{All: true}, []int64{run.ID, runB.ID}},
		{"all, limited", store.RunFilter{All: true, Limit: 1}, []int64{run.ID}},
		{"a tenant's", store.RunFilter{TenantID: "tenant-b"}, []int64{runB.ID}},
		{"expired before the lease", store.RunFilter{ExpiredAt: lease.Add(-time.Millisecond)}, nil},
		{"expired at the lease", store.RunFilter{ExpiredAt: lease}, []int64{run.ID, runB.ID}},
		// Acked whole: none yet.
		{"finished", store.RunFilter{FinishedBefore: now.Add(time.Hour)}, nil},
	} {
		got := mustRuns(t, s, tc.f)
		var gotIDs []int64
		for _, r := range got {
			gotIDs = append(gotIDs, r.ID)
		}
		if !slices.Equal(gotIDs, tc.want) {
			t.Errorf("Runs %s: %v, want %v", tc.name, gotIDs, tc.want)
		}
	}
	want := run
	want.Acked = 1
	if got := mustRuns(t, s, store.RunFilter{IDs: []int64{run.ID}}); len(got) != 1 || !sameRun(got[0], want) {
		t.Errorf("Runs: %+v, want %+v", got, want)
	}

	// The rest of the run acked: it is finished once claimed before the
	// bound.
	rest := store.RunAck{RunID: run.ID, First: cands[1].After(), Last: cands[2].After(), N: 2, At: ackedAt}
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error { return rt.AppendRunAcks(ctx, []store.RunAck{rest}) })
	for _, tc := range []struct {
		before time.Time
		want   int
	}{{run.ClaimedAt, 0}, {run.ClaimedAt.Add(time.Millisecond), 1}} {
		if got := mustRuns(t, s, store.RunFilter{FinishedBefore: tc.before}); len(got) != tc.want {
			t.Errorf("Runs finished before %v: %d, want %d", tc.before, len(got), tc.want)
		}
	}

	// ExtendRun and DeleteRun.
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error {
		for _, tc := range []struct {
			id   int64
			want bool
		}{{run.ID, true}, {run.ID + runB.ID + 1, false}} {
			ok, err := rt.ExtendRun(ctx, tc.id, lease.Add(time.Hour))
			if err != nil {
				return err
			}
			if ok != tc.want {
				t.Errorf("ExtendRun(%d): %v, want %v", tc.id, ok, tc.want)
			}
		}
		return nil
	})
	if got := mustRuns(t, s, store.RunFilter{IDs: []int64{run.ID}}); len(got) != 1 || !got[0].LeaseExpiresAt.Equal(lease.Add(time.Hour)) {
		t.Errorf("Runs after ExtendRun: %+v, want the lease at %v", got, lease.Add(time.Hour))
	}
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error { return rt.DeleteRun(ctx, run.ID) })
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error {
		acks, err := rt.RunAcks(ctx, run.ID)
		if err != nil || len(acks) != 0 {
			t.Errorf("RunAcks of a deleted run: %+v, %v", acks, err)
		}
		items, err := rt.LeasedItems(ctx, "tenant-a", []string{ids(0)})
		if err != nil || len(items) != 1 || items[0].RunID != 0 {
			t.Errorf("LeasedItems after DeleteRun: %+v, %v; want no run", items, err)
		}
		return nil
	})
	if got := mustRuns(t, s, store.RunFilter{All: true}); len(got) != 1 || got[0].ID != runB.ID {
		t.Errorf("Runs after DeleteRun: %+v, want tenant-b's alone", got)
	}
}

// testRunFold: FoldRange writes the claimable rows in its range alone, as
// the attempt the run started (SUCCEEDED at the ack's time, RUNNING under
// the run's lease otherwise), moves a previous attempt to the history,
// and writes nothing the second time.
func testRunFold(t *testing.T, open func(t *testing.T) Store) {
	s := open(t)
	needRuns(t, s)
	ctx := t.Context()
	sc := queueSchedule(t, s, "tenant-a", "sch_runs_fold", record.OverlapAllow)
	lane := store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict}

	// An occurrence with an attempt already: claimed on the row path and
	// nacked to retry at 30 s.
	retried := readyOccurrence(sc, -1, record.LaneStrict)
	mustInsertOccurrences(t, s, 1, retried)
	if got := mustClaim(t, s, "tenant-a", 1, at(-time.Minute)); len(got) != 1 {
		t.Fatalf("claim: %d", len(got))
	}
	mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: retried.OccurrenceID, Attempt: 1, Error: "boom",
		Result: record.ResultFailedRetryable, State: record.OccurrenceRetryWait, RetryAt: at(30 * time.Second), Now: at(-time.Minute)})
	// Rows in the range that are not claimable: never written.
	names := insertReady(t, s, sc, []readySpec{{"a", 0, record.LaneStrict}, {"b", 2, record.LaneStrict}, {"c", 3, record.LaneStrict}})
	done := NewOccurrence(sc, at(time.Minute))
	done.State, done.FinishedAt, done.AvailableAt = record.OccurrenceSucceeded, at(time.Minute), at(time.Minute)
	mustInsertOccurrences(t, s, 1, done)
	done = mustGetOccurrence(t, s, "tenant-a", done.OccurrenceID)

	now := at(10 * time.Minute)
	run, cands := leaseFirst(t, s, lane, now, 10, "worker-1")
	if len(cands) != 4 || cands[1].Occurrence.OccurrenceID != retried.OccurrenceID {
		t.Fatalf("candidates: %d, want a, the retried one, b, c", len(cands))
	}
	ackedAt := now.Add(time.Second)
	a := findName(t, names, "a")
	for _, tc := range []struct {
		name        string
		first, last store.CandidatePos
		f           store.FoldWrite
		want        int
	}{
		{"ack range", cands[0].After(), cands[0].After(), store.FoldWrite{AckedAt: ackedAt}, 1},
		{"ack range again", cands[0].After(), cands[0].After(), store.FoldWrite{AckedAt: ackedAt}, 0},
		{"the rest", run.First, run.Last, store.FoldWrite{}, 3},
		{"the rest again", run.First, run.Last, store.FoldWrite{}, 0},
	} {
		var n int
		mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) (err error) {
			n, err = rt.FoldRange(ctx, &run, tc.first, tc.last, tc.f)
			return err
		})
		if n != tc.want {
			t.Errorf("FoldRange %s: %d rows, want %d", tc.name, n, tc.want)
		}
	}
	claimed, lease := now.Truncate(time.Millisecond), run.LeaseExpiresAt
	for _, tc := range []struct {
		id       string
		state    record.OccurrenceState
		attempt  int
		finished time.Time
		first    time.Time
	}{
		{a, record.OccurrenceSucceeded, 1, ackedAt, claimed},
		{retried.OccurrenceID, record.OccurrenceRunning, 2, time.Time{}, at(-time.Minute)},
		{findName(t, names, "c"), record.OccurrenceRunning, 1, time.Time{}, claimed},
	} {
		o := mustGetOccurrence(t, s, "tenant-a", tc.id)
		if o.State != tc.state || o.AttemptCount != tc.attempt || !o.FinishedAt.Equal(tc.finished) || !o.FirstClaimedAt.Equal(tc.first) {
			t.Errorf("%s after the fold: %s attempt %d finished %v first claimed %v; want %s %d %v %v", tc.id, o.State,
				o.AttemptCount, o.FinishedAt, o.FirstClaimedAt, tc.state, tc.attempt, tc.finished, tc.first)
		}
	}
	assertOccurrence(t, "a SUCCEEDED row inside the range", mustGetOccurrence(t, s, "tenant-a", done.OccurrenceID), done)
	// The acked one's attempt is the run's; the retried one's first
	// attempt moved to the history, its second is the run's, running.
	assertAttempts(t, s, "tenant-a", a, record.Attempt{AttemptID: record.AttemptID(a, 1), TenantID: "tenant-a",
		OccurrenceID: a, Attempt: 1, WorkerID: "worker-1", ClaimedAt: claimed, LeaseExpiresAt: lease, FinishedAt: ackedAt,
		Result: record.ResultSucceeded})
	id := retried.OccurrenceID
	assertAttempts(t, s, "tenant-a", id,
		record.Attempt{AttemptID: record.AttemptID(id, 1), TenantID: "tenant-a", OccurrenceID: id, Attempt: 1, WorkerID: "worker-1",
			ClaimedAt: at(-time.Minute), LeaseExpiresAt: at(-time.Minute).Add(testLease), FinishedAt: at(-time.Minute),
			Result: record.ResultFailedRetryable, Error: "boom"},
		record.Attempt{AttemptID: record.AttemptID(id, 2), TenantID: "tenant-a", OccurrenceID: id, Attempt: 2, WorkerID: "worker-1",
			ClaimedAt: claimed, LeaseExpiresAt: lease})
}

// testRunFigures: the figures read the runs instead of folding them: a
// run's occurrences are RUNNING until acked and gone after, not ready, not
// the oldest ready, not due, not available next and not undelivered.
func testRunFigures(t *testing.T, open func(t *testing.T) Store) {
	s := open(t)
	needRuns(t, s)
	ctx := t.Context()
	sc := queueSchedule(t, s, "tenant-a", "sch_runs_figures", record.OverlapAllow)
	insertReady(t, s, sc, readyMinutes(0, 5, record.LaneStrict))
	lane := store.Lane{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict}
	now := at(10 * time.Minute)
	run, cands := leaseFirst(t, s, lane, now, 3, "worker-1")
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error {
		return rt.AppendRunAcks(ctx, []store.RunAck{{RunID: run.ID, First: cands[0].After(), Last: cands[0].After(), N: 1, At: now}})
	})
	wantDepth := []store.DepthRow{
		{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceEnqueued, Count: 2, Ready: 2},
		{TenantID: "tenant-a", Queue: jobsQueue, Lane: record.LaneStrict, State: record.OccurrenceRunning, Count: 2},
	}
	for _, tenant := range []string{"", "tenant-a"} {
		snap := mustSnapshot(t, s, store.SnapshotParams{Now: now, TenantID: tenant, BacklogFrom: at(0), Buckets: 10})
		assertDepth(t, "depth with a run", snap.Depth, wantDepth)
		if snap.OldestReady == nil || !snap.OldestReady.ScheduledFor.Equal(at(3*time.Minute)) {
			t.Errorf("oldest ready of %q: %+v, want minute 3's, the first after the run", tenant, snap.OldestReady)
		}
		if snap.OldestReady != nil { // the queue's is the same one's: the run holds those before
			assertQueueOldest(t, "queues' oldest ready of "+tenant, snap.QueueOldestReady, []store.QueueOldestReady{
				{TenantID: "tenant-a", Queue: jobsQueue, AvailableAt: snap.OldestReady.AvailableAt},
			})
		}
		want := make([]int64, 10)
		want[3], want[4] = 1, 1
		if !slices.Equal(snap.DueBacklog, want) {
			t.Errorf("due backlog of %q: %s, want %s", tenant, nonZero(snap.DueBacklog), nonZero(want))
		}
	}
	next, err := s.NextAvailable(ctx, "tenant-a", jobsQueue)
	if err != nil || !next.Equal(at(3*time.Minute)) {
		t.Errorf("NextAvailable: %v, %v; want minute 3", next, err)
	}
	first, err := s.FirstUndelivered(ctx, "tenant-a", sc.ScheduleID, 1)
	if err != nil || !first.Equal(at(3*time.Minute)) {
		t.Errorf("FirstUndelivered: %v, %v; want minute 3", first, err)
	}
	// The whole lane leased: nothing ready, nothing next.
	leaseFirst(t, s, lane, now, 10, "worker-2")
	snap := mustSnapshot(t, s, store.SnapshotParams{Now: now, TenantID: "tenant-a"})
	if snap.OldestReady != nil || len(snap.QueueOldestReady) != 0 {
		t.Errorf("oldest ready with every row leased: %+v, of the queues %+v", snap.OldestReady, snap.QueueOldestReady)
	}
	next, err = s.NextAvailable(ctx, "tenant-a", jobsQueue)
	if err != nil || !next.IsZero() {
		t.Errorf("NextAvailable with every row leased: %v, %v; want none", next, err)
	}
}

// needRuns skips the test on a store whose transactions do not offer
// store.RunTx.
func needRuns(t *testing.T, s Store) {
	t.Helper()
	tx, err := s.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(t.Context()) }()
	if _, ok := tx.(store.RunTx); !ok {
		t.Skip("the store has no runs")
	}
}

var errNoRunTx = errors.New("the store's transaction has no runs")

// inRunTx runs fn in a transaction of s with its run statements, and
// commits it when fn returns nil.
func inRunTx(t *testing.T, s Store, fn func(tx store.Tx, rt store.RunTx) error) error {
	t.Helper()
	return store.InTx(t.Context(), s, func(tx store.Tx) error {
		rt, ok := tx.(store.RunTx)
		if !ok {
			return errNoRunTx
		}
		return fn(tx, rt)
	})
}

func mustRunTx(t *testing.T, s Store, fn func(tx store.Tx, rt store.RunTx) error) {
	t.Helper()
	if err := inRunTx(t, s, fn); err != nil {
		t.Fatal(err)
	}
}

func mustLaneHead(t *testing.T, s Store, l store.Lane) store.CandidatePos {
	t.Helper()
	var head store.CandidatePos
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) error {
		var held bool
		var err error
		head, held, err = rt.LaneHead(t.Context(), l, true)
		if err == nil && !held {
			t.Errorf("LaneHead(%+v) waiting: not held", l)
		}
		return err
	})
	return head
}

func mustRuns(t *testing.T, s Store, f store.RunFilter) []store.Run {
	t.Helper()
	var runs []store.Run
	mustRunTx(t, s, func(_ store.Tx, rt store.RunTx) (err error) {
		runs, err = rt.Runs(t.Context(), f)
		return err
	})
	return runs
}

// leaseFirst leases up to n candidates of the lane due at now as a run of
// worker, as a claim on the run path does (LaneHead, ClaimCandidates after
// the head, InsertRun), and returns the run and the candidates. Nothing
// is leased when the lane has no candidate.
func leaseFirst(t *testing.T, s Store, l store.Lane, now time.Time, n int, worker string) (store.Run, []store.ClaimCandidate) {
	t.Helper()
	var (
		run   store.Run
		cands []store.ClaimCandidate
	)
	mustRunTx(t, s, func(tx store.Tx, rt store.RunTx) error {
		head, _, err := rt.LaneHead(t.Context(), l, true)
		if err != nil {
			return err
		}
		cands, err = tx.ClaimCandidates(t.Context(), store.CandidateRead{TenantID: l.TenantID, Queue: l.Queue, Lane: l.Lane,
			Now: now, After: head, Limit: n}, nil)
		if err != nil || len(cands) == 0 {
			return err
		}
		run = store.Run{Lane: l, First: cands[0].After(), Last: cands[len(cands)-1].After(), N: len(cands), WorkerID: worker,
			ClaimedAt: now.Truncate(time.Millisecond), LeaseExpiresAt: now.Add(testLease).Truncate(time.Millisecond)}
		run.ID, err = rt.InsertRun(t.Context(), &run)
		return err
	})
	return run, cands
}

// leaseLane moves the lane's head to its first candidate at or before
// at, leasing it, so that the lane has a head in at's millisecond.
func leaseLane(t *testing.T, s Store, l store.Lane, at time.Time) {
	t.Helper()
	mustRunTx(t, s, func(tx store.Tx, rt store.RunTx) error {
		head, _, err := rt.LaneHead(t.Context(), l, true)
		if err != nil {
			return err
		}
		pos := store.CandidatePos{Set: true, AvailableAt: at.UnixMilli(), Pos: math.MaxInt64 - 1}
		if head.Set && head.AvailableAt >= pos.AvailableAt {
			return nil
		}
		_, err = rt.InsertRun(t.Context(), &store.Run{Lane: l, First: pos, Last: pos, N: 1, WorkerID: "worker-9",
			ClaimedAt: at, LeaseExpiresAt: at.Add(time.Hour)})
		return err
	})
}

// readyMinutes specs n ready occurrences in lane at minutes from, from+1,
// ...
func readyMinutes(from, n int, lane record.Lane) []readySpec {
	specs := make([]readySpec, n)
	for i := range specs {
		specs[i] = readySpec{name: string(rune('a' + i)), minute: from + i, lane: lane}
	}
	return specs
}

func listOf(t *testing.T, s Store, sc *record.Schedule) []record.Occurrence {
	t.Helper()
	got, err := s.ListOccurrences(t.Context(), store.ListOccurrencesParams{TenantID: sc.TenantID, ScheduleID: sc.ScheduleID})
	if err != nil {
		t.Fatalf("ListOccurrences: %v", err)
	}
	return got
}

func sameAck(x, y store.RunAck) bool {
	return x.RunID == y.RunID && x.First == y.First && x.Last == y.Last && x.N == y.N && x.At.Equal(y.At)
}

func compareLanes(x, y store.Lane) int {
	return cmp.Or(cmp.Compare(x.TenantID, y.TenantID), cmp.Compare(x.Queue, y.Queue), cmp.Compare(x.Lane, y.Lane))
}

// sameRun compares runs field by field, times by instant.
func sameRun(x, y store.Run) bool {
	return x.ID == y.ID && x.Lane == y.Lane && x.First == y.First && x.Last == y.Last && x.N == y.N && x.Acked == y.Acked &&
		x.WorkerID == y.WorkerID && x.ClaimedAt.Equal(y.ClaimedAt) && x.LeaseExpiresAt.Equal(y.LeaseExpiresAt)
}
