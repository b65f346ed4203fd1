package engine

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// A crash loop faster than the schedules' intervals: the node restarts
// every k planner ticks, each time as a new node that must wait for the
// dead one's shard leases to lapse, and the stored occurrences must be the
// same for every k, including never restarting.
func TestRestartEveryKTicksSameOccurrences(t *testing.T) {
	if testing.Short() {
		t.Skip("about 2,000 planner passes over 7 databases; run without -short")
	}
	t.Parallel()
	start := utc("2027-01-04T09:45:00Z")
	const tick, ticks = 5 * time.Second, 240 // 20 minutes
	schedules := []schedule.Settings{
		cronIn("hourly", "0 * * * *", "UTC"),
		cronIn("minutely", "* * * * *", "Europe/Berlin"),
		cronIn("every 7 s", "*/7 * * * * *", "UTC"),
		every("every 5 s", "5s"),
	}
	run := func(t *testing.T, k int) []string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "sched.db")
		clk := clock.NewVirtual(start)
		node := 0
		var st *sqlite.Store
		var e *Engine
		open := func() {
			node++
			var err error
			st, err = sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			e, err = New(t.Context(), Config{Store: st, Clock: clk, Shards: 4, Horizon: time.Minute, NodeID: fmt.Sprintf("node-%d", node)})
			if err != nil {
				t.Fatal(err)
			}
		}
		open()
		for _, s := range schedules {
			if _, _, err := e.Control.Create(t.Context(), tenant, "", s); err != nil {
				t.Fatal(err)
			}
		}
		for i := 1; i <= ticks; i++ {
			clk.Advance(tick)
			if _, err := e.PlanOnce(t.Context()); err != nil {
				t.Fatal(err)
			}
			if k > 0 && i%k == 0 {
				st.Close() // the process dies: no lease release
				open()
			}
		}
		defer st.Close()
		var out []string
		for _, s := range schedules {
			sc, err := e.Control.Get(t.Context(), tenant, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			occs, err := e.Queue.Occurrences(t.Context(), store.ListOccurrencesParams{TenantID: tenant, ScheduleID: sc.ScheduleID, Limit: store.MaxListLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range occs {
				if o.ScheduledFor.After(clk.Now()) {
					continue // ahead of time: depends on whether the last node got its leases yet
				}
				out = append(out, fmt.Sprintf("%s %s %s %s", s.Name, o.ScheduledFor.Format(time.RFC3339), o.State, o.Lane))
			}
		}
		sort.Strings(out)
		return out
	}
	want := run(t, 0)
	if len(want) < 400 {
		t.Fatalf("the reference run stored only %d occurrences", len(want))
	}
	for _, k := range []int{1, 2, 3, 5, 7, 11} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			t.Parallel()
			got := run(t, k)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("restarting every %d ticks: %d occurrences, want %d\n%s", k, len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at %d: got %q, want %q", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}
