package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/reconcile"
)

// ReconcileFunc runs a reconcile over the daemon's store (the daemon
// injects reconcile.Report on its store): the audit reads the store
// directly, not through the engine, whose planner it checks.
type ReconcileFunc func(ctx context.Context, opt reconcile.Options) (*api.ReconcileReport, error)

// ReconcileOptions reads a reconcile's request, the API's query or schedd
// reconcile's flags: the range (RFC 3339, by default the last 24 hours up
// to now), a schedule by id or name (a name is looked up in tenant, or in
// DefaultTenant), and a tenant to keep to (every tenant when empty).
func ReconcileOptions(from, to, schedule, tenant string, now time.Time) (reconcile.Options, error) {
	start, end, err := reconcile.ParseRange(from, to, now)
	if err != nil {
		return reconcile.Options{}, err
	}
	return reconcile.Options{From: start, To: end, Schedule: schedule, TenantID: tenant, NameTenant: DefaultTenant}, nil
}

// reconcile answers GET /v1/reconcile. An admin audits every tenant's
// schedules unless one is named; a tenant's token audits its own alone,
// and naming another tenant is forbidden.
func (s *Server) reconcile(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r, "from", "to", "schedule", "tenant"); err != nil {
		return 0, nil, err
	}
	q := r.URL.Query()
	tenant := q.Get("tenant")
	if !isAdmin(r) {
		if tenant != "" && tenant != tenantOf(r) {
			return 0, nil, forbidden("a tenant's token reconciles its own tenant alone; an admin may name another")
		}
		tenant = tenantOf(r)
	}
	if s.cfg.Reconcile == nil {
		return 0, nil, unavailable("this daemon does not reconcile")
	}
	now := s.eng.Cluster.Now()
	opt, err := ReconcileOptions(q.Get("from"), q.Get("to"), q.Get("schedule"), tenant, now)
	if tenant != "" {
		opt.NameTenant = tenant
	}
	// The cluster's clock is the present the range may end at most
	// reconcile.MaxAhead after; the firings are bounded by
	// reconcile.DefaultMaxFirings. A range past either is refused here,
	// or by the reconciler's estimate, before any firing is walked.
	opt.Now = now
	if err == nil {
		err = opt.Check()
	}
	if err == nil {
		var rep *api.ReconcileReport
		if rep, err = s.cfg.Reconcile(r.Context(), opt); err == nil {
			return http.StatusOK, rep, nil
		}
	}
	// A --schedule that names none is bad input too, not a 404: a caller
	// (often cron or CI) must be able to tell "the audit found a problem"
	// (exit 1) from "the audit was asked wrongly" (exit 2).
	if in := (*reconcile.InputError)(nil); errors.As(err, &in) {
		return 0, nil, invalidArg(in.Field, in.Error())
	}
	return 0, nil, err
}
