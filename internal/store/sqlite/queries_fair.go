package sqlite

// The statements of fair claims across tenants.
const (
	// A tenant's RUNNING occurrences, from index occurrences_running.
	qCountRunning = `SELECT count(*) FROM occurrences INDEXED BY occurrences_running
WHERE tenant_id = ?1 AND state = 'RUNNING'`
)
