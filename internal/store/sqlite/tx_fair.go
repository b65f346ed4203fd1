package sqlite

import (
	"context"
	"fmt"
)

// CountRunning counts the tenant's RUNNING occurrences (qCountRunning).
func (t *tx) CountRunning(ctx context.Context, tenantID string) (int64, error) {
	st, err := t.s.txStmt(ctx, t.tx, qCountRunning)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	var n int64
	if err := st.QueryRowContext(ctx, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count running of %s: %w", tenantID, translate(err))
	}
	return n, nil
}
