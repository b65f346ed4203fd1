package postgres

// Every SQL statement the store runs lives in this file or in the other
// queries_*.go files (the schema lives in migrations/). Column lists are named once and shared by the statement and
// the scanner that reads it, so their order cannot drift apart. The
// statements mirror the SQLite store's (store/sqlite/queries.go) one for one
// where they can; where PostgreSQL differs, the comment says how.
//
// Every statement with parameters runs on the extended protocol (pgx's
// default, QueryExecModeCacheStatement: parsed once per connection, then
// bound): values never travel inside SQL text, so no value can be read
// as SQL.
//
// Times are bound and read as BIGINT unix milliseconds (ms, nullMS) and
// durations as BIGINT milliseconds (durMS); see package store.
//
// Batches. A statement that writes many rows takes one array parameter per
// column and reads them with unnest(...), which zips them into rows: one
// statement and one round trip per batch, whatever its size.
//
// Plans. Two rules keep the planner from plans that are fine on the
// statistics and ruinous on the data (both measured with EXPLAIN ANALYZE
// while writing this file):
//
//   - A batch joins its arrays to a table by key, and every other condition
//     on that table's rows is a join condition too, compared with a column
//     of the arrays (array_fill repeats a constant, such as the state a
//     finish expects, once per row): nothing restricts the table alone. A
//     restriction (state = 'ACTIVE') whose selectivity the statistics
//     underrate (stale after a burst, or taken while the table was empty)
//     made the planner expect one row from the table and join the 1,000
//     array rows to it by a nested loop that rescanned the arrays for every
//     row: CommitPlan took 360 ms instead of 40. With no restriction the
//     table is expected whole, and the arrays drive, each row one primary
//     key lookup (or a hash join over a sequential scan of a small table).
//   - PostgreSQL uses a partial index when it can prove the query's WHERE
//     implies the index's, as SQLite does, so a query meant for one repeats
//     its term (state IN ('ENQUEUED', 'RETRY_WAIT'), open, ...). A lookup by
//     key that also tests a state writes the test (state = 'RUNNING') IS
//     TRUE, the same condition, which no index predicate is proven from:
//     else, when the statistics say the state is rare, the planner may
//     prefer reading that state's whole partial index (occurrences_lease:
//     every RUNNING row) to the key's one entry.
//
// Concurrency. The SQLite store has one writer; here several transactions
// (of one node or of several) run at once under READ COMMITTED, so every
// write is conditional (WHERE version = ..., state = 'RUNNING' AND
// attempt_count = ...), and a conditional UPDATE that waited for another
// transaction re-checks its condition against the row that transaction
// committed. A claim on the row path locks its candidates with FOR UPDATE
// SKIP LOCKED; a claim that leases a run holds its queue's lock instead and
// locks no row (tx_runs.go); the fence of CommitPlan locks the lease row
// FOR SHARE.

// Migrations and the store's own housekeeping.
const (
	// The advisory lock around migrations: one key per schema, so that
	// nodes opening the same schema migrate one at a time while tests in
	// other schemas of the database do not wait. Transaction-scoped: it is
	// released by the commit or rollback, even if the process dies.
	qMigrationLock = `SELECT pg_advisory_xact_lock(hashtextextended('sched/migrate/' || $1::text, 0))`

	qCurrentSchema = `SELECT current_schema()`

	// Followed by the quoted identifier (pgx.Identifier.Sanitize): DDL takes
	// no parameters. Run with no arguments.
	qCreateSchemaPrefix = `CREATE SCHEMA IF NOT EXISTS `
	qDropSchemaPrefix   = `DROP SCHEMA IF EXISTS `
	qDropSchemaSuffix   = ` CASCADE`

	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    BIGINT NOT NULL PRIMARY KEY,
    name       TEXT   NOT NULL,
    applied_at BIGINT NOT NULL
)`

	qMaxMigration = `SELECT coalesce(max(version), 0) FROM schema_migrations`

	qRecordMigration = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`

	// The database's clock, for ClockOffset. clock_timestamp() is the
	// time of the call, not of the transaction's start.
	qClock = `SELECT clock_timestamp()`

	// qNotify sends a notification (notify.go) as part of the transaction
	// it runs in: listeners receive it at the commit, and never for a
	// transaction rolled back. $1 is the channel, $2 the schema.
	qNotify = `SELECT pg_notify($1, $2)`
)

// Schedules.
const (
	scheduleColumns = scheduleColumnsHead + `payload` + scheduleColumnsTail

	// The planner's read: every column but the payload, which it does not
	// use and which may be 256 KiB (an empty bytea in its place, so one
	// scanner reads both).
	dueScheduleColumns = scheduleColumnsHead + `''::bytea` + scheduleColumnsTail

	scheduleColumnsHead = `schedule_id, tenant_id, shard, name, kind, expr, time_zone, anchor,
    dst_gap, dst_repeat, version, state, next_run_at, queue, `
	scheduleColumnsTail = `,
    misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms,
    retry_max_attempts, retry_base_ms, retry_cap_ms, retry_deadline_ms,
    idempotency_key, missed_count, created_at, updated_at`

	qInsertSchedule = `INSERT INTO schedules (` + scheduleColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
    $21, $22, $23, $24, $25, $26, $27, $28)`

	// The tenant is part of every lookup: another tenant's id is not found.
	qGetSchedule = `SELECT ` + scheduleColumns + `
FROM schedules WHERE tenant_id = $1 AND schedule_id = $2`

	// The live schedule of that name (index schedules_name), else the
	// canceled one of that name changed last (schedules_canceled_name):
	// the second arm runs only when the first finds nothing.
	qGetScheduleByName = `(SELECT ` + scheduleColumns + `
    FROM schedules WHERE tenant_id = $1 AND name = $2 AND state <> 'CANCELED')
UNION ALL
(SELECT ` + scheduleColumns + `
    FROM schedules WHERE tenant_id = $1 AND name = $2 AND state = 'CANCELED'
    ORDER BY updated_at DESC, schedule_id DESC LIMIT 1)
LIMIT 1`

	qGetScheduleByIdempotencyKey = `SELECT ` + scheduleColumns + `
FROM schedules WHERE tenant_id = $1 AND idempotency_key = $2`

	// $3 = '' selects every state.
	qListSchedules = `SELECT ` + scheduleColumns + `
