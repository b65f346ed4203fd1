package server

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// WhatIf runs what-if simulations for POST /v1/simulate: the real engine
// on a virtual clock against a private store of its own. The daemon passes
// internal/simulate's; the server only decodes and answers, so that it
// links no store driver.
type WhatIf interface {
	// Simulate runs one simulation. A request that is malformed or over
	// a limit is a *schedule.ValidationError naming the bad part.
	Simulate(ctx context.Context, r *api.SimulateRequest) (*api.SimulateResult, error)
}

// simulate answers POST /v1/simulate. It reads nothing of the daemon's
// store and writes nothing to it.
func (s *Server) simulate(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	if s.cfg.WhatIf == nil {
		return 0, nil, &apiError{status: http.StatusServiceUnavailable, code: api.CodeUnavailable,
			msg: "this schedd runs no simulations; run schedd simulate instead"}
	}
	var req api.SimulateRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	res, err := s.cfg.WhatIf.Simulate(r.Context(), &req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}
