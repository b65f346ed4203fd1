package engine

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// BenchmarkTZReload measures a reload of a release that changes the zone
// of 10,000 cron schedules, three firings materialized ahead each (a
// 72-hour horizon), on SQLite: what a tz release costs the node that
// loads it. In "moved" the change takes effect within the horizon, so
// every schedule moves (two occurrences canceled each, the cursor moved,
// an audit row); in "unmoved" it takes effect two months later, as a
// release usually does, and nothing moves. Run it with -benchtime 1x: each
// iteration needs a fresh store planned under the old release.
func BenchmarkTZReload(b *testing.B) {
	b.Run("moved", func(b *testing.B) { benchTZReload(b, tzStart, true) })
	b.Run("unmoved", func(b *testing.B) { benchTZReload(b, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), false) })
}

func benchTZReload(b *testing.B, start time.Time, moves bool) {
	const n = 10_000
	for range b.N {
		b.StopTimer()
		tztest.Use(b, "2026a")
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "sched.db"))
		if err != nil {
			b.Fatal(err)
		}
		e, err := New(b.Context(), Config{Store: st, Clock: clock.NewVirtual(start), Shards: 1, Horizon: 72 * time.Hour, NodeID: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += MaxBatch {
			items := make([]BatchItem, 0, MaxBatch)
			for j := i; j < min(n, i+MaxBatch); j++ {
				items = append(items, BatchItem{Settings: schedule.Settings{Name: "s" + strconv.Itoa(j), Queue: "q",
					Kind: timetable.KindCron, Expr: strconv.Itoa(j%60) + " 9 * * *", TimeZone: "Test/Shift"}})
			}
			if _, err := e.Control.CreateBatch(b.Context(), tenant, items); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := e.PlanOnce(b.Context()); err != nil {
			b.Fatal(err)
		}
		tztest.Install(b, "2026b")
		b.StartTimer()
		res, err := e.TZ.Reload(b.Context())
		b.StopTimer()
		want := TZZoneMoves{Zone: "Test/Shift", Schedules: n, Kept: 3 * n}
		if moves {
			want = TZZoneMoves{Zone: "Test/Shift", Schedules: n, Moved: n, Canceled: 2 * n, Kept: n, Replanned: 3 * n}
		}
		if err != nil || len(res.Changed) != 1 || res.Changed[0] != want {
			b.Fatalf("reload: %+v, %v; want %+v", res, err, want)
		}
		e.Stop()
		st.Close()
		timetable.ReloadZones()
	}
	b.ReportMetric(float64(n), "schedules/op")
}