FROM schedules
WHERE tenant_id = $1 AND schedule_id > $2 AND ($3::text = '' OR state = $3::text)
ORDER BY schedule_id
LIMIT $4`

	// The conditional write of an update: everything but the keys, the
	// creation time and the planner's missed count, only while the stored
	// version is the one the caller read. Under READ COMMITTED a concurrent
	// update makes this one wait and then re-check version = $27 against
	// the row it committed: two updates from one version cannot both apply.
	qUpdateSchedule = `UPDATE schedules SET
    shard = $1, name = $2, kind = $3, expr = $4, time_zone = $5, anchor = $6,
    dst_gap = $7, dst_repeat = $8, version = $9, state = $10, next_run_at = $11, queue = $12, payload = $13,
    misfire_policy = $14, max_lateness_ms = $15, catch_up_k = $16, overlap_policy = $17, flexible_window_ms = $18,
    retry_max_attempts = $19, retry_base_ms = $20, retry_cap_ms = $21, retry_deadline_ms = $22,
    idempotency_key = $23, updated_at = $24
WHERE tenant_id = $25 AND schedule_id = $26 AND version = $27
RETURNING ` + scheduleColumns

	qScheduleVersion = `SELECT version FROM schedules WHERE tenant_id = $1 AND schedule_id = $2`

	// The first statement of a new version: the row stays locked until
	// the commit, so no other update or planner's advance of the schedule
	// runs in between. FOR NO KEY UPDATE is the lock the UPDATE that
	// writes the version takes anyway (it changes no key column), only
	// taken earlier in the transaction. It reads the state and cursor the
	// superseded version's history row records.
	qLockScheduleVersion = `SELECT version, state, next_run_at FROM schedules
WHERE tenant_id = $1 AND schedule_id = $2 FOR NO KEY UPDATE`

	// A new version cancels its older versions' pending occurrences,
	// from the schedule's open occurrences (index occurrences_open). A row a claim holds (FOR UPDATE) is waited for and
	// then re-checked: by then it is RUNNING, and counted in flight below.
	//
	// A claimable row a run holds has been delivered, though its row says
	// ENQUEUED: it is left, and counted in flight below, as a RUNNING one
	// is. The update folds the schedule's runs first; a run claimed since
	// is told apart by the heads, read after the queues' locks were taken
	// (qLockScheduleQueues), so that no claim moves a head until the
	// update commits.
	qCancelPending = `UPDATE occurrences o SET state = 'CANCELED', finished_at = $1
WHERE o.schedule_id = $2 AND o.open AND o.state IN ('SCHEDULED', 'ENQUEUED', 'RETRY_WAIT') AND o.schedule_version < $3
    AND (o.state = 'SCHEDULED' OR ` + notLeased + `)`

	// The older versions' occurrences still open after the cancel, in a
	// snapshot taken after it: those a worker held when the update ran
	// (index occurrences_open). With one writer (SQLite) they are all
	// RUNNING, and SQLite counts RUNNING. Here a nack may have moved one
	// from RUNNING to RETRY_WAIT between the cancel's snapshot and this
	// one: the cancel saw it RUNNING and left it, and it is counted as in
	// flight, as if the nack had come just after the update (where it would
	// have been left too). Counting RUNNING alone would count it nowhere.
	qCountInFlightOlder = `SELECT count(*) FROM occurrences
WHERE schedule_id = $1 AND open AND schedule_version < $2`

	// The latest firing not canceled: the natural key's index, backwards.
	// Firings of the timetable only: a manual occurrence (trigger_key set)
	// is not one, and its time (when it was triggered) must not move the
	// new version's first firing past timetable firings not yet planned.
	qLastKept = `SELECT scheduled_for FROM occurrences
WHERE schedule_id = $1 AND state <> 'CANCELED' AND trigger_key = ''
ORDER BY scheduled_for DESC, schedule_version DESC
LIMIT 1`
)

// The planner.
const (
	// Index schedules_due, read in order.
	qDueSchedules = `SELECT ` + dueScheduleColumns + `
FROM schedules
WHERE shard = $1 AND state = 'ACTIVE' AND next_run_at <= $2 AND (next_run_at, schedule_id) > ($4, $5)
ORDER BY next_run_at, schedule_id
LIMIT $3`

	// The fence of CommitPlan: the lease is still this one, and live at
	// $4. FOR SHARE holds the row until the plan commits, so no node can
	// take the shard over (AcquireShard updates the row) between this check
	// and the plan's writes; planners of the same lease do not wait for
	// each other.
	qCheckLease = `SELECT 1 FROM shard_leases WHERE shard = $1 AND owner = $2 AND epoch = $3 AND expires_at > $4
FOR SHARE`

	// The plan items' conditional writes, all at once: one array per
	// column of (tenant_id, schedule_id, version, cursor, next_run_at,
	// state, missed), at most one row per schedule; the answer names the
	// schedules written. The schedule must also be in the leased shard $8
	// (the lease fences only its own shard's schedules), and ACTIVE: both
	// compared through the arrays (see Plans above).
	qAdvanceSchedules = `UPDATE schedules AS s SET
    next_run_at = j.next_run_at, state = j.state, missed_count = s.missed_count + j.missed
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[],
        array_fill($8::bigint, ARRAY[cardinality($1::text[])]), array_fill('ACTIVE'::text, ARRAY[cardinality($1::text[])]))
    AS j(tenant_id, schedule_id, version, cursor, next_run_at, state, missed, shard, from_state)
WHERE s.schedule_id = j.schedule_id AND s.tenant_id = j.tenant_id AND s.shard = j.shard
    AND s.state = j.from_state AND s.version = j.version AND s.next_run_at = j.cursor
RETURNING s.schedule_id`
)

// Occurrences.
const (
	// The columns an insert writes: everything of a record.Occurrence but
	// LastError.
	occurrenceInsertColumns = `occurrence_id, tenant_id, schedule_id, schedule_version, scheduled_for,
    available_at, enqueued_at, state, lane, queue, attempt_count, first_claimed_at, finished_at,
    overlap_policy, shard_epoch, attempt_floor, retry_from, trigger_key, dead_reason`

	// The columns a read returns: the inserted ones, then the latest
	// attempt's error (record.Occurrence.LastError), which the row holds
	// (att_error).
	occurrenceColumns = occurrenceInsertColumns + `, att_error`

	// occurrenceColumns qualified by the alias o.
	occurrenceColumnsO = occurrenceColumnsHeadO + `, o.att_error`

	// A claim's read of its candidates: the claim starts a new attempt, which
	// has no error yet, so the previous attempt's is not read (an empty one
	// in its place, so one scanner reads both).
	occurrenceClaimColumnsO = occurrenceColumnsHeadO + `, ''::bytea`

	occurrenceColumnsHeadO = `o.occurrence_id, o.tenant_id, o.schedule_id, o.schedule_version, o.scheduled_for,
    o.available_at, o.enqueued_at, o.state, o.lane, o.queue, o.attempt_count, o.first_claimed_at, o.finished_at,
    o.overlap_policy, o.shard_epoch, o.attempt_floor, o.retry_from, o.trigger_key, o.dead_reason`

	// A batch of occurrences, one array per column of
	// occurrenceInsertColumns (open is generated, seq assigned in array
	// order, the attempt columns take their defaults).
	//
	// ON CONFLICT DO NOTHING names no conflict target on purpose: every
	// unique index is an arbiter, so two transactions inserting the same
	// firing at once (a stale node and the live one) end with one row and
	// no error, where a target of the natural key alone would let the race
	// fail on the primary key. A firing already stored is skipped (its id is
	// derived from the natural key, so the two keys clash together); the
	// store then checks that every row it skipped is the same firing
	// (qIDCollisions), so a hash collision still fails loudly.
	qInsertOccurrences = `INSERT INTO occurrences (` + occurrenceInsertColumns + `)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[],
    $6::bigint[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::bigint[], $13::bigint[],
    $14::text[], $15::bigint[], $16::bigint[], $17::bigint[], $18::text[], $19::text[])
