package reconcile_test

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// TestCleanAfterTZChange: firings planned ahead under a zone's old rules
// and withdrawn when the tz database changed are CANCELED rows at instants
// today's rules no longer name. The audit counts them as canceled by a
// change, not as unexpected, and finds every firing of the new rules.
func TestCleanAfterTZChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(*testing.T, time.Time, func(*engine.Config)) *world
	}{{"sqlite", newSQLiteWorldWith}, {"postgres", newPGWorldWith}} {
		t.Run(tc.name, func(t *testing.T) {
			tztest.Use(t, "2026a")
			start := time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC) // 05:00 in Test/Shift, the day before 2026b moves it
			w := tc.make(t, start, func(c *engine.Config) { c.Horizon = 72 * time.Hour })
			sc := w.create("shift", "0 9 * * *", "Test/Shift", nil)
			if _, err := w.e.PlanOnce(w.ctx); err != nil {
				t.Fatal(err)
			}

			// The new release moves 09:00 from 14:00Z to 13:00Z from Feb 2.
			tztest.Install(t, "2026b")
			res, err := w.e.TZ.Reload(w.ctx)
			if err != nil || len(res.Changed) != 1 || res.Changed[0].Canceled != 2 {
				t.Fatalf("reload: %+v, %v; want 2 firings of Test/Shift withdrawn", res, err)
			}
			w.run(4*24*time.Hour, time.Hour)

			rep := w.report(start, start.Add(4*24*time.Hour))
			w.mustBeClean(rep)
			if rep.Totals.CanceledByChange != 2 || rep.Totals.Succeeded != 4 {
				t.Errorf("totals %+v, want the 2 withdrawn firings canceled by a change and 4 succeeded (Feb 1 at 14:00Z, Feb 2-4 at 13:00Z)", rep.Totals)
			}
			var canceled int
			occs, err := w.st.ListOccurrences(w.ctx, store.ListOccurrencesParams{TenantID: tenant, ScheduleID: sc.ScheduleID, Limit: store.MaxListLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range occs {
				if o.State == record.OccurrenceCanceled {
					canceled++
				}
			}
			if canceled != 2 {
				t.Errorf("%d CANCELED rows, want the 2 withdrawn", canceled)
			}
		})
	}
}
