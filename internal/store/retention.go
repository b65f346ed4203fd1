package store

import (
	"context"
	"time"
)

// RetentionStore removes finished history by age and records, per tenant,
// where the history that is left begins (its horizon). It is part of the
// Store interface. The engine decides how old is old enough
// (engine/retention.go); the store deletes what it is told, in bounded
// batches, and never anything unfinished.
type RetentionStore interface {
	// PurgeHistory deletes at most limit of the tenant's finished
	// occurrences scheduled before before (scheduled_for < before),
	// oldest first, with their attempts, in one transaction, and returns
	// how many occurrences it deleted. Finished is SUCCEEDED, MISSED,
	// CANCELED and SKIPPED_OVERLAP: every state but the open ones
	// (SCHEDULED, ENQUEUED, RUNNING, RETRY_WAIT) and DEAD, which stays in
	// the dead-letter queue until it is replayed or purged, whatever its
	// age. A caller deletes everything by calling again until it returns
	// fewer than limit.
	PurgeHistory(ctx context.Context, tenantID string, before time.Time, limit int) (int, error)
	// SetHistoryHorizon records that the tenant's occurrences scheduled
	// before at may have been removed, and returns the tenant's horizon:
	// it only moves forward (an earlier at leaves the stored one), since
	// what was removed stays removed. It is written before the deletes it
	// covers, so a reader that sees a row gone also sees the horizon.
	SetHistoryHorizon(ctx context.Context, tenantID string, at time.Time) (time.Time, error)
	// HistoryHorizons returns every tenant's horizon; a tenant whose
	// history was never cut is absent.
	HistoryHorizons(ctx context.Context) (map[string]time.Time, error)
	// ScheduleTenants returns, in order, every tenant that has a
	// schedule, whether or not it has a tenants row (an admin may act
	// as a tenant never created): every occurrence is of one of them.
	ScheduleTenants(ctx context.Context) ([]string, error)
	// ReclaimSpace gives at most pages of the database's free pages back
	// to the file system and returns how many it gave. A store that
	// reuses freed space by itself (PostgreSQL's vacuum) returns 0.
	ReclaimSpace(ctx context.Context, pages int) (int, error)
}
