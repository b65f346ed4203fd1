package client

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// CreateSchedules creates up to api.MaxBatchItems schedules in one
// request (POST /v1/schedules:batch). Each item succeeds or fails on its
// own: the answer has one result per item, in order. An error is for the
// whole request (nothing created): a list too long, the daemon
// unreachable, the store failing. Items with idempotency keys make the
// call safe to repeat.
func (c *Client) CreateSchedules(ctx context.Context, items []api.BatchItem) (*api.BatchResult, error) {
	return call[api.BatchResult](ctx, c, request{method: http.MethodPost, path: path("schedules:batch"),
		body: api.BatchRequest{Items: items}})
}