ON CONFLICT DO NOTHING`

	// The first of a batch's skipped ids whose stored row is another
	// occurrence. A timetable firing is the same one when its whole natural
	// key matches. A manual occurrence's id names its schedule and trigger
	// key alone (record.ManualOccurrenceID), so a retried trigger, later and
	// perhaps under a newer version, is the same occurrence when those two
	// match: its scheduled time and version are the first trigger's.
	qIDCollisions = `SELECT u.occurrence_id
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[])
    AS u(occurrence_id, schedule_id, schedule_version, scheduled_for, trigger_key)
JOIN occurrences o ON o.occurrence_id = u.occurrence_id
WHERE o.schedule_id <> u.schedule_id OR o.trigger_key <> u.trigger_key
    OR (u.trigger_key = '' AND (o.schedule_version <> u.schedule_version OR o.scheduled_for <> u.scheduled_for))
LIMIT 1`

	// The first (tenant, schedule) pair of a batch with no such schedule.
	qMissingSchedule = `SELECT u.tenant_id, u.schedule_id
FROM unnest($1::text[], $2::text[]) AS u(tenant_id, schedule_id)
WHERE NOT EXISTS (SELECT 1 FROM schedules s WHERE s.tenant_id = u.tenant_id AND s.schedule_id = u.schedule_id)
LIMIT 1`

	qGetOccurrence = `SELECT ` + occurrenceColumns + `
FROM occurrences WHERE tenant_id = $1 AND occurrence_id = $2`

	// Listings, in (scheduled_for, occurrence_id) order, oldest first (Asc)
	// or newest first (Desc), one page at a time: ($5, $6) is the key of
	// the previous page's last row, and only rows strictly after it in the
	// listing's order come back (a key before every row for the first
	// page: scheduled_for MinInt64 ascending, MaxInt64 descending). Filters
	// are '' for any. The row comparison is repeated as a bound on
	// scheduled_for alone, which an index can seek to (the comparison of
	// the pair is checked on the rows the bound lets through).
	//
	// One schedule's rows walk the natural key's index (schedule_id,
	// scheduled_for, ...) from the key on, in scheduled_for order; the few
	// rows of one second (versions, manual triggers) are put in id order
	// as they come (an incremental sort), so a page reads about as many
	// rows as it returns (filters aside).
	qListScheduleOccurrencesAsc = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE schedule_id = $1 AND tenant_id = $2 AND ($3::text = '' OR state = $3::text) AND ($4::text = '' OR queue = $4::text)
    AND scheduled_for >= $5 AND (scheduled_for, occurrence_id) > ($5, $6)
ORDER BY scheduled_for, occurrence_id
LIMIT $7`

	qListScheduleOccurrencesDesc = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE schedule_id = $1 AND tenant_id = $2 AND ($3::text = '' OR state = $3::text) AND ($4::text = '' OR queue = $4::text)
    AND scheduled_for <= $5 AND (scheduled_for, occurrence_id) < ($5, $6)
ORDER BY scheduled_for DESC, occurrence_id DESC
LIMIT $7`

	// The dead-letter queue of a tenant, or of one of its queues, optionally
	// of one schedule ($3): a walk of the index occurrences_dead, which is
	// in the listing's order, from the page's key (the row comparison is an
	// index bound there) to the page's end.
	qListDeadOccurrencesAsc = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE tenant_id = $1 AND state = 'DEAD' AND ($2::text = '' OR queue = $2::text) AND ($3::text = '' OR schedule_id = $3::text)
    AND scheduled_for >= $4 AND (scheduled_for, occurrence_id) > ($4, $5)
ORDER BY scheduled_for, occurrence_id
LIMIT $6`

	qListDeadOccurrencesDesc = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE tenant_id = $1 AND state = 'DEAD' AND ($2::text = '' OR queue = $2::text) AND ($3::text = '' OR schedule_id = $3::text)
    AND scheduled_for <= $4 AND (scheduled_for, occurrence_id) < ($4, $5)
ORDER BY scheduled_for DESC, occurrence_id DESC
LIMIT $6`

	// Any other tenant-wide listing walks occurrences_tenant_time
	// (0004_listing_indexes.sql), which is in the listing's order, from
	// the page's key (the row comparison is an index bound there) to the
	// page's end. The state and queue filters are checked on the way.
	qListTenantOccurrencesAsc = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE tenant_id = $1 AND ($2::text = '' OR state = $2::text) AND ($3::text = '' OR queue = $3::text)
    AND scheduled_for >= $4 AND (scheduled_for, occurrence_id) > ($4, $5)
ORDER BY scheduled_for, occurrence_id
LIMIT $6`

	qListTenantOccurrencesDesc = `SELECT ` + occurrenceColumns + `
FROM occurrences
WHERE tenant_id = $1 AND ($2::text = '' OR state = $2::text) AND ($3::text = '' OR queue = $3::text)
    AND scheduled_for <= $4 AND (scheduled_for, occurrence_id) < ($4, $5)
ORDER BY scheduled_for DESC, occurrence_id DESC
LIMIT $6`

	// Counts by state: the states with an index have their own statement;
	// the others scan the table.
	qCountRetryWait = `SELECT count(*) FROM occurrences WHERE tenant_id = $1 AND state = 'RETRY_WAIT'`
	qCountDead      = `SELECT count(*) FROM occurrences WHERE tenant_id = $1 AND state = 'DEAD'`
	qCountEnqueued  = `SELECT count(*) FROM occurrences
WHERE tenant_id = $1 AND state IN ('ENQUEUED', 'RETRY_WAIT') AND state = 'ENQUEUED'`
	qCountState = `SELECT count(*) FROM occurrences WHERE tenant_id = $1 AND ($2::text = '' OR state = $2::text)`
)

