package store

import (
	"context"
	"time"
)

// QuotaTx holds the statements a tenant's active_schedules quota composes
// inside a create's transaction (see Tx): lock the tenant's quota, count
// its live schedules, insert. The rule (whether the create fits) is the
// engine's.
type QuotaTx interface {
	// LockTenantQuota keeps every other transaction that locks the same
	// tenant's quota waiting until this one ends, so that a count read
	// after it and the insert that follows are not interleaved with
	// another node's. It needs no row of the tenant (a tenant the store
	// does not know has quotas too: the defaults).
	LockTenantQuota(ctx context.Context, tenantID string) error
	// LiveSchedules returns how many of the tenant's schedules are ACTIVE
	// or PAUSED, as committed; whether the transaction's own writes of
	// schedules are counted yet is the driver's (PostgreSQL counts them at
	// the commit), so read it before writing. The store keeps the
	// count as schedules are written (one row per tenant and shard), so
	// the read costs the same for a tenant of ten schedules or ten
	// million.
	LiveSchedules(ctx context.Context, tenantID string) (int64, error)
}

// PacingStore reads what the planner's pacing of catch-up firings needs
// to go on where it was after a restart. It is part of the Store
// interface.
type PacingStore interface {
	// LatestCatchUpSlot returns the latest available_at among the
	// tenant's catch-up-lane occurrences that are ENQUEUED and never
	// claimed: the last slot the planner gave one that is still waiting.
	// Zero when there is none.
	LatestCatchUpSlot(ctx context.Context, tenantID string) (time.Time, error)
}
