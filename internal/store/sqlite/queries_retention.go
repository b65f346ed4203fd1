package sqlite

import "strconv"

// Retention of finished history (store.RetentionStore). A batch is the
// tenant's oldest finished rows by the partial index occurrences_history;
// historyBatch repeats the index's WHERE (open = 0 AND state <> 'DEAD')
// word for word, so that SQLite can prove the index applies (INDEXED BY
// makes a statement that cannot use it an error, not a scan). Both deletes
// of a batch select the same rows: they run in one transaction on the one
// writer, in the index's order (scheduled_for, then the rowid the index
// carries). The attempts go first: they reference their occurrence.
const (
	historyBatch = ` FROM occurrences INDEXED BY occurrences_history
WHERE tenant_id = ?1 AND scheduled_for < ?2 AND open = 0 AND state <> 'DEAD'
ORDER BY scheduled_for, row LIMIT ?3`

	qPurgeHistoryAttempts = `DELETE FROM attempts WHERE occurrence_id IN (SELECT occurrence_id` + historyBatch + `)`
	qPurgeHistory         = `DELETE FROM occurrences WHERE row IN (SELECT row` + historyBatch + `) RETURNING occurrence_id`

	// Only forward: the larger of the stored horizon and ?2.
	qSetHistoryHorizon = `INSERT INTO history_horizons (tenant_id, horizon) VALUES (?1, ?2)
ON CONFLICT (tenant_id) DO UPDATE SET horizon = max(horizon, excluded.horizon)
RETURNING horizon`
	qHistoryHorizons = `SELECT tenant_id, horizon FROM history_horizons`

	// Every tenant with a schedule: a walk of the UNIQUE (tenant_id,
	// schedule_id) index.
	qScheduleTenants = `SELECT DISTINCT tenant_id FROM schedules ORDER BY tenant_id`

	// The file's free pages, and its auto_vacuum mode (0 NONE, 1 FULL,
	// 2 INCREMENTAL), which setAutoVacuum sets before the first table.
	qFreelistCount = `PRAGMA freelist_count`
	qAutoVacuum    = `PRAGMA auto_vacuum`
	qSetAutoVacuum = `PRAGMA auto_vacuum = INCREMENTAL`
	qDatabaseBytes = `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`
	qSchemaObjects = `SELECT count(*) FROM sqlite_schema`
	qVacuum        = `VACUUM`
	qWALCheckpoint = `PRAGMA wal_checkpoint(TRUNCATE)`
)

// qIncrementalVacuum frees at most pages of the file's free pages (a
// pragma takes no bound parameter).
func qIncrementalVacuum(pages int) string {
	return `PRAGMA incremental_vacuum(` + strconv.Itoa(pages) + `)`
}
