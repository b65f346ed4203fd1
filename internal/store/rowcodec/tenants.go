package rowcodec

import (
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// TenantArgs is the values of the tenants table's columns for t, in the
// order both drivers name them (tenant_id, state, weight,
// q_active_schedules, q_firings_per_second, q_running,
// q_catch_up_per_second, q_api_requests_per_second, q_retention_seconds, created_at,
// updated_at, version).
func TenantArgs(t *record.Tenant) []any {
	q := &t.Quotas
	return []any{t.ID, string(t.State), t.Weight, q.ActiveSchedules, q.FiringsPerSecond, q.Running,
		q.CatchUpPerSecond, q.APIRequestsPerSecond, q.RetentionSeconds, MS(t.CreatedAt), MS(t.UpdatedAt), t.Version}
}

// ScanTenant reads a row of the tenants columns, in TenantArgs' order.
func ScanTenant(row Scanner) (*record.Tenant, error) {
	var (
		t                record.Tenant
		state            string
		created, updated int64
	)
	q := &t.Quotas
	if err := row.Scan(&t.ID, &state, &t.Weight, &q.ActiveSchedules, &q.FiringsPerSecond, &q.Running,
		&q.CatchUpPerSecond, &q.APIRequestsPerSecond, &q.RetentionSeconds, &created, &updated, &t.Version); err != nil {
		return nil, err
	}
	t.State, t.CreatedAt, t.UpdatedAt = record.TenantState(state), FromMS(created), FromMS(updated)
	return &t, nil
}

// TokenArgs is the values of the tenant_tokens table's columns for tok,
// in the order both drivers name them (token_hash, tenant_id, name, role,
// created_at, last_used_at, revoked_at). nullMS binds an optional instant
// in the driver's type.
func TokenArgs[N any](tok *record.Token, nullMS func(time.Time) N) []any {
	return []any{tok.Hash, tok.TenantID, tok.Name, string(tok.Role), MS(tok.CreatedAt), nullMS(tok.LastUsedAt), nullMS(tok.RevokedAt)}
}

// ScanToken reads a row of the tenant_tokens columns, in TokenArgs' order.
func ScanToken(row Scanner) (*record.Token, error) {
	tok, _, err := scanToken(row, false)
	return tok, err
}

// ScanTokenState reads a row of the tenant_tokens columns followed by its
// tenant's state (” when the tenant has no row).
func ScanTokenState(row Scanner) (*record.Token, record.TenantState, error) {
	return scanToken(row, true)
}

func scanToken(row Scanner, withState bool) (*record.Token, record.TenantState, error) {
	var (
		tok           record.Token
		role, state   string
		created       int64
		used, revoked *int64
	)
	dest := []any{&tok.Hash, &tok.TenantID, &tok.Name, &role, &created, &used, &revoked}
	if withState {
		dest = append(dest, &state)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, "", err
	}
	tok.Role, tok.CreatedAt = record.Role(role), FromMS(created)
	tok.LastUsedAt, tok.RevokedAt = fromNullable(used), fromNullable(revoked)
	return &tok, record.TenantState(state), nil
}

// TenantUpdateArgs is the values an update of the tenant t over version
// prev binds, in the order both drivers' statements number them
// (tenant_id, state, weight, the six quotas, updated_at, version, prev).
func TenantUpdateArgs(t *record.Tenant, prev int64) []any {
	q := &t.Quotas
	return []any{t.ID, string(t.State), t.Weight, q.ActiveSchedules, q.FiringsPerSecond, q.Running,
		q.CatchUpPerSecond, q.APIRequestsPerSecond, q.RetentionSeconds, MS(t.UpdatedAt), t.Version, prev}
}
