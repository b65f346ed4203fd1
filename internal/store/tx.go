package store

import (
	"context"
	"errors"
	"fmt"
)

// Tx is one write transaction of a store: the small statements the engine
// composes into one decision. A statement decides nothing: it reads the
// facts a rule needs, or writes what the engine decided, each under the
// condition its doc comment states. The rules (what an expired lease leads
// to, which occurrences an update cancels, whether a new occurrence waits
// for a running one) live in the engine, written once for every store.
//
// The statements are grouped by the part of the engine that composes them
// (QueueTx for the queue, ControlTx for the control plane). A Tx is used by
// one goroutine; it holds the store's write lock (SQLite) or row locks
// (PostgreSQL) until Commit or Rollback, so keep it short.
type Tx interface {
	QueueTx
	ControlTx
	PlannerTx
	TenantTx
	TargetTx
	AuditTx
	ManualTx
	QuotaTx
	BatchTx
	ZoneTx

	// Commit makes the transaction's writes durable. After an error nothing
	// of it was written.
	Commit(ctx context.Context) error
	// Rollback discards the transaction's writes. Rolling back a
	// transaction already committed or rolled back does nothing.
	Rollback(ctx context.Context) error
}

// InTx runs fn in a write transaction of st and commits it when fn
// returns nil; otherwise it rolls back and returns fn's error. A panic of
// fn rolls the transaction back too (SQLite's one writer connection would
// otherwise stay taken) and goes on up.
func InTx(ctx context.Context, st Store, fn func(Tx) error) error {
	tx, err := st.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	err = fn(tx)
	done = true
	if err != nil {
		return errors.Join(err, tx.Rollback(context.WithoutCancel(ctx)))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
