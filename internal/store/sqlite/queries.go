package sqlite

import (
	"strconv"
	"strings"
)

// Every SQL statement the store runs lives in this file or in
// queries_planner.go (the schema lives in migrations/). Column lists are named once and shared by the statement and
// the scanner that reads it, so their order cannot drift apart.
//
// Times are bound and read as INTEGER unix milliseconds (ms, nullMS) and
// durations as INTEGER milliseconds (durMS); see package store.
//
// Partial indexes. SQLite uses a partial index only when it can prove, when
// it prepares the statement, that the query's WHERE implies the index's
// WHERE. A bound parameter proves nothing, so a query meant for a partial
// index spells the index's term out word for word (state IN ('ENQUEUED',
// 'RETRY_WAIT'), state = 'RUNNING', ...), and a query that depends on a
// caller's choice of state has one variant per indexed state.
// TestQueryPlans checks the plans.

const (
	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
) STRICT`

	qMaxMigration = `SELECT coalesce(max(version), 0) FROM schema_migrations`

	qRecordMigration = `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`

	qQuickCheck = `PRAGMA quick_check`

	// A checkpoint that neither waits for readers nor blocks the writer
	// (checkpoint.go): busy, WAL pages, pages copied back.
	qCheckpoint = `PRAGMA wal_checkpoint(PASSIVE)`
)

// Schedules.
const (
	// The columns a schedule is written with (INSERT, RETURNING).
	scheduleColumns = scheduleColumnsHead + `next_run_at, queue, payload` + scheduleColumnsTail

	// The columns a schedule is read with: the same, but the cursor is
	// the planner's, in schedule_cursors, while there is one (0001_init.sql).
	scheduleReadColumns = scheduleColumnsHead + scheduleCursor + `, queue, payload` + scheduleColumnsTail
	scheduleCursor      = `coalesce((SELECT c.next_run_at FROM schedule_cursors c WHERE c.row = schedules.row), next_run_at)`

	// The planner's read: the columns of record.Schedule.PlannerFields but
	// the shard and state (the query's: every schedule with a cursor is
	// ACTIVE), read by newDueScan. The driver takes a lock per column
	// read, which made most of the read's CPU when it read every column.
	dueScheduleColumns = `s.row, s.schedule_id, s.tenant_id, s.kind, s.expr, s.time_zone, s.anchor,
    s.dst_gap, s.dst_repeat, s.version, c.next_run_at, s.queue,
    s.misfire_policy, s.max_lateness_ms, s.catch_up_k, s.overlap_policy, s.flexible_window_ms`

	scheduleColumnsHead = `schedule_id, tenant_id, shard, name, kind, expr, time_zone, anchor,
    dst_gap, dst_repeat, version, state, `
	scheduleColumnsTail = `,
    misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms,
    retry_max_attempts, retry_base_ms, retry_cap_ms, retry_deadline_ms,
    idempotency_key, missed_count, created_at, updated_at`

	qInsertSchedule = `INSERT INTO schedules (` + scheduleColumns + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	// The tenant is part of every lookup: another tenant's id is not found.
	qGetSchedule = `SELECT ` + scheduleReadColumns + `
FROM schedules WHERE tenant_id = ? AND schedule_id = ?`

	// The live schedule of that name (index schedules_name), else the
	// canceled one of that name changed last (schedules_canceled_name):
	// the second arm runs only when the first finds nothing.
	qGetScheduleByName = `SELECT * FROM (SELECT ` + scheduleReadColumns + `
    FROM schedules WHERE tenant_id = ?1 AND name = ?2 AND state <> 'CANCELED')
UNION ALL
SELECT * FROM (SELECT ` + scheduleReadColumns + `
    FROM schedules WHERE tenant_id = ?1 AND name = ?2 AND state = 'CANCELED'
    ORDER BY updated_at DESC, row DESC LIMIT 1)
LIMIT 1`

	qGetScheduleByIdempotencyKey = `SELECT ` + scheduleReadColumns + `
FROM schedules WHERE tenant_id = ? AND idempotency_key = ?`

	// ?3 = '' selects every state.
	qListSchedules = `SELECT ` + scheduleReadColumns + `
FROM schedules
WHERE tenant_id = ?1 AND schedule_id > ?2 AND (?3 = '' OR state = ?3)
ORDER BY schedule_id
LIMIT ?4`

	// The conditional write of an update: everything but the keys, the
	// creation time and the planner's missed count, only while the stored
	// version is the one the caller read.
	qUpdateSchedule = `UPDATE schedules SET
    shard = ?, name = ?, kind = ?, expr = ?, time_zone = ?, anchor = ?,
    dst_gap = ?, dst_repeat = ?, version = ?, state = ?, next_run_at = ?, queue = ?, payload = ?,
    misfire_policy = ?, max_lateness_ms = ?, catch_up_k = ?, overlap_policy = ?, flexible_window_ms = ?,
    retry_max_attempts = ?, retry_base_ms = ?, retry_cap_ms = ?, retry_deadline_ms = ?,
    idempotency_key = ?, updated_at = ?
WHERE tenant_id = ? AND schedule_id = ? AND version = ?
RETURNING ` + scheduleColumns

	qScheduleVersion = `SELECT version FROM schedules WHERE tenant_id = ? AND schedule_id = ?`

	// The first statement of a new version: the version, the state and
	// the planner's cursor (its copy in schedule_cursors while there is
	// one). The writer transaction holds the one write lock already.
	qLockScheduleVersion = `SELECT version, state, ` + scheduleCursor + ` FROM schedules
WHERE tenant_id = ? AND schedule_id = ?`

	// The schedule's row, for its occurrences' schedule_row.
	qScheduleRow = `SELECT row FROM schedules WHERE tenant_id = ? AND schedule_id = ?`

	// The row of the schedule whose id is parameter 1 (2): queries of one
	// schedule's occurrences take its id and find them by its row, which
	// the occurrences' indexes are keyed by (0001_init.sql). A schedule
	// that does not exist has no row, and NULL matches no occurrence.
	rowOfSchedule1 = `(SELECT row FROM schedules WHERE schedule_id = ?1)`
	rowOfSchedule2 = `(SELECT row FROM schedules WHERE schedule_id = ?2)`

	// A new version cancels its older versions' pending occurrences,
	// from the schedule's open occurrences (index occurrences_open;
	// INDEXED BY because the natural key's index also starts with
	// schedule_row, and it holds the whole history).
	qCancelPending = `UPDATE occurrences INDEXED BY occurrences_open SET state = 'CANCELED', open = 0, finished_at = ?1
WHERE schedule_row = ` + rowOfSchedule2 + ` AND open = 1 AND state IN ('SCHEDULED', 'ENQUEUED', 'RETRY_WAIT') AND schedule_version < ?3`

	// Index occurrences_open.
	qCountRunningOlder = `SELECT count(*) FROM occurrences INDEXED BY occurrences_open
WHERE schedule_row = ` + rowOfSchedule1 + ` AND open = 1 AND state = 'RUNNING' AND schedule_version < ?2`

	// The latest firing not canceled: the natural key's index, backwards.
	// Firings of the timetable only: a manual occurrence (trigger_key set)
	// is not one, and its time (when it was triggered) must not move the
	// new version's first firing past timetable firings not yet planned.
	qLastKept = `SELECT scheduled_for FROM occurrences
WHERE schedule_row = ` + rowOfSchedule1 + ` AND state <> 'CANCELED' AND trigger_key = ''
ORDER BY scheduled_for DESC, schedule_version DESC
LIMIT 1`
)

// The planner.
const (
	// Index schedules_due, read in order from after (?4, ?5).
	qDueSchedules = `SELECT ` + dueScheduleColumns + `
FROM schedule_cursors c JOIN schedules s ON s.row = c.row
WHERE c.shard = ?1 AND c.next_run_at <= ?2 AND (c.next_run_at, c.schedule_id) > (?4, ?5)
ORDER BY c.next_run_at, c.schedule_id
LIMIT ?3`

	// The fence of CommitPlan: the lease is still this one, and live.
	qCheckLease = `SELECT 1 FROM shard_leases WHERE shard = ? AND owner = ? AND epoch = ? AND expires_at > ?`

	// The plan items' conditional writes, a group at a time: the items
	// that share everything but the schedule. ?3 is a JSON array of the
	// schedules' rows, and each of those schedules is set to the next run
	// ?1 only if it is tenant ?4's, ACTIVE, at version ?5 and cursor ?6,
	// and in the leased shard ?7 (the lease fences only its own shard's
	// schedules). The rows drive, one integer seek each (a schedule id
	// would take two: its index, then the row); the unary + keeps SQLite
	// from reading another index. An UPDATE ... FROM json_each with the
	// values per row measured two to three times slower per row: SQLite
	// materializes the join first.
	//
	// A group that keeps its schedules ACTIVE writes their cursors alone
	// (schedule_cursors: a row there is an ACTIVE schedule), in one of two
	// forms: qAdvanceCursorsBrief does not say which it wrote, only how
	// many, and is what the planner's groups run (planner.go: the
	// advancer); qAdvanceCursors names them. Its missed count ?2, when
	// not 0, is then added to the schedules written (qAddMissed).
	// qAdvanceSchedulesState, for the items that end a schedule
	// (COMPLETED), writes the schedule's row, with its state ?8, next run
	// and missed count, where the cursor matches; the trigger then drops
	// the cursor.
	qAdvanceCursorsBrief = `UPDATE schedule_cursors SET next_run_at = ?1` + advanceCursorWhere
	qAdvanceCursors      = qAdvanceCursorsBrief + `
RETURNING schedule_id, row`
	qAdvanceSchedulesState = `UPDATE schedules SET next_run_at = ?1, missed_count = missed_count + ?2, state = ?8
WHERE row IN (SELECT row FROM schedule_cursors` + advanceCursorWhere + `) AND state = 'ACTIVE'
RETURNING schedule_id, row`

	advanceCursorWhere = `
WHERE row IN (SELECT value FROM json_each(?3)) AND +tenant_id = ?4 AND +shard = ?7
    AND version = ?5 AND next_run_at = ?6`

	// The planner's missed count ?1 added to the schedules of rows ?2 (a
	// JSON array), whose cursors it just advanced.
	qAddMissed = `UPDATE schedules SET missed_count = missed_count + ?1
WHERE row IN (SELECT value FROM json_each(?2))`

	// The savepoint a brief write (a form without RETURNING) that did not
	// write every row it was given rolls back to, before the form that
	// names the rows it writes runs instead (planner.go, queue.go).
	// RETURNING costs SQLite a load of every old column of each row written
	// and a temporary table of the answer.
	qSavepoint           = `SAVEPOINT brief`
	qRollbackToSavepoint = `ROLLBACK TO brief`
	qReleaseSavepoint    = `RELEASE brief`

	// The rows of the schedules of ids ?1 (a JSON array of [schedule_id]),
	// for plan items that carry none.
	qScheduleRows = `SELECT schedule_id, row FROM schedules
WHERE schedule_id IN (SELECT value ->> 0 FROM json_each(?1))`
)

// Occurrences.
const (
	// The columns of a record.Occurrence, in the order rawOccurrence scans
	// them: those a claim reads (occurrenceClaimColumns), then the dead
	// reason and the latest attempt's error (LastError).
	occurrenceColumns = occurrenceClaimColumns + `, dead_reason, att_error`

	// The columns a claim reads of its candidates: all but the two that
	// a claimable occurrence has empty (a replay clears dead_reason) or
	// that the claim itself empties (att_error, the claim's new attempt
	// has none yet). Each column read costs the driver a lock.
	occurrenceClaimColumns = occurrenceHeadColumns + `, trigger_key`

	// The columns a claim reads of its candidates (candidateScan): those
	// a delivery and the overlap rule use. The tenant, queue and lane are
	// the read's own parameters; finished_at is NULL and dead_reason
	// empty in a claimable row; the shard epoch is an audit trail.
	candidateColumns = `occurrence_id, schedule_id, schedule_version, scheduled_for, available_at, enqueued_at, state,
    attempt_count, first_claimed_at, overlap_policy, attempt_floor, retry_from, trigger_key`

	// The columns every occurrence is written with.
	occurrenceHeadColumns = `occurrence_id, tenant_id, schedule_id, schedule_version, scheduled_for,
    available_at, enqueued_at, state, lane, queue, attempt_count, first_claimed_at, finished_at,
    overlap_policy, shard_epoch, attempt_floor, retry_from`

	// occurrenceArity is the number of columns in occurrenceColumns, and
	// occurrenceClaimArity in occurrenceClaimColumns.
	occurrenceArity      = 20
	occurrenceClaimArity = 18

	// The conflict target is the firing's natural key, so a second insert
	// of the same firing does nothing. A manual occurrence inserted again
	// under the same id but at another time (a retried trigger) is not a
	// conflict of the natural key but of the id, which OR IGNORE lets
	// pass, and the inserter finds it to be the same occurrence (its
	// schedule and trigger key). The statement is also OR IGNORE:
	// a statement that may abort half way (a NOT NULL, CHECK or UNIQUE
	// failure) copies every page it first touches to a statement journal,
	// about a tenth of a materialization. What OR IGNORE lets pass silently
	// (an id hash collision, a constraint failure) the inserter finds and
	// fails on: every row a statement did not write is looked up by id
	// (qOccurrenceKey), and must be the same firing.
	onOccurrenceConflict = `
ON CONFLICT (schedule_row, scheduled_for, schedule_version, trigger_key) DO NOTHING`

	// The firing an occurrence id is the row of (insert.go).
	qOccurrenceKey = `SELECT schedule_id, scheduled_for, schedule_version, trigger_key FROM occurrences WHERE occurrence_id = ?`

	// The one-row insert also writes the trigger key and the dead reason
	// (the multi-row one leaves them to their default, ''), open, which
	// the store keeps (0001_init.sql), and schedule_row, which the caller
	// has from the schedule's row.
	occurrenceInsertColumns = occurrenceHeadColumns + `, trigger_key, dead_reason, open, schedule_row`

	occurrenceInsertParams = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	// occurrenceInsertArity is the number of columns in
	// occurrenceInsertColumns.
	occurrenceInsertArity = 21

	qInsertOccurrence = `INSERT OR IGNORE INTO occurrences (` + occurrenceInsertColumns + `)
VALUES ` + occurrenceInsertParams + onOccurrenceConflict

	qGetOccurrence = `SELECT ` + occurrenceColumns + `
FROM occurrences WHERE tenant_id = ? AND occurrence_id = ?`

	// Listings of occurrences, in (scheduled_for, occurrence_id) order,
	// oldest first or (Desc) newest first, a page of ?5 rows strictly
	// after the key (?6, ?7) in that order. Every form takes the same
	// parameters: ?1 the tenant, ?2 the schedule id, ?3 the state and ?4
	// the queue ('' for any); a form that has its own term for one leaves
	// it out. Without a key to start after, the caller passes one before
	// every row (listStart). The key's first column is also spelled out
	// alone (scheduled_for >= ?6), so that an index whose columns run
	// scheduled_for, then others than occurrence_id, still seeks to it.

	// One schedule's occurrences walk the natural key's index from the
	// key's scheduled_for, and sort only the few rows of each second (the
	// versions and manual triggers of that second) by id. The tenant is
	// checked on the rows (+tenant_id), never walked: occurrences_tenant_time
	// would read every schedule's rows.
	qListScheduleOccurrences     = listScheduleOccurrences + listAsc
	qListScheduleOccurrencesDesc = listScheduleOccurrences + listDesc
	listScheduleOccurrences      = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE schedule_row = ` + rowOfSchedule2 + ` AND +tenant_id = ?1 AND (?3 = '' OR state = ?3) AND (?4 = '' OR queue = ?4)`

	// The dead-letter queue walks the index occurrences_dead, which is in
	// the listing's order: a page reads its rows and stops. INDEXED BY
	// because occurrences_tenant_time has the same columns and every row.
	qListDeadOccurrences     = listDeadOccurrences + listAsc
	qListDeadOccurrencesDesc = listDeadOccurrences + listDesc
	listDeadOccurrences      = `SELECT ` + occurrenceColumns + `
FROM occurrences INDEXED BY occurrences_dead
WHERE tenant_id = ?1 AND state = 'DEAD' AND (?2 = '' OR schedule_id = ?2) AND (?4 = '' OR queue = ?4)`

	// Any other tenant-wide listing walks occurrences_tenant_time
	// (0004_listing_indexes.sql), which is in the listing's order: a page
	// reads its rows and stops. The state and queue filters are checked on
	// the way.
	qListTenantOccurrences     = listTenantOccurrences + listAsc
	qListTenantOccurrencesDesc = listTenantOccurrences + listDesc
	listTenantOccurrences      = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE tenant_id = ?1 AND (?3 = '' OR state = ?3) AND (?4 = '' OR queue = ?4)`

	listAsc = `
    AND scheduled_for >= ?6 AND (scheduled_for, occurrence_id) > (?6, ?7)
ORDER BY scheduled_for, occurrence_id
LIMIT ?5`
	listDesc = `
    AND scheduled_for <= ?6 AND (scheduled_for, occurrence_id) < (?6, ?7)
ORDER BY scheduled_for DESC, occurrence_id DESC
LIMIT ?5`

	// Counts by state: the states with an index have their own statement;
	// the others scan the table.
	qCountRetryWait = `SELECT count(*) FROM occurrences WHERE tenant_id = ? AND state = 'RETRY_WAIT'`
	qCountDead      = `SELECT count(*) FROM occurrences WHERE tenant_id = ? AND state = 'DEAD'`
	qCountEnqueued  = `SELECT count(*) FROM occurrences
WHERE tenant_id = ? AND state IN ('ENQUEUED', 'RETRY_WAIT') AND state = 'ENQUEUED'`
	qCountState = `SELECT count(*) FROM occurrences WHERE tenant_id = ?1 AND (?2 = '' OR state = ?2)`

	// The latest attempt, kept in the occurrence row (claimed_at NULL: none
	// recorded).
	qCurrentAttempt = `SELECT attempt_count, worker_id, claimed_at, lease_expires_at, att_finished_at, att_result, att_error
FROM occurrences WHERE tenant_id = ? AND occurrence_id = ?`
)

// Attempts.
const (
	attemptColumns = `attempt_id, tenant_id, occurrence_id, attempt, worker_id,
    claimed_at, lease_expires_at, finished_at, result, error`

	// A page of the history (every attempt but the latest): ?3 the number
	// of the last attempt of the previous page (0 for the first), ?4 the
	// page's size. A walk of the primary key from the page's key.
	qListAttempts = `SELECT ` + attemptColumns + `
FROM attempts WHERE occurrence_id = ?1 AND tenant_id = ?2 AND attempt > ?3
ORDER BY attempt
LIMIT ?4`

	// A claim moves the latest attempt of occurrences claimed again to the
	// history before it starts the next one: ?1 is a JSON array of [rowid,
	// attempt_id]. Only a row with a recorded attempt is copied (an
	// occurrence stored with an attempt count but no attempt has none), and
	// it has always ended: a claimable occurrence holds no live attempt.
	qArchiveAttempts = `INSERT INTO attempts (occurrence_id, attempt, attempt_id, tenant_id, worker_id, claimed_at, lease_expires_at,
    finished_at, result, error)
SELECT o.occurrence_id, o.attempt_count, j.value ->> 1, o.tenant_id, o.worker_id, o.claimed_at, o.lease_expires_at,
    o.att_finished_at, o.att_result, o.att_error
FROM json_each(?1) AS j JOIN occurrences o ON o.rowid = j.value ->> 0
WHERE o.claimed_at IS NOT NULL`
)

// The queue.
const (
	// Claim candidates of one lane, oldest first, from the index
	// occurrences_claim; (?5, ?6) is the (available_at, rowid) after which
	// to continue when a pass took fewer than it read (overlap). The
	// payload is the schedule's current one. For a policy other than allow
	// come the overlap's facts (store.ClaimCandidate): whether another
	// occurrence of the schedule is RUNNING, and how many of its pending
	// ones come before this one (both from index occurrences_open, the
	// schedule's open occurrences alone). SQLite evaluates only the
	// branch of a CASE it takes, so an allow candidate costs neither.
	//
	// The position (?5, ?6) is sought in two ranges of the index: the
	// rest of ?5's millisecond by rowid, then the later ones. As one
	// row-value comparison SQLite seeks available_at alone and steps over
	// every row of ?5's millisecond before ?6, and at the top of the hour
	// the runs not yet folded hold hundreds of thousands of those. The
	// arms of a UNION ALL come out in order.
	qClaimCandidates = `SELECT * FROM (SELECT ` + claimCandidateColumns + `
    FROM occurrences WHERE ` + claimCandidateLane + ` AND available_at = ?5 AND rowid > ?6 ORDER BY rowid LIMIT ?7)
UNION ALL
SELECT * FROM (SELECT ` + claimCandidateColumns + `
    FROM occurrences WHERE ` + claimCandidateLane + ` AND available_at > ?5 ORDER BY available_at, rowid LIMIT ?7)
LIMIT ?7`
	claimCandidateLane    = `tenant_id = ?1 AND queue = ?2 AND lane = ?3 AND state IN ('ENQUEUED', 'RETRY_WAIT') AND available_at <= ?4`
	claimCandidateColumns = `rowid, ` + candidateColumns + `,
    (SELECT s.payload FROM schedules s WHERE s.row = occurrences.schedule_row),
    CASE WHEN overlap_policy = 'allow' THEN 0 ELSE
        EXISTS (SELECT 1 FROM occurrences r INDEXED BY occurrences_open
            WHERE r.schedule_row = occurrences.schedule_row AND r.open = 1 AND r.state = 'RUNNING') END,
    CASE WHEN overlap_policy = 'allow' THEN 0 ELSE
        (SELECT count(*) FROM occurrences p INDEXED BY occurrences_open
            WHERE p.schedule_row = occurrences.schedule_row AND p.open = 1 AND p.state IN ('SCHEDULED', 'ENQUEUED', 'RETRY_WAIT')
                AND (p.scheduled_for, p.schedule_version, p.trigger_key)
                    < (occurrences.scheduled_for, occurrences.schedule_version, occurrences.trigger_key)) END`

	// Claims a set of rows by rowid (a JSON array), all read in this
	// transaction as claimable, each under a new attempt that the row
	// itself records (worker ?2, lease until ?3). open stays 1, so the
	// claim touches the table, the claim index (out) and the lease index
	// (in), and no other index.
	qClaimRows = `UPDATE occurrences SET
    state = 'RUNNING', attempt_count = attempt_count + 1, first_claimed_at = coalesce(first_claimed_at, ?1),
    worker_id = ?2, claimed_at = ?1, lease_expires_at = ?3, att_finished_at = NULL, att_result = NULL, att_error = ''
WHERE rowid IN (SELECT value FROM json_each(?4))`

	// The first firing of the timetable not yet delivered: the earliest
	// of tenant ?1's schedule ?2's occurrences of version ?3 that are
	// ENQUEUED, never claimed and not manual, among its open ones (index
	// occurrences_open; INDEXED BY because the natural key's index also
	// starts with schedule_row and would be walked through the history in
	// time order for the min). Another tenant's schedule has no row here,
	// and NULL matches nothing: the answer is NULL.
	qFirstUndelivered = `SELECT min(scheduled_for) FROM occurrences INDEXED BY occurrences_open
WHERE schedule_row = (SELECT row FROM schedules WHERE tenant_id = ?1 AND schedule_id = ?2) AND open = 1
    AND state = 'ENQUEUED' AND attempt_count = 0 AND trigger_key = '' AND schedule_version = ?3` + snapshotNotLeased

	// Candidates the overlap rule skips: rows ?2 (a JSON array of rowids)
	// read in this transaction as claimable, finished at ?1.
	qSkipOverlap = `UPDATE occurrences SET state = 'SKIPPED_OVERLAP', open = 0, finished_at = ?1
WHERE rowid IN (SELECT value FROM json_each(?2))`

	// A heartbeat extends the current attempt (RUNNING at that attempt
	// number) and reads the schedule's news for the worker.
	qHeartbeat = `UPDATE occurrences SET lease_expires_at = ?1
WHERE occurrence_id = ?2 AND attempt_count = ?3 AND +tenant_id = ?4 AND state = 'RUNNING'
RETURNING lease_expires_at,
    (SELECT s.version > occurrences.schedule_version FROM schedules s WHERE s.row = occurrences.schedule_row),
    (SELECT s.state = 'CANCELED' FROM schedules s WHERE s.row = occurrences.schedule_row)`

	// A group of finishes that share everything but the occurrence: the
	// attempts numbered ?7 of tenant ?6's occurrences in ?8 (a JSON array
	// of [occurrence_id]) end with result ?2 and error ?3 at ?4, and their
	// occurrences move to state ?1 with dead reason ?9 (the caller's when
	// ?1 is DEAD, '' otherwise). Each applies only while that attempt is
	// the occurrence's current one and the occurrence RUNNING (the fencing
	// test); the answer is the occurrences written. SUCCEEDED, DEAD and
	// CANCELED finish the occurrence (open = 0); RETRY_WAIT makes it
	// claimable again at ?5 and leaves the rest alone.
	//
	// The ids drive, one index lookup each, and every other value is a
	// parameter: an UPDATE ... FROM json_each, with the values per row,
	// measured two to three times slower (SQLite materializes the join).
	qFinishGroup = finishGroup + finishByID + `
RETURNING ` + occurrenceColumns
	// A group of finishes runs this first: it answers with the count
	// alone, which says the group was written whole, or else it is rolled
	// back and qFinishGroup runs (see qSavepoint).
	qFinishGroupCount = finishGroup + finishByID
	// qFinishGroupByRow is qFinishGroupCount for items whose rows the
	// store remembers from their claims (rowhints.go): ?8 is then a flat
	// JSON array of their rowids, and each row is found by its rowid, one
	// seek where the id takes two (its index, then the row).
	qFinishGroupByRow = finishGroup + `
WHERE rowid IN (SELECT value FROM json_each(?8))
    AND +tenant_id = ?6 AND attempt_count = ?7 AND state = 'RUNNING'`

	// The unary + on tenant_id (in qFinishGroupByRow and qHeartbeat
	// too) keeps SQLite from walking the tenant's RUNNING rows by index
	// occurrences_running where the ids find each row in one seek.
	finishByID = `
WHERE occurrence_id IN (SELECT value ->> 0 FROM json_each(?8))
    AND +tenant_id = ?6 AND attempt_count = ?7 AND state = 'RUNNING'`

	finishGroup = `UPDATE occurrences SET
    state = ?1,
    open = ?1 = 'RETRY_WAIT',
    finished_at = CASE WHEN ?1 = 'RETRY_WAIT' THEN finished_at ELSE ?4 END,
    available_at = CASE WHEN ?1 = 'RETRY_WAIT' THEN ?5 ELSE available_at END,
    dead_reason = ?9,
    att_finished_at = ?4, att_result = ?2, att_error = ?3`

	// A finish that found nothing to write: how did that attempt end? The
	// latest attempt is in the occurrence row, older ones in the history;
	// NULL when it has not ended or does not exist.
	qFinishedAttempt = `SELECT coalesce(
    (SELECT att_result FROM occurrences WHERE tenant_id = ?1 AND occurrence_id = ?2 AND attempt_count = ?3),
    (SELECT result FROM attempts WHERE occurrence_id = ?2 AND attempt = ?3 AND tenant_id = ?1))`

	// Expired leases, oldest first (index occurrences_lease), with the
	// facts deciding the occurrence's fate needs (store.ExpiredAttempt):
	// its retry counters and its schedule's version, state and retry
	// policy.
	qExpiredAttempts = `SELECT o.occurrence_id, o.tenant_id, o.attempt_count, o.attempt_floor, o.retry_from, o.schedule_version,
    s.version, s.state, s.retry_max_attempts, s.retry_base_ms, s.retry_cap_ms, s.retry_deadline_ms
FROM occurrences o
JOIN schedules s ON s.row = o.schedule_row
WHERE o.state = 'RUNNING' AND o.lease_expires_at <= ?1
ORDER BY o.lease_expires_at
LIMIT ?2`

	// Ends expired attempts at ?1 as the engine decided: ?2 is a JSON
	// array of [occurrence_id, attempt, state, dead_reason], state one of
	// ENQUEUED (claimable again at ?1, still open), DEAD or CANCELED (both
	// finished at ?1). Each applies only while the occurrence is RUNNING
	// at that attempt.
	qEndExpired = `UPDATE occurrences SET
    state = j.value ->> 2,
    open = (j.value ->> 2) = 'ENQUEUED',
    available_at = CASE WHEN (j.value ->> 2) = 'ENQUEUED' THEN ?1 ELSE available_at END,
    finished_at = CASE WHEN (j.value ->> 2) = 'ENQUEUED' THEN finished_at ELSE ?1 END,
    dead_reason = j.value ->> 3,
    att_finished_at = ?1, att_result = 'LEASE_EXPIRED'
FROM json_each(?2) AS j
WHERE occurrences.occurrence_id = j.value ->> 0 AND occurrences.attempt_count = j.value ->> 1
    AND occurrences.state = 'RUNNING'`

	// What deciding a retryable nack reads of the schedule of tenant ?1's
	// occurrence ?2: its version, state and retry policy, and the
	// tenant's RETRY_WAIT occurrences (the retry budget).
	qNackFacts = `SELECT s.version, s.state, s.retry_max_attempts, s.retry_base_ms, s.retry_cap_ms, s.retry_deadline_ms,
    (SELECT count(*) FROM occurrences WHERE tenant_id = ?1 AND state = 'RETRY_WAIT')
FROM schedules s
WHERE s.row = (SELECT schedule_row FROM occurrences WHERE tenant_id = ?1 AND occurrence_id = ?2)`

	// A DEAD occurrence back on the queue as the engine decided (a
	// replay): available at ?1, attempt floor ?2, retry deadline counted
	// from ?3, out of the dead-letter queue. The last attempt's error stays
	// (it is still the latest attempt's).
	qRequeueDead = `UPDATE occurrences SET
    state = 'ENQUEUED', open = 1, available_at = ?1, finished_at = NULL, attempt_floor = ?2, retry_from = ?3,
    dead_reason = ''
WHERE tenant_id = ?4 AND occurrence_id = ?5 AND state = 'DEAD'
RETURNING ` + occurrenceColumns

	// Up to ?4 of tenant ?1's DEAD occurrences, of schedule ?2 and queue
	// ?3 ('' for any), oldest first (index occurrences_dead).
	qDeadOccurrences = `SELECT occurrence_id FROM occurrences
WHERE tenant_id = ?1 AND state = 'DEAD' AND (?2 = '' OR schedule_id = ?2) AND (?3 = '' OR queue = ?3)
ORDER BY scheduled_for, occurrence_id
LIMIT ?4`

	// Tenant ?3's occurrences ?2 (a JSON array of [id]) that are still
	// DEAD leave the dead-letter queue CANCELED at ?1. They stay finished
	// (open = 0) and keep their dead reason. Nothing is deleted, so every
	// row keeps its number and the claims' row hints (rowhints.go) stay
	// right; a write by a hint checks the state anyway. The ids drive (the
	// unary + keeps SQLite from walking the tenant's dead-letter queue).
	qCancelDead = `UPDATE occurrences SET state = 'CANCELED', finished_at = ?1
WHERE occurrence_id IN (SELECT value ->> 0 FROM json_each(?2)) AND +tenant_id = ?3 AND +state = 'DEAD'`

	qOccurrenceState = `SELECT state FROM occurrences WHERE tenant_id = ? AND occurrence_id = ?`

	// The earliest claimable time of each lane (three index seeks on
	// occurrences_claim), and the earliest of those.
	qNextAvailable = `SELECT min(CASE WHEN EXISTS (SELECT 1 FROM occurrences o INDEXED BY occurrences_claim
        WHERE ` + laneOfHead + ` AND o.available_at = h.head_at AND o.rowid > h.head_row)
    THEN h.head_at
    ELSE (SELECT min(o.available_at) FROM occurrences o INDEXED BY occurrences_claim
        WHERE ` + laneOfHead + ` AND o.available_at > h.head_at) END)
FROM lane_heads h WHERE h.tenant_id = ?1 AND h.queue = ?2`

	// The claimable rows (alias o) of lane_heads row h's lane.
	laneOfHead = `o.tenant_id = h.tenant_id AND o.queue = h.queue AND o.lane = h.lane AND o.state IN ('ENQUEUED', 'RETRY_WAIT')`
)

// occurrenceChunkColumns are the columns of qInsertOccurrences: those of
// occurrenceInsertColumns, in another order. The first chunkShared are the
// same in every row of the statement and bound once for all of them, as ?1
// to ?10 (chunkShape.args); the other chunkRowArity are bound for each row
// (chunkRowArgs), as anonymous parameters. (SQLite finds a numbered
// parameter's name by a walk of the statement's list of them, and the
// driver asks for the name of every parameter it binds: numbering all the
// parameters of a chunk made binding quadratic.)
const (
	occurrenceChunkColumns = `enqueued_at, state, lane, attempt_count, first_claimed_at, finished_at,
    overlap_policy, shard_epoch, attempt_floor, open,
    occurrence_id, tenant_id, schedule_id, schedule_version, scheduled_for, available_at, queue, retry_from, schedule_row`
	chunkShared   = 10
	chunkRowArity = 9
)

// qInsertOccurrences is qInsertOccurrence for insertChunk rows at once, of
// one chunkShape: a burst's occurrences differ in their firing, schedule and
// tenant and agree on the rest, which is bound once for all of them.
var qInsertOccurrences = chunkInsert(insertChunk)

// chunkInsert returns the INSERT OR IGNORE of rows rows of
// occurrenceChunkColumns: one statement step per chunk instead of one per
// row.
func chunkInsert(rows int) string {
	var shared []string
	for i := range chunkShared {
		shared = append(shared, "?"+strconv.Itoa(i+1))
	}
	row := "(" + strings.Join(shared, ", ") + strings.Repeat(", ?", chunkRowArity) + ")"
	return "INSERT OR IGNORE INTO occurrences (" + occurrenceChunkColumns + ")\nVALUES " +
		strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ") + onOccurrenceConflict
}

// Seeing it (store.StatsStore). The snapshot's reads go through the
// partial indexes of the open, claimable and DEAD occurrences and the
// planner's cursors, so they cost the queue as it stands, never the
// history. ?1 is the snapshot's now (in the due backlog's statements,
// where its minutes count from: SnapshotParams.BacklogFrom, or now); ?2
// the end of the due backlog's last minute; ?3 the tenant, in a tenant's
// statements (SnapshotParams.TenantID). Every tenant's statements and one
// tenant's share their columns and groups (the fragments below) and
// differ in the rows they read: the whole cluster's through the indexes
// of every open occurrence, one tenant's through the indexes that lead
// with the tenant, never reading another tenant's rows.
const (
	// A depth row, (tenant, queue, lane, state, count, ready at ?1), of
	// the rows its FROM and WHERE give.
	snapshotDepthColumns = `SELECT tenant_id, queue, lane, state, count(*), sum(state IN ('ENQUEUED', 'RETRY_WAIT') AND available_at <= ?1)`
	snapshotDepthGroup   = `
GROUP BY tenant_id, queue, lane, state`
	snapshotDepthOrder = `
ORDER BY 1, 2, 3, 4`

	// Depth: the open occurrences (index occurrences_open, scanned whole:
	// it holds those alone) by tenant, queue, lane and state, with those
	// ready at ?1 of each group; then the DEAD ones (index
	// occurrences_dead).
	qSnapshotDepth = snapshotDepthColumns + `
FROM occurrences INDEXED BY occurrences_open
WHERE open = 1` + snapshotDepthGroup + `
UNION ALL
SELECT tenant_id, queue, lane, 'DEAD', count(*), 0
FROM occurrences INDEXED BY occurrences_dead
WHERE state = 'DEAD'
GROUP BY tenant_id, queue, lane` + snapshotDepthOrder

	// A tenant's depth, state by state, each through an index that
	// leads with the tenant and holds that state alone: the claimable
	// (occurrences_claim), RUNNING (occurrences_running), SCHEDULED
	// (occurrences_scheduled) and DEAD (occurrences_dead) ones.
	qSnapshotTenantDepth = snapshotDepthColumns + `
FROM occurrences INDEXED BY occurrences_claim
WHERE tenant_id = ?2 AND ` + snapshotClaimable + snapshotDepthGroup + `
UNION ALL
` + snapshotDepthColumns + `
FROM occurrences INDEXED BY occurrences_running
WHERE tenant_id = ?2 AND state = 'RUNNING'` + snapshotDepthGroup + `
UNION ALL
` + snapshotDepthColumns + `
FROM occurrences INDEXED BY occurrences_scheduled
WHERE tenant_id = ?2 AND state = 'SCHEDULED'` + snapshotDepthGroup + `
UNION ALL
` + snapshotDepthColumns + `
FROM occurrences INDEXED BY occurrences_dead
WHERE tenant_id = ?2 AND state = 'DEAD'` + snapshotDepthGroup + snapshotDepthOrder

	// The claimable occurrences: occurrences_claim's WHERE, word for word,
	// so that a statement naming it may use the index.
	snapshotClaimable = `state IN ('ENQUEUED', 'RETRY_WAIT')`

	// The ready occurrence that has waited longest: the claimable ones
	// (index occurrences_claim, which holds their available_at and
	// rowid, so the search reads the index alone), then the one row. A
	// tenant's (?2) searches the tenant's range of the index.
	qSnapshotOldestReady       = snapshotOldestReady + snapshotOldestReadyEnd
	qSnapshotTenantOldestReady = snapshotOldestReady + ` WHERE h.tenant_id = ?2` + snapshotOldestReadyEnd
	// Per lane (lane_heads has a row for every lane that ever had a
	// claimable occurrence), the first ready occurrence after the lane's
	// head: those before it are held by runs (docs/engine.md, "Leased
	// runs"). Then the earliest of those.
	snapshotOldestReady = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE rowid = (SELECT c.rowid FROM (SELECT coalesce(
        (SELECT o.rowid FROM occurrences o INDEXED BY occurrences_claim
            WHERE ` + laneOfHead + ` AND o.available_at <= ?1 AND o.available_at = h.head_at AND o.rowid > h.head_row
            ORDER BY o.rowid LIMIT 1),
        (SELECT o.rowid FROM occurrences o INDEXED BY occurrences_claim
            WHERE ` + laneOfHead + ` AND o.available_at <= ?1 AND o.available_at > h.head_at
            ORDER BY o.available_at, o.rowid LIMIT 1)) AS r
    FROM lane_heads h`
	snapshotOldestReadyEnd = `) AS f JOIN occurrences c ON c.rowid = f.r
    ORDER BY c.available_at, c.rowid LIMIT 1)`

	// Each queue's oldest ready occurrence's available_at, by tenant and
	// queue: per lane (lane_heads), the available_at of the first ready
	// occurrence after the head, through the oldest ready's two seeks of
	// occurrences_claim; then the earliest of each queue's lanes
	// (lane_heads' key order: no sort). A queue with none ready reads
	// NULL, which the reader skips (rowcodec.SnapshotRead.AddQueueOldest):
	// a filter on it here would make SQLite search each lane twice. A
	// tenant's (?2) walks the tenant's rows of lane_heads.
	qSnapshotQueueOldestReady       = snapshotQueueOldestReady + snapshotQueueOldestReadyEnd
	qSnapshotTenantQueueOldestReady = snapshotQueueOldestReady + `
WHERE h.tenant_id = ?2` + snapshotQueueOldestReadyEnd
	snapshotQueueOldestReady = `SELECT h.tenant_id, h.queue, min(coalesce(
        (SELECT o.available_at FROM occurrences o INDEXED BY occurrences_claim
            WHERE ` + laneOfHead + ` AND o.available_at <= ?1 AND o.available_at = h.head_at AND o.rowid > h.head_row
            LIMIT 1),
        (SELECT o.available_at FROM occurrences o INDEXED BY occurrences_claim
            WHERE ` + laneOfHead + ` AND o.available_at <= ?1 AND o.available_at > h.head_at
            ORDER BY o.available_at LIMIT 1))) AS t
FROM lane_heads h`
	snapshotQueueOldestReadyEnd = `
GROUP BY h.tenant_id, h.queue
ORDER BY h.tenant_id, h.queue`

	// The due backlog of materialized occurrences not yet claimed, per
	// minute from ?1, by available_at in [?1, ?2) (index
	// occurrences_open).
	qSnapshotDueOccurrences = `SELECT (available_at - ?1) / 60000, count(*)
FROM occurrences INDEXED BY occurrences_open
WHERE open = 1 AND state IN ('SCHEDULED', 'ENQUEUED', 'RETRY_WAIT') AND ` + snapshotDueWindow + `
GROUP BY 1`

	// A tenant's: its claimable occurrences (index occurrences_claim) and
	// its SCHEDULED ones (index occurrences_scheduled).
	qSnapshotTenantDueOccurrences = `SELECT (available_at - ?1) / 60000, count(*)
FROM (SELECT available_at FROM occurrences INDEXED BY occurrences_claim
        WHERE tenant_id = ?3 AND ` + snapshotClaimable + ` AND ` + snapshotDueWindow + `
    UNION ALL
    SELECT available_at FROM occurrences INDEXED BY occurrences_scheduled
        WHERE tenant_id = ?3 AND state = 'SCHEDULED' AND ` + snapshotDueWindow + `)
GROUP BY 1`

	snapshotDueWindow = `available_at >= ?1 AND available_at < ?2` + snapshotNotLeased

	// Not held by a run: a claimable row at or before its lane's head is
	// one (docs/engine.md, "Leased runs").
	snapshotNotLeased = ` AND NOT (state IN ('ENQUEUED', 'RETRY_WAIT') AND EXISTS (SELECT 1 FROM lane_heads h
    WHERE h.tenant_id = occurrences.tenant_id AND h.queue = occurrences.queue AND h.lane = occurrences.lane
        AND (occurrences.available_at, occurrences.rowid) <= (h.head_at, h.head_row)))`

	// The due backlog of schedules, per minute from ?1, by cursor in [?1,
	// ?2): schedule_cursors holds exactly the ACTIVE schedules with a next
	// run. The index schedules_due leads with the shard, so the shards
	// are found first, one seek each (a recursive walk of their distinct
	// values), and then each shard's cursors in the window are one range:
	// the read costs the schedules due in the window, not every schedule.
	qSnapshotDueCursors = `WITH RECURSIVE shards (shard) AS (
    SELECT min(shard) FROM schedule_cursors
    UNION ALL
    SELECT (SELECT min(c.shard) FROM schedule_cursors c WHERE c.shard > shards.shard)
    FROM shards WHERE shards.shard IS NOT NULL
)
` + snapshotDueCursors + `
FROM shards JOIN schedule_cursors c ON c.shard = shards.shard
WHERE ` + snapshotCursorWindow + `
GROUP BY 1`

	// A tenant's: the shards it has live schedules on are its rows of
	// tenant_live_schedules (one range of its key), and each shard's
	// cursors in the window one range of schedules_due, of which the
	// tenant's are counted. The read costs the schedules due in the
	// window on the tenant's shards, not every schedule.
	qSnapshotTenantDueCursors = snapshotDueCursors + `
FROM tenant_live_schedules t JOIN schedule_cursors c INDEXED BY schedules_due ON c.shard = t.shard
WHERE t.tenant_id = ?3 AND t.live > 0 AND ` + snapshotCursorWindow + ` AND c.tenant_id = ?3
GROUP BY 1`

	snapshotDueCursors   = `SELECT (c.next_run_at - ?1) / 60000, count(*)`
	snapshotCursorWindow = `c.next_run_at >= ?1 AND c.next_run_at < ?2`

	statMinuteColumns = `node_id, minute, data`

	// A node's row of a minute, replaced whole.
	qUpsertStatMinute = `INSERT INTO stat_minutes (` + statMinuteColumns + `) VALUES (?1, ?2, ?3)
ON CONFLICT (minute, node_id) DO UPDATE SET data = excluded.data`

	// The rows of minutes before ?1, of every node (the key's range).
	qDeleteStatMinutes = `DELETE FROM stat_minutes WHERE minute < ?1`

	// The rows of minutes from ?1 on, in key order.
	qReadStatMinutes = `SELECT ` + statMinuteColumns + ` FROM stat_minutes WHERE minute >= ?1 ORDER BY minute, node_id`
)

