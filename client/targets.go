package client

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// Targets: the caller's tenant's places outside sched its schedules'
// firings can be delivered into (docs/api.md, targets).

// CreateTarget creates a target; the answer's Secret is shown this once
// (POST /v1/targets).
func (c *Client) CreateTarget(ctx context.Context, req api.TargetRequest) (*api.TargetSaved, error) {
	return call[api.TargetSaved](ctx, c, request{method: http.MethodPost, path: path("targets"), body: req})
}

// ListTargets returns the tenant's targets (GET /v1/targets).
func (c *Client) ListTargets(ctx context.Context) (*api.TargetList, error) {
	return call[api.TargetList](ctx, c, request{method: http.MethodGet, path: path("targets")})
}

// GetTarget returns one target, without its secret (GET /v1/targets/{name}).
func (c *Client) GetTarget(ctx context.Context, name string) (*api.Target, error) {
	return call[api.Target](ctx, c, request{method: http.MethodGet, path: path("targets", name)})
}

// UpdateTarget replaces a target's settings (PUT /v1/targets/{name}); the
// answer's Secret is set when the update made or took a new one.
func (c *Client) UpdateTarget(ctx context.Context, name string, req api.TargetRequest) (*api.TargetSaved, error) {
	return call[api.TargetSaved](ctx, c, request{method: http.MethodPut, path: path("targets", name), body: req})
}

// DeleteTarget deletes a target no live schedule names (DELETE
// /v1/targets/{name}) and returns it as it was.
func (c *Client) DeleteTarget(ctx context.Context, name string) (*api.Target, error) {
	return call[api.Target](ctx, c, request{method: http.MethodDelete, path: path("targets", name)})
}

// TestTarget sends one test firing to a target and reports how it went
// (POST /v1/targets/{name}/test).
func (c *Client) TestTarget(ctx context.Context, name string) (*api.TargetTest, error) {
	return call[api.TargetTest](ctx, c, request{method: http.MethodPost, path: path("targets", name, "test")})
}
