-- 0006_bulk_create: what a bulk create writes per schedule (store.BatchTx),
-- as the SQLite store's 0006_bulk_create.sql, and the live count kept per
-- statement on insert.
--
-- The first version in the schedule's row. A version row was a second row
-- of every create (schedule_versions, 21 columns), written by a second
-- COPY. Version 1 differs from the schedules row in three values only:
-- the state it was written with (the planner may complete the schedule
-- later, in the same version), the bound its firings start after, and the
-- cursor it was written with (the planner advances next_run_at). Those
-- three are kept here; the definition, policies, tenant and written_at
-- (created_at) are the row's own, which no write changes while the
-- version stays 1. first_state NULL: the row holds no version (a schedule
-- inserted on its own, whose history, if any, is in schedule_versions).
-- The store reads such a row as version 1's row of schedule_versions
-- (ListScheduleVersions merges the two, in (schedule_id, version) order)
-- while the schedule's version is 1. The write of a second version moves
-- it out first: the trigger below inserts it into schedule_versions, open,
-- from the row as it was, and the transaction then closes it as it closes
-- any version row (CloseScheduleVersion).
ALTER TABLE schedules ADD COLUMN first_state TEXT
    CHECK (first_state IN ('ACTIVE', 'PAUSED', 'CANCELED', 'COMPLETED'));
ALTER TABLE schedules ADD COLUMN first_starts_after BIGINT;
ALTER TABLE schedules ADD COLUMN first_firing BIGINT;

CREATE FUNCTION schedule_first_version_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO schedule_versions (schedule_id, version, tenant_id, kind, expr, time_zone, anchor, dst_gap,
        dst_repeat, state, misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms,
        written_at, starts_after, first_firing, superseded_at, ends_at, planned_until)
    VALUES (OLD.schedule_id, 1, OLD.tenant_id, OLD.kind, OLD.expr, OLD.time_zone, OLD.anchor, OLD.dst_gap,
        OLD.dst_repeat, OLD.first_state, OLD.misfire_policy, OLD.max_lateness_ms, OLD.catch_up_k, OLD.overlap_policy,
        OLD.flexible_window_ms, OLD.created_at, OLD.first_starts_after, OLD.first_firing, NULL, NULL, NULL);
    RETURN NULL;
END
$$;

-- Not deferred: the row must be there for the close that follows the
-- write of the version in the same transaction.
CREATE TRIGGER schedule_first_version_out AFTER UPDATE OF version ON schedules
    FOR EACH ROW WHEN (OLD.version = 1 AND NEW.version <> 1 AND OLD.first_state IS NOT NULL)
    EXECUTE FUNCTION schedule_first_version_out();

-- The live count of an insert, once per statement. The deferred trigger
-- of 0001_init.sql ran its function once per row at the commit, and a
-- bulk create's thousand rows updated a tenant's few rows of
-- tenant_live_schedules a thousand times, each update a new version of
-- its row: that was most of PostgreSQL's work in a bulk create (the COPY
-- of a schedule took about three times the CPU with it as with this
-- trigger, 34-42 µs against 10-13 on the 2-core machine). This one counts the
-- statement's new rows by (tenant, shard) and adds each count with one
-- upsert, in (tenant, shard) order. It runs at the end of the insert,
-- not at the commit: an insert transaction then holds these rows from
-- there to its commit, but it takes no lock on any schedule row older
-- than itself, so it waits for nobody while it holds them (the planner
-- and the changes of state, which lock schedule rows first, keep the
-- deferred update trigger), and two inserts take them in one order.
DROP TRIGGER tenant_live_on_insert ON schedules;

CREATE FUNCTION tenant_live_schedules_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_live_schedules AS t (tenant_id, shard, live)
    SELECT tenant_id, shard, count(*) FROM new_schedules
    WHERE state IN ('ACTIVE', 'PAUSED')
    GROUP BY tenant_id, shard
    ORDER BY tenant_id, shard
    ON CONFLICT (tenant_id, shard) DO UPDATE SET live = t.live + excluded.live;
    RETURN NULL;
END
$$;

CREATE TRIGGER tenant_live_on_insert AFTER INSERT ON schedules
    REFERENCING NEW TABLE AS new_schedules
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_live_schedules_inserted();