// Nodes (store.NodeStore).
const (
	nodeColumns = `node_id, address, started_at, last_heartbeat, expires_at, clock_offset_ms`

	// An upsert: a node always owns its own row. started_at is written
	// only by the insert.
	qHeartbeatNode = `INSERT INTO nodes (node_id, address, started_at, last_heartbeat, expires_at, clock_offset_ms)
VALUES (?1, ?2, ?3, ?3, ?4, ?5)
ON CONFLICT (node_id) DO UPDATE SET
    address = excluded.address,
    last_heartbeat = excluded.last_heartbeat,
    expires_at = excluded.expires_at,
    clock_offset_ms = excluded.clock_offset_ms
RETURNING ` + nodeColumns

	qListNodes = `SELECT ` + nodeColumns + ` FROM nodes ORDER BY node_id`

	qRemoveNode = `DELETE FROM nodes WHERE node_id = ?1`

	// The dead nodes (store.NodeStore.RemoveDeadNodes): ?1 the node id
	// ('' for any), ?2 the heartbeat bound, ?3 now. A node owning a shard
	// lease live at now is kept.
	qRemoveDeadNodes = `DELETE FROM nodes
WHERE (?1 = '' OR node_id = ?1) AND last_heartbeat < ?2 AND expires_at <= ?3
    AND NOT EXISTS (SELECT 1 FROM shard_leases l WHERE l.owner = nodes.node_id AND l.expires_at > ?3)
RETURNING node_id`
)

