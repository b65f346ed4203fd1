package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

// BenchmarkReconcileDay reconciles a day of hourly firings over many
// schedules on a SQLite file, every firing SUCCEEDED, and reports the peak
// live heap during the run beside the usual allocation figures. Memory must
// not grow with the number of schedules: compare the sizes.
//
//	go test -run '^$' -bench ReconcileDay -benchtime 1x ./internal/reconcile/
//
// SCHED_RECONCILE_BENCH_SCHEDULES sets the largest size (default 100000).
func BenchmarkReconcileDay(b *testing.B) {
	largest := 100_000
	if v, err := strconv.Atoi(os.Getenv("SCHED_RECONCILE_BENCH_SCHEDULES")); err == nil && v > 0 {
		largest = v
	}
	for _, n := range []int{largest / 10, largest} {
		b.Run(fmt.Sprintf("schedules=%d", n), func(b *testing.B) {
			st := plantDay(b, n)
			from, to := t0, t0.Add(23*time.Hour)
			var sink countSink
			b.ReportAllocs()
			b.ResetTimer()
			var peak uint64
			for range b.N {
				runtime.GC()
				stop := watchHeap(&peak)
				total, err := reconcile.Run(context.Background(), st, reconcile.Options{From: from, To: to}, &sink)
				stop()
				if err != nil {
					b.Fatal(err)
				}
				if total.Problem() || total[reconcile.Succeeded] != 24*n {
					b.Fatalf("totals %v, want %d succeeded", total, 24*n)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(n*24*b.N)/b.Elapsed().Seconds(), "firings/s")
		})
	}
}

// countSink counts and keeps nothing.
type countSink struct{ findings, schedules int }

func (c *countSink) Finding(reconcile.Finding) error     { c.findings++; return nil }
func (c *countSink) Schedule(reconcile.Summary) error    { c.schedules++; return nil }
func (c *countSink) TZWarning(reconcile.TZWarning) error { return nil }

// watchHeap samples the live heap until the returned stop is called, and
// raises *peak to the largest sample.
func watchHeap(peak *uint64) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for !done.Load() {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapAlloc)
			time.Sleep(5 * time.Millisecond)
		}
	})
	return func() { done.Store(true); wg.Wait() }
}

// plantDay stores n hourly schedules, each with its version row and the
// 24 SUCCEEDED occurrences of one day.
func plantDay(b *testing.B, n int) store.Store {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "sched.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	began := time.Now()
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		var occs []record.Occurrence
		if err := store.InTx(ctx, st, func(tx store.Tx) error {
			for i := lo; i < min(n, lo+batch); i++ {
				id := fmt.Sprintf("sch_%08d", i)
				sc := &record.Schedule{TenantID: "default", ScheduleID: id, Name: id, Kind: timetable.KindCron, Expr: "0 * * * *",
					TimeZone: "UTC", DSTGap: timetable.GapShift, DSTRepeat: timetable.RepeatFirst, Version: 1,
					State: record.ScheduleActive, NextRunAt: t0.Add(24 * time.Hour), Queue: "q", MisfirePolicy: record.MisfireSkip,
					MaxLateness: time.Minute, OverlapPolicy: record.OverlapAllow, Retry: record.RetryPolicy{MaxAttempts: 1},
					CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(-time.Hour)}
				if err := tx.InsertSchedule(ctx, sc); err != nil {
					return err
				}
				if err := tx.InsertScheduleVersion(ctx, store.NewScheduleVersion(sc, sc.CreatedAt, sc.CreatedAt)); err != nil {
					return err
				}
				for hr := range 24 {
					f := t0.Add(time.Duration(hr) * time.Hour)
					occs = append(occs, record.Occurrence{TenantID: "default", ScheduleID: id, ScheduleVersion: 1, ScheduledFor: f,
						AvailableAt: f, EnqueuedAt: f, FinishedAt: f.Add(time.Second), State: record.OccurrenceSucceeded,
						Lane: record.LaneStrict, Queue: "q", OverlapPolicy: record.OverlapAllow})
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if _, err := st.InsertOccurrences(ctx, occs); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("planted %d schedules and %d occurrences in %v", n, 24*n, time.Since(began).Round(time.Millisecond))
	return st
}
