package store

import (
	"context"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// TenantStore reads tenants and their tokens. It is part of the Store
// interface. The engine decides who a token is and what a tenant may do;
// the store keeps the rows. A token is kept only as its hash
// (record.TokenHash): nothing here ever sees a token itself.
type TenantStore interface {
	// GetTenant returns the tenant id in any state, or ErrNotFound.
	GetTenant(ctx context.Context, id string) (*record.Tenant, error)
	// ListTenants returns every tenant, deleted ones too, by id.
	ListTenants(ctx context.Context) ([]record.Tenant, error)
	// TokenByHash returns the token whose hash is hash, revoked or not,
	// and the state of its tenant ("" when the tenant has no row), or
	// ErrNotFound. The one read of an authenticated request: a lookup by
	// the primary key, joined to the tenant's row by its own.
	TokenByHash(ctx context.Context, hash string) (*record.Token, record.TenantState, error)
	// ListTokens returns a tenant's tokens, revoked ones too, by creation
	// time then name.
	ListTokens(ctx context.Context, tenantID string) ([]record.Token, error)
	// TouchToken sets the token's last use to at when it is earlier (or
	// unset); a token that does not exist is not an error.
	TouchToken(ctx context.Context, hash string, at time.Time) error
}

// TenantTx holds the statements that change tenants and tokens, in one
// transaction with the audit record of the change (see ControlTx).
type TenantTx interface {
	// InsertTenant stores t. A tenant of the same id, in any state
	// (deleted ones too), is ErrConflict.
	InsertTenant(ctx context.Context, t *record.Tenant) error
	// UpdateTenant writes t over the stored tenant t.ID if its version is
	// still prevVersion: ErrNotFound when there is no such tenant,
	// ErrConflict when another change came first.
	UpdateTenant(ctx context.Context, t *record.Tenant, prevVersion int64) error
	// InsertToken stores tok. A token of the same tenant and name that
	// is not revoked is ErrConflict.
	InsertToken(ctx context.Context, tok *record.Token) error
	// RevokeTokens sets RevokedAt = at on the tenant's unrevoked tokens
	// named name (every one of the tenant's when name is empty) and
	// returns how many it revoked.
	RevokeTokens(ctx context.Context, tenantID, name string, at time.Time) (int, error)
}
