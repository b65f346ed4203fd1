package server

import (
	"net/http"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// The simulated outage's routes (engine.Outages): start one, cancel it,
// read it. Every answer is an api.SimulatedOutageStatus.

// startOutage answers POST /v1/simulate/outage.
func (s *Server) startOutage(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.SimulateOutageRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	if req.For == "" {
		return 0, nil, invalidArg("for", `for: required, a duration such as "10m"`)
	}
	d, err := schedule.ParseDuration("for", req.For, false)
	if err != nil {
		return 0, nil, err
	}
	o, err := s.eng.Outages.Start(r.Context(), d, req.Shards)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.outageStatus(o), nil
}

// cancelOutage answers POST /v1/simulate/outage/cancel: the outage it
// ended, or null when none was in progress.
func (s *Server) cancelOutage(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var none struct{}
	if err := decodeBody(w, r, &none, true); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.Outages.Cancel(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.outageStatus(o), nil
}

// getOutage answers GET /v1/simulate/outage: the outage in progress.
func (s *Server) getOutage(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.Outages.Current(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.outageStatus(o), nil
}

func (s *Server) outageStatus(o *store.Outage) api.SimulatedOutageStatus {
	now := s.eng.Outages.Now()
	return api.SimulatedOutageStatus{Now: now.UTC(), Outage: apiOutage(o, now)}
}

// apiOutage is o as the API shows it at now; nil for nil.
func apiOutage(o *store.Outage, now time.Time) *api.SimulatedOutage {
	if o == nil {
		return nil
	}
	out := &api.SimulatedOutage{ID: o.ID, Shards: append([]int{}, o.Shards...), StartedAt: o.StartedAt.UTC(),
		EndsAt: o.EndsAt.UTC(), CreatedBy: o.CreatedBy, Remaining: "0s"}
	if !o.CanceledAt.IsZero() {
		c := o.CanceledAt.UTC()
		out.CanceledAt = &c
	}
	if o.CanceledAt.IsZero() && now.Before(o.EndsAt) {
		out.Active = true
		out.Remaining = o.EndsAt.Sub(now).Round(time.Second).String()
	}
	return out
}

// outageReady is what /readyz adds to its "ok" while a simulated outage
// is in progress: the node stays ready (a load balancer must keep sending
// it acks and heartbeats), and says so.
func outageReady(o *store.Outage) string {
	if o == nil {
		return ""
	}
	return "; simulated outage in progress until " + o.EndsAt.UTC().Format(time.RFC3339) + " (planning and claims paused)"
}
