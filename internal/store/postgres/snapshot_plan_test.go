package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestTenantSnapshotPlan: a tenant's snapshot reads the tenant's range of
// the indexes that lead with it, and the due schedules of its shards,
// never a table whole, when another tenant holds most of the store (its
// history, its open occurrences and its schedules on every shard).
func TestTenantSnapshotPlan(t *testing.T) {
	t.Parallel()
	s, ctx := openTest(t), t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	const (
		busy   = 1000 // tenant-b's occurrences, most of them history
		shards = 64
	)
	states := []record.OccurrenceState{record.OccurrenceSucceeded, record.OccurrenceSucceeded, record.OccurrenceSucceeded,
		record.OccurrenceEnqueued, record.OccurrenceRunning, record.OccurrenceDead, record.OccurrenceRetryWait}
	var occs []record.Occurrence
	for i, tenant := range []string{"tenant-a", "tenant-b"} {
		n := 10
		if tenant == "tenant-b" {
			n = busy
		}
		sc := storetest.NewSchedule(tenant, fmt.Sprintf("sch_plan_%d", i))
		sc.Queue, sc.OverlapPolicy, sc.NextRunAt = "jobs", record.OverlapAllow, time.Time{}
		if err := s.InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		for j := range n {
			o := storetest.NewOccurrence(sc, t0.Add(time.Duration(j)*time.Minute))
			o.State, o.EnqueuedAt = states[j%len(states)], o.ScheduledFor
			switch o.State {
			case record.OccurrenceRunning:
				o.AttemptCount, o.FirstClaimedAt = 1, o.ScheduledFor
			case record.OccurrenceSucceeded, record.OccurrenceDead:
				o.FinishedAt = o.ScheduledFor
			}
			occs = append(occs, o)
		}
		for j := range n {
			// Due one every 10 minutes: most are beyond the window.
			c := storetest.NewSchedule(tenant, fmt.Sprintf("sch_plan_%d_%d", i, j))
			c.Shard, c.NextRunAt = j%shards, t0.Add(time.Duration(j)*10*time.Minute)
			if err := s.InsertSchedule(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.InsertOccurrences(ctx, occs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		query string
		args  []any
		want  []string // indexes the plan reads
	}{
		{"depth", qSnapshotTenantDepth, []any{t0.UnixMilli(), "tenant-a"},
			[]string{"occurrences_claim", "occurrences_running", "occurrences_scheduled", "occurrences_dead"}},
		{"oldest ready", qSnapshotTenantOldestReady, []any{t0.UnixMilli(), "tenant-a"}, []string{"occurrences_claim"}},
		{"queues' oldest ready", qSnapshotTenantQueueOldestReady, []any{t0.UnixMilli(), "tenant-a"}, []string{"occurrences_claim"}},
		{"due backlog", qSnapshotTenantDueBacklog, []any{t0.UnixMilli(), t0.Add(time.Hour).UnixMilli(), "tenant-a"},
			[]string{"occurrences_claim", "occurrences_scheduled", "schedules_due"}},
	} {
		text := explain(t, s, tc.name, tc.query, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(text, " using "+w+" on ") && !strings.Contains(text, " on "+w) {
				t.Errorf("%s: plan does not read index %s:\n%s", tc.name, w, text)
			}
		}
		for _, never := range []string{"Seq Scan on occurrences", "Seq Scan on schedules", "schedules_name", "occurrences_open", "occurrences_pkey"} {
			if strings.Contains(text, never) {
				t.Errorf("%s: plan has %q:\n%s", tc.name, never, text)
			}
		}
	}
}

// explain is PostgreSQL's plan of query with args, as one text.
func explain(t *testing.T, s *Store, name, query string, args ...any) string {
	t.Helper()
	rows, err := s.pool.Query(t.Context(), "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return strings.Join(plan, "\n")
}
