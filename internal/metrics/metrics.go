// Package metrics is sched's Prometheus instrumentation: every series the
// daemon exports at /metrics, defined once, with help text; the lag
// histograms' bucket layouts: round bounds for Prometheus (with native
// histograms beside them), and the finer series the engine's per-minute
// figures count in, which `schedctl status` reads percentiles from.
//
// Every series whose labels are known up front exists from the start, at
// 0, so that a rate or an alert over it reads 0 rather than nothing on a
// fresh node: New creates the children of every fixed label set (lanes,
// dead reasons, nack classes, store error kinds, tz outcomes, limits'
// reasons) and of the default tenant. What cannot be known up front
// appears with its first event: the tenant label of tenants other than
// the default, the HTTP series' routes and status codes, the shards this
// node holds, the queues in the store, the tenants' retention horizons.
//
// Label sets are bounded whatever users do: no series is labelled by
// schedule; tenant labels of the per-process series go through Tenant,
// which gives the first MaxTenantLabels tenants seen a label of their own
// and folds the rest into "other"; the per-queue gauges export at most
// MaxQueueSeries queues (the longest-waiting first) and fold the rest into
// one "other" series; lanes, states, reasons, kinds, routes and status
// codes are fixed sets.
//
// The gauges read from the store (gauges.go) describe the whole store,
// so every node exports the same values: they carry scope="store", and a
// query across nodes takes their max, never their sum.
package metrics

import (
	"context"
	"errors"
	"math"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/version"
)

// ClassicLagBuckets are the upper bounds, in seconds, of the lag
// histograms' classic buckets in /metrics: round values an operator can
// name in an alert or an SLO (`le="0.5"`, `le="300"`), 1-2.5-5 steps up to
// 10 s, then the minutes schedules are written in (30 s, 1, 2, 5, 10, 30
// minutes, an hour). The low end, 5 ms, is below what a claim costs; the
// high end, an hour, is as far as the previous layout reached, so a queue
// nobody has served for half an hour does not read as 10 minutes. A
// scraper that asks for native histograms gets the same samples at a
// resolution of about 9% (NativeLagBucketFactor) beside them.
var ClassicLagBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// NativeLagBucketFactor is the growth factor of the lag histograms' native
// buckets (Prometheus picks schema 3: each bucket 2^(1/8), about 1.09,
// times the last). At most NativeLagMaxBuckets are kept per series; past
// that the resolution halves (or the histogram resets, at most once an
// hour), so a series costs a bounded amount whatever its lags are.
const (
	NativeLagBucketFactor = 1.1
	NativeLagMaxBuckets   = 160
)

// LagBuckets are the upper bounds, in seconds, of the lag histograms of
// the engine's per-minute figures (engine/stats.go), which `schedctl
// status` and `top` read percentiles from: a geometric series from 1 ms
// to 1 hour with ratio 1.41, so any percentile read from them (by linear
// interpolation inside a bucket) is within about 20% of the true value
// across that range; a lag past an hour reads as an hour. They are not
// the Prometheus buckets (ClassicLagBuckets), whose round bounds are too
// coarse for that, and they are stored in every node's figures, so
// changing them drops an hour of figures during a rolling update.
var LagBuckets = prometheus.ExponentialBucketsRange(0.001, 3600, 45)

// Label values known up front, which New creates at 0.
var (
	// Lanes are the lane label's values; LaneUnknown is the lane of
	// occurrences a plan batch put on the queue when the store's counts
	// are all the engine has (engine/observe.go).
	Lanes = []string{string(record.LaneStrict), string(record.LaneFlexible), string(record.LaneCatchUp)}
	// MissedHows are sched_occurrences_missed_total's how.
	MissedHows = []string{MissedRow, MissedCounted}
	// NackClasses are sched_nacks_total's class: the engine's
	// ErrorClass values (engine/queue.go; engine tests check they agree).
	NackClasses = []string{"retryable", "permanent"}
	// DeadReasons are sched_dead_total's reason.
	DeadReasons = []string{string(record.DeadPermanentFailure), string(record.DeadAttemptsExhausted),
		string(record.DeadDeadlinePassed), string(record.DeadRetryBudgetExhausted)}
	// StoreErrorKinds are sched_store_errors_total's kind.
	StoreErrorKinds = []string{"busy", "full", "corrupt", "stale_epoch", "other"}
	// TZOutcomes are sched_tz_rezone_firings_total's outcome.
	TZOutcomes = []string{"canceled", "kept", "replanned"}
)

