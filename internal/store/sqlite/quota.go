package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// LockTenantQuota does nothing more than the transaction already does:
// it holds SQLite's one write lock (the writer connection is one), so no
// other create counts or inserts until it ends (see store.QuotaTx).
func (t *tx) LockTenantQuota(ctx context.Context, tenantID string) error { return nil }

// LiveSchedules sums the tenant's live schedules over its shards (see
// store.QuotaTx).
func (t *tx) LiveSchedules(ctx context.Context, tenantID string) (int64, error) {
	var n int64
	if err := t.tx.QueryRowContext(ctx, qLiveSchedules, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count live schedules of %s: %w", tenantID, translate(err))
	}
	return n, nil
}

// LatestCatchUpSlot returns the latest available_at of the tenant's
// catch-up occurrences still waiting, or zero (see store.PacingStore).
func (s *Store) LatestCatchUpSlot(ctx context.Context, tenantID string) (time.Time, error) {
	var at sql.Null[int64]
	if err := s.r.QueryRowContext(ctx, qLatestCatchUpSlot, tenantID).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("latest catch-up slot of %s: %w", tenantID, translate(err))
	}
	return fromNullMS(at), nil
}
