package postgres

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store/storetest"
)

// Statements of the size test alone: an ack's columns on the rows
// FillHistory wrote, vacuums, and the tables' sizes (heap, indexes and
// TOAST).
const (
	qTestAckAll = `UPDATE occurrences SET worker_id = 'worker-' || (seq % 64), claimed_at = scheduled_for + 1000,
    lease_expires_at = scheduled_for + 31000, att_finished_at = scheduled_for + 2000, att_result = 'SUCCEEDED'`
	qTestVacuum       = `VACUUM (ANALYZE) occurrences, attempts`
	qTestVacuumFull   = `VACUUM (FULL, ANALYZE) occurrences, attempts`
	qTestHistoryBytes = `SELECT pg_total_relation_size('occurrences') + pg_total_relation_size('attempts')`
)

// TestMeasureHistorySize measures the tables' bytes per finished firing
// (an acked occurrence, its latest attempt in its row) and what a
// retention of seven days at a million firings a day makes of it, as
// written and updated (with the space the ack's update left for reuse) and
// compacted. Slow: it runs only with SCHED_MEASURE_SIZE set (the number of
// firings, 1000000 for the figures in docs/retention.md).
func TestMeasureHistorySize(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SCHED_MEASURE_SIZE"))
	if testing.Short() || n <= 0 {
		t.Skip("set SCHED_MEASURE_SIZE to a number of firings")
	}
	s := openTest(t)
	ctx := t.Context()
	bytes := func() int64 {
		t.Helper()
		var b int64
		if err := s.pool.QueryRow(ctx, qTestHistoryBytes).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	empty := bytes()
	startAt := time.Now()
	end := storetest.FillHistory(t, s, n, 1000, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	inserted := bytes() - empty
	if _, err := s.pool.Exec(ctx, qTestAckAll); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, qTestVacuum); err != nil {
		t.Fatal(err)
	}
	t.Logf("postgres: filled in %s", time.Since(startAt).Round(time.Second))
	storetest.ReportHistorySize(t, "postgres as inserted, before the acks", n, inserted)
	storetest.ReportHistorySize(t, "postgres after the acks' updates and a VACUUM", n, bytes()-empty)
	if _, err := s.pool.Exec(ctx, qTestVacuumFull); err != nil {
		t.Fatal(err)
	}
	storetest.ReportHistorySize(t, "postgres compacted (VACUUM FULL)", n, bytes()-empty)
	storetest.ReportPurgeSpeed(t, s, "postgres", end, 5, 5_000)
}
