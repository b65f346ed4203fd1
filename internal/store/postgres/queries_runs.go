package postgres

// The statements of leased runs (store.RunTx; docs/engine.md, "Leased
// runs"; migrations/0005_runs.sql). A position is (available_at, seq) in
// a lane, the order of occurrences_claim; a run's range [first, last]
// includes both ends.
//
// Positions are compared as row values, (available_at, seq) > ($a, $s):
// PostgreSQL's btree positions a scan on a row comparison of consecutive
// index columns, so "the rows after a position" is a seek to it, never a
// walk over the rows of its millisecond before it (at the top of the
// hour, the runs not yet folded hold hundreds of thousands of those). A
// row comparison must be the only lower bound on available_at of its
// scan: with a plain bound beside it, the scan starts at the row
// comparison's position even where the plain bound is later
// (TestRunPlans). And the planner cannot estimate a row comparison, so a
// range of positions read whole is read through ORDER BY ... LIMIT, which
// makes the walk of the index in its order the plan.
const (
	// A queue's lock (migrations/0005_runs.sql), exclusive: the claim's.
	// $1 is the schema, $2 the tenant, $3 the queue. The try form answers
	// false rather than wait.
	qLockQueue    = `SELECT true FROM (SELECT pg_advisory_xact_lock(lane_lock_key($1, $2, $3))) AS k`
	qTryLockQueue = `SELECT pg_try_advisory_xact_lock(lane_lock_key($1, $2, $3))`

	// The queue locks of a schedule's open occurrences, shared, in order
	// (index occurrences_open): a cancel of its rows takes them before it
	// reads which of them runs hold, so that no claim leases one
	// meanwhile. $1 is the schema, $2 the schedule.
	qLockScheduleQueues = `SELECT count(pg_advisory_xact_lock_shared(lane_lock_key($1, q.tenant_id, q.queue)))
FROM (SELECT DISTINCT tenant_id, queue FROM occurrences WHERE schedule_id = $2 AND open ORDER BY tenant_id, queue) AS q`

	// The lane's head, read in a statement after the lock.
	qLaneHead = `SELECT head_at, head_seq FROM lane_heads WHERE tenant_id = $1 AND queue = $2 AND lane = $3`

	// A new run, and its lane's head moved to its last position, in one
	// statement: the run's id, and 1 when the head moved (0: the run ends
	// at or before the head).
	qInsertRun = `WITH r AS (
    INSERT INTO runs (tenant_id, queue, lane, first_at, first_seq, last_at, last_seq, n, worker_id, claimed_at, lease_expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
    RETURNING id),
h AS (
    INSERT INTO lane_heads AS h (tenant_id, queue, lane, head_at, head_seq) VALUES ($1, $2, $3, $6, $7)
    ON CONFLICT (tenant_id, queue, lane) DO UPDATE SET head_at = excluded.head_at, head_seq = excluded.head_seq
    WHERE (excluded.head_at, excluded.head_seq) > (h.head_at, h.head_seq)
    RETURNING 1)
SELECT (SELECT id FROM r), (SELECT count(*) FROM h)`

	// Candidates put back on their lane at $4 (the floor moves them past
	// the head when $4 is not): the lane's rows at positions ($5[i],
	// $6[i]) still claimable, each one seek of occurrences_claim.
	qRequeueRows = `UPDATE occurrences o SET available_at = $4
FROM unnest($5::bigint[], $6::bigint[]) AS p(at, seq)
WHERE o.tenant_id = $1 AND o.queue = $2 AND o.lane = $3 AND o.state IN ('ENQUEUED', 'RETRY_WAIT')
    AND o.available_at = p.at AND o.seq = p.seq`

	// The runs a filter selects, locked until the transaction ends (FOR
	// NO KEY UPDATE: the lock an ack's count of them takes anyway), so
	// that a fold and an ack of one run, on any node, run one after the
	// other: an ack never lands in a run a fold has read the acks of. By
	// id where the caller waits, so that two callers lock in one order.
	// The sweep's and the background fold's selections pass over a run
	// another transaction holds (SKIP LOCKED): a later pass takes it, and
	// they never wait for a worker's ack.
	runColumns = `id, tenant_id, queue, lane, first_at, first_seq, last_at, last_seq, n, acked, worker_id, claimed_at,
    lease_expires_at`
	qRunsByID     = `SELECT ` + runColumns + ` FROM runs WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE`
	qRunsAll      = `SELECT ` + runColumns + ` FROM runs ORDER BY id LIMIT $1 FOR NO KEY UPDATE`
	qRunsOfTenant = `SELECT ` + runColumns + ` FROM runs WHERE tenant_id = $1 ORDER BY id LIMIT $2 FOR NO KEY UPDATE`
	qRunsExpired  = `SELECT ` + runColumns + ` FROM runs WHERE lease_expires_at <= $1 ORDER BY lease_expires_at, id LIMIT $2
FOR NO KEY UPDATE SKIP LOCKED`
	qRunsFinished = `SELECT ` + runColumns + ` FROM runs WHERE acked = n AND claimed_at < $1 ORDER BY id LIMIT $2
FOR NO KEY UPDATE SKIP LOCKED`

	qRunAcks = `SELECT run_id, first_at, first_seq, last_at, last_seq, n, acked_at FROM run_acks WHERE run_id = $1
ORDER BY first_at, first_seq`

	// Ack ranges, one array per column, and their counts added to their
	// runs, in one statement: the answer is how many runs it counted on.
	qAppendRunAcks = `WITH a AS (
    INSERT INTO run_acks (run_id, first_at, first_seq, last_at, last_seq, n, acked_at)
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
    RETURNING run_id, n),
c AS (
    UPDATE runs r SET acked = r.acked + s.n
    FROM (SELECT run_id, sum(n) AS n FROM a GROUP BY run_id) AS s
    WHERE r.id = s.run_id
    RETURNING 1)
SELECT count(*) FROM c`

	qExtendRun = `UPDATE runs SET lease_expires_at = $2 WHERE id = $1`

	// A run and its ack ranges.
	qDeleteRun = `WITH a AS (DELETE FROM run_acks WHERE run_id = $1)
DELETE FROM runs WHERE id = $1`

	// The claimable rows of a lane ($1, $2, $3) in the range of positions
	// [($4, $5), ($6, $7)], by their row's address (ctid): the rest of
	// the first millisecond, the milliseconds between, the start of the
	// last one, each a range of occurrences_claim bounded on both ends by
	// plain keys. A row comparison as the range's end would not end the
	// scan before available_at passes it (PostgreSQL 15 ends a scan on a
	// row comparison's first column alone): at the top of the hour a
	// range within one millisecond would walk to the millisecond's end. A
	// range within one millisecond is its first arm ($4 < $6 is a
	// constant of the plan: every plan is custom, see Open).
	foldRows = `SELECT ctid FROM occurrences WHERE ` + foldLane + ` AND available_at = $4 AND seq >= $5 AND ($4 < $6 OR seq <= $7)
UNION ALL
SELECT ctid FROM occurrences WHERE ` + foldLane + ` AND available_at > $4 AND available_at < $6
UNION ALL
SELECT ctid FROM occurrences WHERE ` + foldLane + ` AND $4 < $6 AND available_at = $6 AND seq <= $7`
	foldLane = `tenant_id = $1 AND queue = $2 AND lane = $3 AND state IN ('ENQUEUED', 'RETRY_WAIT')`

	// foldRecheck is foldLane for a row fetched by address: the same
	// test, written so that no index can serve it, so that the only way
	// to the rows is the TID scan. Written as foldLane, the planner may
	// take occurrences_claim for the lane and filter it by address, a
	// walk of the whole lane per fold (1.7 s against 27 ms for a run of
	// 1,000 in a lane of 500,000, measured), which it does while the
	// table's statistics are older than the burst it holds.
	foldRecheck = `(tenant_id, queue, lane, state IN ('ENQUEUED', 'RETRY_WAIT')) IS NOT DISTINCT FROM ($1::text, $2::text, $3::text, true)`

	// The rows of a fold's range that had an attempt before: it moves to
	// the history (qArchiveAttempts) before the fold writes the next. The
	// rows are fetched by address (a TID scan): the planner, which cannot
	// tell how many rows a range of positions holds, has no join to
	// choose.
	qFoldArchived = `SELECT occurrence_id, attempt_count FROM occurrences
WHERE ctid = ANY (ARRAY(` + foldRows + `)) AND ` + foldRecheck + ` AND claimed_at IS NOT NULL`

	// A fold: the claimable rows of the range become attempt
	// attempt_count + 1 of the run (worker $8, claimed at $9, leased to
	// $10), in state $11, finished at $12 (NULL: not finished) with
	// result $13. By address, as qFoldArchived; the lane's conditions are
	// repeated for the row as it stands when it is written.
	qFoldRange = `UPDATE occurrences SET
    state = $11, attempt_count = attempt_count + 1, first_claimed_at = coalesce(first_claimed_at, $9),
    worker_id = $8, claimed_at = $9, lease_expires_at = $10, att_finished_at = $12, att_result = $13,
    att_error = ''::bytea, finished_at = $12
WHERE ctid = ANY (ARRAY(` + foldRows + `)) AND ` + foldRecheck

	// Where each of tenant $1's occurrences $2 stands: its lane, position,
	// state and attempt count, and, when it is claimable, the run holding
	// it (the lane's first run whose last is at or after it, when its
	// first is at or before it; runs of a lane never overlap) and whether
	// an ack range of that run covers it (the run's last range starting
	// at or before it, when it ends at or after it).
	qLeasedItems = `SELECT o.occurrence_id, o.queue, o.lane, o.available_at, o.seq, o.state, o.attempt_count,
    coalesce(r.id, 0),
    r.id IS NOT NULL AND coalesce((SELECT (a.last_at, a.last_seq) >= (o.available_at, o.seq) FROM run_acks a
        WHERE a.run_id = r.id AND (a.first_at, a.first_seq) <= (o.available_at, o.seq)
        ORDER BY a.first_at DESC, a.first_seq DESC LIMIT 1), false)
FROM occurrences o
LEFT JOIN LATERAL (SELECT r.id, r.first_at, r.first_seq FROM runs r
    WHERE r.tenant_id = o.tenant_id AND r.queue = o.queue AND r.lane = o.lane
        AND (r.last_at, r.last_seq) >= (o.available_at, o.seq)
    ORDER BY r.last_at, r.last_seq LIMIT 1) AS r
    ON o.state IN ('ENQUEUED', 'RETRY_WAIT') AND (r.first_at, r.first_seq) <= (o.available_at, o.seq)
WHERE o.occurrence_id = ANY($2::text[]) AND o.tenant_id = $1`

	// The runs holding one of tenant $1's schedule $2's claimable
	// occurrences (index occurrences_open, then a seek of runs_lane per
	// row).
	qScheduleRuns = `SELECT DISTINCT r.id
FROM occurrences o
CROSS JOIN LATERAL (SELECT r.id, r.first_at, r.first_seq FROM runs r
    WHERE r.tenant_id = o.tenant_id AND r.queue = o.queue AND r.lane = o.lane
        AND (r.last_at, r.last_seq) >= (o.available_at, o.seq)
    ORDER BY r.last_at, r.last_seq LIMIT 1) AS r
WHERE o.schedule_id = (SELECT schedule_id FROM schedules WHERE tenant_id = $1 AND schedule_id = $2) AND o.open
    AND o.state IN ('ENQUEUED', 'RETRY_WAIT') AND (r.first_at, r.first_seq) <= (o.available_at, o.seq)
ORDER BY r.id`

	// What the unfolded runs hold, per lane, of a tenant ($1) or of all
	// ($1 = '').
	qRunTotals = `SELECT tenant_id, queue, lane, sum(n)::bigint, sum(acked)::bigint FROM runs
WHERE $1::text = '' OR tenant_id = $1::text GROUP BY tenant_id, queue, lane`

	// Commit without waiting for the WAL flush (store.RelaxedTx).
	qRelaxDurability = `SET LOCAL synchronous_commit = off`

	// A claimable occurrence (alias o) is not held by a run: it is after
	// its lane's head. Every claimable row at or before the head is held
	// by one (docs/engine.md, "Leased runs").
	notLeased = `NOT EXISTS (SELECT 1 FROM lane_heads h
    WHERE h.tenant_id = o.tenant_id AND h.queue = o.queue AND h.lane = o.lane
        AND (o.available_at, o.seq) <= (h.head_at, h.head_seq))`
)
