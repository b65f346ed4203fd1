package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sched-dev/sched/internal/store"
)

// tx is a write transaction on the writer connection. SQLite has one
// writer: a transaction holds the write lock from its first write to its
// end.
type tx struct {
	s  *Store
	tx *sql.Tx
}

var _ store.Tx = (*tx)(nil)

// Begin starts a write transaction on the writer connection.
func (s *Store) Begin(ctx context.Context) (store.Tx, error) {
	t, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", translate(err))
	}
	return &tx{s: s, tx: t}, nil
}

// Commit commits the transaction.
func (t *tx) Commit(ctx context.Context) error {
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	if t.s.ckpt != nil {
		t.s.ckpt.committed()
	}
	return nil
}

// Rollback discards the transaction; after a commit it does nothing.
func (t *tx) Rollback(ctx context.Context) error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("rollback: %w", translate(err))
	}
	return nil
}