// Label values of the engine's own.
const (
	LaneUnknown   = "unknown"
	MissedRow     = "row"
	MissedCounted = "counted"
)

// MaxTenantLabels bounds the distinct values of the tenant label of the
// counters and histograms; the default tenant, whose series New makes at
// 0, is the first of them.
const MaxTenantLabels = 50

// OtherTenant is the tenant label of every tenant past MaxTenantLabels.
const OtherTenant = "other"

// Metrics holds every collector. The zero value is not usable; call New.
// Methods are safe for concurrent use.
type Metrics struct {
	reg     *prometheus.Registry
	tenants tenantLabels

	ScheduleLag *prometheus.HistogramVec // lane, tenant
	DeliveryLag *prometheus.HistogramVec // lane, tenant

	Materialized   *prometheus.CounterVec // lane
	Missed         *prometheus.CounterVec // how: row | counted
	SkippedOverlap prometheus.Counter
	Duplicates     prometheus.Counter
	Claims         *prometheus.CounterVec // lane
	Redeliveries   prometheus.Counter
	Acks           prometheus.Counter
	Nacks          *prometheus.CounterVec // class: retryable | permanent
	Dead           *prometheus.CounterVec // reason
	Replays        prometheus.Counter
	Purged         prometheus.Counter
	Triggers       prometheus.Counter
	StaleAttempts  prometheus.Counter
	StoreErrors    *prometheus.CounterVec // kind
	PlanFenced     prometheus.Counter
	// TenantThrottledFirings counts, per tenant (Tenant's bounded
	// label), the firings its firings_per_second quota delayed.
	TenantThrottledFirings *prometheus.CounterVec // tenant

	// BuildInfo is 1, labelled with this build's version, commit and Go
	// release (internal/version).
	BuildInfo *prometheus.GaugeVec // version, commit, go

	PlannerPass  prometheus.Histogram
	HorizonSlack prometheus.Gauge
	ClockOffset  prometheus.Gauge

	HTTPRequests *prometheus.CounterVec   // route, code
	HTTPDuration *prometheus.HistogramVec // route

	gaugesMu sync.Mutex
	gauges   GaugeSource

	// A simulated outage (engine.Outages), as this node last read it:
	// OutageEnds is when it ends, in Unix seconds (0: none).
	OutageActive prometheus.Gauge
	OutageEnds   prometheus.Gauge

	// Retention of finished history (retention.go).
	Retention RetentionMetrics
	// The tz database in use and what its changes moved (tz.go).
	TZ TZMetrics
	// What the daemon's own limits refused (limits.go).
	Limits LimitMetrics
}

