package server

import (
	"fmt"
	"net/http"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/schedule"
)

// Acting as another tenant. A worker pool shared by tenants (a claim with
// all_tenants) runs under an admin's token and holds occurrences of many
// tenants: its heartbeats, acks and nacks name each occurrence's tenant,
// with the Sched-Tenant header (principal.go applies it to every route) or
// the tenant field of an ack carried by a claim. Only an admin may name a
// tenant other than its own; anyone else doing so is refused 403
// forbidden, never quietly served as its own tenant.

// otherTenant checks that the caller may act as tenant named, given in
// field, and returns it.
func otherTenant(r *http.Request, named, field string) (string, error) {
	return actAs(engine.ActorOf(r.Context()), named, field)
}

// actAs checks that actor a may act as tenant named (given in field): an
// admin may, a tenant's token may not (403), and the name must be a
// tenant's.
func actAs(a engine.Actor, named, field string) (string, error) {
	if !a.Admin {
		return "", forbiddenActing(field, fmt.Sprintf("%s %q: only an admin token may act as another tenant", field, clip(named)))
	}
	if err := schedule.CheckTenantRef(named); err != nil {
		return "", invalidArg(field, fmt.Sprintf("%s %q: not a tenant name", field, clip(named)))
	}
	return named, nil
}

// ackTenants sets the tenant of each of acks from the tenant its item in
// names (its occurrence's tenant, for a pool worker's acks): own when
// none, another only for an admin.
func ackTenants(r *http.Request, own string, in []api.AckItem, acks []engine.AckItem) error {
	for i, a := range in {
		if a.Tenant == "" || a.Tenant == own {
			continue
		}
		t, err := otherTenant(r, a.Tenant, fmt.Sprintf("acks[%d].tenant", i))
		if err != nil {
			return err
		}
		acks[i].TenantID = t
	}
	return nil
}

// checkAllTenants refuses a claim for every tenant's work (all_tenants)
// from anyone but an admin.
func checkAllTenants(r *http.Request, all bool) error {
	if all && !engine.ActorOf(r.Context()).Admin {
		return forbiddenActing("all_tenants", "all_tenants: only an admin token may claim every tenant's work")
	}
	return nil
}

// forbiddenActing is a 403 forbidden naming the field the caller's token
// may not set.
func forbiddenActing(field, msg string) error {
	return &apiError{status: http.StatusForbidden, code: api.CodeForbidden, field: field, msg: msg}
}
