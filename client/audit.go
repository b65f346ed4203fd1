package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sched-dev/sched/api"
)

// AuditOptions select a page of the audit log: one schedule (an id or a
// name), rows made at or after Since, one tenant ("" the caller's own,
// "*" every tenant's; another tenant's needs an admin token), the page
// after the entry AfterID, and at most Limit entries (0: the daemon's
// default).
type AuditOptions struct {
	Schedule string
	Since    time.Time
	Tenant   string
	AfterID  int64
	Limit    int
}

// Audit reads a page of the audit log, oldest first (GET /v1/audit).
func (c *Client) Audit(ctx context.Context, o AuditOptions) (*api.AuditList, error) {
	q := url.Values{}
	setQ(q, "schedule", o.Schedule)
	if !o.Since.IsZero() {
		q.Set("since", o.Since.UTC().Format(time.RFC3339Nano))
	}
	setQ(q, "tenant", o.Tenant)
	if o.AfterID > 0 {
		q.Set("after", strconv.FormatInt(o.AfterID, 10))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	return call[api.AuditList](ctx, c, request{method: http.MethodGet, path: path("audit"), query: q})
}
