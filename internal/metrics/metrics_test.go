package metrics

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/version"
)

func TestBucketsSpanOneMillisecondToAnHour(t *testing.T) {
	if LagBuckets[0] != 0.001 || math.Abs(LagBuckets[len(LagBuckets)-1]-3600) > 1e-6 {
		t.Fatalf("buckets from %v to %v", LagBuckets[0], LagBuckets[len(LagBuckets)-1])
	}
	for i := 1; i < len(LagBuckets); i++ {
		if r := LagBuckets[i] / LagBuckets[i-1]; r > 1.41 {
			t.Fatalf("buckets %v and %v are %.2fx apart", LagBuckets[i-1], LagBuckets[i], r)
		}
	}
}

func TestBucket(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 0},
		{0, 0},
		{time.Millisecond, 0},
		{1001 * time.Microsecond, 1},
		{2 * time.Hour, len(LagBuckets)},
	} {
		if got := Bucket(tc.d); got != tc.want {
			t.Errorf("Bucket(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestPercentileWithinABucket reads quantiles of known samples back within
// the buckets' resolution.
func TestPercentileWithinABucket(t *testing.T) {
	counts := make([]int64, len(LagBuckets)+1)
	// 100 samples: 1..100 ms.
	for ms := 1; ms <= 100; ms++ {
		counts[Bucket(time.Duration(ms)*time.Millisecond)]++
	}
	for _, q := range []float64{0.5, 0.95, 0.99} {
		got, ok := Percentile(LagBuckets, counts, q)
		want := q * 0.1
		if !ok || got < want/1.4 || got > want*1.4 {
			t.Errorf("p%v = %v, want about %v", q*100, got, want)
		}
	}
	if _, ok := Percentile(LagBuckets, make([]int64, len(LagBuckets)+1), 0.5); ok {
		t.Error("a percentile of no samples")
	}
	inf := make([]int64, len(LagBuckets)+1)
	inf[len(LagBuckets)] = 3
	if got, _ := Percentile(LagBuckets, inf, 0.99); got != LagBuckets[len(LagBuckets)-1] {
		t.Errorf("p99 of +Inf samples = %v, want the largest bound", got)
	}
}

// TestTenantLabelsBounded: the default tenant has its label from the
// start (its series are made at 0), and the next MaxTenantLabels-1
// tenants seen get theirs; the rest are other.
func TestTenantLabelsBounded(t *testing.T) {
	m := New()
	for i := range MaxTenantLabels - 1 {
		if got := m.Tenant(fmt.Sprint("t", i)); got != fmt.Sprint("t", i) {
			t.Fatalf("tenant %d labelled %q", i, got)
		}
	}
	if got := m.Tenant("one-too-many"); got != OtherTenant {
		t.Fatalf("tenant past the bound labelled %q, want %q", got, OtherTenant)
	}
	for _, known := range []string{"t0", record.DefaultTenant} {
		if got := m.Tenant(known); got != known {
			t.Fatalf("a known tenant relabelled %q", got)
		}
	}
}

// TestClassicLagBucketsAreRound: the lag histograms' classic bounds are
// round numbers (at most two significant digits, as /metrics prints them),
// ascending, from 5 ms to an hour.
func TestClassicLagBucketsAreRound(t *testing.T) {
	b := ClassicLagBuckets
	if b[0] != 0.005 || b[len(b)-1] != 3600 || len(b) > 20 {
		t.Fatalf("%d bounds from %v to %v", len(b), b[0], b[len(b)-1])
	}
	for i, v := range b {
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if digits := strings.TrimLeft(strings.NewReplacer(".", "", "e+", "", "e-", "").Replace(s), "0"); len(strings.TrimRight(digits, "0")) > 2 {
			t.Errorf("bound %s is not round", s)
		}
		if i > 0 && v <= b[i-1] {
			t.Errorf("bound %v after %v", v, b[i-1])
		}
	}
}

// TestLagHistogramsClassicAndNative: a lag histogram has the classic
// round buckets for every scraper, and native buckets beside them for a
// scraper that asks for them (the protobuf exposition).
func TestLagHistogramsClassicAndNative(t *testing.T) {
	m := New()
	m.ObserveLag(m.DeliveryLag, "strict", "acme", 1234*time.Millisecond)
	m.ObserveLag(m.DeliveryLag, "strict", "acme", -time.Second) // ahead of time: 0
	var got dto.Metric
	if err := m.DeliveryLag.WithLabelValues("strict", "acme").(prometheus.Metric).Write(&got); err != nil {
		t.Fatal(err)
	}
	h := got.GetHistogram()
	var bounds []float64
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if !slices.Equal(bounds, ClassicLagBuckets) {
		t.Errorf("classic bounds %v, want %v", bounds, ClassicLagBuckets)
	}
	if h.GetSampleCount() != 2 || h.GetZeroCount() != 1 || len(h.GetPositiveSpan()) == 0 || h.GetSchema() != 3 {
		t.Errorf("native histogram: %d samples, %d zero, spans %v, schema %d; want 2, 1, one span, schema 3",
			h.GetSampleCount(), h.GetZeroCount(), h.GetPositiveSpan(), h.GetSchema())
	}

	// The text exposition shows the round bounds and nothing else.
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{`sched_delivery_lag_seconds_bucket{lane="strict",tenant="acme",le="0.005"} 1`,
		`sched_delivery_lag_seconds_bucket{lane="strict",tenant="acme",le="2.5"} 2`} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if _, le, ok := strings.Cut(line, `le="`); ok && strings.HasPrefix(line, "sched_") && strings.Contains(line, "lag_seconds") {
			le, _, _ = strings.Cut(le, `"`)
			if len(le) > 6 {
				t.Errorf("a lag bound that is not round: %s", line)
			}
		}
	}
}

// TestFreshSeries: a fresh Metrics exports the series whose labels are
// known up front, at 0, and sched_build_info.
func TestFreshSeries(t *testing.T) {
	m := New()
	fams := gather(t, m)
	for name, want := range map[string]int{
		"sched_schedule_lag_seconds":                    len(Lanes), // the default tenant's
		"sched_delivery_lag_seconds":                    len(Lanes),
		"sched_occurrences_materialized_total":          len(Lanes) + 1, // and unknown
		"sched_claims_total":                            len(Lanes),
		"sched_occurrences_missed_total":                2,
		"sched_nacks_total":                             2,
		"sched_dead_total":                              4,
		"sched_store_errors_total":                      5,
		"sched_tz_rezone_firings_total":                 3,
		"sched_tenant_throttled_firings_total":          1,
		"sched_retention_removed_total":                 1,
		"sched_connections_refused_total":               2,
		"sched_waiting_claims_refused_total":            2,
		"sched_tz_database_info":                        1,
		"sched_build_info":                              1,
		"sched_acks_total":                              1,
		"sched_retention_last_run_timestamp_seconds":    1,
		"sched_simulated_outage_ends_timestamp_seconds": 1,
	} {
		f := fams[name]
		if got := len(f.GetMetric()); got != want {
			t.Errorf("%s: %d series on a fresh node, want %d", name, got, want)
			continue
		}
		for _, s := range f.GetMetric() {
			if v := value(s); v != 0 && name != "sched_build_info" && name != "sched_tz_database_info" {
				t.Errorf("%s%v = %v on a fresh node", name, labelMap(s), v)
			}
		}
	}
	b := fams["sched_build_info"].GetMetric()[0]
	if l := labelMap(b); l["version"] != version.Get() || l["commit"] != version.Commit() || l["go"] != runtime.Version() || value(b) != 1 {
		t.Errorf("sched_build_info%v = %v", l, value(b))
	}
	for _, s := range fams["sched_schedule_lag_seconds"].GetMetric() {
		if labelMap(s)["tenant"] != record.DefaultTenant {
			t.Errorf("a lag series of tenant %q on a fresh node", labelMap(s)["tenant"])
		}
	}
}

// TestStoreGauges: the store's figures carry scope="store"; every state
// and lane of sched_occurrences and every backlog window is exported, at 0
// when the store has none; the per-queue gauges are bounded.
func TestStoreGauges(t *testing.T) {
	m := New()
	var queues []QueueGauge
	for i := range MaxQueueSeries + 5 {
		queues = append(queues, QueueGauge{Tenant: "acme", Queue: fmt.Sprintf("q%03d", i), Ready: 1, OldestReady: time.Duration(i) * time.Second})
	}
	m.SetGaugeSource(func(context.Context) (Gauges, error) {
		return Gauges{
			Occurrences: []StateLaneCount{{State: "ENQUEUED", Lane: "strict", Count: 7}},
			OldestReady: 104 * time.Second,
			DueBacklog:  map[int]int64{5: 3},
			DLQ:         2,
			Queues:      queues,
			Shards:      []ShardLease{{Shard: 3, Epoch: 9}},
		}, nil
	})
	fams := gather(t, m)
	for name, want := range map[string]int{
		"sched_occurrences":                5 * len(Lanes),
		"sched_oldest_ready_seconds":       1,
		"sched_due_backlog":                4,
		"sched_dlq_size":                   1,
		"sched_queue_ready":                MaxQueueSeries + 1,
		"sched_queue_oldest_ready_seconds": MaxQueueSeries + 1,
	} {
		f := fams[name]
		if len(f.GetMetric()) != want {
			t.Errorf("%s: %d series, want %d", name, len(f.GetMetric()), want)
		}
		for _, s := range f.GetMetric() {
			if labelMap(s)["scope"] != "store" {
				t.Errorf("%s%v: no scope=store", name, labelMap(s))
			}
		}
	}
	for _, name := range []string{"sched_shards_held", "sched_shard_epoch", "sched_gauge_read_ok"} {
		for _, s := range fams[name].GetMetric() {
			if _, ok := labelMap(s)["scope"]; ok {
				t.Errorf("%s, this node's own, has a scope label", name)
			}
		}
	}
	for _, s := range fams["sched_queue_oldest_ready_seconds"].GetMetric() {
		l := labelMap(s)
		if l["queue"] == OtherQueue && (l["tenant"] != OtherTenant || value(s) != 4) {
			t.Errorf("the other queues' oldest ready: %v = %v, want the longest of the folded (4s)", l, value(s))
		}
		if l["queue"] == "q104" && value(s) != 104 {
			t.Errorf("q104's oldest ready %v, want 104", value(s))
		}
	}
}

func TestBoundQueues(t *testing.T) {
	q := func(tenant, queue string, ready int64, oldest time.Duration) QueueGauge {
		return QueueGauge{Tenant: tenant, Queue: queue, Ready: ready, OldestReady: oldest}
	}
	for _, tc := range []struct {
		name string
		in   []QueueGauge
		want []QueueGauge
	}{
		{"under the bound: as given", []QueueGauge{q("a", "x", 1, 0), q("a", "y", 0, 0)}, []QueueGauge{q("a", "x", 1, 0), q("a", "y", 0, 0)}},
		{"the longest-waiting kept, the rest folded",
			[]QueueGauge{q("a", "x", 5, time.Second), q("a", "y", 1, time.Minute), q("b", "x", 2, 0), q("b", "z", 9, 0)},
			[]QueueGauge{q("a", "y", 1, time.Minute), q("a", "x", 5, time.Second), q(OtherTenant, OtherQueue, 11, 0)}},
		{"then the most ready",
			[]QueueGauge{q("a", "x", 1, 0), q("a", "y", 3, 0), q("a", "z", 2, 0)},
			[]QueueGauge{q("a", "y", 3, 0), q("a", "z", 2, 0), q(OtherTenant, OtherQueue, 1, 0)}},
		{"a queue named other of tenant other is folded",
			[]QueueGauge{q(OtherTenant, OtherQueue, 1, time.Hour), q("a", "x", 1, time.Second), q("a", "y", 1, 0), q("a", "z", 1, 0)},
			[]QueueGauge{q("a", "x", 1, time.Second), q("a", "y", 1, 0), q(OtherTenant, OtherQueue, 2, time.Hour)}},
	} {
		if got := boundQueues(tc.in, 2); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// gather is m's registry, by family name.
func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value is a series' value: a counter's or gauge's, a histogram's count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}
