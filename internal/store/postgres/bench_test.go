package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// The same two benchmarks as the SQLite store's (store/sqlite/bench_test.go),
// so that the figures compare: one planner batch of 1,000 schedules per
// CommitPlan, and claims of 256 acked in one batch. Run with
//
//	SCHED_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	    go test -run '^$' -bench . -benchtime 5s ./internal/store/postgres
//
// and read occ/s. The database is the machine's PostgreSQL as configured
// (synchronous_commit and fsync on), on loopback TCP; each benchmark runs in
// a schema of its own.
//
// Measured on the 2-core development machine when these were written
// (PostgreSQL 15 on the same two cores as the benchmark, fsync and
// synchronous_commit on): about 20,000 occ/s for CommitPlan and 14,500-
// 15,300 occ/s for claim+ack, with FinishAndClaim no faster than the two
// calls (the commit is not the cost here). The SQLite store measured about
// 21,000 and 16,000 in the same session. The time is PostgreSQL's index
// maintenance: advancing a schedule's cursor changes next_run_at, which
// schedules_due indexes, so the update is never HOT and writes a new entry
// in each of the table's five indexes; a claim and an ack change state,
// which the queue's partial indexes name, with the same effect on
// occurrences.

var benchT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// benchSchedules inserts n ACTIVE allow schedules of shard 0 with their
// cursor at benchT0, in one transaction.
func benchSchedules(b *testing.B, s *Store, n int) []*record.Schedule {
	b.Helper()
	tx, err := s.pool.Begin(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback(b.Context())
	out := make([]*record.Schedule, n)
	for i := range out {
		sc := storetest.NewSchedule(fmt.Sprintf("tenant-%d", i%10), fmt.Sprintf("sch_%06d", i))
		sc.Shard, sc.NextRunAt, sc.Queue, sc.OverlapPolicy = 0, benchT0, "jobs", record.OverlapAllow
		sc.Payload = []byte(`{"job":"bench"}`)
		if _, err := tx.Exec(b.Context(), qInsertSchedule, scheduleArgs(sc)...); err != nil {
			b.Fatal(err)
		}
		out[i] = sc
	}
	if err := tx.Commit(b.Context()); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkCommitPlan: one planner batch of 1,000 schedules, each with one
// ENQUEUED firing, per iteration.
func BenchmarkCommitPlan(b *testing.B) {
	const batch = 1000
	s := openTest(b)
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
	benchClaimFinish(b, false)
}

// BenchmarkFinishAndClaim: the same work with each iteration's ack and the
// next claim in one transaction (store.Store.FinishAndClaim).
func BenchmarkFinishAndClaim(b *testing.B) {
	benchClaimFinish(b, true)
}

func benchClaimFinish(b *testing.B, combined bool) {
	const (
		batch = 256
		depth = 25_000
	)
	s := openTest(b)
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
		claim := store.ClaimParams{TenantID: tenant, Queue: "jobs", WorkerID: "w", Limit: batch, Lease: time.Minute, Now: now}
		var (
			res []store.FinishResult
			got []store.Claimed
			err error
		)
		if combined {
			// The previous iteration's acks ride with this claim.
			res, got, err = engine.FinishAndClaim(ctx, s, fin, claim)
		} else {
			got, err = engine.ClaimOccurrences(ctx, s, claim)
		}
		if err != nil || len(got) != batch {
			b.Fatalf("claim: %d, %v", len(got), err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		fin = fin[:0]
		for _, c := range got {
			fin = append(fin, store.FinishParams{TenantID: tenant, OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt,
				Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now})
		}
		if !combined {
			res, err := s.FinishAttempts(ctx, fin)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
		claimed += batch
		queued -= batch
	}
	b.ReportMetric(float64(claimed)/b.Elapsed().Seconds(), "occ/s")
}
