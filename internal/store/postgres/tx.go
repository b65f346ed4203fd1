package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/store"
)

// tx is a READ COMMITTED write transaction. Correctness rests on the
// conditions of its statements, on row locks and on advisory locks, never
// on the isolation level.
type tx struct {
	s  *Store
	tx pgx.Tx

	// held names the queues (queueKey) whose lock this transaction holds
	// exclusively (LaneHead): it is their only claimer until it ends.
	held map[string]bool
	// shared says that this transaction may hold a queue's lock shared:
	// it wrote an occurrence that may have become claimable (the floor's
	// triggers take the lock), or took the lock to cancel. Such a
	// transaction never waits for a queue's lock exclusively (LaneHead):
	// a claim waiting for it could be waiting for this one.
	shared bool
	// running is what CountRunning read of each tenant's runs in the
	// statement that counted its RUNNING occurrences, for the RunTotals
	// that follows it (tx_runs.go).
	running map[string][]store.RunTotal
}

var _ store.Tx = (*tx)(nil)

// Begin starts a write transaction.
func (s *Store) Begin(ctx context.Context) (store.Tx, error) {
	t, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("begin: %w", translate(err))
	}
	return &tx{s: s, tx: t}, nil
}

// Commit commits the transaction.
func (t *tx) Commit(ctx context.Context) error {
	if err := t.tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	return nil
}

// Rollback discards the transaction; after a commit it does nothing.
func (t *tx) Rollback(ctx context.Context) error {
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return fmt.Errorf("rollback: %w", translate(err))
	}
	return nil
}
