package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// LockTenantQuota takes the transaction's advisory lock on the tenant's
// quota (see store.QuotaTx): a second create of the same tenant, on any
// node, waits at this statement until the first commits, and then counts
// the first one's schedule.
func (t *tx) LockTenantQuota(ctx context.Context, tenantID string) error {
	if _, err := t.tx.Exec(ctx, qLockTenantQuota, tenantID); err != nil {
		return fmt.Errorf("lock quota of %s: %w", tenantID, translate(err))
	}
	return nil
}

// LiveSchedules sums the tenant's live schedules over its shards (see
// store.QuotaTx).
func (t *tx) LiveSchedules(ctx context.Context, tenantID string) (int64, error) {
	var n int64
	if err := t.tx.QueryRow(ctx, qLiveSchedules, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count live schedules of %s: %w", tenantID, translate(err))
	}
	return n, nil
}

// LatestCatchUpSlot returns the latest available_at of the tenant's
// catch-up occurrences still waiting, or zero (see store.PacingStore).
func (s *Store) LatestCatchUpSlot(ctx context.Context, tenantID string) (time.Time, error) {
	var at pgtype.Int8
	if err := s.pool.QueryRow(ctx, qLatestCatchUpSlot, tenantID).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("latest catch-up slot of %s: %w", tenantID, translate(err))
	}
	return fromNullMS(at), nil
}
