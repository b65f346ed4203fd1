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

// CheckCreateSchedules is a dry run of CreateSchedules: each item as the
// batch would answer it; nothing is kept.
func (c *Client) CheckCreateSchedules(ctx context.Context, items []api.BatchItem) (*api.BatchResult, error) {
	return call[api.BatchResult](ctx, c, request{method: http.MethodPost, path: path("schedules:batch"),
		body: api.BatchRequest{Items: items}, query: dryRunQuery})
}

// ItemError is a failed item's error as an *Error (Status 0: the request
// itself succeeded), so that IsInvalid, IsConflict and the like judge it
// as they would a single create's; nil for an item that did not fail.
func ItemError(it api.BatchItemResult) error {
	if it.Error == nil {
		return nil
	}
	return &Error{Code: it.Error.Code, Message: it.Error.Message, Field: it.Error.Field}
}