// The schedules' version history (store.HistoryStore, store.HistoryTx):
// the table schedule_versions, keyed (schedule_id, version).
const (
	versionColumns = `schedule_id, version, tenant_id, kind, expr, time_zone, anchor, dst_gap, dst_repeat, state,
    misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms, written_at, starts_after,
    first_firing, superseded_at, ends_at, planned_until`

	qInsertVersion = `INSERT INTO schedule_versions (` + versionColumns + `)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)`

	// Only an open row: a closed one is history.
	qCloseVersion = `UPDATE schedule_versions SET superseded_at = ?3, ends_at = ?4, planned_until = ?5
WHERE schedule_id = ?1 AND version = ?2 AND superseded_at IS NULL`

	// A first version kept in its schedule's row (0006_bulk_create.sql)
	// read as the schedule_versions row it stands for, in versionColumns'
	// order: version 1, written at the schedule's creation, open. Only
	// while the schedule's version is 1: the write of the second moves it
	// out into schedule_versions.
	firstVersionColumns = `schedule_id, 1, tenant_id, kind, expr, time_zone, anchor, dst_gap, dst_repeat, first_state,
    misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms, created_at, first_starts_after,
    first_firing, NULL, NULL, NULL`
	firstVersionHeld = `version = 1 AND first_state IS NOT NULL`

	// The key's order, from after (?3, ?4): the rows of schedule_versions
	// merged with the first versions held in schedules rows, each side
	// walked in id order (its key; the schedules' id index) and stopped at
	// the page's end, in one statement, so one snapshot (a second version
	// written between two reads would move a row from one side to the
	// other unseen). One schedule's rows are one range of the key
	// (qListScheduleVersions), every schedule's a walk of it.
	qListVersions = `SELECT ` + versionColumns + ` FROM schedule_versions
WHERE (?1 = '' OR tenant_id = ?1) AND (schedule_id, version) > (?3, ?4) AND ?2 = ''
UNION ALL
SELECT ` + firstVersionColumns + ` FROM schedules
WHERE (?1 = '' OR tenant_id = ?1) AND schedule_id >= ?3 AND (schedule_id, 1) > (?3, ?4) AND ?2 = ''
    AND ` + firstVersionHeld + `
ORDER BY 1, 2
LIMIT ?5`
	qListScheduleVersions = `SELECT ` + versionColumns + ` FROM schedule_versions
WHERE (?1 = '' OR tenant_id = ?1) AND schedule_id = ?2 AND version > (CASE WHEN ?3 < ?2 THEN 0 ELSE ?4 END)
    AND ?3 <= ?2
UNION ALL
SELECT ` + firstVersionColumns + ` FROM schedules
WHERE (?1 = '' OR tenant_id = ?1) AND schedule_id = ?2 AND 1 > (CASE WHEN ?3 < ?2 THEN 0 ELSE ?4 END)
    AND ?3 <= ?2 AND ` + firstVersionHeld + `
ORDER BY 2
LIMIT ?5`
)

