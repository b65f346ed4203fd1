package postgres

import (
	"context"
	"fmt"
)

// CountRunning takes the tenant's running key (qLockRunning, or
// qTryLockRunning without wait), then counts its RUNNING occurrences
// (qCountRunning) in a statement of its own: under READ COMMITTED that
// statement's snapshot is taken after the key, so it sees the claims of
// the transaction that held the key before.
func (t *tx) CountRunning(ctx context.Context, tenantID string, wait bool) (int64, bool, error) {
	q := qTryLockRunning
	if wait {
		q = qLockRunning
	}
	held := true
	if err := t.tx.QueryRow(ctx, q, t.s.lockPrefix, tenantID).Scan(&held); err != nil {
		return 0, false, fmt.Errorf("running key of %s: %w", tenantID, translate(err))
	}
	if !held {
		return 0, false, nil
	}
	var n int64
	if err := t.tx.QueryRow(ctx, qCountRunning, tenantID).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("count running of %s: %w", tenantID, translate(err))
	}
	return n, true, nil
}
