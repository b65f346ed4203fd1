package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
)

// targetRoutes are the routes of the caller's tenant's targets. A tenant
// sees and names its own targets only: another tenant's of the same name
// is "no such target".
func (s *Server) targetRoutes() []route {
	return []route{
		{"POST", "/v1/targets", s.createTarget, "", false},
		{"GET", "/v1/targets", s.listTargets, "", false},
		{"GET", "/v1/targets/{name}", s.getTarget, "no such target", false},
		{"PUT", "/v1/targets/{name}", s.updateTarget, "no such target", false},
		{"DELETE", "/v1/targets/{name}", s.deleteTarget, "no such target", false},
		{"POST", "/v1/targets/{name}/test", s.testTarget, "no such target", false},
	}
}

func apiTarget(t *engine.TargetInfo) api.Target {
	return api.Target{Name: t.Name, Tenant: t.TenantID, Kind: string(t.Kind), Config: json.RawMessage(t.Config),
		SecretSet: t.SecretSet, Version: t.Version, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
}

func targetSpec(req *api.TargetRequest) engine.TargetSpec {
	return engine.TargetSpec{Kind: record.TargetKind(req.Kind), Config: req.Config, Secret: req.Secret, RotateSecret: req.RotateSecret}
}

func (s *Server) createTarget(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.TargetRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, invalidArg("name", "name: the target's name is required")
	}
	t, err := s.eng.Targets.Create(r.Context(), tenantOf(r), req.Name, targetSpec(&req))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, api.TargetSaved{Target: apiTarget(t), Secret: t.NewSecret}, nil
}

func (s *Server) listTargets(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	ts, err := s.eng.Targets.List(r.Context(), tenantOf(r))
	if err != nil {
		return 0, nil, err
	}
	out := api.TargetList{Targets: make([]api.Target, len(ts))}
	for i := range ts {
		out.Targets[i] = apiTarget(&ts[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) getTarget(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	t, err := s.eng.Targets.Get(r.Context(), tenantOf(r), r.PathValue("name"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiTarget(t), nil
}

func (s *Server) updateTarget(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.TargetRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	name := r.PathValue("name")
	if req.Name != "" && req.Name != name {
		return 0, nil, invalidArg("name", fmt.Sprintf("name: %q is not the target of the path (%q); a target cannot be renamed", req.Name, name))
	}
	t, err := s.eng.Targets.Update(r.Context(), tenantOf(r), name, targetSpec(&req))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.TargetSaved{Target: apiTarget(t), Secret: t.NewSecret}, nil
}

func (s *Server) deleteTarget(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	name := r.PathValue("name")
	t, err := s.eng.Targets.Get(r.Context(), tenantOf(r), name)
	if err != nil {
		return 0, nil, err
	}
	if err := s.eng.Targets.Delete(r.Context(), tenantOf(r), name); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiTarget(t), nil
}

func (s *Server) testTarget(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	o, id, err := s.eng.Targets.Test(r.Context(), tenantOf(r), r.PathValue("name"))
	if err != nil {
		return 0, nil, err
	}
	out := api.TargetTest{Delivered: o.Delivered(), Permanent: o.Permanent, RetryAfterSeconds: o.RetryAfter.Seconds(), OccurrenceID: id}
	if o.Err != nil {
		out.Error = o.Err.Error()
	}
	return http.StatusOK, out, nil
}