// New returns Metrics registered on a registry of their own, with the Go
// runtime and process collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		f(c)
		return c
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		f(c)
		return c
	}
	m.ScheduleLag = prometheus.NewHistogramVec(lagOpts("sched_schedule_lag_seconds",
		"How late the planner put an occurrence on the queue: enqueued_at - scheduled_for. Occurrences enqueued ahead of their time (the planner works a horizon ahead) count as 0."),
		[]string{"lane", "tenant"})
	m.DeliveryLag = prometheus.NewHistogramVec(lagOpts("sched_delivery_lag_seconds",
		"How late a worker first had an occurrence: first claim - scheduled_for (flexible schedules include their window's offset)."),
		[]string{"lane", "tenant"})
	f(m.ScheduleLag)
	f(m.DeliveryLag)
	m.Materialized = counterVec("sched_occurrences_materialized_total", "Occurrences the planner put on the queue.", "lane")
	m.Missed = counterVec("sched_occurrences_missed_total", "Firings found later than max_lateness and not run (misfire policy); how=row for those recorded as MISSED rows, how=counted for those only counted on the schedule.", "how")
	m.SkippedOverlap = counter("sched_occurrences_skipped_overlap_total", "Occurrences marked SKIPPED_OVERLAP at claim time by their overlap policy.")
	m.Duplicates = counter("sched_materialize_conflicts_total", "Second materializations of a firing already stored (the unique key made them no-ops).")
	m.Claims = counterVec("sched_claims_total", "Occurrences handed to workers (each a new attempt).", "lane")
	m.Redeliveries = counter("sched_redeliveries_total", "Occurrences made claimable again because a worker's lease expired.")
	m.Acks = counter("sched_acks_total", "Attempts acknowledged as succeeded.")
	m.Nacks = counterVec("sched_nacks_total", "Attempts reported failed, by error class.", "class")
	m.Dead = counterVec("sched_dead_total", "Occurrences sent to the dead-letter queue, by reason.", "reason")
	m.Replays = counter("sched_replays_total", "Dead occurrences put back on the queue.")
	m.Purged = counter("sched_dlq_purged_total", "Dead occurrences purged from the dead-letter queue.")
	m.Triggers = counter("sched_triggers_total", "Manual occurrences created by a trigger.")
	m.StaleAttempts = counter("sched_stale_attempts_total", "Acks, nacks and heartbeats refused because they named an attempt that is no longer current.")
	m.StoreErrors = counterVec("sched_store_errors_total", "Store operations that failed, by kind: busy, full, corrupt, stale_epoch, other.", "kind")
	m.PlanFenced = counter("sched_planner_fenced_total", "Planner batches refused because the shard's lease moved to another node.")
	m.TenantThrottledFirings = counterVec("sched_tenant_throttled_firings_total", "Firings materialized with their available_at delayed by their tenant's firings_per_second quota (never dropped: same scheduled_for and id).", "tenant")
	m.PlannerPass = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "sched_planner_pass_seconds", Help: "Duration of planner passes on this node.",
		Buckets: prometheus.ExponentialBucketsRange(0.001, 60, 24),
	})
	f(m.PlannerPass)
	m.HorizonSlack = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sched_planner_horizon_slack_seconds",
		Help: "How far ahead of its time the latest firing of this node's last planner pass is: near the horizon when the planner keeps up, near or below 0 when it falls behind."})
	m.ClockOffset = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sched_clock_offset_seconds",
		Help: "The store's clock minus this node's, as last measured (0 on SQLite)."})
	f(m.HorizonSlack)
	f(m.ClockOffset)
	m.HTTPRequests = counterVec("sched_http_requests_total", "API requests by route and status code (499: the client went away first, as when a long poll is abandoned).", "route", "code")
	m.HTTPDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "sched_http_request_duration_seconds", Help: "API request latency by route (long polls include their wait).",
		Buckets: prometheus.ExponentialBucketsRange(0.0005, 300, 24),
	}, []string{"route"})
	f(m.HTTPDuration)
	f(&gaugeCollector{m: m})
	m.OutageActive = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sched_simulated_outage_active",
		Help: "1 while a simulated outage (schedctl simulate outage) pauses this node's planning or claims, as the node last read it; 0 otherwise."})
	m.OutageEnds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sched_simulated_outage_ends_timestamp_seconds",
		Help: "When the simulated outage in progress ends, in Unix seconds; 0 when none is in progress."})
	f(m.OutageActive)
	f(m.OutageEnds)
	m.Retention = newRetentionMetrics(f)
	m.TZ = newTZMetrics(f)
	m.Limits = newLimitMetrics(f)
	m.BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sched_build_info",
		Help: "1, labelled with this build's version, VCS commit and Go release: which build each node runs."}, []string{"version", "commit", "go"})
	f(m.BuildInfo)
	m.BuildInfo.WithLabelValues(version.Get(), version.Commit(), runtime.Version()).Set(1)
	// The tz database this process has loaded; the planner sets it again
	// when a reload changes it (engine/tzreload.go).
	m.TZ.SetTZVersion(timetable.TZVersion())
	m.precreate()
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// lagOpts are the options of a lag histogram: classic buckets on round
// bounds and native buckets beside them.
func lagOpts(name, help string) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{
		Name: name, Help: help,
		Buckets:                         ClassicLagBuckets,
		NativeHistogramBucketFactor:     NativeLagBucketFactor,
		NativeHistogramMaxBucketNumber:  NativeLagMaxBuckets,
		NativeHistogramMinResetDuration: time.Hour,
	}
}

