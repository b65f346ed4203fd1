package client

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// StartOutage starts a simulated outage (POST /v1/simulate/outage): every
// node of the daemon's store stops planning and answers claims with
// nothing for req.For (only for req.Shards, when given), then resumes as
// after a real outage. One already in progress is a conflict.
func (c *Client) StartOutage(ctx context.Context, req api.SimulateOutageRequest) (*api.SimulatedOutageStatus, error) {
	return call[api.SimulatedOutageStatus](ctx, c, request{method: http.MethodPost, path: path("simulate", "outage"), body: req})
}

// CancelOutage ends the simulated outage in progress early; the answer's
// Outage is the one it ended, nil when none was in progress.
func (c *Client) CancelOutage(ctx context.Context) (*api.SimulatedOutageStatus, error) {
	return call[api.SimulatedOutageStatus](ctx, c, request{method: http.MethodPost, path: path("simulate", "outage", "cancel")})
}

// Outage returns the simulated outage in progress; the answer's Outage is
// nil when there is none.
func (c *Client) Outage(ctx context.Context) (*api.SimulatedOutageStatus, error) {
	return call[api.SimulatedOutageStatus](ctx, c, request{method: http.MethodGet, path: path("simulate", "outage")})
}
