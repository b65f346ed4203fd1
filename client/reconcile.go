package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/sched-dev/sched/api"
)

// ReconcileOptions select a reconcile: the range of scheduled times (zero
// ends: the daemon's default, the last 24 hours up to now), one schedule
// (an id or a name) and one tenant, each optional.
type ReconcileOptions struct {
	From, To time.Time
	Schedule string
	Tenant   string
}

// Reconcile asks the daemon to audit the store: every schedule's expected
// firings in the range against its occurrences (GET /v1/reconcile).
func (c *Client) Reconcile(ctx context.Context, o ReconcileOptions) (*api.ReconcileReport, error) {
	q := url.Values{}
	if !o.From.IsZero() {
		q.Set("from", o.From.UTC().Format(time.RFC3339))
	}
	if !o.To.IsZero() {
		q.Set("to", o.To.UTC().Format(time.RFC3339))
	}
	setQ(q, "schedule", o.Schedule)
	setQ(q, "tenant", o.Tenant)
	return call[api.ReconcileReport](ctx, c, request{method: http.MethodGet, path: path("reconcile"), query: q})
}
