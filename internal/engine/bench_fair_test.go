package engine

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
)

// runClock is a benchmark's clock: fixed at a virtual time while the
// benchmark sets up (the planner materializes ahead of the burst), then,
// from run, the real clock shifted so that it reads at at that moment.
// Delivery lags are then real durations counted from when the burst came
// due.
type runClock struct {
	fixed time.Time
	base  atomic.Pointer[[2]time.Time] // {at, the real time run was called}
}

func (c *runClock) Now() time.Time {
	if b := c.base.Load(); b != nil {
		return b[0].Add(time.Since(b[1]))
	}
	return c.fixed
}

func (c *runClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }

// run starts the real clock at at.
func (c *runClock) run(at time.Time) { c.base.Store(&[2]time.Time{at, time.Now()}) }

// BenchmarkFairPool is the fairness of a shared worker pool: at one
// instant tenant A has 200,000 due firings and tenant B 100, in the same
// queue, equal weights; four consumers claim for every tenant
// (AllTenants) in batches of 1,000, each acking its last batch with its
// next claim, on a SQLite file, until both are drained. It reports each
// tenant's delivery lag (first claimed at - scheduled for) at p50 and p99:
// B's p99 must stay within a second while A drains. Run it with
// -benchtime=1x: each op materializes the 200,100 occurrences (outside the
// timing) and drains them.
func BenchmarkFairPool(b *testing.B) { benchFairPool(b, sqliteBench) }

// BenchmarkFairPoolPG is BenchmarkFairPool on PostgreSQL.
func BenchmarkFairPoolPG(b *testing.B) {
	pgtest.DSN(b)
	benchFairPool(b, pgBench)
}

func benchFairPool(b *testing.B, be benchBackend) {
	const (
		bigN, smallN = 200_000, 100
		consumers    = 4
		batch        = MaxClaimBatch
	)
	var lags map[string][]time.Duration
	for b.Loop() {
		b.StopTimer()
		top := utc("2027-01-04T10:00:00Z")
		e, clk := burstEngine(b, be, top, func(e *Engine, st store.Store) {
			createTenants(b, e, map[string]int{"a": 1, "b": 1})
			fairLoad(b, st, be.shards, "a", bigN, top)
			fairLoad(b, st, be.shards, "b", smallN, top)
		}, bigN+smallN)
		lags = map[string][]time.Duration{}
		var (
			mu   sync.Mutex
			wg   sync.WaitGroup
			ferr atomic.Pointer[error]
		)
		clk.run(top)
		b.StartTimer()
		for w := range consumers {
			wg.Go(func() {
				var acks []AckItem
				for {
					req := ClaimRequest{Queue: "q", WorkerID: fmt.Sprintf("pool-%d", w), Limit: batch, Lease: 10 * time.Minute, AllTenants: true}
					rs, got, err := e.Queue.AckAndClaim(b.Context(), req, acks)
					if err == nil {
						for i := range rs {
							err = rs[i].Err
							if err != nil {
								break
							}
						}
					}
					if err != nil {
						ferr.CompareAndSwap(nil, &err)
						return
					}
					if len(got) == 0 {
						return // drained: the others hold what is left
					}
					mu.Lock()
					for i := range got {
						o := &got[i].Occurrence
						lags[o.TenantID] = append(lags[o.TenantID], o.FirstClaimedAt.Sub(o.ScheduledFor))
					}
					mu.Unlock()
					acks = poolAcks(got)
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		if p := ferr.Load(); p != nil {
			b.Fatal(*p)
		}
		if len(lags["a"]) != bigN || len(lags["b"]) != smallN {
			b.Fatalf("delivered %d of a's and %d of b's, want %d and %d", len(lags["a"]), len(lags["b"]), bigN, smallN)
		}
		b.StartTimer()
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, t := range []struct{ tenant, name string }{{"a", "A"}, {"b", "B"}} {
		l := lags[t.tenant]
		slices.Sort(l)
		b.ReportMetric(ms(quantile(l, 0.50)), t.name+"-p50-ms")
		b.ReportMetric(ms(quantile(l, 0.99)), t.name+"-p99-ms")
	}
	b.ReportMetric(float64(bigN+smallN)/(b.Elapsed().Seconds()/float64(b.N)), "occurrences/s")
}

// burstEngine is an engine on a fresh store of be, on a clock fixed 30 s
// before top, whose store load fills (schedules due at top), with every
// firing planned: want of them, on the queue before the burst. Start the
// clock with clk.run(top).
func burstEngine(b *testing.B, be benchBackend, top time.Time, load func(*Engine, store.Store), want int) (*Engine, *runClock) {
	b.Helper()
	clk := &runClock{fixed: top.Add(-30 * time.Second)}
	st := be.open(b)
	e, err := New(b.Context(), Config{Store: st, Clock: clk, Shards: be.shards, Horizon: time.Minute, IgnoreStoreClock: be.ignoreStoreClock})
	if err != nil {
		b.Fatal(err)
	}
	load(e, st)
	if n := planAll(b, e); n != want {
		b.Fatalf("planned %d occurrences, want %d", n, want)
	}
	return e, clk
}

// quantile is the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// BenchmarkPoolAckAndClaim is BenchmarkAckAndClaim with pool claims: the
// same 20,000 occurrences of ten tenants an hour, claimed for every tenant
// at once (AllTenants) by deficit round robin, each claim acking the
// batch before. Against BenchmarkAckAndClaim it is what the pool costs: a
// probe of each tenant for work and a claim per tenant's turn.
func BenchmarkPoolAckAndClaim(b *testing.B) {
	for _, batch := range []int{256, MaxClaimBatch} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			top := utc("2027-01-04T10:00:00Z")
			clk := clock.NewVirtual(top.Add(-30 * time.Second))
			e := benchEngine(b, sqliteBench, clk, DefaultPlanBatch, 20_000, top)
			for t := range 10 {
				if _, _, err := e.Tenants.Create(b.Context(), fmt.Sprintf("tenant-%d", t), TenantPatch{}); err != nil {
					b.Fatal(err)
				}
			}
			hour := 0
			refill := func() {
				clk.Set(top.Add(time.Duration(hour)*time.Hour - 30*time.Second))
				if _, err := e.PlanOnce(b.Context()); err != nil {
					b.Fatal(err)
				}
				clk.Set(top.Add(time.Duration(hour) * time.Hour))
				hour++
			}
			b.StopTimer()
			refill()
			b.StartTimer()
			cpu, cpu0 := time.Duration(0), cpuTime(b)
			done := 0
			var held []AckItem
			for b.Loop() {
				rs, got, err := e.Queue.AckAndClaim(b.Context(), ClaimRequest{Queue: "bench", WorkerID: "w", Limit: batch, AllTenants: true}, held)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range rs {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
				done += len(held)
				held = poolAcks(got)
				if len(got) == 0 { // the hour's burst is drained, and acked
					b.StopTimer()
					cpu += cpuTime(b) - cpu0
					refill()
					cpu0 = cpuTime(b)
					b.StartTimer()
				}
			}
			cpu += cpuTime(b) - cpu0
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "claim+ack/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(max(done, 1)), "cpu-µs/claim+ack")
		})
	}
}
