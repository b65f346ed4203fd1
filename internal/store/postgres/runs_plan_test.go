package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestRunPlans: at the top of the hour every firing shares one
// millisecond, and the runs not yet folded hold most of them. Every read of
// "the rows after a position" (a claim's candidates, the next available
// time, the oldest ready, the due backlog, a fold's range, a requeue, the
// run holding an occurrence) seeks the position in occurrences_claim or
// runs_lane: the buffers it touches are a few pages, where a walk over the
// leased rows before the position would touch hundreds. The figures are
// PostgreSQL's own count of the pages each plan read (EXPLAIN ANALYZE,
// BUFFERS), a property of the plan, not of the machine's speed.
func TestRunPlans(t *testing.T) {
	t.Parallel()
	s, ctx := openWithoutAutovacuum(t), t.Context()
	top := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	const (
		rows   = 60_000 // one lane's firings, all available at top
		leased = 50_000 // the first ones, held by a run
	)
	sc := storetest.NewSchedule("tenant-a", "sch_plan_runs")
	sc.Queue, sc.OverlapPolicy, sc.NextRunAt = "jobs", record.OverlapAllow, time.Time{}
	if err := s.InsertSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	// Another tenant's lane, so that the snapshot of every tenant walks
	// more than one row of lane_heads.
	other := storetest.NewSchedule("tenant-b", "sch_plan_runs_b")
	other.Queue, other.OverlapPolicy, other.NextRunAt = "jobs", record.OverlapAllow, time.Time{}
	if err := s.InsertSchedule(ctx, other); err != nil {
		t.Fatal(err)
	}
	batch := make([]record.Occurrence, 0, 5000)
	for i := range rows {
		o := storetest.NewOccurrence(sc, top.Add(-time.Duration(i)*time.Second))
		o.AvailableAt, o.State, o.EnqueuedAt = top, record.OccurrenceEnqueued, top
		if batch = append(batch, o); len(batch) == cap(batch) {
			if _, err := s.InsertOccurrences(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b := storetest.NewOccurrence(other, top)
	b.State, b.EnqueuedAt = record.OccurrenceEnqueued, top
	if _, err := s.InsertOccurrences(ctx, []record.Occurrence{b}); err != nil {
		t.Fatal(err)
	}
	seqs, err := pgx.CollectRows(must(s.pool.Query(ctx, `SELECT seq FROM occurrences WHERE tenant_id = 'tenant-a' ORDER BY seq`)),
		pgx.RowTo[int64])
	if err != nil || len(seqs) != rows {
		t.Fatalf("seqs: %d, %v", len(seqs), err)
	}
	pos := func(i int) store.CandidatePos {
		return store.CandidatePos{Set: true, AvailableAt: top.UnixMilli(), Pos: seqs[i]}
	}
	// The leased rows in runs of 100, as claims of MaxClaimBatch take
	// them at the top of the hour; the first has an ack range.
	lane := store.Lane{TenantID: "tenant-a", Queue: "jobs", Lane: record.LaneStrict}
	const runRows = 100
	err = store.InTx(ctx, s, func(tx store.Tx) error {
		rt := tx.(store.RunTx)
		if _, _, err := rt.LaneHead(ctx, lane, true); err != nil {
			return err
		}
		for i := 0; i < leased; i += runRows {
			run := store.Run{Lane: lane, First: pos(i), Last: pos(i + runRows - 1), N: runRows, WorkerID: "w", ClaimedAt: top,
				LeaseExpiresAt: top.Add(time.Minute)}
			id, err := rt.InsertRun(ctx, &run)
			if err != nil {
				return err
			}
			if i == 0 {
				err = rt.AppendRunAcks(ctx, []store.RunAck{{RunID: id, First: pos(10), Last: pos(20), N: 11, At: top}})
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	head, mid := pos(leased-1), pos(leased+500)
	id := func(i int) string {
		return record.OccurrenceID(sc.ScheduleID, sc.Version, top.Add(-time.Duration(i)*time.Second))
	}
	now, inHour := top.Add(time.Second).UnixMilli(), top.Add(time.Hour).UnixMilli()
	from := top.Add(-time.Minute).UnixMilli()
	cases := []struct {
		name    string
		query   string
		args    []any
		want    []string // indexes the plan reads
		buffers int      // at most this many pages (a walk of the leased rows reads hundreds)
		stats   bool     // its plan needs the table's statistics (the store's own ANALYZE, analyze.go)
	}{
		{"claim candidates after the head", qClaimCandidatesHeld,
			[]any{"tenant-a", "jobs", "strict", now, head.AvailableAt, head.Pos, 10}, []string{"occurrences_claim"}, 40, false},
		{"next available", qNextAvailable, []any{"tenant-a", "jobs"}, []string{"occurrences_claim"}, 20, false},
		{"oldest ready", qSnapshotOldestReady, []any{now}, []string{"occurrences_claim"}, 30, false},
		{"tenant oldest ready", qSnapshotTenantOldestReady, []any{now, "tenant-a"}, []string{"occurrences_claim"}, 30, false},
		{"queues' oldest ready", qSnapshotQueueOldestReady, []any{now}, []string{"occurrences_claim"}, 30, false},
		{"tenant queues' oldest ready", qSnapshotTenantQueueOldestReady, []any{now, "tenant-a"}, []string{"occurrences_claim"}, 30, false},
		// The rows after the head (10,000 of them, about 60 pages of the
		// index, read alone) and none before: the window starts before
		// the head.
		{"due backlog", qSnapshotDueBacklog, []any{from, inHour}, []string{"occurrences_claim"}, 150, true},
		{"tenant due backlog", qSnapshotTenantDueBacklog, []any{from, inHour, "tenant-a"}, []string{"occurrences_claim"}, 150, true},
		// A window that starts after the head's millisecond reads from
		// its start.
		{"due backlog after the head", qSnapshotTenantDueBacklog, []any{top.Add(time.Millisecond).UnixMilli(), inHour, "tenant-a"},
			[]string{"occurrences_claim"}, 30, true},
		// A range in the middle of the leased rows.
		{"fold archived", qFoldArchived, []any{"tenant-a", "jobs", "strict", pos(30_000).AvailableAt, pos(30_000).Pos,
			pos(30_010).AvailableAt, pos(30_010).Pos}, []string{"occurrences_claim", "Tid Scan"}, 60, false},
		// Most of its pages are the writes of ten rows (an entry in each
		// index); a walk to the millisecond's end would add 240.
		{"fold range", qFoldRange, []any{"tenant-a", "jobs", "strict", pos(20_000).AvailableAt, pos(20_000).Pos,
			pos(20_009).AvailableAt, pos(20_009).Pos, "w", top.UnixMilli(), top.Add(time.Minute).UnixMilli(), "RUNNING", nil, nil},
			[]string{"occurrences_claim", "Tid Scan"}, 300, false},
		{"requeue rows", qRequeueRows, []any{"tenant-a", "jobs", "strict", now, []int64{mid.AvailableAt}, []int64{mid.Pos}},
			[]string{"occurrences_claim"}, 60, true},
		// The run holding each: a seek of runs_lane.
		{"leased items", qLeasedItems, []any{"tenant-a", []string{id(40_000), id(15), id(leased + 5)}},
			[]string{"occurrences_pkey", "runs_lane"}, 60, true},
	}
	// A store filled just before the top of the hour has no statistics
	// of what it holds yet (the test's schema keeps autovacuum off
	// occurrences): no plan may depend on them. Before VACUUM an
	// index-only read visits the heap too, so the pages may be twice as
	// many, never the hundreds of a walk.
	for _, tc := range cases {
		if tc.stats {
			continue
		}
		t.Run("before statistics/"+tc.name, func(t *testing.T) {
			checkRunPlan(t, s, tc.query, tc.args, tc.want, 2*tc.buffers)
		})
	}
	// With the statistics the store gathers itself after a large insert
	// (analyze.go), no plan reads more than the table once: before them
	// the due backlog read it eighty times over. Until VACUUM sets the
	// visibility map, a count of many rows may read the table rather than
	// the index and the heap both.
	if _, err := s.pool.Exec(ctx, qAnalyzeOccurrences); err != nil {
		t.Fatal(err)
	}
	var tablePages int
	if err := s.pool.QueryRow(ctx, "SELECT relpages FROM pg_class WHERE oid = 'occurrences'::regclass").Scan(&tablePages); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run("after ANALYZE/"+tc.name, func(t *testing.T) {
			if !tc.stats {
				checkRunPlan(t, s, tc.query, tc.args, tc.want, 2*tc.buffers)
				return
			}
			plan, buffers := explainAnalyze(t, s, tc.query, tc.args...)
			t.Logf("%d pages (the table: %d)", buffers, tablePages)
			if buffers > tablePages+tc.buffers {
				t.Errorf("plan read %d pages, more than the table's %d:\n%s", buffers, tablePages, plan)
			}
		})
	}
	if _, err := s.pool.Exec(ctx, "VACUUM ANALYZE occurrences, runs, run_acks, lane_heads"); err != nil {
		t.Fatal(err)
	}
	// VACUUM sets the visibility map, so that the index-only reads
	// count index pages alone, whatever autovacuum has done yet.
	if _, err := s.pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkRunPlan(t, s, tc.query, tc.args, tc.want, tc.buffers)
		})
	}
}

// checkRunPlan runs query under EXPLAIN ANALYZE and fails t unless the
// plan reads each index of want, never walks occurrences whole, and reads
// at most maxPages pages.
func checkRunPlan(t *testing.T, s *Store, query string, args []any, want []string, maxPages int) {
	t.Helper()
	plan, buffers := explainAnalyze(t, s, query, args...)
	for _, w := range want {
		if !strings.Contains(plan, w) {
			t.Errorf("plan does not read %s:\n%s", w, plan)
		}
	}
	for _, never := range []string{"Seq Scan on occurrences", "Bitmap Heap Scan on occurrences"} {
		if strings.Contains(plan, never) {
			t.Errorf("plan has %q:\n%s", never, plan)
		}
	}
	t.Logf("%d pages", buffers)
	if buffers > maxPages {
		t.Errorf("plan read %d pages, want at most %d:\n%s", buffers, maxPages, plan)
	}
}

// must is the rows of a query, or a panic: for a test's setup.
func must(rows pgx.Rows, err error) pgx.Rows {
	if err != nil {
		panic(err)
	}
	return rows
}

// explainAnalyze runs query with args under EXPLAIN (ANALYZE, BUFFERS) in
// a transaction it rolls back (a write is run, then undone), and returns
// the plan and the pages its execution read or hit (the top node's
// figures, which count its children's).
func explainAnalyze(t *testing.T, s *Store, query string, args ...any) (string, int) {
	t.Helper()
	ctx := t.Context()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF) "+query, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	plan := strings.Join(lines, "\n")
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "Buffers:") {
			continue
		}
		n := 0
		for _, f := range strings.Fields(l) {
			var v int
			if _, err := fmt.Sscanf(f, "hit=%d", &v); err == nil {
				n += v
			} else if _, err := fmt.Sscanf(f, "read=%d", &v); err == nil {
				n += v
			}
		}
		return plan, n
	}
	return plan, 0
}
