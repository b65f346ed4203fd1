package server

import (
	"net/http"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
)

// tenantRoutes are the routes of tenants and their tokens, an admin's
// alone, and /v1/whoami, anyone's.
func (s *Server) tenantRoutes() []route {
	return []route{
		{"GET", "/v1/whoami", s.whoami, "", false},
		{"POST", "/v1/tenants", s.createTenant, "", true},
		{"GET", "/v1/tenants", s.listTenants, "", true},
		{"GET", "/v1/tenants/{tenant}", s.getTenant, "no such tenant", true},
		{"PATCH", "/v1/tenants/{tenant}", s.updateTenant, "no such tenant", true},
		{"DELETE", "/v1/tenants/{tenant}", s.deleteTenant, "no such tenant", true},
		{"POST", "/v1/tenants/{tenant}/enable", s.enableTenant, "no such tenant", true},
		{"POST", "/v1/tenants/{tenant}/disable", s.disableTenant, "no such tenant", true},
		{"POST", "/v1/tenants/{tenant}/tokens", s.createToken, "no such tenant", true},
		{"GET", "/v1/tenants/{tenant}/tokens", s.listTokens, "no such tenant", true},
		{"POST", "/v1/tenants/{tenant}/tokens/{token}/revoke", s.revokeToken, "no such token", true},
	}
}

func (s *Server) whoami(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	a := engine.ActorOf(r.Context())
	role := record.RoleTenant
	if a.Admin {
		role = record.RoleAdmin
	}
	return http.StatusOK, api.Whoami{Tenant: a.TenantID, Token: a.Token, Role: string(role), Local: a.Local}, nil
}

// tenantPatch reads a request's weight and quotas.
func tenantPatch(req *api.TenantRequest) engine.TenantPatch {
	q := &req.Quotas
	return engine.TenantPatch{Weight: req.Weight, ActiveSchedules: q.ActiveSchedules, FiringsPerSecond: q.FiringsPerSecond,
		Running: q.Running, CatchUpPerSecond: q.CatchUpPerSecond, APIRequestsPerSecond: q.APIRequestsPerSecond,
		RetentionSeconds: q.RetentionSeconds}
}

func (s *Server) createTenant(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.TenantRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, invalidArg("name", "name: the tenant's name is required")
	}
	tn, token, err := s.eng.Tenants.Create(r.Context(), req.Name, tenantPatch(&req))
	if err != nil {
		return 0, nil, err
	}
	toks, err := s.eng.Tenants.Tokens(r.Context(), tn.ID)
	if err != nil || len(toks) == 0 {
		return 0, nil, err
	}
	return http.StatusCreated, api.TenantCreated{Tenant: s.apiTenant(tn), Token: token, Info: apiToken(&toks[0])}, nil
}

func (s *Server) listTenants(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	ts, err := s.eng.Tenants.List(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := api.TenantList{Tenants: make([]api.Tenant, len(ts))}
	for i := range ts {
		out.Tenants[i] = s.apiTenant(&ts[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) getTenant(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	return s.tenantAnswer(s.eng.Tenants.Get(r.Context(), r.PathValue("tenant")))
}

func (s *Server) updateTenant(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.TenantRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	name := r.PathValue("tenant")
	if req.Name != "" && req.Name != name {
		return 0, nil, invalidArg("name", "name: a tenant cannot be renamed; leave it out or give "+name)
	}
	return s.tenantAnswer(s.eng.Tenants.Update(r.Context(), name, tenantPatch(&req)))
}

func (s *Server) deleteTenant(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	return s.tenantAnswer(s.eng.Tenants.Delete(r.Context(), r.PathValue("tenant")))
}

func (s *Server) enableTenant(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	return s.tenantAnswer(s.eng.Tenants.SetEnabled(r.Context(), r.PathValue("tenant"), true))
}

func (s *Server) disableTenant(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	return s.tenantAnswer(s.eng.Tenants.SetEnabled(r.Context(), r.PathValue("tenant"), false))
}

func (s *Server) createToken(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.TokenRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	token, tok, err := s.eng.Tenants.CreateToken(r.Context(), r.PathValue("tenant"), req.Name, record.Role(req.Role))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, api.TokenCreated{Token: token, Info: apiToken(tok)}, nil
}

func (s *Server) listTokens(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	toks, err := s.eng.Tenants.Tokens(r.Context(), r.PathValue("tenant"))
	if err != nil {
		return 0, nil, err
	}
	out := api.TokenList{Tokens: make([]api.TokenInfo, len(toks))}
	for i := range toks {
		out.Tokens[i] = apiToken(&toks[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) revokeToken(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	tenant, name := r.PathValue("tenant"), r.PathValue("token")
	if err := s.eng.Tenants.RevokeToken(r.Context(), tenant, name); err != nil {
		return 0, nil, err
	}
	toks, err := s.eng.Tenants.Tokens(r.Context(), tenant)
	if err != nil {
		return 0, nil, err
	}
	// The one just revoked: the latest revocation of that name.
	var last *record.Token
	for k := range toks {
		if t := &toks[k]; t.Name == name && !t.RevokedAt.IsZero() && (last == nil || t.RevokedAt.After(last.RevokedAt)) {
			last = t
		}
	}
	if last == nil {
		return 0, nil, notFound("no such token")
	}
	return http.StatusOK, apiToken(last), nil
}

func (s *Server) tenantAnswer(t *record.Tenant, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.apiTenant(t), nil
}

// apiTenant is t on the wire, with the quotas in force (the daemon's
// defaults under its own overrides).
func (s *Server) apiTenant(t *record.Tenant) api.Tenant {
	return api.Tenant{Name: t.ID, State: string(t.State), Weight: t.Weight, Quotas: apiQuotas(t.Quotas),
		Effective: apiQuotas(t.Quotas.Or(s.eng.Tenants.Defaults())), Version: t.Version,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

func apiQuotas(q record.Quotas) api.Quotas {
	return api.Quotas{ActiveSchedules: q.ActiveSchedules, FiringsPerSecond: q.FiringsPerSecond, Running: q.Running,
		CatchUpPerSecond: q.CatchUpPerSecond, APIRequestsPerSecond: q.APIRequestsPerSecond, RetentionSeconds: q.RetentionSeconds}
}

func apiToken(t *record.Token) api.TokenInfo {
	return api.TokenInfo{Tenant: t.TenantID, Name: t.Name, Role: string(t.Role), CreatedAt: t.CreatedAt,
		LastUsedAt: optTime(t.LastUsedAt), RevokedAt: optTime(t.RevokedAt)}
}