// precreate makes the children of every label set known up front, at 0:
// a fresh node exports them before their first event. The default tenant
// is the one tenant every store has (record.DefaultTenant); the others,
// and the label values not made here (see the package doc), are known
// only when their first event comes.
func (m *Metrics) precreate() {
	tenant := m.Tenant(record.DefaultTenant)
	for _, lane := range Lanes {
		m.ScheduleLag.WithLabelValues(lane, tenant)
		m.DeliveryLag.WithLabelValues(lane, tenant)
		m.Materialized.WithLabelValues(lane)
		m.Claims.WithLabelValues(lane)
	}
	m.Materialized.WithLabelValues(LaneUnknown)
	for _, vs := range []struct {
		vec    *prometheus.CounterVec
		values []string
	}{
		{m.Missed, MissedHows},
		{m.Nacks, NackClasses},
		{m.Dead, DeadReasons},
		{m.StoreErrors, StoreErrorKinds},
		{m.TZ.Moved, TZOutcomes},
		{m.TenantThrottledFirings, []string{tenant}},
		{m.Retention.Removed, []string{tenant}},
	} {
		for _, v := range vs.values {
			vs.vec.WithLabelValues(v)
		}
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is the registry every collector is on (for tests and for
// gathering in-process).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Tenant is the tenant label for tenant: its own name for the first
// MaxTenantLabels tenants seen by this process, OtherTenant after.
func (m *Metrics) Tenant(tenant string) string { return m.tenants.label(tenant) }

// ObserveLag records d, in the lane and tenant given, on h; negative lags
// (ahead of time) count as 0.
func (m *Metrics) ObserveLag(h *prometheus.HistogramVec, lane, tenant string, d time.Duration) {
	h.WithLabelValues(lane, m.Tenant(tenant)).Observe(max(d, 0).Seconds())
}

// NoteStoreError counts err under kind, unless err is nil or the caller's
// context ended.
func (m *Metrics) NoteStoreError(err error, kind string) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	m.StoreErrors.WithLabelValues(kind).Inc()
}

type tenantLabels struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (t *tenantLabels) label(tenant string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen[tenant] {
		return tenant
	}
	if len(t.seen) >= MaxTenantLabels {
		return OtherTenant
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	t.seen[tenant] = true
	return tenant
}

// Percentile reads the q-quantile (0 < q < 1) of a histogram with upper
// bounds bounds and per-bucket (not cumulative) counts counts, where
// counts has one more entry than bounds (the +Inf bucket). It interpolates
// linearly inside the bucket that holds the quantile, as Prometheus's
// histogram_quantile does; a quantile in the +Inf bucket reads as the
// largest bound. ok is false when there are no samples.
func Percentile(bounds []float64, counts []int64, q float64) (seconds float64, ok bool) {
	var total int64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var cum float64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= rank {
			if i >= len(bounds) {
				return bounds[len(bounds)-1], true
			}
			lo := 0.0
			if i > 0 {
				lo = bounds[i-1]
			}
			frac := (rank - cum) / float64(c)
			return lo + (bounds[i]-lo)*math.Max(0, math.Min(1, frac)), true
		}
		cum += float64(c)
	}
	return bounds[len(bounds)-1], true
}

// Bucket is the index in counts (as Percentile takes them) of a sample of
// d in the figures' LagBuckets: the first bucket whose bound is at least
// d, or len(LagBuckets) for +Inf. Negative durations go to the first
// bucket.
func Bucket(d time.Duration) int {
	s := d.Seconds()
	lo, hi := 0, len(LagBuckets)
	for lo < hi {
		mid := (lo + hi) / 2
		if LagBuckets[mid] >= s {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
