package postgres

// The statements of tenants' quotas and of the planner's pacing
// (store.QuotaTx, store.PacingStore).
const (
	// A lock of the transaction on the tenant's name (hashed; two tenants
	// whose hashes collide only wait for each other), released at its
	// end. An advisory lock needs no row, and leaves the tenants row to
	// the changes of the tenant.
	qLockTenantQuota = `SELECT pg_advisory_xact_lock(hashtext('sched.tenant_quota'), hashtext($1))`

	// The tenant's rows of tenant_live_schedules (its primary key's
	// range): one per shard it has schedules on.
	qLiveSchedules = `SELECT coalesce(sum(live), 0)::bigint FROM tenant_live_schedules WHERE tenant_id = $1`

	// Index occurrences_claim, the tenant's range.
	qLatestCatchUpSlot = `SELECT max(available_at) FROM occurrences
WHERE tenant_id = $1 AND lane = 'catchup' AND state = 'ENQUEUED' AND attempt_count = 0`
)
