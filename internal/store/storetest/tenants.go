package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testTenants pins the tenants' and tokens' rows (store.TenantStore,
// store.TenantTx): a tenant's id is never taken twice, an update is
// conditional on the version read, a token is found by its hash alone, a
// name is unique among a tenant's live tokens, and a revocation is at once
// visible to every later read.
func testTenants(t *testing.T, open func(t *testing.T) Store) {
	t.Run("TenantRows", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		tn := record.Tenant{ID: "acme", State: record.TenantActive, Weight: 3,
			Quotas:    record.Quotas{ActiveSchedules: 10, FiringsPerSecond: 20, Running: 30, CatchUpPerSecond: 40, APIRequestsPerSecond: 50, RetentionSeconds: 60},
			CreatedAt: at(0), UpdatedAt: at(0), Version: 1}
		inTx(t, s, func(tx store.Tx) error { return tx.InsertTenant(ctx, &tn) })
		got, err := s.GetTenant(ctx, "acme")
		if err != nil || *got != tn {
			t.Fatalf("GetTenant = %+v, %v; want %+v", got, err, tn)
		}
		if _, err := s.GetTenant(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetTenant of a missing tenant: %v; want ErrNotFound", err)
		}
		err = store.InTx(ctx, s, func(tx store.Tx) error { return tx.InsertTenant(ctx, &tn) })
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("InsertTenant twice: %v; want ErrConflict", err)
		}
		next := tn
		next.State, next.Weight, next.Quotas.Running, next.UpdatedAt, next.Version = record.TenantDisabled, 5, 7, at(time.Minute), 2
		inTx(t, s, func(tx store.Tx) error { return tx.UpdateTenant(ctx, &next, 1) })
		if got, err := s.GetTenant(ctx, "acme"); err != nil || *got != next {
			t.Errorf("GetTenant after update = %+v, %v; want %+v", got, err, next)
		}
		// Over a version no longer stored: a conflict, nothing written.
		stale := next
		stale.Weight, stale.Version = 9, 2
		err = store.InTx(ctx, s, func(tx store.Tx) error { return tx.UpdateTenant(ctx, &stale, 1) })
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdateTenant over a stale version: %v; want ErrConflict", err)
		}
		missing := next
		missing.ID = "nobody"
		err = store.InTx(ctx, s, func(tx store.Tx) error { return tx.UpdateTenant(ctx, &missing, 1) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UpdateTenant of a missing tenant: %v; want ErrNotFound", err)
		}
		other := record.Tenant{ID: "beta", State: record.TenantActive, Weight: 1, CreatedAt: at(0), UpdatedAt: at(0), Version: 1}
		inTx(t, s, func(tx store.Tx) error { return tx.InsertTenant(ctx, &other) })
		all, err := s.ListTenants(ctx)
		if err != nil || len(all) != 2 || all[0].ID != "acme" || all[1].ID != "beta" {
			t.Errorf("ListTenants = %+v, %v; want acme, beta", all, err)
		}
	})

	t.Run("TokenRows", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		a1 := record.Token{TenantID: "acme", Name: "ci", Hash: record.TokenHash("one"), Role: record.RoleTenant, CreatedAt: at(0)}
		a2 := record.Token{TenantID: "acme", Name: "deploy", Hash: record.TokenHash("two"), Role: record.RoleAdmin, CreatedAt: at(time.Second)}
		b1 := record.Token{TenantID: "beta", Name: "ci", Hash: record.TokenHash("three"), Role: record.RoleTenant, CreatedAt: at(0)}
		inTx(t, s, func(tx store.Tx) error {
			for _, tok := range []*record.Token{&a1, &a2, &b1} {
				if err := tx.InsertToken(ctx, tok); err != nil {
					return err
				}
			}
			return nil
		})
		got, state, err := s.TokenByHash(ctx, record.TokenHash("two"))
		if err != nil || *got != a2 {
			t.Fatalf("TokenByHash = %+v, %v; want %+v", got, err, a2)
		}
		// No tenant row was written here: the token's tenant state is "".
		if state != "" {
			t.Errorf("TokenByHash's tenant state = %q; want \"\" (no tenant row)", state)
		}
		if _, _, err := s.TokenByHash(ctx, record.TokenHash("four")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TokenByHash of an unknown token: %v; want ErrNotFound", err)
		}
		// A live name is taken; the same name in another tenant is not.
		dup := record.Token{TenantID: "acme", Name: "ci", Hash: record.TokenHash("five"), Role: record.RoleTenant, CreatedAt: at(0)}
		err = store.InTx(ctx, s, func(tx store.Tx) error { return tx.InsertToken(ctx, &dup) })
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("InsertToken with a live name: %v; want ErrConflict", err)
		}
		// Last use only moves forward.
		for _, u := range []time.Duration{time.Minute, 30 * time.Second} {
			if err := s.TouchToken(ctx, a1.Hash, at(u)); err != nil {
				t.Fatalf("TouchToken: %v", err)
			}
		}
		if got, _, _ := s.TokenByHash(ctx, a1.Hash); !got.LastUsedAt.Equal(at(time.Minute)) {
			t.Errorf("LastUsedAt = %v; want %v (the later use)", got.LastUsedAt, at(time.Minute))
		}
		// Revoking by name, then the name is free again.
		var n int
		inTx(t, s, func(tx store.Tx) (err error) {
			n, err = tx.RevokeTokens(ctx, "acme", "ci", at(2*time.Minute))
			return err
		})
		if n != 1 {
			t.Errorf("RevokeTokens(acme, ci) = %d; want 1", n)
		}
		if got, _, _ := s.TokenByHash(ctx, a1.Hash); !got.RevokedAt.Equal(at(2 * time.Minute)) {
			t.Errorf("RevokedAt = %v; want %v", got.RevokedAt, at(2*time.Minute))
		}
		if got, _, _ := s.TokenByHash(ctx, b1.Hash); !got.RevokedAt.IsZero() {
			t.Errorf("beta's token of the same name was revoked: %+v", got)
		}
		inTx(t, s, func(tx store.Tx) error { return tx.InsertToken(ctx, &dup) })
		// Every one of a tenant's.
		inTx(t, s, func(tx store.Tx) (err error) {
			n, err = tx.RevokeTokens(ctx, "acme", "", at(3*time.Minute))
			return err
		})
		if n != 2 {
			t.Errorf("RevokeTokens(acme, all) = %d; want 2 (deploy and the new ci)", n)
		}
		// With its tenant's row, the token reads its tenant's state.
		beta := record.Tenant{ID: "beta", State: record.TenantDisabled, Weight: 1, CreatedAt: at(0), UpdatedAt: at(0), Version: 1}
		inTx(t, s, func(tx store.Tx) error { return tx.InsertTenant(ctx, &beta) })
		if got, state, err := s.TokenByHash(ctx, b1.Hash); err != nil || got.TenantID != "beta" || state != record.TenantDisabled {
			t.Errorf("TokenByHash of beta's token = %+v, %q, %v; want beta's, DISABLED", got, state, err)
		}
		toks, err := s.ListTokens(ctx, "acme")
		if err != nil || len(toks) != 3 {
			t.Fatalf("ListTokens(acme) = %+v, %v; want 3 rows", toks, err)
		}
		for _, tok := range toks {
			if tok.TenantID != "acme" || tok.RevokedAt.IsZero() {
				t.Errorf("ListTokens(acme): %+v; want acme's, all revoked", tok)
			}
		}
	})
}

// inTx runs fn in a transaction of s and fails the test when it fails.
func inTx(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := store.InTx(t.Context(), s, fn); err != nil {
		t.Fatalf("transaction: %v", err)
	}
}