// Attempts.
const (
	// A page of the attempts of an occurrence in one statement (one
	// snapshot): a page of the history rows numbered above $3, at most $4
	// of them (latest false; a walk of the primary key from the page's
	// key), then the latest attempt, which the occurrence row holds (latest
	// true; claimed_at NULL when none has been recorded), whatever its
	// number: the store keeps it when the page has room
	// (rowcodec.PageAttempts). No latest row at all: the tenant has no
	// such occurrence. The latest attempt's id is derived by the store.
	qListAttempts = `WITH cur AS (
    SELECT attempt_count, worker_id, claimed_at, lease_expires_at, att_finished_at, att_result, att_error
    FROM occurrences WHERE tenant_id = $1 AND occurrence_id = $2)
(SELECT false AS latest, a.attempt, a.attempt_id, a.worker_id, a.claimed_at, a.lease_expires_at,
    a.finished_at, a.result, a.error
FROM attempts a
WHERE a.occurrence_id = $2 AND a.tenant_id = $1 AND a.attempt > $3 AND EXISTS (SELECT 1 FROM cur)
ORDER BY a.attempt
LIMIT $4)
UNION ALL
SELECT true, attempt_count, '', worker_id, claimed_at, lease_expires_at, att_finished_at, att_result, att_error
FROM cur
ORDER BY latest, attempt`

	// A claim moves the latest attempt of occurrences claimed again to the
	// history before it starts the next one: $1 the occurrence ids, $2
	// their attempt ids, rows this claim holds (FOR UPDATE). Only a row
	// with a recorded attempt is copied (an occurrence stored with an
	// attempt count but no attempt has none), and that attempt has always
	// ended: a claimable occurrence holds no live attempt.
	qArchiveAttempts = `INSERT INTO attempts (occurrence_id, attempt, attempt_id, tenant_id, worker_id, claimed_at, lease_expires_at,
    finished_at, result, error)
SELECT o.occurrence_id, o.attempt_count, j.attempt_id, o.tenant_id, o.worker_id, o.claimed_at, o.lease_expires_at,
    o.att_finished_at, o.att_result, o.att_error
FROM unnest($1::text[], $2::text[]) AS j(occurrence_id, attempt_id)
JOIN occurrences o ON o.occurrence_id = j.occurrence_id
WHERE o.claimed_at IS NOT NULL`
)

