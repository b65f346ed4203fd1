// Package metrics is sched's Prometheus instrumentation: every series the
// daemon exports at /metrics, defined once, with help text, and the lag
// histogram's bucket layout, which the engine's per-minute figures share so
// that `schedctl status` and Prometheus read the same buckets.
//
// Label sets are bounded whatever users do: no series is labelled by queue
// or schedule (users name those, without limit); tenant labels go through
// Tenants, which gives the first MaxTenantLabels tenants seen a label of
// their own and folds the rest into "other"; lanes, states, reasons, kinds,
// routes and status codes are fixed sets.
package metrics

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// LagBuckets are the upper bounds, in seconds, of the lag histograms: a
// geometric series from 1 ms to 1 hour with ratio 1.41, so any percentile
// read from them (by linear interpolation inside a bucket) is within about
// 20% of the true value across that range; a lag past an hour reads as an
// hour. The range reaches past the minutes an operator watches so that a
// queue nobody has served for half an hour does not read as 10 minutes.
var LagBuckets = prometheus.ExponentialBucketsRange(0.001, 3600, 45)

// MaxTenantLabels bounds the distinct values of the tenant label.
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

	PlannerPass  prometheus.Histogram
	HorizonSlack prometheus.Gauge
	ClockOffset  prometheus.Gauge

	HTTPRequests *prometheus.CounterVec   // route, code
	HTTPDuration *prometheus.HistogramVec // route

	gaugesMu sync.Mutex
	gauges   GaugeSource

	// A simulated outage (engine.Outages), as this node last read it.
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
	m.ScheduleLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sched_schedule_lag_seconds",
		Help:    "How late the planner put an occurrence on the queue: enqueued_at - scheduled_for. Occurrences enqueued ahead of their time (the planner works a horizon ahead) count as 0.",
		Buckets: LagBuckets,
	}, []string{"lane", "tenant"})
	m.DeliveryLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sched_delivery_lag_seconds",
		Help:    "How late a worker first had an occurrence: first claim - scheduled_for (flexible schedules include their window's offset).",
		Buckets: LagBuckets,
	}, []string{"lane", "tenant"})
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
	m.OutageEnds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sched_simulated_outage_ends_at_seconds",
		Help: "When the simulated outage in progress ends, in Unix seconds; 0 when none is in progress."})
	f(m.OutageActive)
	f(m.OutageEnds)
	m.Retention = newRetentionMetrics(f)
	m.TZ = newTZMetrics(f)
	m.Limits = newLimitMetrics(f)
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
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
// d: the first bucket whose bound is at least d, or len(LagBuckets) for
// +Inf. Negative durations go to the first bucket.
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
