package engine

import (
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

// benchBackend is a store the engine benchmarks run on.
type benchBackend struct {
	// open returns a fresh store, closed when the benchmark ends.
	open func(b *testing.B) store.Store
	// insertWorkers is how many goroutines insert the schedules: more than
	// one where an insert is a round trip to a server.
	insertWorkers int
	// ignoreStoreClock is Config.IgnoreStoreClock.
	ignoreStoreClock bool
	// shards is the number of logical shards.
	shards int
}

// sqliteBench is a file-backed SQLite store (WAL, synchronous=FULL).
var sqliteBench = benchBackend{
	open: func(b *testing.B) store.Store {
		b.Helper()
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	},
	insertWorkers: 1,
	shards:        sqlite.DefaultShards, // as schedd sets up a new SQLite store
}

// cpuTime is the CPU time this process has used, user and system, on
// every core. The benchmarks report it per operation beside the wall-clock
// rate: on a shared machine the rate swings with what the neighbours do,
// while the CPU an operation costs moves far less, so it is the figure to
// compare two builds by. It counts this process alone: a database server's
// CPU (PostgreSQL's) is not in it.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSchedules stores n hourly schedules, all firing at the top of the
// hour: the burst shape the scheduler is built for. It inserts from workers goroutines.
func benchSchedules(b *testing.B, st store.Store, workers, n, shards int, next time.Time) {
	b.Helper()
	now := next.Add(-time.Hour)
	var (
		wg   sync.WaitGroup
		once sync.Once
		ferr error
	)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				id := fmt.Sprintf("sch_bench%07d", i)
				sc := &record.Schedule{
					TenantID: fmt.Sprintf("tenant-%d", i%10), ScheduleID: id, Shard: record.ShardOf(id, shards), Name: id,
					Kind: timetable.KindCron, Expr: "0 * * * *", TimeZone: "UTC", DSTGap: timetable.GapSkip, DSTRepeat: timetable.RepeatFirst,
					Version: 1, State: record.ScheduleActive, NextRunAt: next, Queue: "bench",
					MisfirePolicy: record.MisfireFireOnce, MaxLateness: time.Minute, OverlapPolicy: record.OverlapAllow,
					Retry:     record.RetryPolicy{MaxAttempts: 10, BackoffBase: time.Second, BackoffCap: time.Minute, Deadline: 24 * time.Hour},
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

// benchEngine opens a store on be and an engine on it, with schedules
// hourly schedules firing at next.
func benchEngine(b *testing.B, be benchBackend, clk *clock.Virtual, batch, schedules int, next time.Time) *Engine {
	b.Helper()
	st := be.open(b)
	e, err := New(b.Context(), Config{Store: st, Clock: clk, Shards: be.shards, PlanBatch: batch, Horizon: time.Minute, IgnoreStoreClock: be.ignoreStoreClock})
	if err != nil {
		b.Fatal(err)
	}
	benchSchedules(b, st, be.insertWorkers, schedules, be.shards, next)
	return e
}

// BenchmarkMaterialize: occurrences materialized and committed per second
// by the planner on a file-backed SQLite store (WAL, synchronous=FULL):
// 20,000 schedules firing at the same second (a top-of-the-hour burst),
// planned 30 s before it, in transactions of PlanBatch schedules. Each op is
// benchHours planner passes, one per hour, every schedule firing once per
// pass: a single pass takes about a second, so an op of one pass gave b.Loop
// one or two samples, and whether a WAL checkpoint fell inside them swung
// the figure by a fifth.
func BenchmarkMaterialize(b *testing.B) { benchMaterialize(b, sqliteBench, false) }

// BenchmarkMaterializeDrained is BenchmarkMaterialize on a queue that
// workers keep up with: before each pass (outside the timing) the hour
// before's occurrences are claimed and acked, so every schedule has its
// history but at most its newest occurrence open.
func BenchmarkMaterializeDrained(b *testing.B) { benchMaterialize(b, sqliteBench, true) }

// ackItemsOf appends the acks of the claims got to dst.
func ackItemsOf(dst []AckItem, got []store.Claimed) []AckItem {
	for _, c := range got {
		dst = append(dst, AckItem{OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt})
	}
	return dst
}

// drainHour claims and acks every occurrence available at now, for the
// benchmarks' ten tenants.
func drainHour(b *testing.B, e *Engine) {
	b.Helper()
	for t := range 10 {
		tenant := fmt.Sprintf("tenant-%d", t)
		for {
			got, err := e.Queue.Claim(b.Context(), ClaimRequest{TenantID: tenant, Queue: "bench", WorkerID: "w", Limit: MaxClaimBatch})
			if err != nil {
				b.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
			if _, err := e.Queue.AckBatch(b.Context(), tenant, ackItemsOf(nil, got)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchMaterialize(b *testing.B, be benchBackend, drain bool) {
	const (
		schedules  = 20_000
		benchHours = 4
	)
	for _, batch := range []int{1000, DefaultPlanBatch, 20_000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			top := utc("2027-01-04T10:00:00Z")
			clk := clock.NewVirtual(top.Add(-30 * time.Second))
			e := benchEngine(b, be, clk, batch, schedules, top)
			total, hour := 0, 0
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for b.Loop() {
				for range benchHours {
					if drain && hour > 0 {
						b.StopTimer()
						cpu := cpuTime(b)
						clk.Set(top.Add(time.Duration(hour-1) * time.Hour))
						drainHour(b, e)
						cpu0 += cpuTime(b) - cpu // the drain's CPU is not the planner's
						b.StartTimer()
					}
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
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(total), "cpu-µs/occurrence")
		})
	}
}

// BenchmarkClaimAck: claims plus acks per second on a file-backed SQLite
// store: a worker claims a batch and acknowledges it in one batch, two
// transactions per batch.
func BenchmarkClaimAck(b *testing.B) { benchClaimAck(b, sqliteBench, false) }

// BenchmarkAckAndClaim: the same with Queue.AckAndClaim, which acks the
// previous batch and claims the next in one transaction.
func BenchmarkAckAndClaim(b *testing.B) { benchClaimAck(b, sqliteBench, true) }

func benchClaimAck(b *testing.B, be benchBackend, combined bool) {
	// MaxClaimBatch (1000) is what a worker fleet draining a burst asks
	// for: each claim and each ack is one transaction and one fsync (about
	// 2 ms on the development machine's disk), so small batches measure the
	// disk more than the store.
	for _, batch := range []int{64, 256, MaxClaimBatch} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			top := utc("2027-01-04T10:00:00Z")
			clk := clock.NewVirtual(top.Add(-30 * time.Second))
			const schedules = 20_000
			e := benchEngine(b, be, clk, DefaultPlanBatch, schedules, top)
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
			cpu, cpu0 := time.Duration(0), cpuTime(b) // CPU of the timed parts
			done := 0
			var held []AckItem // claimed, not yet acked (combined)
			heldBy := ""
			// ackHeld acks a tenant's last batch on its own: the next claim
			// is another tenant's (or another hour's, whose clock would
			// let the leases expire).
			ackHeld := func() {
				if len(held) == 0 {
					return
				}
				rs, err := e.Queue.AckBatch(b.Context(), heldBy, held)
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
					cpu += cpuTime(b) - cpu0
					refill()
					cpu0 = cpuTime(b)
					b.StartTimer()
				}
				tenant := ready[0]
				req := ClaimRequest{TenantID: tenant, Queue: "bench", WorkerID: "w", Limit: batch}
				if combined {
					if heldBy != tenant {
						ackHeld()
					}
					rs, got, err := e.Queue.AckAndClaim(b.Context(), req, held)
					if err != nil {
						b.Fatal(err)
					}
					check(rs)
					done += len(held)
					held, heldBy = held[:0], tenant
					held = ackItemsOf(held, got)
					if len(got) < batch {
						ready = ready[1:]
					}
					continue
				}
				got, err := e.Queue.Claim(b.Context(), req)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) < batch {
					ready = ready[1:]
				}
				items := ackItemsOf(nil, got)
				rs, err := e.Queue.AckBatch(b.Context(), tenant, items)
				if err != nil {
					b.Fatal(err)
				}
				check(rs)
				done += len(got)
			}
			cpu += cpuTime(b) - cpu0
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "claim+ack/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(done), "cpu-µs/claim+ack")
		})
	}
}