// The queue.
const (
	// Claim candidates of one lane, oldest first, from the index
	// occurrences_claim; ($5, $6) is the (available_at, seq) after which
	// to continue when a pass took fewer than it read (overlap). The
	// payload is the schedule's current one.
	//
	// FOR UPDATE SKIP LOCKED: each candidate is locked by this claim until
	// it commits, and a row another claim holds is passed over rather than
	// waited for, so concurrent claimers (of one node or several) take
	// disjoint sets. A row that changed since the statement's snapshot is
	// re-checked against the WHERE before it is returned.
	qClaimCandidates = qClaimCandidatesHeld + `
FOR UPDATE OF o SKIP LOCKED`

	// The same read by a claim that holds the queue's lock (LaneHead,
	// tx_runs.go): no other claim of the lane runs, and every other write
	// that could change a claimable row of it waits for the lock, so the
	// candidates are this claim's without a row lock, and a lease of them
	// writes nothing to their rows. The position is sought, never walked
	// to (queries_runs.go).
	qClaimCandidatesHeld = `SELECT o.seq, ` + occurrenceClaimColumnsO + `,
    (SELECT s.payload FROM schedules s WHERE s.schedule_id = o.schedule_id)
FROM occurrences o
WHERE o.tenant_id = $1 AND o.queue = $2 AND o.lane = $3 AND o.state IN ('ENQUEUED', 'RETRY_WAIT')
    AND o.available_at <= $4 AND (o.available_at, o.seq) > ($5::bigint, $6::bigint)
ORDER BY o.available_at, o.seq
LIMIT $7`

	// Claims a set of rows this transaction holds (FOR UPDATE) and read as
	// claimable, each under a new attempt that the row itself records
	// (worker $2, lease until $3).
	qClaimRows = `UPDATE occurrences SET
    state = 'RUNNING', attempt_count = attempt_count + 1, first_claimed_at = coalesce(first_claimed_at, $1),
    worker_id = $2, claimed_at = $1, lease_expires_at = $3, att_finished_at = NULL, att_result = NULL, att_error = ''::bytea
WHERE occurrence_id = ANY($4::text[])`

	// Overlap decisions are serialized per schedule by a transaction-scoped
	// advisory lock on a key derived from the schema and the schedule id
	// ($1, the store's prefix, then each of the schedule ids $2): a claim
	// reads the overlap facts of a skip_if_running or queue_one candidate
	// (qOverlapFacts) only once it holds its schedule's key, and keeps it
	// until it commits, so the next claimer's facts (a new snapshot, READ
	// COMMITTED) show the first one's RUNNING rows. The try form never
	// waits: a schedule whose key another claim holds is answered false,
	// and its candidates wait for a later claim (store.ClaimCandidate's
	// Contended), as SKIP LOCKED leaves a locked row, and two claims can
	// never deadlock on keys taken in different orders. The key does not
	// lock the schedule's row, so claims never wait for the planner or an
	// update.
	qTryLockSchedules = `SELECT u.schedule_id, pg_try_advisory_xact_lock(hashtextextended($1::text || u.schedule_id, 0))
FROM unnest($2::text[]) AS u(schedule_id)`

	// The overlap facts of candidates $1 (occurrence ids), read after
	// their schedules' keys were taken (qTryLockSchedules): whether another
	// occurrence of the schedule is RUNNING, and how many of its pending
	// ones come before each candidate (by scheduled_for, version, then
	// trigger key in byte order), both among its open occurrences (index
	// occurrences_open), never through its history.
	qOverlapFacts = `SELECT c.occurrence_id,
    EXISTS (SELECT 1 FROM occurrences r
        WHERE r.schedule_id = c.schedule_id AND r.open AND (r.state = 'RUNNING') IS TRUE),
    (SELECT count(*) FROM occurrences p
        WHERE p.schedule_id = c.schedule_id AND p.open AND p.state IN ('SCHEDULED', 'ENQUEUED', 'RETRY_WAIT')
            AND (p.scheduled_for, p.schedule_version, p.trigger_key COLLATE "C")
                < (c.scheduled_for, c.schedule_version, c.trigger_key COLLATE "C"))
FROM occurrences c
WHERE c.occurrence_id = ANY($1::text[])`

	// The first firing of the timetable not yet delivered: the earliest
	// of tenant $1's schedule $2's occurrences of version $3 that are
	// ENQUEUED, never claimed and not manual, among its open ones (index
	// occurrences_open). The schedule is looked up by tenant and id, so
	// another tenant's finds no row and the answer is NULL. The state's
	// test is IS TRUE (see Plans above: no other partial index is proven
	// from it). The minimum is of scheduled_for + 0, an expression no
	// index is ordered by: of min(scheduled_for) the planner may make a
	// walk of the natural key's index in time order up to the first row
	// that matches, which reads the schedule's whole history first, and
	// it did so when the statistics still showed a burst as ENQUEUED
	// after it had been acked (TestFirstUndeliveredPlan).
	//
	// An occurrence a run holds has been delivered, though its row says
	// ENQUEUED with no attempt: it is not one (notLeased).
	qFirstUndelivered = `SELECT min(o.scheduled_for + 0) FROM occurrences o
WHERE o.schedule_id = (SELECT schedule_id FROM schedules WHERE tenant_id = $1 AND schedule_id = $2) AND o.open
    AND (o.state = 'ENQUEUED') IS TRUE AND o.attempt_count = 0 AND o.trigger_key = '' AND o.schedule_version = $3
    AND ` + notLeased

	// Candidates the overlap rule skips: rows $2 this transaction holds,
	// finished at $1.
	qSkipOverlap = `UPDATE occurrences SET state = 'SKIPPED_OVERLAP', finished_at = $1 WHERE occurrence_id = ANY($2::text[])`

	// A heartbeat extends the current attempt (RUNNING at that attempt
	// number) and reads the schedule's news for the worker.
	qHeartbeat = `UPDATE occurrences o SET lease_expires_at = $1
WHERE o.occurrence_id = $2 AND o.attempt_count = $3 AND o.tenant_id = $4 AND (o.state = 'RUNNING') IS TRUE
RETURNING o.lease_expires_at,
    coalesce((SELECT s.version > o.schedule_version FROM schedules s WHERE s.schedule_id = o.schedule_id), false),
    coalesce((SELECT s.state = 'CANCELED' FROM schedules s WHERE s.schedule_id = o.schedule_id), false)`

	// A batch of finishes: one array per column of (occurrence_id, attempt,
	// tenant_id, state, result, error, now, retry_at, dead_reason), at most
	// one row per occurrence. Each applies only while its attempt is the
	// occurrence's current one and the occurrence RUNNING (the fencing
	// test, re-checked after waiting for a concurrent writer of the row);
	// the answer is the occurrences written. The attempt ends in the row
	// (att_*). SUCCEEDED, DEAD and CANCELED finish the occurrence, DEAD
	// with its reason; RETRY_WAIT makes it claimable again at retry_at and
	// leaves the rest alone.
	qFinishBatch = `UPDATE occurrences o SET
    state = j.state,
    finished_at = CASE WHEN j.state = 'RETRY_WAIT' THEN o.finished_at ELSE j.now END,
    available_at = CASE WHEN j.state = 'RETRY_WAIT' THEN j.retry_at ELSE o.available_at END,
    dead_reason = CASE WHEN j.state = 'DEAD' THEN j.dead_reason ELSE '' END,
    att_finished_at = j.now, att_result = j.result, att_error = j.error
FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::bigint[], $8::bigint[], $9::text[],
        array_fill('RUNNING'::text, ARRAY[cardinality($1::text[])]))
    AS j(occurrence_id, attempt, tenant_id, state, result, error, now, retry_at, dead_reason, from_state)
WHERE o.occurrence_id = j.occurrence_id AND o.tenant_id = j.tenant_id
    AND o.state = j.from_state AND o.attempt_count = j.attempt
RETURNING ` + occurrenceColumnsO

	// A finish that found nothing to write: how did that attempt end? The
	// latest attempt is in the occurrence row, older ones in the history;
	// NULL when it has not ended or does not exist.
	qFinishedAttempt = `SELECT coalesce(
    (SELECT att_result FROM occurrences WHERE tenant_id = $1 AND occurrence_id = $2 AND attempt_count = $3),
    (SELECT result FROM attempts WHERE occurrence_id = $2 AND attempt = $3 AND tenant_id = $1))`

	qOccurrenceState = `SELECT state FROM occurrences WHERE tenant_id = $1 AND occurrence_id = $2`

	// Expired leases, oldest first (index occurrences_lease), with the
	// facts deciding the occurrence's fate needs (store.ExpiredAttempt):
	// its retry counters and its schedule's version, state and retry
	// policy. SKIP LOCKED:
	// a row a finish or a heartbeat is writing right now is left to the
	// next pass rather than waited for (and the rescuer never deadlocks
	// with a finish batch).
	qExpiredAttempts = `SELECT o.occurrence_id, o.tenant_id, o.attempt_count, o.attempt_floor, o.retry_from, o.schedule_version,
    s.version, s.state, s.retry_max_attempts, s.retry_base_ms, s.retry_cap_ms, s.retry_deadline_ms
FROM occurrences o
JOIN schedules s ON s.schedule_id = o.schedule_id
WHERE o.state = 'RUNNING' AND o.lease_expires_at <= $1
ORDER BY o.lease_expires_at
LIMIT $2
FOR UPDATE OF o SKIP LOCKED`

	// Ends the expired attempts read above as the engine decided, at $1:
	// one array per column of
	// (occurrence_id, attempt, state, dead_reason), state one of ENQUEUED
	// (claimable again at $1), DEAD (with its reason) or CANCELED (both
	// finished at $1).
	qExpireAttempts = `UPDATE occurrences o SET
    state = j.state,
    available_at = CASE WHEN j.state = 'ENQUEUED' THEN $1 ELSE o.available_at END,
    finished_at = CASE WHEN j.state = 'ENQUEUED' THEN o.finished_at ELSE $1 END,
    dead_reason = j.dead_reason,
    att_finished_at = $1, att_result = 'LEASE_EXPIRED'
FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], array_fill('RUNNING'::text, ARRAY[cardinality($2::text[])]))
    AS j(occurrence_id, attempt, state, dead_reason, from_state)
WHERE o.occurrence_id = j.occurrence_id AND o.state = j.from_state AND o.attempt_count = j.attempt`

	// What deciding a retryable nack reads: the occurrence $2 of tenant
	// $1, locked (FOR UPDATE: a finish or an expiry of it waits for this
	// transaction), then its schedule $1, held FOR SHARE so that no update
	// can give it a newer version before the nack is written.
	qLockOccurrence = `SELECT ` + occurrenceColumns + `
FROM occurrences WHERE tenant_id = $1 AND occurrence_id = $2
FOR UPDATE`
	qNackSchedule = `SELECT version, state, retry_max_attempts, retry_base_ms, retry_cap_ms, retry_deadline_ms
FROM schedules WHERE schedule_id = $1
FOR SHARE`

	// A DEAD occurrence back on the queue as the engine decided (a
	// replay): available at $1, attempt floor $2, retry deadline counted
	// from $3, out of the dead-letter queue. The last attempt's error stays
	// (it is still the latest attempt's).
	qRequeueDead = `UPDATE occurrences SET
    state = 'ENQUEUED', available_at = $1, finished_at = NULL, attempt_floor = $2, retry_from = $3,
    dead_reason = ''
WHERE tenant_id = $4 AND occurrence_id = $5 AND (state = 'DEAD') IS TRUE
RETURNING ` + occurrenceColumns

	// Up to $4 DEAD occurrences of tenant $1, of schedule $2 and queue $3
	// ('' for any), oldest first, from the index occurrences_dead (IS
	// TRUE: the row's key decides the plan, see Plans). SKIP LOCKED: a row
	// a replay holds is left to it.
	qDeadOccurrences = `SELECT occurrence_id FROM occurrences
WHERE tenant_id = $1 AND (state = 'DEAD') IS TRUE AND ($2::text = '' OR schedule_id = $2::text) AND ($3::text = '' OR queue = $3::text)
ORDER BY scheduled_for, occurrence_id
LIMIT $4
FOR UPDATE SKIP LOCKED`

	// Tenant $1's occurrences $3 that are still DEAD leave the dead-letter
	// queue CANCELED at $2, keeping their dead reason and attempts as
	// history.
	qCancelDead = `UPDATE occurrences SET state = 'CANCELED', finished_at = $2
WHERE tenant_id = $1 AND occurrence_id = ANY($3::text[]) AND (state = 'DEAD') IS TRUE`

	// The earliest claimable time of each lane of the queue after its
	// head (lane_heads has a row for every lane that ever had a claimable
	// occurrence; the rows before the head are held by runs): a seek of
	// occurrences_claim per lane. And the earliest of those.
	qNextAvailable = `SELECT min(f.available_at) FROM lane_heads h
CROSS JOIN LATERAL (SELECT o.available_at FROM occurrences o
    WHERE ` + laneOfHead + ` AND (o.available_at, o.seq) > (h.head_at, h.head_seq)
    ORDER BY o.available_at, o.seq LIMIT 1) AS f
WHERE h.tenant_id = $1 AND h.queue = $2`

	// The claimable rows (alias o) of lane_heads row h's lane.
	laneOfHead = `o.tenant_id = h.tenant_id AND o.queue = h.queue AND o.lane = h.lane AND o.state IN ('ENQUEUED', 'RETRY_WAIT')`
)

