package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/spec"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres"
)

// The benchmarks of bench_test.go on the PostgreSQL store: the same
// workloads (20,000 hourly schedules firing at one second, planned 30 s
// ahead; claim batches acked in batches), on a schema of their own in the
// database named by SCHED_TEST_POSTGRES_DSN. They skip without it.

// pgEngineDSNVar names the test database's DSN (as in the store's tests).
const pgEngineDSNVar = "SCHED_TEST_POSTGRES_DSN"

// pgEngineDSN returns the test database's DSN, or skips.
func pgEngineDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(pgEngineDSNVar)
	if dsn == "" {
		tb.Skip("PostgreSQL tests skipped: set " + pgEngineDSNVar + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run them")
	}
	return dsn
}

// pgEngineSchema returns a fresh schema name, dropped when the test ends
// (after the stores opened on it are closed: cleanups run last first).
func pgEngineSchema(tb testing.TB, dsn string) string {
	tb.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	schema := "e_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), dsn, schema); err != nil {
			tb.Errorf("DropSchema: %v", err)
		}
	})
	return schema
}

// pgEngineStore opens a store on schema, closed when the test ends.
func pgEngineStore(tb testing.TB, dsn, schema string) *postgres.Store {
	tb.Helper()
	st, err := postgres.Open(tb.Context(), dsn, postgres.WithSchema(schema))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// benchSchedulesOn is benchSchedules on any store, inserting from several
// goroutines (one insert is a round trip to the server).
func benchSchedulesOn(b *testing.B, st store.Store, n, shards int, next time.Time) {
	b.Helper()
	now := next.Add(-time.Hour)
	const workers = 16
	var (
		wg   sync.WaitGroup
		once sync.Once
		ferr error
	)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				id := fmt.Sprintf("sch_bench%07d", i)
				sc := &store.Schedule{
					TenantID: fmt.Sprintf("tenant-%d", i%10), ScheduleID: id, Shard: ShardOf(id, shards), Name: id,
					Kind: spec.KindCron, Expr: "0 * * * *", TimeZone: "UTC", DSTGap: spec.GapSkip, DSTRepeat: spec.RepeatFirst,
					Version: 1, State: store.ScheduleActive, NextRunAt: next, Queue: "bench",
					MisfirePolicy: store.MisfireFireOnce, MaxLateness: time.Minute, OverlapPolicy: store.OverlapAllow,
					Retry:     store.RetryPolicy{MaxAttempts: 10, BackoffBase: time.Second, BackoffCap: time.Minute, Deadline: 24 * time.Hour},
					CreatedAt: now, UpdatedAt: now,
				}
				if err := st.InsertSchedule(b.Context(), sc); err != nil {
					once.Do(func() { ferr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	if ferr != nil {
		b.Fatal(ferr)
	}
}

func benchEnginePG(b *testing.B, clk *clock.Virtual, batch int) (*Engine, *postgres.Store) {
	b.Helper()
	dsn := pgEngineDSN(b)
	st := pgEngineStore(b, dsn, pgEngineSchema(b, dsn))
	e, err := New(b.Context(), Config{Store: st, Clock: clk, Shards: 16, PlanBatch: batch, Horizon: time.Minute, IgnoreStoreClock: true})
	if err != nil {
		b.Fatal(err)
	}
	return e, st
}

// BenchmarkMaterializePG is BenchmarkMaterialize on PostgreSQL.
func BenchmarkMaterializePG(b *testing.B) {
	const (
		schedules  = 20_000
		benchHours = 4
	)
	pgEngineDSN(b)
	for _, batch := range []int{500, 2000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			top := utc("2027-01-04T10:00:00Z")
			clk := clock.NewVirtual(top.Add(-30 * time.Second))
			e, st := benchEnginePG(b, clk, batch)
			benchSchedulesOn(b, st, schedules, 16, top)
			total, hour := 0, 0
			b.ResetTimer()
			for b.Loop() {
				for range benchHours {
					clk.Set(top.Add(time.Duration(hour)*time.Hour - 30*time.Second))
					ps, err := e.PlanOnce(b.Context())
					if err != nil {
						b.Fatal(err)
					}
					if ps.Enqueued != schedules {
						b.Fatalf("hour %d enqueued %d, want %d", hour, ps.Enqueued, schedules)
					}
					total += ps.Enqueued
					hour++
				}
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "occurrences/s")
		})
	}
}

// BenchmarkClaimAckPG is BenchmarkClaimAck on PostgreSQL.
func BenchmarkClaimAckPG(b *testing.B) { benchClaimAckPG(b, false) }

// BenchmarkAckAndClaimPG is BenchmarkAckAndClaim on PostgreSQL.
func BenchmarkAckAndClaimPG(b *testing.B) { benchClaimAckPG(b, true) }

// benchClaimAckPG is benchClaimAck on PostgreSQL (the same loop; that one
// is bound to the SQLite harness).
func benchClaimAckPG(b *testing.B, combined bool) {
	pgEngineDSN(b)
	for _, batch := range []int{64, 256, MaxClaimBatch} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			top := utc("2027-01-04T10:00:00Z")
			clk := clock.NewVirtual(top.Add(-30 * time.Second))
			e, st := benchEnginePG(b, clk, 2000)
			const schedules = 20_000
			benchSchedulesOn(b, st, schedules, 16, top)
			hour := 0
			var ready []string // tenants with work left in this hour's burst
			refill := func() {
				clk.Set(top.Add(time.Duration(hour)*time.Hour - 30*time.Second))
				if _, err := e.PlanOnce(b.Context()); err != nil {
					b.Fatal(err)
				}
				clk.Set(top.Add(time.Duration(hour) * time.Hour))
				hour++
				ready = ready[:0]
				for t := range 10 {
					ready = append(ready, fmt.Sprintf("tenant-%d", t))
				}
			}
			check := func(rs []store.FinishResult) {
				for _, r := range rs {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			b.StopTimer()
			refill()
			b.StartTimer()
			done := 0
			var held []AckItem // claimed, not yet acked (combined)
			heldBy := ""
			ackHeld := func() {
				if len(held) == 0 {
					return
				}
				rs, err := e.AckBatch(b.Context(), heldBy, held)
				if err != nil {
					b.Fatal(err)
				}
				check(rs)
				done += len(held)
				held = held[:0]
			}
			for b.Loop() {
				if len(ready) == 0 {
					ackHeld()
					b.StopTimer()
					refill()
					b.StartTimer()
				}
				tenant := ready[0]
				req := ClaimRequest{TenantID: tenant, Queue: "bench", WorkerID: "w", Limit: batch}
				if combined {
					if heldBy != tenant {
						ackHeld()
					}
					rs, got, err := e.AckAndClaim(b.Context(), req, held)
					if err != nil {
						b.Fatal(err)
					}
					check(rs)
					done += len(held)
					held, heldBy = held[:0], tenant
					for _, c := range got {
						held = append(held, AckItem{OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt})
					}
					if len(got) < batch {
						ready = ready[1:]
					}
					continue
				}
				got, err := e.Claim(b.Context(), req)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) < batch {
					ready = ready[1:]
				}
				items := make([]AckItem, len(got))
				for i, c := range got {
					items[i] = AckItem{OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt}
				}
				rs, err := e.AckBatch(b.Context(), tenant, items)
				if err != nil {
					b.Fatal(err)
				}
				check(rs)
				done += len(got)
			}
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "claim+ack/s")
		})
	}
}
