package sqlite

// Targets (targets.go; 0007_targets.sql).
const (
	// The columns rowcodec.ScanTarget reads, in its order.
	targetColumns = `tenant_id, name, kind, config, secret, version, created_at, updated_at`

	qInsertTarget = `INSERT INTO targets (` + targetColumns + `) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`

	// Only over the version read: ?8 is the previous version
	// (rowcodec.TargetUpdateArgs). created_at stays.
	qUpdateTarget = `UPDATE targets SET kind = ?3, config = ?4, secret = ?5, version = ?6, updated_at = ?7
WHERE tenant_id = ?1 AND name = ?2 AND version = ?8`

	qDeleteTarget = `DELETE FROM targets WHERE tenant_id = ?1 AND name = ?2`

	qGetTarget         = `SELECT ` + targetColumns + ` FROM targets WHERE tenant_id = ?1 AND name = ?2`
	qListTargets       = `SELECT ` + targetColumns + ` FROM targets WHERE tenant_id = ?1 ORDER BY name`
	qListEveryTarget   = `SELECT ` + targetColumns + ` FROM targets ORDER BY tenant_id, name`
	qCountQueueTargets = `SELECT count(*) FROM schedules INDEXED BY schedules_target
WHERE tenant_id = ?1 AND queue = ?2 AND substr(queue, 1, 1) = '@' AND state IN ('ACTIVE', 'PAUSED')`
	// The waiting ones by the claim index, the RUNNING ones by the running
	// index.
	qCountQueueWaiting = `SELECT
    (SELECT count(*) FROM occurrences INDEXED BY occurrences_claim
        WHERE tenant_id = ?1 AND queue = ?2 AND state IN ('ENQUEUED', 'RETRY_WAIT'))
  + (SELECT count(*) FROM occurrences INDEXED BY occurrences_running
        WHERE tenant_id = ?1 AND state = 'RUNNING' AND queue = ?2)`
)