// Seeing it (store.StatsStore). Snapshot's statements run together in one
// read-only transaction (one snapshot of the database, no row locks); each
// reads the open occurrences, the DEAD ones or the schedules due within
// the backlog's window through a partial index, never the history. $1 is
// the snapshot's now (in the due backlog, where its minutes count from);
// $2 the end of the due backlog's window; the tenant of a tenant's
// statements (SnapshotParams.TenantID) is the last argument. Every
// tenant's statements and one tenant's share their outer selects (the
// fragments below) and differ in the rows they read: the whole cluster's
// through the indexes of every open occurrence, one tenant's through the
// indexes that lead with the tenant, never reading another tenant's rows.
const (
	// Depth by tenant, queue, lane and state of the rows of d, with the
	// claimable ones due at $1.
	snapshotDepth = `SELECT tenant_id, queue, lane, state, count(*),
    count(*) FILTER (WHERE state IN ('ENQUEUED', 'RETRY_WAIT') AND available_at <= $1)
FROM (`
	snapshotDepthEnd = `) AS d
GROUP BY tenant_id, queue, lane, state
ORDER BY tenant_id, queue, lane, state`
	snapshotDepthRow = `SELECT tenant_id, queue, lane, state, available_at FROM occurrences WHERE `

	// Every tenant's: the open occurrences (index occurrences_open) and
	// the DEAD ones (index occurrences_dead).
	qSnapshotDepth = snapshotDepth + snapshotDepthRow + `open
    UNION ALL
    ` + snapshotDepthRow + `state = 'DEAD'` + snapshotDepthEnd

	// A tenant's ($2), state by state, each through an index that leads
	// with the tenant and holds those states alone: the claimable
	// (occurrences_claim), RUNNING (occurrences_running), SCHEDULED
	// (occurrences_scheduled) and DEAD (occurrences_dead) ones.
	qSnapshotTenantDepth = snapshotDepth + snapshotDepthRow + `tenant_id = $2 AND ` + snapshotClaimable + `
    UNION ALL
    ` + snapshotDepthRow + `tenant_id = $2 AND state = 'RUNNING'
    UNION ALL
    ` + snapshotDepthRow + `tenant_id = $2 AND state = 'SCHEDULED'
    UNION ALL
    ` + snapshotDepthRow + `tenant_id = $2 AND state = 'DEAD'` + snapshotDepthEnd

	// The claimable occurrences: occurrences_claim's WHERE.
	snapshotClaimable = `state IN ('ENQUEUED', 'RETRY_WAIT')`

	// The claimable occurrence due at $1 with the earliest available_at
	// (ties in insertion order) that no run holds: per lane (lane_heads
	// has a row for every lane that ever had a claimable occurrence), the
	// first due after the lane's head, a seek of occurrences_claim that
	// reads the index alone; the earliest of those; then that row. Of
	// every tenant, or of the tenant $2 (the tenant's rows of lane_heads).
	qSnapshotOldestReady       = snapshotOldestReady + snapshotOldestReadyEnd
	qSnapshotTenantOldestReady = snapshotOldestReady + `
    WHERE h.tenant_id = $2` + snapshotOldestReadyEnd
	snapshotOldestReady = `SELECT ` + occurrenceColumnsO + `
FROM (SELECT h.tenant_id, h.queue, h.lane, f.available_at, f.seq FROM lane_heads h
    CROSS JOIN LATERAL (SELECT o.available_at, o.seq FROM occurrences o
        WHERE ` + laneOfHead + ` AND o.available_at <= $1 AND (o.available_at, o.seq) > (h.head_at, h.head_seq)
        ORDER BY o.available_at, o.seq LIMIT 1) AS f`
	snapshotOldestReadyEnd = `
    ORDER BY f.available_at, f.seq LIMIT 1) AS w
JOIN occurrences o ON o.tenant_id = w.tenant_id AND o.queue = w.queue AND o.lane = w.lane
    AND o.state IN ('ENQUEUED', 'RETRY_WAIT') AND o.available_at = w.available_at AND o.seq = w.seq`

	// Each queue's oldest ready occurrence's available_at (a queue with
	// none ready has no row), by tenant and queue: per lane (lane_heads),
	// the first due after the lane's head, the oldest ready's seek of
	// occurrences_claim; then the earliest of each queue's lanes. Of every
	// tenant, or of the tenant $2 (the tenant's rows of lane_heads).
	qSnapshotQueueOldestReady       = snapshotQueueOldestReady + snapshotQueueOldestReadyEnd
	qSnapshotTenantQueueOldestReady = snapshotQueueOldestReady + `
WHERE h.tenant_id = $2` + snapshotQueueOldestReadyEnd
	snapshotQueueOldestReady = `SELECT h.tenant_id, h.queue, min(f.available_at) FROM lane_heads h
CROSS JOIN LATERAL (SELECT o.available_at FROM occurrences o
    WHERE ` + laneOfHead + ` AND o.available_at <= $1 AND (o.available_at, o.seq) > (h.head_at, h.head_seq)
    ORDER BY o.available_at, o.seq LIMIT 1) AS f`
	snapshotQueueOldestReadyEnd = `
GROUP BY h.tenant_id, h.queue
ORDER BY h.tenant_id, h.queue`

	// The firings due in [$1, $2), by minute from $1 (the snapshot's
	// SnapshotParams.BacklogFrom, or its now): the unclaimed
	// occurrences by available_at, and the ACTIVE
	// schedules by their cursor. The index schedules_due leads with the
	// shard, so the schedules are read as one range of cursors per shard,
	// the shards named as an array (0 to the highest shard of an ACTIVE
	// schedule, the same index read backwards for one row): the read costs
	// the schedules due in the window, not every schedule. (A join to
	// generate_series instead is planned for 1,000 shards, and the planner
	// then prefers to scan every schedule.)
	//
	// The claimable occurrences are read per lane after its head
	// (snapshotDueClaimable), the SCHEDULED ones from
	// occurrences_scheduled.
	qSnapshotDueBacklog = snapshotDue + snapshotDueClaimable + `
    UNION ALL
    SELECT available_at FROM occurrences
        WHERE state = 'SCHEDULED' AND ` + snapshotDueWindow + `
    UNION ALL
    SELECT next_run_at FROM schedules
        WHERE shard = ANY (ARRAY(SELECT generate_series(0, (SELECT max(shard) FROM schedules WHERE state = 'ACTIVE'))))
            AND ` + snapshotActiveInWindow + snapshotDueEnd

	// A tenant's ($3): its claimable occurrences (its rows of lane_heads,
	// then occurrences_claim) and its SCHEDULED ones (index
	// occurrences_scheduled), and its ACTIVE schedules, read as one range
	// of schedules_due on each shard it has live schedules on (its rows of
	// tenant_live_schedules, one range of the key): the read costs the
	// schedules due in the window on the tenant's shards. The tenant is
	// checked outside the schedules' subquery, behind OFFSET 0 (which the
	// planner does not push a condition through): given the tenant there,
	// the planner may read a tenant's schedules by schedules_name instead,
	// every one it ever made that is not canceled, the COMPLETED ones too.
	qSnapshotTenantDueBacklog = snapshotDue + snapshotDueClaimable + `
        WHERE h.tenant_id = $3
    UNION ALL
    SELECT available_at FROM occurrences
        WHERE tenant_id = $3 AND state = 'SCHEDULED' AND ` + snapshotDueWindow + `
    UNION ALL
    SELECT c.next_run_at FROM (SELECT next_run_at, tenant_id FROM schedules
            WHERE shard = ANY (ARRAY(SELECT shard FROM tenant_live_schedules WHERE tenant_id = $3 AND live > 0))
                AND ` + snapshotActiveInWindow + `
            OFFSET 0) AS c
        WHERE c.tenant_id = $3` + snapshotDueEnd

	snapshotDue = `SELECT (t - $1) / 60000 AS minute, count(*)
FROM (`
	snapshotDueEnd = `) AS due
GROUP BY 1`
	snapshotDueWindow = `available_at >= $1 AND available_at < $2`

	// The claimable occurrences in the window that no run holds, lane by
	// lane (lane_heads): those after the head's position and at or after
	// $1, as one position to seek (the later of the two; a plain bound on
	// available_at beside it would not be the one the scan starts from,
	// see queries_runs.go), up to $2.
	snapshotDueClaimable = `SELECT f.available_at AS t FROM lane_heads h
    CROSS JOIN LATERAL (SELECT o.available_at FROM occurrences o
        WHERE ` + laneOfHead + ` AND o.available_at < $2
            AND (o.available_at, o.seq) > (greatest(h.head_at, $1::bigint - 1),
                CASE WHEN h.head_at >= $1::bigint THEN h.head_seq ELSE 9223372036854775807 END)) AS f`
	snapshotActiveInWindow = `state = 'ACTIVE' AND next_run_at >= $1 AND next_run_at < $2`

	// A batch of per-minute rows, one array per column of (node_id,
	// minute, data), at most one row per key.
	qUpsertStatMinutes = `INSERT INTO stat_minutes (node_id, minute, data)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[])
ON CONFLICT (minute, node_id) DO UPDATE SET data = excluded.data`

	qPruneStatMinutes = `DELETE FROM stat_minutes WHERE minute < $1`

	qReadStatMinutes = `SELECT node_id, minute, data FROM stat_minutes WHERE minute >= $1 ORDER BY minute, node_id`
)