// Simulated outages (store.OutageStore). The table is tiny (a row per
// outage ever asked for); the partial index keeps the read of the one in
// progress, made every planner pass, to the rows not canceled.
const (
	// The columns rowcodec.ScanOutage reads, in its order.
	outageColumns = `outage_id, shards, started_at, ends_at, canceled_at, created_by`

	// A new outage, only when none is in progress at its start (?2).
	qInsertOutage = `INSERT INTO simulated_outages (shards, started_at, ends_at, created_by)
SELECT ?1, ?2, ?3, ?4
WHERE NOT EXISTS (SELECT 1 FROM simulated_outages WHERE canceled_at IS NULL AND ends_at > ?2)
RETURNING outage_id`

	// The outage in progress at ?1, the latest started.
	qCurrentOutage = `SELECT ` + outageColumns + ` FROM simulated_outages
WHERE canceled_at IS NULL AND ends_at > ?1
ORDER BY started_at DESC, outage_id DESC LIMIT 1`

	// Cancel every outage in progress at ?1.
	qCancelOutages = `UPDATE simulated_outages SET canceled_at = ?1
WHERE canceled_at IS NULL AND ends_at > ?1
RETURNING ` + outageColumns
)

// Tenants and their tokens (store.TenantStore, store.TenantTx). Both
// tables are small (a row per tenant, a few per tenant's tokens); a token
// is read by its hash, the primary key, on every authenticated request.
const (
	// The columns rowcodec.ScanTenant reads, in its order.
	tenantColumns = `tenant_id, state, weight, q_active_schedules, q_firings_per_second, q_running,
    q_catch_up_per_second, q_api_requests_per_second, q_retention_seconds, created_at, updated_at, version`
	// The columns rowcodec.ScanToken reads, in its order.
	tokenColumns = `token_hash, tenant_id, name, role, created_at, last_used_at, revoked_at`

	qInsertTenant = `INSERT INTO tenants (` + tenantColumns + `)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)`

	// Only over the version read: ?12 is the previous version.
	qUpdateTenant = `UPDATE tenants SET state = ?2, weight = ?3, q_active_schedules = ?4,
    q_firings_per_second = ?5, q_running = ?6, q_catch_up_per_second = ?7,
    q_api_requests_per_second = ?8, q_retention_seconds = ?9, updated_at = ?10, version = ?11
WHERE tenant_id = ?1 AND version = ?12`

	qGetTenant   = `SELECT ` + tenantColumns + ` FROM tenants WHERE tenant_id = ?1`
	qListTenants = `SELECT ` + tenantColumns + ` FROM tenants ORDER BY tenant_id`

	qInsertToken = `INSERT INTO tenant_tokens (` + tokenColumns + `)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`

	// The token and its tenant's state, in one read: k's columns are
	// named in tokenColumns' order (both tables have tenant_id and
	// created_at).
	qTokenByHash = `SELECT k.token_hash, k.tenant_id, k.name, k.role, k.created_at, k.last_used_at, k.revoked_at,
    COALESCE(t.state, '')
FROM tenant_tokens k LEFT JOIN tenants t ON t.tenant_id = k.tenant_id
WHERE k.token_hash = ?1`
	qListTokens = `SELECT ` + tokenColumns + ` FROM tenant_tokens WHERE tenant_id = ?1
ORDER BY created_at, name, token_hash`

	// Only forward: two nodes touching at once keep the later use.
	qTouchToken = `UPDATE tenant_tokens SET last_used_at = ?2
WHERE token_hash = ?1 AND (last_used_at IS NULL OR last_used_at < ?2)`

	// The tenant's unrevoked tokens named ?2, or all of them when ?2 is ''.
	qRevokeTokens = `UPDATE tenant_tokens SET revoked_at = ?3
WHERE tenant_id = ?1 AND (?2 = '' OR name = ?2) AND revoked_at IS NULL`
)

