package store

import (
	"context"

	"github.com/sched-dev/sched/internal/record"
)

// BatchTx holds the statements a bulk create composes inside one
// transaction (see Tx): one read of which names and idempotency keys are
// taken already, then multi-row writes of the new schedules, their first
// version rows and their audit rows. Each is one statement (or a few, for
// a driver's limit on bound values) however many rows it takes, so a
// batch costs a handful of round trips, not a few per schedule. Which
// items may be written (taken names, replayed keys, the quota) is the
// engine's decision, made from the read before any write: on PostgreSQL a
// failed statement aborts the whole transaction.
type BatchTx interface {
	// SchedulesByNamesOrKeys returns the tenant's schedules that are live
	// (not CANCELED) under one of names, or were created with one of keys
	// (in any state), each once, in no particular order. Empty lists match
	// nothing; the empty key is no key.
	SchedulesByNamesOrKeys(ctx context.Context, tenantID string, names, keys []string) ([]record.Schedule, error)

	// InsertSchedules stores new schedules, as InsertSchedule does one. A
	// live name or an idempotency key already taken is ErrConflict, and
	// then nothing of the transaction can be committed.
	InsertSchedules(ctx context.Context, scs []*record.Schedule) error

	// InsertScheduleVersions stores version rows, as
	// HistoryTx.InsertScheduleVersion does one.
	InsertScheduleVersions(ctx context.Context, vs []ScheduleVersion) error

	// AppendAudits stores audit rows, as AuditTx.AppendAudit does one.
	AppendAudits(ctx context.Context, es []AuditEntry) error
}
