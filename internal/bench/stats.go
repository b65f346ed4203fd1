package bench

import (
	"bufio"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Lag is a lag's percentiles in milliseconds.
type Lag struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// lagOf is the nearest-rank percentiles of ds (zero for none).
func lagOf(ds []time.Duration) Lag {
	if len(ds) == 0 {
		return Lag{}
	}
	slices.Sort(ds)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(ds)))) - 1
		return ms(ds[max(0, min(i, len(ds)-1))])
	}
	return Lag{P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: ms(ds[len(ds)-1])}
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// Second is one second of the delivery timeline: deliveries received in
// [due+Second s, due+Second+1 s).
type Second struct {
	Second    int `json:"second"`
	Delivered int `json:"delivered"`
}

// timeline counts receive times per second since due.
func timeline(due time.Time, recv []time.Time) []Second {
	var counts []int
	for _, r := range recv {
		s := max(0, int(r.Sub(due)/time.Second))
		for len(counts) <= s {
			counts = append(counts, 0)
		}
		counts[s]++
	}
	out := make([]Second, len(counts))
	for i, n := range counts {
		out[i] = Second{Second: i, Delivered: n}
	}
	return out
}

// FlexSpread is how a flexible burst's firings spread over their window:
// available_at's offset from the due instant in tenths of the window.
type FlexSpread struct {
	Window string `json:"window"`
	// Tenths counts firings whose available_at falls in each tenth.
	Tenths []int `json:"tenths"`
	// MaxMinRatio is the fullest tenth over the emptiest (0 when one is
	// empty): 1 is a perfectly even spread.
	MaxMinRatio float64 `json:"max_min_ratio"`
	// OutsideWindow counts firings whose available_at is not in [due,
	// due+window]; Unknown those whose available_at could not be read.
	OutsideWindow int `json:"outside_window"`
	Unknown       int `json:"unknown"`
}

// spread builds a FlexSpread from the firings' available_at offsets.
func spread(window time.Duration, offsets []time.Duration, unknown int) *FlexSpread {
	f := &FlexSpread{Window: window.String(), Tenths: make([]int, 10), Unknown: unknown}
	for _, o := range offsets {
		if o < 0 || o > window {
			f.OutsideWindow++
			continue
		}
		f.Tenths[min(9, int(o*10/window))]++
	}
	lo, hi := slices.Min(f.Tenths), slices.Max(f.Tenths)
	if lo > 0 {
		f.MaxMinRatio = math.Round(float64(hi)/float64(lo)*100) / 100
	}
	return f
}

// PlannerCost is the planner's pass figures from schedd's /metrics.
type PlannerCost struct {
	Passes int64   `json:"passes"`
	MeanMs float64 `json:"mean_ms"`
	// P99Ms is the upper bound of the histogram bucket holding the 99th
	// percentile pass.
	P99Ms float64 `json:"p99_ms"`
	// Materialized counts the occurrences the passes put on the queue
	// (sched_occurrences_materialized_total, every lane).
	Materialized int64 `json:"materialized"`
	// SecondsTotal is the passes' time, summed.
	SecondsTotal float64 `json:"seconds_total"`
}

// PlannerWindow is the planner's work between two scrapes: scale's,
// from the end of the load to the end of the run, when the loaded
// schedules sit idle and only the burst's come due.
type PlannerWindow struct {
	Passes       int64   `json:"passes"`
	Materialized int64   `json:"materialized"`
	MeanPassMs   float64 `json:"mean_pass_ms"`
	// MsPerThousand is the passes' time per 1,000 occurrences
	// materialized: the planner's cost per due schedule, which must not
	// depend on how many schedules are not due.
	MsPerThousand float64 `json:"ms_per_1000_materialized"`
}

// plannerWindow is the work from before to after (nil if either is).
func plannerWindow(before, after *PlannerCost) *PlannerWindow {
	if before == nil || after == nil {
		return nil
	}
	w := &PlannerWindow{Passes: after.Passes - before.Passes, Materialized: after.Materialized - before.Materialized}
	secs := after.SecondsTotal - before.SecondsTotal
	if w.Passes > 0 {
		w.MeanPassMs = math.Round(secs/float64(w.Passes)*1e5) / 100
	}
	if w.Materialized > 0 {
		w.MsPerThousand = math.Round(secs/float64(w.Materialized)*1e8) / 100
	}
	return w
}

// plannerCost reads sched_planner_pass_seconds from a Prometheus text
// scrape; nil when the series is absent.
func plannerCost(text string) *PlannerCost {
	const name = "sched_planner_pass_seconds"
	var sum float64
	var count int64
	type bucket struct {
		le float64
		n  int64
	}
	var buckets []bucket
	var materialized int64
	found := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) && !strings.HasPrefix(line, "sched_occurrences_materialized_total") {
			continue
		}
		key, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(key, "sched_occurrences_materialized_total"):
			materialized += int64(v)
		case key == name+"_sum":
			sum, found = v, true
		case key == name+"_count":
			count, found = int64(v), true
		case strings.HasPrefix(key, name+`_bucket{le="`):
			le, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(key, name+`_bucket{le="`), `"}`), 64)
			if err == nil && !math.IsInf(le, 0) {
				buckets = append(buckets, bucket{le, int64(v)})
			}
		}
	}
	if !found {
		return nil
	}
	pc := &PlannerCost{Passes: count, Materialized: materialized, SecondsTotal: sum}
	if count > 0 {
		pc.MeanMs = math.Round(sum/float64(count)*1e5) / 100
		for _, b := range buckets {
			if float64(b.n) >= 0.99*float64(count) {
				pc.P99Ms = math.Round(b.le*1e5) / 100
				break
			}
		}
	}
	return pc
}