// Nodes (store.NodeStore).
const (
	nodeColumns = `node_id, address, started_at, last_heartbeat, expires_at, clock_offset_ms`

	// An upsert: a node always owns its own row. started_at is written
	// only by the insert.
	qHeartbeatNode = `INSERT INTO nodes (node_id, address, started_at, last_heartbeat, expires_at, clock_offset_ms)
VALUES ($1, $2, $3, $3, $4, $5)
ON CONFLICT (node_id) DO UPDATE SET
    address = excluded.address,
    last_heartbeat = excluded.last_heartbeat,
    expires_at = excluded.expires_at,
    clock_offset_ms = excluded.clock_offset_ms
RETURNING ` + nodeColumns

	qListNodes = `SELECT ` + nodeColumns + ` FROM nodes ORDER BY node_id`

	qRemoveNode = `DELETE FROM nodes WHERE node_id = $1`

	// The dead nodes (store.NodeStore.RemoveDeadNodes): $1 the node id
	// ('' for any), $2 the heartbeat bound, $3 now. A node owning a shard
	// lease live at now is kept. A heartbeat committed meanwhile makes
	// the row's condition false when it is checked again: the node stays.
	qRemoveDeadNodes = `DELETE FROM nodes n
WHERE ($1::text = '' OR n.node_id = $1::text) AND n.last_heartbeat < $2 AND n.expires_at <= $3
    AND NOT EXISTS (SELECT 1 FROM shard_leases l WHERE l.owner = n.node_id AND l.expires_at > $3)
RETURNING n.node_id`
)

