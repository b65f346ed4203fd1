package sqlite

// The statements of leased runs (store.RunTx; docs/engine.md, "Leased
// runs"). A position is (available_at, rowid) in a lane, the order of
// occurrences_claim; a run's range [first, last] includes both ends.
const (
	// The lane's head.
	qLaneHead = `SELECT head_at, head_row FROM lane_heads WHERE tenant_id = ?1 AND queue = ?2 AND lane = ?3`

	// A new run, and its lane's head moved to its last position.
	qInsertRun = `INSERT INTO runs (tenant_id, queue, lane, first_at, first_row, last_at, last_row, n, worker_id,
    claimed_at, lease_expires_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)`
	qMoveLaneHead = `INSERT INTO lane_heads (tenant_id, queue, lane, head_at, head_row) VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (tenant_id, queue, lane) DO UPDATE SET head_at = excluded.head_at, head_row = excluded.head_row
WHERE (excluded.head_at, excluded.head_row) > (lane_heads.head_at, lane_heads.head_row)`

	// Candidates put back on their lane at ?1 (the floor moves them past
	// the head when ?1 is not): rows ?2, a JSON array of rowids, where
	// still claimable.
	qRequeueRows = `UPDATE occurrences SET available_at = ?1
WHERE rowid IN (SELECT value FROM json_each(?2)) AND state IN ('ENQUEUED', 'RETRY_WAIT')`

	runColumns = `id, tenant_id, queue, lane, first_at, first_row, last_at, last_row, n, acked, worker_id, claimed_at,
    lease_expires_at`
	qRunsByID     = `SELECT ` + runColumns + ` FROM runs WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id`
	qRunsAll      = `SELECT ` + runColumns + ` FROM runs ORDER BY id LIMIT ?1`
	qRunsOfTenant = `SELECT ` + runColumns + ` FROM runs WHERE tenant_id = ?1 ORDER BY id LIMIT ?2`
	qRunsExpired  = `SELECT ` + runColumns + ` FROM runs WHERE lease_expires_at <= ?1 ORDER BY lease_expires_at, id LIMIT ?2`
	qRunsFinished = `SELECT ` + runColumns + ` FROM runs WHERE acked = n AND claimed_at < ?1 ORDER BY id LIMIT ?2`
	qRunAcks      = `SELECT run_id, first_at, first_row, last_at, last_row, n, acked_at FROM run_acks WHERE run_id = ?1
ORDER BY first_at, first_row`
	qInsertRunAck = `INSERT INTO run_acks (run_id, first_at, first_row, last_at, last_row, n, acked_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`
	qAddRunAcked   = `UPDATE runs SET acked = acked + ?2 WHERE id = ?1`
	qExtendRun     = `UPDATE runs SET lease_expires_at = ?2 WHERE id = ?1`
	qDeleteRun     = `DELETE FROM runs WHERE id = ?1`
	qDeleteRunAcks = `DELETE FROM run_acks WHERE run_id = ?1`

	// The claimable rows of a lane in a range of positions [(?4, ?5),
	// (?6, ?7)], by rowid: the rest of the first millisecond, the
	// milliseconds between, the start of the last one, each sought in
	// occurrences_claim (a row-value range would step over every row of
	// the first millisecond before the range, and at the top of the hour
	// the runs not yet folded hold hundreds of thousands of those). A
	// range within one millisecond is its first arm.
	//
	// The first arm is two, one for each case, so that each is one range
	// of the index: with an OR in it SQLite would bound the range below
	// only, and walk the rest of the millisecond for every run.
	foldRows = `SELECT rowid FROM occurrences INDEXED BY occurrences_claim
    WHERE ` + foldLane + ` AND ?4 = ?6 AND available_at = ?4 AND rowid >= ?5 AND rowid <= ?7
UNION ALL
SELECT rowid FROM occurrences INDEXED BY occurrences_claim
    WHERE ` + foldLane + ` AND ?4 < ?6 AND available_at = ?4 AND rowid >= ?5
UNION ALL
SELECT rowid FROM occurrences INDEXED BY occurrences_claim
    WHERE ` + foldLane + ` AND available_at > ?4 AND available_at < ?6
UNION ALL
SELECT rowid FROM occurrences INDEXED BY occurrences_claim
    WHERE ` + foldLane + ` AND ?4 < ?6 AND available_at = ?6 AND rowid <= ?7`
	foldLane = `tenant_id = ?1 AND queue = ?2 AND lane = ?3 AND state IN ('ENQUEUED', 'RETRY_WAIT')`

	// The rows of a fold's range that had an attempt before: it moves to
	// the history (qArchiveAttempts) before the fold writes the next.
	qFoldArchived = `SELECT rowid, occurrence_id, attempt_count FROM occurrences
WHERE rowid IN (` + foldRows + `) AND claimed_at IS NOT NULL`

	// A fold: the claimable rows of the range become attempt
	// attempt_count + 1 of the run (worker ?8, claimed at ?9, leased to
	// ?10), in state ?11, finished at ?12 (NULL: not finished) with result
	// ?13, open ?14.
	qFoldRange = `UPDATE occurrences SET
    state = ?11, attempt_count = attempt_count + 1, first_claimed_at = coalesce(first_claimed_at, ?9),
    worker_id = ?8, claimed_at = ?9, lease_expires_at = ?10, att_finished_at = ?12, att_result = ?13, att_error = '',
    finished_at = ?12, open = ?14
WHERE rowid IN (` + foldRows + `)`

	// An occurrence's place: its lane and position, state and attempt
	// count.
	qLeasedItem = `SELECT queue, lane, available_at, rowid, state, attempt_count FROM occurrences
WHERE occurrence_id = ?1 AND tenant_id = ?2`
	// The run holding position (?4, ?5) of a lane, if any: the lane's
	// first run whose last is at or after it, when its first is at or
	// before it.
	qRunHolding = `SELECT id FROM (SELECT id, first_at, first_row FROM runs INDEXED BY runs_lane
    WHERE tenant_id = ?1 AND queue = ?2 AND lane = ?3 AND (last_at, last_row) >= (?4, ?5)
    ORDER BY last_at, last_row LIMIT 1)
WHERE (first_at, first_row) <= (?4, ?5)`
	// Whether an ack range of run ?1 covers position (?2, ?3).
	qRunAcked = `SELECT EXISTS (SELECT 1 FROM run_acks WHERE run_id = ?1
    AND (first_at, first_row) <= (?2, ?3) AND (last_at, last_row) >= (?2, ?3))`

	// The runs holding one of a schedule's claimable occurrences (index
	// occurrences_open, then qRunHolding's walk per row).
	qScheduleRuns = `SELECT DISTINCT r.id
FROM occurrences o INDEXED BY occurrences_open
JOIN runs r ON r.id = (SELECT r2.id FROM runs r2 INDEXED BY runs_lane
    WHERE r2.tenant_id = o.tenant_id AND r2.queue = o.queue AND r2.lane = o.lane
        AND (r2.last_at, r2.last_row) >= (o.available_at, o.rowid)
    ORDER BY r2.last_at, r2.last_row LIMIT 1)
WHERE o.schedule_row = (SELECT row FROM schedules WHERE tenant_id = ?1 AND schedule_id = ?2) AND o.open = 1
    AND o.state IN ('ENQUEUED', 'RETRY_WAIT') AND (r.first_at, r.first_row) <= (o.available_at, o.rowid)`

	// What the unfolded runs hold, per lane, of a tenant (?1) or of all
	// (?1 = '').
	qRunTotals = `SELECT tenant_id, queue, lane, sum(n), sum(acked) FROM runs
WHERE ?1 = '' OR tenant_id = ?1 GROUP BY tenant_id, queue, lane`
)
