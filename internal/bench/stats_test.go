package bench

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

func TestLagOf(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // unsorted on purpose
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want Lag
	}{
		{"none", nil, Lag{}},
		{"one", ms(7), Lag{7, 7, 7, 7}},
		{"1..100", ms(hundred...), Lag{50, 95, 99, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lagOf(tc.in); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTimeline(t *testing.T) {
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	got := timeline(due, []time.Time{due.Add(10 * time.Millisecond), due.Add(2500 * time.Millisecond), due, due.Add(-time.Second)})
	want := []Second{{0, 3}, {1, 0}, {2, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSpread(t *testing.T) {
	w := 10 * time.Second
	var offs []time.Duration
	for i := range 20 {
		offs = append(offs, time.Duration(i)*500*time.Millisecond) // two per tenth
	}
	offs = append(offs, 0, 11*time.Second) // one more in the first tenth, one outside
	f := spread(w, offs, 0)
	if f.Tenths[0] != 3 || f.Tenths[9] != 2 || f.OutsideWindow != 1 || f.MaxMinRatio != 1.5 {
		t.Errorf("got %+v", f)
	}
}

func TestPlannerCost(t *testing.T) {
	text := strings.Join([]string{
		`# TYPE sched_planner_pass_seconds histogram`,
		`sched_planner_pass_seconds_bucket{le="0.01"} 90`,
		`sched_planner_pass_seconds_bucket{le="0.1"} 99`,
		`sched_planner_pass_seconds_bucket{le="1"} 100`,
		`sched_planner_pass_seconds_bucket{le="+Inf"} 100`,
		`sched_planner_pass_seconds_sum 2`,
		`sched_planner_pass_seconds_count 100`,
		`sched_occurrences_materialized_total{lane="strict"} 3000`,
		`sched_occurrences_materialized_total{lane="flexible"} 1000`,
	}, "\n")
	got := plannerCost(text)
	if got == nil || *got != (PlannerCost{Passes: 100, MeanMs: 20, P99Ms: 100, Materialized: 4000, SecondsTotal: 2}) {
		t.Errorf("got %+v", got)
	}
	// From the scrape above to one 50 passes, 3 s and 2,000 occurrences on.
	w := plannerWindow(got, &PlannerCost{Passes: 150, Materialized: 6000, SecondsTotal: 5})
	if w == nil || *w != (PlannerWindow{Passes: 50, Materialized: 2000, MeanPassMs: 60, MsPerThousand: 1500}) {
		t.Errorf("window %+v", w)
	}
	if plannerCost("other_metric 1\n") != nil {
		t.Error("a scrape without the series gave figures")
	}
}

// TestDailyAtSameInstant: every zone's cron names the local wall time of
// the one instant, offsets of 5:30, 5:45 and 12:45 included.
func TestDailyAtSameInstant(t *testing.T) {
	at := time.Date(2027, 3, 14, 7, 0, 0, 0, time.UTC)
	reqs, err := dailyAt("x", len(zones), at, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"UTC": "0 7 * * *", "Asia/Kolkata": "30 12 * * *", "Asia/Kathmandu": "45 12 * * *",
		"Pacific/Chatham": "45 20 * * *", "America/New_York": "0 3 * * *", "America/St_Johns": "30 4 * * *"}
	for _, r := range reqs {
		if w, ok := want[r.TimeZone]; ok && r.Cron != w {
			t.Errorf("%s: cron %q, want %q", r.TimeZone, r.Cron, w)
		}
		if r.IdempotencyKey == "" || r.Queue != queue {
			t.Errorf("%s: key %q queue %q", r.Name, r.IdempotencyKey, r.Queue)
		}
	}
}

func TestExpectedInEvery(t *testing.T) {
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	req := api.ScheduleRequest{Every: "1m"}
	for _, tc := range []struct {
		name      string
		next      time.Time
		from, end time.Duration
		want      int
	}{
		{"first firing before the window", start.Add(-30 * time.Second), 0, 150 * time.Second, 3},
		{"created after its first slot", start.Add(90 * time.Second), 0, 150 * time.Second, 2},
		{"window shorter than the interval", start.Add(5 * time.Second), 0, 10*time.Second - 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &api.Schedule{NextFireAt: &tc.next}
			if got := expectedIn(req, sc, start.Add(tc.from), start.Add(tc.end)); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}
