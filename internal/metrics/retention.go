package metrics

import "github.com/prometheus/client_golang/prometheus"

// RetentionMetrics are the series of the retention of finished history
// (engine/retention.go).
type RetentionMetrics struct {
	// Removed counts the finished occurrences deleted, per tenant
	// (Tenant's bounded label).
	Removed *prometheus.CounterVec // tenant
	// LastRun is when this node last finished a retention pass, in Unix
	// seconds of the engine's clock.
	LastRun prometheus.Gauge
	// Horizon is, per tenant, where its history begins as this node last
	// set it, in Unix seconds: occurrences scheduled before may be gone.
	// A tenant's series appears with the first pass that sets its horizon
	// (0 would say "history begins in 1970", which no pass has said).
	Horizon *prometheus.GaugeVec // tenant
}

// newRetentionMetrics makes the retention series and registers them with f.
func newRetentionMetrics(f func(prometheus.Collector)) RetentionMetrics {
	m := RetentionMetrics{
		Removed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sched_retention_removed_total",
			Help: "Finished occurrences (with their attempts) deleted by retention, by tenant."}, []string{"tenant"}),
		LastRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sched_retention_last_run_timestamp_seconds",
			Help: "When this node last finished a retention pass, in Unix seconds; 0 before its first."}),
		Horizon: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sched_retention_horizon_timestamp_seconds",
			Help: "Where a tenant's history begins, in Unix seconds: occurrences scheduled before it may have been removed by retention."}, []string{"tenant"}),
	}
	f(m.Removed)
	f(m.LastRun)
	f(m.Horizon)
	return m
}
