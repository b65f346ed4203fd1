package metrics

import "github.com/prometheus/client_golang/prometheus"

// LimitMetrics count what the daemon's own limits refused, so that an
// operator sees when one bites and which: a client at its share of
// connections, an address out of failed authentications, a tenant at its
// share of long polls.
type LimitMetrics struct {
	// ConnectionsRefused counts connections closed as soon as they were
	// accepted, by reason: listener_full (--max-connections) or
	// per_client (--max-connections-per-client).
	ConnectionsRefused *prometheus.CounterVec // reason
	// AuthFailuresLimited counts requests answered 429 rate_limited,
	// before their token was looked up, because their client address had
	// spent its budget of failed authentications (--auth-failure-rate).
	AuthFailuresLimited prometheus.Counter
	// WaitingClaimsRefused counts claims with a wait answered 429
	// too_many_waiting, by the cap reached: tenant
	// (--max-waiting-claims-per-tenant) or daemon (--max-waiting-claims).
	WaitingClaimsRefused *prometheus.CounterVec // cap
}

// The label values of LimitMetrics: a fixed set.
const (
	RefusedListenerFull = "listener_full"
	RefusedPerClient    = "per_client"
	CapTenant           = "tenant"
	CapDaemon           = "daemon"
)

// newLimitMetrics makes the limits' series and registers them with f.
func newLimitMetrics(f func(prometheus.Collector)) LimitMetrics {
	m := LimitMetrics{
		ConnectionsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sched_connections_refused_total",
			Help: "Connections closed as soon as they were accepted, by reason: listener_full (--max-connections) or per_client (--max-connections-per-client)."}, []string{"reason"}),
		AuthFailuresLimited: prometheus.NewCounter(prometheus.CounterOpts{Name: "sched_auth_failures_limited_total",
			Help: "Requests answered 429 rate_limited without their token being looked up, because their client address had spent its budget of failed authentications (--auth-failure-rate)."}),
		WaitingClaimsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sched_waiting_claims_refused_total",
			Help: "Claims with a wait answered 429 too_many_waiting, by the cap reached: tenant (--max-waiting-claims-per-tenant) or daemon (--max-waiting-claims)."}, []string{"cap"}),
	}
	f(m.ConnectionsRefused)
	f(m.AuthFailuresLimited)
	f(m.WaitingClaimsRefused)
	// Every series exists from the start, at 0, so that a rate over it
	// reads 0 rather than nothing before a limit first bites.
	m.ConnectionsRefused.WithLabelValues(RefusedListenerFull)
	m.ConnectionsRefused.WithLabelValues(RefusedPerClient)
	m.WaitingClaimsRefused.WithLabelValues(CapTenant)
	m.WaitingClaimsRefused.WithLabelValues(CapDaemon)
	return m
}
