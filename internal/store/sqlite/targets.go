package sqlite

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
	t, err := rowcodec.ScanTarget(s.r.QueryRowContext(ctx, qGetTarget, tenantID, name))
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
	return readAll(ctx, s, "list targets", rowcodec.ScanTarget, qListTargets, tenantID)
}

// InsertTarget stores a new target (see store.TargetTx).
func (t *tx) InsertTarget(ctx context.Context, tg *record.Target) error {
	if _, err := t.tx.ExecContext(ctx, qInsertTarget, rowcodec.TargetArgs(tg)...); err != nil {
		return fmt.Errorf("insert target %q of tenant %q: %w", tg.Name, tg.TenantID, translate(err))
	}
	return nil
}

// UpdateTarget writes a target over the version read (see store.TargetTx).
func (t *tx) UpdateTarget(ctx context.Context, tg *record.Target, prevVersion int64) error {
	res, err := t.tx.ExecContext(ctx, qUpdateTarget, rowcodec.TargetUpdateArgs(tg, prevVersion)...)
	if err != nil {
		return fmt.Errorf("update target %q of tenant %q: %w", tg.Name, tg.TenantID, translate(err))
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	if _, err := rowcodec.ScanTarget(t.tx.QueryRowContext(ctx, qGetTarget, tg.TenantID, tg.Name)); err != nil {
		return fmt.Errorf("update target %q of tenant %q: %w", tg.Name, tg.TenantID, translate(err))
	}
	return fmt.Errorf("update target %q of tenant %q: version %d is no longer the stored one: %w", tg.Name, tg.TenantID, prevVersion, store.ErrConflict)
}

// DeleteTarget removes a target (see store.TargetTx).
func (t *tx) DeleteTarget(ctx context.Context, tenantID, name string) error {
	res, err := t.tx.ExecContext(ctx, qDeleteTarget, tenantID, name)
	if err != nil {
		return fmt.Errorf("delete target %q of tenant %q: %w", name, tenantID, translate(err))
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	return fmt.Errorf("delete target %q of tenant %q: %w", name, tenantID, store.ErrNotFound)
}

// CountQueueSchedules counts the live schedules of a target's queue (see
// store.TargetTx).
func (t *tx) CountQueueSchedules(ctx context.Context, tenantID, queue string) (int64, error) {
	var n int64
	if err := t.tx.QueryRowContext(ctx, qCountQueueTargets, tenantID, queue).Scan(&n); err != nil {
		return 0, fmt.Errorf("count schedules of queue %q: %w", queue, translate(err))
	}
	return n, nil
}

// CountQueueWaiting counts the firings a target's queue still holds (see
// store.TargetTx).
func (t *tx) CountQueueWaiting(ctx context.Context, tenantID, queue string) (int64, error) {
	var n int64
	if err := t.tx.QueryRowContext(ctx, qCountQueueWaiting, tenantID, queue).Scan(&n); err != nil {
		return 0, fmt.Errorf("count waiting occurrences of queue %q: %w", queue, translate(err))
	}
	return n, nil
}