// The audit log (store.AuditStore, store.AuditTx): appended in the
// transaction of each change, read by tenant or target in id order,
// deleted by age in bounded batches.
const (
	// The columns rowcodec.ScanAudit reads, in its order; an append
	// binds all but audit_id (rowcodec.AuditArgs).
	auditColumns = `audit_id, at, tenant_id, actor_tenant, actor_token, actor_flags, action, target,
    old_version, new_version, detail`

	qAppendAudit = `INSERT INTO audit_log (at, tenant_id, actor_tenant, actor_token, actor_flags, action, target,
    old_version, new_version, detail)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`

	// A page of the log in id order, one statement per index walked
	// (rowcodec.AuditListing picks one): ?1 since (ms), ?2 after
	// id, ?3 limit, ?4 the seek, ?5 tenant ('' = all), ?6 target. The whole
	// log walks the rowid, a tenant's rows audit_log_tenant, a target's
	// audit_log_target (its entries hold the rowid, so they are in id
	// order); the tenant is checked on a target's few rows.
	qListAudit = `SELECT ` + auditColumns + ` FROM audit_log
WHERE ` + auditWalk + auditPage
	qListAuditTenant = `SELECT ` + auditColumns + ` FROM audit_log
WHERE tenant_id = ?5 AND ` + auditWalk + auditPage
	qListAuditTarget = `SELECT ` + auditColumns + ` FROM audit_log
WHERE target = ?6 AND (?5 = '' OR tenant_id = ?5) AND ` + auditWalk + auditPage

	// The walk starts after the page's key, or after the last row stamped
	// before the seek when that is later (store.AuditClockSlack): one seek
	// of audit_log_at. since is checked on the rows walked, never used to
	// pick an index (+at): a walk by time would sort the whole range.
	auditWalk = `+at >= ?1
    AND audit_id > max(?2, ifnull((SELECT audit_id FROM audit_log WHERE at < ?4 ORDER BY at DESC LIMIT 1), 0))`
	auditPage = `
ORDER BY audit_id LIMIT ?3`

	// At most ?2 rows older than ?1, the oldest first.
	qPurgeAudit = `DELETE FROM audit_log WHERE audit_id IN (
    SELECT audit_id FROM audit_log WHERE at < ?1 ORDER BY at, audit_id LIMIT ?2)`
)
