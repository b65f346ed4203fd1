package metrics

import "github.com/prometheus/client_golang/prometheus"

// TZMetrics are the series of the tz database a node has loaded and of
// the firings its changes moved (engine/tzreload.go), so that an operator
// can see which release each node runs during a rolling update, and that a
// reload moved what it should.
type TZMetrics struct {
	// Info is 1 for the tz database version this node has loaded, under
	// its version label, and absent for every other.
	Info *prometheus.GaugeVec // version
	// Moved counts the materialized firings a change of zone rules
	// examined, by what became of them: canceled (the instant is no
	// longer a firing), kept (it still is, id unchanged) or replanned (a
	// firing of the new rules the planner materializes).
	Moved *prometheus.CounterVec // outcome
}

// newTZMetrics makes the tz series and registers them with f.
func newTZMetrics(f func(prometheus.Collector)) TZMetrics {
	m := TZMetrics{
		Info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sched_tz_database_info",
			Help: "1 for the tz database version this node has loaded (label version)."}, []string{"version"}),
		Moved: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sched_tz_rezone_firings_total",
			Help: "Firings materialized ahead that a change of their zone's rules examined, by outcome: canceled, kept or replanned."}, []string{"outcome"}),
	}
	f(m.Info)
	f(m.Moved)
	return m
}

// SetTZVersion makes version the one Info reports.
func (m TZMetrics) SetTZVersion(version string) {
	m.Info.Reset()
	m.Info.WithLabelValues(version).Set(1)
}
