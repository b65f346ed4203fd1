package client

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// Simulate asks schedd for a what-if simulation (POST /v1/simulate): what
// the schedules of req would do between its From and To, with the
// outages, workers and nodes it describes, on the real engine and a
// private store. It changes nothing on the daemon. A request over one of
// the daemon's limits is refused as invalid (IsInvalid).
func (c *Client) Simulate(ctx context.Context, req api.SimulateRequest) (*api.SimulateResult, error) {
	return call[api.SimulateResult](ctx, c, request{method: http.MethodPost, path: path("simulate"), body: req})
}
