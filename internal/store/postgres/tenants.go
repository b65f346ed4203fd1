package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// Tenants and their tokens (store.TenantStore, store.TenantTx).

// GetTenant returns a tenant in any state (see store.TenantStore).
func (s *Store) GetTenant(ctx context.Context, id string) (*record.Tenant, error) {
	if !storable(id) {
		return nil, fmt.Errorf("get tenant %q: %w", id, store.ErrNotFound)
	}
	t, err := rowcodec.ScanTenant(s.pool.QueryRow(ctx, qGetTenant, id))
	if err != nil {
		return nil, fmt.Errorf("get tenant %q: %w", id, translate(err))
	}
	return t, nil
}

// ListTenants returns every tenant by id (see store.TenantStore).
func (s *Store) ListTenants(ctx context.Context) ([]record.Tenant, error) {
	return readAll(ctx, s, "list tenants", rowcodec.ScanTenant, qListTenants)
}

// TokenByHash returns the token of a hash and its tenant's state (see
// store.TenantStore).
func (s *Store) TokenByHash(ctx context.Context, hash string) (*record.Token, record.TenantState, error) {
	if !storable(hash) {
		return nil, "", fmt.Errorf("token by hash: %w", store.ErrNotFound)
	}
	tok, state, err := rowcodec.ScanTokenState(s.pool.QueryRow(ctx, qTokenByHash, hash))
	if err != nil {
		return nil, "", fmt.Errorf("token by hash: %w", translate(err))
	}
	return tok, state, nil
}

// ListTokens returns a tenant's tokens (see store.TenantStore).
func (s *Store) ListTokens(ctx context.Context, tenantID string) ([]record.Token, error) {
	if !storable(tenantID) {
		return nil, nil
	}
	return readAll(ctx, s, "list tokens", rowcodec.ScanToken, qListTokens, tenantID)
}

// TouchToken moves a token's last use forward (see store.TenantStore).
func (s *Store) TouchToken(ctx context.Context, hash string, at time.Time) error {
	if !storable(hash) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, qTouchToken, hash, ms(at)); err != nil {
		return fmt.Errorf("touch token: %w", translate(err))
	}
	return nil
}

// InsertTenant stores a new tenant (see store.TenantTx).
func (t *tx) InsertTenant(ctx context.Context, tn *record.Tenant) error {
	if !storable(tn.ID) {
		return fmt.Errorf("insert tenant %q: %w", tn.ID, notStorable())
	}
	if _, err := t.tx.Exec(ctx, qInsertTenant, rowcodec.TenantArgs(tn)...); err != nil {
		return fmt.Errorf("insert tenant %q: %w", tn.ID, translate(err))
	}
	return nil
}

// UpdateTenant writes a tenant over the version read (see store.TenantTx).
func (t *tx) UpdateTenant(ctx context.Context, tn *record.Tenant, prevVersion int64) error {
	if !storable(tn.ID) {
		return fmt.Errorf("update tenant %q: %w", tn.ID, store.ErrNotFound)
	}
	tag, err := t.tx.Exec(ctx, qUpdateTenant, rowcodec.TenantUpdateArgs(tn, prevVersion)...)
	if err != nil {
		return fmt.Errorf("update tenant %q: %w", tn.ID, translate(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := rowcodec.ScanTenant(t.tx.QueryRow(ctx, qGetTenant, tn.ID)); err != nil {
		return fmt.Errorf("update tenant %q: %w", tn.ID, translate(err))
	}
	return fmt.Errorf("update tenant %q: version %d is no longer the stored one: %w", tn.ID, prevVersion, store.ErrConflict)
}

// InsertToken stores a new token (see store.TenantTx).
func (t *tx) InsertToken(ctx context.Context, tok *record.Token) error {
	if !storable(tok.TenantID, tok.Name, tok.Hash) {
		return fmt.Errorf("insert token %q: %w", tok.Name, notStorable())
	}
	if _, err := t.tx.Exec(ctx, qInsertToken, rowcodec.TokenArgs(tok, nullMS)...); err != nil {
		return fmt.Errorf("insert token %q of tenant %q: %w", tok.Name, tok.TenantID, translate(err))
	}
	return nil
}

// RevokeTokens revokes a tenant's tokens by name, or all of them (see
// store.TenantTx).
func (t *tx) RevokeTokens(ctx context.Context, tenantID, name string, at time.Time) (int, error) {
	if !storable(tenantID, name) {
		return 0, nil
	}
	tag, err := t.tx.Exec(ctx, qRevokeTokens, tenantID, name, ms(at))
	if err != nil {
		return 0, fmt.Errorf("revoke tokens of tenant %q: %w", tenantID, translate(err))
	}
	return int(tag.RowsAffected()), nil
}
