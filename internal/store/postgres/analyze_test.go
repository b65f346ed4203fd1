package postgres

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestStatsAfterLargeInsert: a store that inserted many occurrences
// gathers the table's statistics itself, without waiting for autovacuum
// (kept off here), so that the queue's reads at the top of the hour are
// planned on what the table holds.
func TestStatsAfterLargeInsert(t *testing.T) {
	t.Parallel()
	s, ctx := openWithoutAutovacuum(t), t.Context()
	reltuples := func() float64 {
		t.Helper()
		var n float64
		if err := s.pool.QueryRow(ctx, "SELECT reltuples FROM pg_class WHERE oid = 'occurrences'::regclass").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := reltuples(); n >= 0 {
		t.Fatalf("a new table has statistics (reltuples %v)", n)
	}
	s.stats.every = 3000
	sc := storetest.NewSchedule("tenant-a", "sch_stats")
	if err := s.InsertSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	top := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	for batch := range 2 {
		occs := make([]record.Occurrence, 2000)
		for i := range occs {
			occs[i] = storetest.NewOccurrence(sc, top.Add(-time.Duration(batch*2000+i)*time.Second))
		}
		if _, err := s.InsertOccurrences(ctx, occs); err != nil {
			t.Fatal(err)
		}
		s.waitStats()
		if got := reltuples(); batch == 0 && got >= 0 {
			t.Fatalf("statistics after 2,000 rows, below the threshold of 3,000 (reltuples %v)", got)
		} else if batch == 1 && got < 3000 {
			t.Fatalf("after 4,000 rows, past the threshold of 3,000, reltuples is %v", got)
		}
	}
}
