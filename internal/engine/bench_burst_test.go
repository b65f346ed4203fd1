package engine

import (
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
)

// BenchmarkBurst is the top of the hour inside one process: 200,000
// strict firings of one tenant due at one instant, already on the queue
// (the planner materializes ahead), drained by four consumers claiming
// batches of 1,000 and acking each batch with their next claim, on a
// SQLite file. It reports the delivery lag (first claimed at - scheduled
// for) at p50 and p99 and the deliveries per second: what the engine and
// the store allow before HTTP is added. Run it with -benchtime=1x. With
// SCHED_BENCH_CPUPROFILE=FILE the drain alone is profiled.
func BenchmarkBurst(b *testing.B) { benchBurst(b, sqliteBench) }

// BenchmarkBurstPG is BenchmarkBurst on PostgreSQL.
func BenchmarkBurstPG(b *testing.B) {
	pgtest.DSN(b)
	benchBurst(b, pgBench)
}

func benchBurst(b *testing.B, be benchBackend) {
	const (
		n         = 200_000
		consumers = 4
	)
	var lags []time.Duration
	for b.Loop() {
		b.StopTimer()
		top := utc("2027-01-04T10:00:00Z")
		e, clk := burstEngine(b, be, top, func(_ *Engine, st store.Store) { fairLoad(b, st, be.shards, "default", n, top) }, n)
		lags = lags[:0]
		var (
			mu   sync.Mutex
			wg   sync.WaitGroup
			ferr atomic.Pointer[error]
		)
		if p := os.Getenv("SCHED_BENCH_CPUPROFILE"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
			defer f.Close()
		}
		clk.run(top)
		b.StartTimer()
		for w := range consumers {
			wg.Go(func() {
				var acks []AckItem
				for {
					req := ClaimRequest{TenantID: "default", Queue: "q", WorkerID: fmt.Sprintf("w-%d", w), Limit: MaxClaimBatch, Lease: 10 * time.Minute}
					rs, got, err := e.Queue.AckAndClaim(b.Context(), req, acks)
					if err == nil {
						for i := range rs {
							if err = rs[i].Err; err != nil {
								break
							}
						}
					}
					if err != nil {
						ferr.CompareAndSwap(nil, &err)
						return
					}
					if len(got) == 0 && len(acks) == 0 {
						return
					}
					mu.Lock()
					for i := range got {
						o := &got[i].Occurrence
						lags = append(lags, o.FirstClaimedAt.Sub(o.ScheduledFor))
					}
					mu.Unlock()
					acks = poolAcks(got)
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		pprof.StopCPUProfile()
		if p := ferr.Load(); p != nil {
			b.Fatal(*p)
		}
		if len(lags) != n {
			b.Fatalf("delivered %d, want %d", len(lags), n)
		}
		b.StartTimer()
	}
	slices.Sort(lags)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(quantile(lags, 0.50)), "p50-ms")
	b.ReportMetric(ms(quantile(lags, 0.99)), "p99-ms")
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "deliveries/s")
}
