package sqlite

import (
	"context"
	"fmt"
)

// CountRunning counts the tenant's RUNNING occurrences (qCountRunning).
// The transaction is SQLite's one writer: no other claim can change the
// count before it ends, so there is no key to take.
func (t *tx) CountRunning(ctx context.Context, tenantID string, _ bool) (int64, bool, error) {
	st, err := t.s.txStmt(ctx, t.tx, qCountRunning)
	if err != nil {
		return 0, false, err
	}
	defer st.Close()
	var n int64
	if err := st.QueryRowContext(ctx, tenantID).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("count running of %s: %w", tenantID, translate(err))
	}
	return n, true, nil
}
