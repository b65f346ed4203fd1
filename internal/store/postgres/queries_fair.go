package postgres

// The statements of fair claims across tenants.
const (
	// A tenant's RUNNING occurrences, from index occurrences_running, with
	// what the tenant's runs hold (index runs_lane), in one statement and
	// so one snapshot: a fold that commits between two statements moves a
	// run's occurrences from one count to the other, and they would be
	// counted in neither. The runs' totals per lane come as arrays (one
	// row whether or not the tenant has runs).
	qCountRunningWithRuns = `SELECT (SELECT count(*) FROM occurrences WHERE tenant_id = $1 AND state = 'RUNNING'),
    array_agg(queue), array_agg(lane), array_agg(leased), array_agg(acked)
FROM (SELECT queue, lane, sum(n)::bigint AS leased, sum(acked)::bigint AS acked FROM runs WHERE tenant_id = $1
    GROUP BY queue, lane) AS t`

	// A tenant's running key: a transaction-scoped advisory lock on a key
	// from the schema ($1, the store's prefix) and the tenant ($2), held
	// by the claim counting the tenant's RUNNING occurrences until it
	// commits. The try form answers false rather than wait. The
	// "running/" part keeps the keys apart from the schedules' overlap
	// keys (qTryLockSchedules).
	qLockRunning    = `SELECT true FROM (SELECT pg_advisory_xact_lock(hashtextextended($1::text || 'running/' || $2::text, 0))) AS k`
	qTryLockRunning = `SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || 'running/' || $2::text, 0))`
)
