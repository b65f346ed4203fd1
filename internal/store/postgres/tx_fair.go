package postgres

import (
	"context"
	"fmt"
)

// CountRunning counts the tenant's RUNNING occurrences (qCountRunning).
func (t *tx) CountRunning(ctx context.Context, tenantID string) (int64, error) {
	var n int64
	if err := t.tx.QueryRow(ctx, qCountRunning, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count running of %s: %w", tenantID, translate(err))
	}
	return n, nil
}
