package postgres

import (
	"context"
	"fmt"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// CountRunning takes the tenant's running key (qLockRunning, or
// qTryLockRunning without wait), then counts its RUNNING occurrences in a
// statement of its own (qCountRunningWithRuns): under READ COMMITTED that
// statement's snapshot is taken after the key, so it sees the claims of
// the transaction that held the key before. The same statement reads what
// the tenant's runs hold, which the RunTotals after it answers
// (tx_runs.go): one snapshot for both counts.
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
	var (
		n             int64
		queues, lanes []string
		leased, acked []int64
	)
	if err := t.tx.QueryRow(ctx, qCountRunningWithRuns, tenantID).Scan(&n, &queues, &lanes, &leased, &acked); err != nil {
		return 0, false, fmt.Errorf("count running of %s: %w", tenantID, translate(err))
	}
	if len(lanes) != len(queues) || len(leased) != len(queues) || len(acked) != len(queues) {
		return 0, false, fmt.Errorf("count running of %s: %w", tenantID, errRunTotalsLength)
	}
	ts := make([]store.RunTotal, len(queues))
	for i := range ts {
		ts[i] = store.RunTotal{Lane: store.Lane{TenantID: tenantID, Queue: queues[i], Lane: record.Lane(lanes[i])},
			Leased: leased[i], Acked: acked[i]}
	}
	if t.running == nil {
		t.running = map[string][]store.RunTotal{}
	}
	t.running[tenantID] = ts
	return n, true, nil
}
