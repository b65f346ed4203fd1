package postgres

import (
	"context"
	"fmt"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// Targets (store.TargetStore, store.TargetTx).

// GetTarget returns one of a tenant's targets (see store.TargetStore).
func (s *Store) GetTarget(ctx context.Context, tenantID, name string) (*record.Target, error) {
	if !storable(tenantID, name) {
		return nil, fmt.Errorf("get target %q of tenant %q: %w", name, tenantID, store.ErrNotFound)
	}
	t, err := rowcodec.ScanTarget(s.pool.QueryRow(ctx, qGetTarget, tenantID, name))
	if err != nil {
		return nil, fmt.Errorf("get target %q of tenant %q: %w", name, tenantID, translate(err))
	}
	return t, nil
}

// ListTargets returns a tenant's targets, or every tenant's (see
// store.TargetStore).
func (s *Store) ListTargets(ctx context.Context, tenantID string) ([]record.Target, error) {
	if tenantID == "" {
		return readAll(ctx, s, "list targets", rowcodec.ScanTarget, qListEveryTarget)
	}
	if !storable(tenantID) {
		return nil, nil
	}
	return readAll(ctx, s, "list targets", rowcodec.ScanTarget, qListTargets, tenantID)
}

// InsertTarget stores a new target (see store.TargetTx).
func (t *tx) InsertTarget(ctx context.Context, tg *record.Target) error {
	if !storable(tg.TenantID, tg.Name, string(tg.Config), tg.Secret) {
		return fmt.Errorf("insert target %q: %w", tg.Name, notStorable())
	}
	if _, err := t.tx.Exec(ctx, qInsertTarget, rowcodec.TargetArgs(tg)...); err != nil {
		return fmt.Errorf("insert target %q of tenant %q: %w", tg.Name, tg.TenantID, translate(err))
	}
	return nil
}

// UpdateTarget writes a target over the version read (see store.TargetTx).
func (t *tx) UpdateTarget(ctx context.Context, tg *record.Target, prevVersion int64) error {
	if !storable(tg.TenantID, tg.Name, string(tg.Config), tg.Secret) {
		return fmt.Errorf("update target %q: %w", tg.Name, store.ErrNotFound)
	}
	tag, err := t.tx.Exec(ctx, qUpdateTarget, rowcodec.TargetUpdateArgs(tg, prevVersion)...)
	if err != nil {
		return fmt.Errorf("update target %q of tenant %q: %w", tg.Name, tg.TenantID, translate(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := rowcodec.ScanTarget(t.tx.QueryRow(ctx, qGetTarget, tg.TenantID, tg.Name)); err != nil {
		return fmt.Errorf("update target %q of tenant %q: %w", tg.Name, tg.TenantID, translate(err))
	}
	return fmt.Errorf("update target %q of tenant %q: version %d is no longer the stored one: %w", tg.Name, tg.TenantID, prevVersion, store.ErrConflict)
}

// DeleteTarget removes a target (see store.TargetTx).
func (t *tx) DeleteTarget(ctx context.Context, tenantID, name string) error {
	if !storable(tenantID, name) {
		return fmt.Errorf("delete target %q: %w", name, store.ErrNotFound)
	}
	tag, err := t.tx.Exec(ctx, qDeleteTarget, tenantID, name)
	if err != nil {
		return fmt.Errorf("delete target %q of tenant %q: %w", name, tenantID, translate(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return fmt.Errorf("delete target %q of tenant %q: %w", name, tenantID, store.ErrNotFound)
}

// CountQueueSchedules counts the live schedules of a target's queue (see
// store.TargetTx).
func (t *tx) CountQueueSchedules(ctx context.Context, tenantID, queue string) (int64, error) {
	if !storable(tenantID, queue) {
		return 0, nil
	}
	var n int64
	if err := t.tx.QueryRow(ctx, qCountQueueTargets, tenantID, queue).Scan(&n); err != nil {
		return 0, fmt.Errorf("count schedules of queue %q: %w", queue, translate(err))
	}
	return n, nil
}

// CountQueueWaiting counts the firings a target's queue still holds (see
// store.TargetTx).
func (t *tx) CountQueueWaiting(ctx context.Context, tenantID, queue string) (int64, error) {
	if !storable(tenantID, queue) {
		return 0, nil
	}
	var n int64
	if err := t.tx.QueryRow(ctx, qCountQueueWaiting, tenantID, queue).Scan(&n); err != nil {
		return 0, fmt.Errorf("count waiting occurrences of queue %q: %w", queue, translate(err))
	}
	return n, nil
}
