-- 0007_planner_table: the planner's table, schedule_cursors, clustered by
-- due time and holding every column the planner reads.
--
-- schedule_cursors was a rowid table keyed by the schedule's row, with an
-- index by (shard, next_run_at, schedule_id): the planner walked the index
-- in due order, but then fetched each cursor row and each wide schedules
-- row by its row number. A minute's due schedules lie all over those two
-- tables, so each due schedule cost a page of each, read from the file and
-- (the cursor's) written to the WAL at commit, and with a large store
-- almost none of them were in SQLite's page cache: the planner's cost per
-- due schedule grew with the number of schedules (docs/BENCHMARKS.md).
--
-- Now the table is WITHOUT ROWID, keyed by (shard, next_run_at,
-- schedule_id), the planner's order, and holds the columns the planner
-- reads (record.Schedule.PlannerFields): a minute's due schedules are one
-- range of neighbouring pages, read without going back to schedules, and
-- the advance moves each of them from one range to another. The index by
-- row serves the reads of one schedule (its cursor) and the triggers; the
-- advance rewrites one entry of it per schedule.
--
-- The rule is unchanged, and still kept by the triggers alone: a row is
-- here exactly while its schedule is ACTIVE with a next run; the planner
-- writes here alone, and then next_run_at here is the schedule's cursor,
-- newer than the one in its schedules row; a write of schedules that may
-- change the cursor (shard, next_run_at, state, version) carries the
-- cursor it read and the trigger replaces the row; the other columns are
-- copies of the schedule's, which the triggers copy whenever a write of
-- schedules sets them.

DROP TRIGGER schedule_cursor_on_insert;
DROP TRIGGER schedule_cursor_on_update;
ALTER TABLE schedule_cursors RENAME TO schedule_cursors_0006;

CREATE TABLE schedule_cursors (
    shard              INTEGER NOT NULL,
    next_run_at        INTEGER NOT NULL,
    schedule_id        TEXT    NOT NULL,
    row                INTEGER NOT NULL, -- schedules.row
    tenant_id          TEXT    NOT NULL,
    version            INTEGER NOT NULL,
    kind               TEXT    NOT NULL,
    expr               TEXT    NOT NULL,
    time_zone          TEXT    NOT NULL,
    anchor             INTEGER,
    dst_gap            TEXT    NOT NULL,
    dst_repeat         TEXT    NOT NULL,
    queue              TEXT    NOT NULL,
    misfire_policy     TEXT    NOT NULL,
    max_lateness_ms    INTEGER NOT NULL,
    catch_up_k         INTEGER NOT NULL,
    overlap_policy     TEXT    NOT NULL,
    flexible_window_ms INTEGER NOT NULL,
    PRIMARY KEY (shard, next_run_at, schedule_id)
) STRICT, WITHOUT ROWID;

-- In key order, so the pages are filled in order.
INSERT INTO schedule_cursors (shard, next_run_at, schedule_id, row, tenant_id, version, kind, expr, time_zone,
    anchor, dst_gap, dst_repeat, queue, misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms)
SELECT c.shard, c.next_run_at, c.schedule_id, c.row, c.tenant_id, c.version, s.kind, s.expr, s.time_zone,
    s.anchor, s.dst_gap, s.dst_repeat, s.queue, s.misfire_policy, s.max_lateness_ms, s.catch_up_k, s.overlap_policy,
    s.flexible_window_ms
FROM schedule_cursors_0006 c JOIN schedules s ON s.row = c.row
ORDER BY c.shard, c.next_run_at, c.schedule_id;

DROP TABLE schedule_cursors_0006; -- and its index, schedules_due

-- A schedule's cursor by its row: the reads of a schedule and the
-- triggers.
CREATE UNIQUE INDEX schedule_cursors_row ON schedule_cursors (row);

CREATE TRIGGER schedule_cursor_on_insert AFTER INSERT ON schedules
WHEN new.state = 'ACTIVE' AND new.next_run_at IS NOT NULL
BEGIN
    INSERT INTO schedule_cursors (shard, next_run_at, schedule_id, row, tenant_id, version, kind, expr, time_zone,
        anchor, dst_gap, dst_repeat, queue, misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms)
    VALUES (new.shard, new.next_run_at, new.schedule_id, new.row, new.tenant_id, new.version, new.kind, new.expr,
        new.time_zone, new.anchor, new.dst_gap, new.dst_repeat, new.queue, new.misfire_policy, new.max_lateness_ms,
        new.catch_up_k, new.overlap_policy, new.flexible_window_ms);
END;

-- Every write of schedules that may change the cursor (a write that
-- leaves these columns out, as the planner's missed count, does not fire
-- it).
CREATE TRIGGER schedule_cursor_on_update AFTER UPDATE OF shard, next_run_at, state, version ON schedules
BEGIN
    DELETE FROM schedule_cursors WHERE row = old.row;
    INSERT INTO schedule_cursors (shard, next_run_at, schedule_id, row, tenant_id, version, kind, expr, time_zone,
        anchor, dst_gap, dst_repeat, queue, misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms)
    SELECT new.shard, new.next_run_at, new.schedule_id, new.row, new.tenant_id, new.version, new.kind, new.expr,
        new.time_zone, new.anchor, new.dst_gap, new.dst_repeat, new.queue, new.misfire_policy, new.max_lateness_ms,
        new.catch_up_k, new.overlap_policy, new.flexible_window_ms
    WHERE new.state = 'ACTIVE' AND new.next_run_at IS NOT NULL;
END;

-- A write that sets the copied columns but not the cursor's leaves the
-- cursor where it is and copies them. (When a write sets both, the
-- trigger above writes the row whole, and this one's copy changes
-- nothing, whichever runs first.)
CREATE TRIGGER schedule_cursor_copy AFTER UPDATE OF tenant_id, kind, expr, time_zone, anchor, dst_gap, dst_repeat,
    queue, misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms ON schedules
BEGIN
    UPDATE schedule_cursors SET tenant_id = new.tenant_id, kind = new.kind, expr = new.expr, time_zone = new.time_zone,
        anchor = new.anchor, dst_gap = new.dst_gap, dst_repeat = new.dst_repeat, queue = new.queue,
        misfire_policy = new.misfire_policy, max_lateness_ms = new.max_lateness_ms, catch_up_k = new.catch_up_k,
        overlap_policy = new.overlap_policy, flexible_window_ms = new.flexible_window_ms
    WHERE row = new.row;
END;
