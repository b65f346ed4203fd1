package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// The store alone must keep up with the design's burst (100,000 strict
// firings a second for 5 s, spread over nodes): the target on this store is
// 50,000 occurrences materialized per second and 50,000 claim+ack per
// second. Run with
//
//	go test -run '^$' -bench . -benchtime 5s ./internal/store/sqlite
//
// and read occ/s. The files are real files in WAL mode with
// synchronous=FULL, as in production.
//
// Measured on the 2-core development machine when these were written:
// about 23,000-32,000 occ/s for CommitPlan and 13,000-14,000 occ/s for
// claim+ack; since the current attempt moved into the occurrence row (a
// claim writes the table, the claim index and the lease index, an ack the
// table, the lease index and the open index) claim+ack is about 20,000-
// 22,000 occ/s. Both are short of the target. The time is SQLite's own
// work (b-tree searches and page writes in pure Go, about 3 µs per index
// operation), not fsync (synchronous=OFF measures the same) and no longer
// statement overhead (batches are one statement each, prepared once).
// FinishAndClaim, which saves one commit per batch, measures the same as
// a separate claim and ack, which agrees.

var benchT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// benchSchedules inserts n ACTIVE allow schedules of shard 0 with their
// cursor at benchT0, in one transaction.
func benchSchedules(b *testing.B, s *Store, n int) []*record.Schedule {
	b.Helper()
	tx, err := s.w.BeginTx(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	out := make([]*record.Schedule, n)
	for i := range out {
		sc := storetest.NewSchedule(fmt.Sprintf("tenant-%d", i%10), fmt.Sprintf("sch_%06d", i))
		sc.Shard, sc.NextRunAt, sc.Queue, sc.OverlapPolicy = 0, benchT0, "jobs", record.OverlapAllow
		sc.Payload = []byte(`{"job":"bench"}`)
		if _, err := tx.ExecContext(b.Context(), qInsertSchedule, scheduleArgs(sc)...); err != nil {
			b.Fatal(err)
		}
		out[i] = sc
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return out
}

// benchStore opens a store on a fresh file.
func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(b.Context(), b.TempDir()+"/bench.db")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkCommitPlan: one planner batch of 1,000 schedules, each with one
// ENQUEUED firing, per iteration.
func BenchmarkCommitPlan(b *testing.B) {
	const batch = 1000
	s := benchStore(b)
	ctx := b.Context()
	scs := benchSchedules(b, s, batch)
	lease, err := s.AcquireShard(ctx, store.AcquireShardParams{Shard: 0, Owner: "bench", TTL: 1000 * time.Hour, Now: benchT0})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]store.PlanItem, batch)
	occs := make([]record.Occurrence, batch)
	step := 0
	b.ResetTimer()
	for b.Loop() {
		cursor := benchT0.Add(time.Duration(step) * time.Minute)
		next := cursor.Add(time.Minute)
		// The planner reads its page (DueSchedules) before it commits it,
		// and the store remembers the rows it read the schedules at.
		b.StopTimer()
		due, err := s.DueSchedules(ctx, store.DueSchedulesParams{Shard: 0, Until: cursor, Limit: batch})
		if err != nil || len(due) != batch {
			b.Fatalf("DueSchedules: %d, %v", len(due), err)
		}
		b.StartTimer()
		for i, sc := range scs {
			o := storetest.NewOccurrence(sc, cursor)
			o.State = record.OccurrenceEnqueued
			occs[i] = o
			items[i] = store.PlanItem{TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: 1, Cursor: cursor,
				NextRunAt: next, State: record.ScheduleActive, Occurrences: occs[i : i+1]}
		}
		res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: cursor, Items: items})
		if err != nil || res.Inserted != batch {
			b.Fatalf("CommitPlan: %+v, %v", res, err)
		}
		step++
	}
	b.ReportMetric(float64(step*batch)/b.Elapsed().Seconds(), "occ/s")
}

// BenchmarkClaimFinish: claim 256 occurrences and ack them in one batch,
// per iteration, from a queue kept at least 25,000 deep.
func BenchmarkClaimFinish(b *testing.B) {
	const (
		batch = 256
		depth = 25_000
	)
	s := benchStore(b)
	ctx := b.Context()
	scs := benchSchedules(b, s, 1000)
	queued, minute := 0, 0
	refill := func() {
		var occs []record.Occurrence
		for queued+len(occs) < 2*depth {
			at := benchT0.Add(time.Duration(minute) * time.Minute)
			for _, sc := range scs {
				o := storetest.NewOccurrence(sc, at)
				o.State, o.EnqueuedAt = record.OccurrenceEnqueued, at
				occs = append(occs, o)
			}
			minute++
		}
		n, err := s.InsertOccurrences(ctx, occs)
		if err != nil {
			b.Fatal(err)
		}
		queued += n
	}
	refill()
	now := benchT0.Add(1000 * time.Hour)
	claimed := 0
	fin := make([]store.FinishParams, 0, batch)
	b.ResetTimer()
	for b.Loop() {
		if queued < depth {
			b.StopTimer()
			refill()
			b.StartTimer()
		}
		// Each iteration claims from one tenant's queue, as one worker does.
		tenant := fmt.Sprintf("tenant-%d", claimed/batch%10)
		got, err := engine.ClaimOccurrences(ctx, s, store.ClaimParams{TenantID: tenant, Queue: "jobs", WorkerID: "w", Limit: batch, Lease: time.Minute, Now: now})
		if err != nil || len(got) != batch {
			b.Fatalf("claim: %d, %v", len(got), err)
		}
		fin = fin[:0]
		for _, c := range got {
			fin = append(fin, store.FinishParams{TenantID: tenant, OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt,
				Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now})
		}
		res, err := s.FinishAttempts(ctx, fin)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		claimed += batch
		queued -= batch
	}
	b.ReportMetric(float64(claimed)/b.Elapsed().Seconds(), "occ/s")
}
