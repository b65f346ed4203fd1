package postgres

// The statements of fair claims across tenants.
const (
	// A tenant's RUNNING occurrences, from index occurrences_running.
	qCountRunning = `SELECT count(*) FROM occurrences WHERE tenant_id = $1 AND state = 'RUNNING'`

	// A tenant's running key: a transaction-scoped advisory lock on a key
	// from the schema ($1, the store's prefix) and the tenant ($2), held
	// by the claim counting the tenant's RUNNING occurrences until it
	// commits. The try form answers false rather than wait. The
	// "running/" part keeps the keys apart from the schedules' overlap
	// keys (qTryLockSchedules).
	qLockRunning    = `SELECT true FROM (SELECT pg_advisory_xact_lock(hashtextextended($1::text || 'running/' || $2::text, 0))) AS k`
	qTryLockRunning = `SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || 'running/' || $2::text, 0))`
)
