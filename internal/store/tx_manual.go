package store

import (
	"context"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// ManualTx holds, as statements of a transaction, the writes of an
// operator's request that the store also offers as calls of their own (a
// trigger's occurrence, a simulated outage's start and end), so that the
// engine can write one together with its audit row (AuditTx): both commit
// or neither does. Each does what the Store method of the same name says.
type ManualTx interface {
	// InsertOccurrences is Store.InsertOccurrences in the transaction.
	InsertOccurrences(ctx context.Context, occs []record.Occurrence) (int, error)
	// InsertOutage is OutageStore.InsertOutage in the transaction.
	InsertOutage(ctx context.Context, o Outage) (int64, error)
	// CancelOutages is OutageStore.CancelOutages in the transaction.
	CancelOutages(ctx context.Context, now time.Time) ([]Outage, error)
}
