package store

import (
	"context"

	"github.com/sched-dev/sched/internal/record"
)

// TargetStore reads targets. It is part of the Store interface. Every
// read but the relay's names the tenant: a tenant never sees, nor can
// name, another tenant's target.
type TargetStore interface {
	// GetTarget returns the tenant's target name, or ErrNotFound.
	GetTarget(ctx context.Context, tenantID, name string) (*record.Target, error)
	// ListTargets returns the tenant's targets by name; every tenant's,
	// by tenant then name, when tenantID is "" (the relay's read).
	ListTargets(ctx context.Context, tenantID string) ([]record.Target, error)
}

// TargetTx holds the statements that change targets, in one transaction
// with the audit record of the change (see ControlTx).
type TargetTx interface {
	// InsertTarget stores t. A target of the same tenant and name is
	// ErrConflict.
	InsertTarget(ctx context.Context, t *record.Target) error
	// UpdateTarget writes t over the stored target (t.TenantID, t.Name)
	// if its version is still prevVersion: ErrNotFound when there is no
	// such target, ErrConflict when another change came first.
	UpdateTarget(ctx context.Context, t *record.Target, prevVersion int64) error
	// DeleteTarget removes the tenant's target name: ErrNotFound when
	// there is none.
	DeleteTarget(ctx context.Context, tenantID, name string) error
	// CountQueueSchedules counts the tenant's schedules ACTIVE or PAUSED
	// whose queue is queue, for a queue that belongs to a target
	// (record.TargetQueue): the schedules that still name it.
	CountQueueSchedules(ctx context.Context, tenantID, queue string) (int64, error)
	// CountQueueWaiting counts the tenant's occurrences of queue that wait
	// for a delivery or are being delivered (ENQUEUED, RETRY_WAIT,
	// RUNNING): the firings a target still owes.
	CountQueueWaiting(ctx context.Context, tenantID, queue string) (int64, error)
}
