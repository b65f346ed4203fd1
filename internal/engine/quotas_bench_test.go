package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/record"
)

// benchCreate measures Control.Create of one tenant's schedules, serially,
// on a store that already holds 2,000 schedules (200 of that tenant),
// with the active_schedules quota off (the default) and on (a limit never
// reached: its lock and count are what is measured).
func benchCreate(b *testing.B, be benchBackend) {
	for _, quota := range []int64{0, 1 << 40} {
		b.Run(fmt.Sprintf("quota=%v", quota > 0), func(b *testing.B) {
			start := utc("2027-01-04T10:00:00Z")
			clk := clock.NewVirtual(start)
			st := be.open(b)
			e, err := New(b.Context(), Config{Store: st, Clock: clk, Shards: be.shards, IgnoreStoreClock: be.ignoreStoreClock,
				TenantDefaults: quotaDefaults(quota)})
			if err != nil {
				b.Fatal(err)
			}
			benchSchedules(b, st, be.insertWorkers, 2_000, be.shards, start.Add(time.Hour))
			b.ResetTimer()
			cpu := cpuTime(b)
			for i := range b.N {
				if _, _, err := e.Control.Create(b.Context(), "tenant-0", "", every(fmt.Sprintf("create-%d", i), "1h")); err != nil {
					b.Fatal(err)
				}
			}
			// This process's CPU per create: steadier than the wall time,
			// which a shared disk's fsyncs dominate.
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func BenchmarkCreate(b *testing.B) { benchCreate(b, sqliteBench) }

func BenchmarkCreatePG(b *testing.B) { benchCreate(b, pgBench) }

func quotaDefaults(activeSchedules int64) record.Quotas {
	return record.Quotas{ActiveSchedules: activeSchedules}
}