// The schedules' version history (store.HistoryStore, store.HistoryTx):
// the table schedule_versions, keyed (schedule_id, version).
const (
	versionColumns = `schedule_id, version, tenant_id, kind, expr, time_zone, anchor, dst_gap, dst_repeat, state,
    misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms, written_at, starts_after,
    first_firing, superseded_at, ends_at, planned_until`

	qInsertVersion = `INSERT INTO schedule_versions (` + versionColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`

	// Only an open row: a closed one is history.
	qCloseVersion = `UPDATE schedule_versions SET superseded_at = $3, ends_at = $4, planned_until = $5
WHERE schedule_id = $1 AND version = $2 AND superseded_at IS NULL`

	// The key's order, from after ($3, $4); one schedule's rows are one
	// range of the key (qListScheduleVersions), every schedule's a walk
	// of it.
	qListVersions = `SELECT ` + versionColumns + ` FROM schedule_versions
WHERE ($1::text = '' OR tenant_id = $1) AND (schedule_id, version) > ($3::text, $4::bigint) AND $2::text = ''
ORDER BY schedule_id, version
LIMIT $5`
	qListScheduleVersions = `SELECT ` + versionColumns + ` FROM schedule_versions
WHERE ($1::text = '' OR tenant_id = $1) AND schedule_id = $2
    AND version > (CASE WHEN $3::text < $2::text THEN 0 ELSE $4::bigint END) AND $3::text <= $2::text
ORDER BY version
LIMIT $5`
)

// Simulated outages (store.OutageStore). The table is tiny (a row per
// outage ever asked for); the partial index keeps the read of the one in
// progress, made every planner pass, to the rows not canceled.
const (
	// The columns rowcodec.ScanOutage reads, in its order.
	outageColumns = `outage_id, shards, started_at, ends_at, canceled_at, created_by`

	// A new outage, only when none is in progress at its start ($2).
	qInsertOutage = `INSERT INTO simulated_outages (shards, started_at, ends_at, created_by)
SELECT $1, $2, $3, $4
WHERE NOT EXISTS (SELECT 1 FROM simulated_outages WHERE canceled_at IS NULL AND ends_at > $2)
RETURNING outage_id`

	// The outage in progress at $1, the latest started.
	qCurrentOutage = `SELECT ` + outageColumns + ` FROM simulated_outages
WHERE canceled_at IS NULL AND ends_at > $1
ORDER BY started_at DESC, outage_id DESC LIMIT 1`

	// Cancel every outage in progress at $1.
	qCancelOutages = `UPDATE simulated_outages SET canceled_at = $1
WHERE canceled_at IS NULL AND ends_at > $1
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
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

	// Only over the version read: $12 is the previous version.
	qUpdateTenant = `UPDATE tenants SET state = $2, weight = $3, q_active_schedules = $4,
    q_firings_per_second = $5, q_running = $6, q_catch_up_per_second = $7,
    q_api_requests_per_second = $8, q_retention_seconds = $9, updated_at = $10, version = $11
WHERE tenant_id = $1 AND version = $12`

	qGetTenant   = `SELECT ` + tenantColumns + ` FROM tenants WHERE tenant_id = $1`
	qListTenants = `SELECT ` + tenantColumns + ` FROM tenants ORDER BY tenant_id`

	qInsertToken = `INSERT INTO tenant_tokens (` + tokenColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7)`

	// The token and its tenant's state, in one read: k's columns are
	// named in tokenColumns' order (both tables have tenant_id and
	// created_at).
	qTokenByHash = `SELECT k.token_hash, k.tenant_id, k.name, k.role, k.created_at, k.last_used_at, k.revoked_at,
    COALESCE(t.state, '')
FROM tenant_tokens k LEFT JOIN tenants t ON t.tenant_id = k.tenant_id
WHERE k.token_hash = $1`
	qListTokens = `SELECT ` + tokenColumns + ` FROM tenant_tokens WHERE tenant_id = $1
ORDER BY created_at, name, token_hash`

	// Only forward: two nodes touching at once keep the later use.
	qTouchToken = `UPDATE tenant_tokens SET last_used_at = $2
WHERE token_hash = $1 AND (last_used_at IS NULL OR last_used_at < $2)`

	// The tenant's unrevoked tokens named $2, or all of them when $2 is ''.
	qRevokeTokens = `UPDATE tenant_tokens SET revoked_at = $3
WHERE tenant_id = $1 AND ($2 = '' OR name = $2) AND revoked_at IS NULL`
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
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

	// A page of the log in id order, one statement per index walked
	// (rowcodec.AuditListing picks one): $1 since (ms), $2 after
	// id, $3 limit, $4 the seek, $5 tenant ('' = all), $6 target. The whole
	// log walks the primary key, a tenant's rows audit_log_tenant, a
	// target's audit_log_target (0004_listing_indexes.sql); the tenant is
	// checked on a target's few rows.
	qListAudit = `SELECT ` + auditColumns + ` FROM audit_log
WHERE ` + auditWalk + auditPage
	qListAuditTenant = `SELECT ` + auditColumns + ` FROM audit_log
WHERE tenant_id = $5 AND ` + auditWalk + auditPage
	qListAuditTarget = `SELECT ` + auditColumns + ` FROM audit_log
WHERE target = $6 AND ($5 = '' OR tenant_id = $5) AND ` + auditWalk + auditPage

	// The walk starts after the page's key, or after the last row stamped
	// before the seek when that is later (store.AuditClockSlack): one seek
	// of audit_log_at, run once (an InitPlan). since is checked on the rows
	// walked, never used to pick an index (at + 0): a walk by time would
	// sort the whole range.
	auditWalk = `at + 0 >= $1
    AND audit_id > GREATEST($2, COALESCE((SELECT audit_id FROM audit_log WHERE at < $4 ORDER BY at DESC LIMIT 1), 0))`
	auditPage = `
ORDER BY audit_id LIMIT $3`

	// At most $2 rows older than $1, the oldest first.
	qPurgeAudit = `DELETE FROM audit_log WHERE audit_id IN (
    SELECT audit_id FROM audit_log WHERE at < $1 ORDER BY at, audit_id LIMIT $2)`
)

// The statistics of the occurrences table (analyze.go).
const qAnalyzeOccurrences = `ANALYZE occurrences`
