package rowcodec

import (
	"github.com/sched-dev/sched/internal/store"
)

// The bits of the audit_log's actor_flags column.
const (
	auditAdmin = 1
	auditLocal = 2
)

// AuditArgs is the values an append of e binds, in the order both
// drivers number them (at, tenant_id, actor_tenant, actor_token,
// actor_flags, action, target, old_version, new_version, detail).
func AuditArgs(e *store.AuditEntry) []any {
	flags := 0
	if e.ActorAdmin {
		flags |= auditAdmin
	}
	if e.ActorLocal {
		flags |= auditLocal
	}
	return []any{MS(e.At), e.TenantID, e.ActorTenant, e.ActorToken, flags, e.Action, e.Target,
		e.OldVersion, e.NewVersion, e.Detail}
}

// ScanAudit reads a row of the audit_log columns (audit_id, then
// AuditArgs' order).
func ScanAudit(row Scanner) (*store.AuditEntry, error) {
	var (
		e     store.AuditEntry
		at    int64
		flags int64
	)
	if err := row.Scan(&e.ID, &at, &e.TenantID, &e.ActorTenant, &e.ActorToken, &flags, &e.Action, &e.Target,
		&e.OldVersion, &e.NewVersion, &e.Detail); err != nil {
		return nil, err
	}
	e.At, e.ActorAdmin, e.ActorLocal = FromMS(at), flags&auditAdmin != 0, flags&auditLocal != 0
	return &e, nil
}

// AuditListing picks the statement that serves p, of a driver's three
// walks of the audit log in id order (see store.ListAuditParams): log, the
// whole log; tenant, one tenant's rows (tenant_id, audit_id); target, one
// target's rows (target, audit_id). It returns it with the values it
// binds, in the order both drivers number them: since, after id, limit,
// the seek (store.AuditClockSlack before since: the walk starts after the
// last row stamped before it), then the tenant (the tenant's and the
// target's walks) and the target (the target's walk).
func AuditListing(p store.ListAuditParams, log, tenant, target string) (query string, args []any) {
	seek := p.Since.Add(-store.AuditClockSlack)
	args = []any{MS(p.Since), p.AfterID, store.ListLimit(p.Limit), MS(seek)}
	switch {
	case p.Target != "":
		return target, append(args, p.TenantID, p.Target)
	case p.TenantID != "":
		return tenant, append(args, p.TenantID)
	}
	return log, args
}
