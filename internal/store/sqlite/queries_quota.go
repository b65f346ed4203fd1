package sqlite

// The statements of tenants' quotas and of the planner's pacing
// (store.QuotaTx, store.PacingStore).
const (
	// The tenant's rows of tenant_live_schedules (its primary key's
	// range): one per shard it has schedules on.
	qLiveSchedules = `SELECT coalesce(sum(live), 0) FROM tenant_live_schedules WHERE tenant_id = ?`

	// Index occurrences_claim (its WHERE spelled out), the tenant's range.
	qLatestCatchUpSlot = `SELECT max(available_at) FROM occurrences
WHERE tenant_id = ? AND lane = 'catchup' AND state IN ('ENQUEUED', 'RETRY_WAIT') AND state = 'ENQUEUED' AND attempt_count = 0`
)
