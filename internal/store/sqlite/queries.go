package sqlite

// Every SQL statement the store runs lives in this file (the schema lives in
// migrations/). Column lists are named once and shared by the statement and
// the scanner that reads it, so their order cannot drift apart.
//
// Times are bound and read as INTEGER unix milliseconds (ms, nullMS) and
// durations as INTEGER milliseconds (durMS); see package store.

const (
	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
) STRICT`

	qMaxMigration = `SELECT coalesce(max(version), 0) FROM schema_migrations`

	qRecordMigration = `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`

	qQuickCheck = `PRAGMA quick_check`
)

// Schedules.
const (
	scheduleColumns = `schedule_id, tenant_id, shard, name, kind, expr, time_zone, anchor,
    dst_gap, dst_repeat, version, state, next_run_at, queue, payload,
    misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms,
    retry_max_attempts, retry_base_ms, retry_cap_ms, retry_deadline_ms,
    idempotency_key, created_at, updated_at`

	qInsertSchedule = `INSERT INTO schedules (` + scheduleColumns + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	// The tenant is part of every lookup: another tenant's id is not found.
	qGetSchedule = `SELECT ` + scheduleColumns + `
FROM schedules WHERE tenant_id = ? AND schedule_id = ?`
)

// Occurrences.
const (
	occurrenceColumns = `occurrence_id, tenant_id, schedule_id, schedule_version, scheduled_for,
    available_at, enqueued_at, state, lane, queue, attempt_count, first_claimed_at, finished_at`

	// The conflict target is the firing's natural key, so a second insert
	// of the same firing does nothing, while any other clash (an id hash
	// collision) still fails loudly.
	qInsertOccurrence = `INSERT INTO occurrences (` + occurrenceColumns + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (schedule_id, schedule_version, scheduled_for) DO NOTHING`

	qGetOccurrence = `SELECT ` + occurrenceColumns + `
FROM occurrences WHERE tenant_id = ? AND occurrence_id = ?`

	qListOccurrences = `SELECT ` + occurrenceColumns + `
FROM occurrences WHERE tenant_id = ? AND schedule_id = ?
ORDER BY scheduled_for, schedule_version
LIMIT ?`
)
