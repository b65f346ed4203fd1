-- 0006_bulk_create: a schedule made by a bulk create keeps the row of its
-- first version in its own row (store.BatchTx), until its second version
-- is written.
--
-- A version row was a second row of every create (schedule_versions, 21
-- columns in a clustered key): half again the work of the schedule's own
-- insert. Version 1 differs from the schedules row in three values only:
-- the state it was written with (the planner may complete the schedule
-- later, in the same version), the bound its firings start after, and the
-- cursor it was written with (the planner advances the cursor). Those
-- three are kept here; the definition, policies, tenant and written_at
-- (created_at) are the row's own, which no write changes while the
-- version stays 1. first_state NULL: the row holds no version (a schedule
-- inserted on its own, whose history, if any, is in schedule_versions).
--
-- The store reads such a row as version 1's row of schedule_versions
-- (ListScheduleVersions merges the two, in (schedule_id, version) order),
-- while the schedule's version is 1. The write of a second version moves
-- it out first: the trigger below inserts it into schedule_versions, open,
-- from the row as it was, and the transaction then closes it as it
-- closes any version row (CloseScheduleVersion).
ALTER TABLE schedules ADD COLUMN first_state TEXT
    CHECK (first_state IN ('ACTIVE', 'PAUSED', 'CANCELED', 'COMPLETED'));
ALTER TABLE schedules ADD COLUMN first_starts_after INTEGER;
ALTER TABLE schedules ADD COLUMN first_firing INTEGER;

CREATE TRIGGER schedule_first_version_out AFTER UPDATE OF version ON schedules
WHEN old.version = 1 AND new.version <> 1 AND old.first_state IS NOT NULL
BEGIN
    INSERT INTO schedule_versions (schedule_id, version, tenant_id, kind, expr, time_zone, anchor, dst_gap,
        dst_repeat, state, misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms,
        written_at, starts_after, first_firing, superseded_at, ends_at, planned_until)
    VALUES (old.schedule_id, 1, old.tenant_id, old.kind, old.expr, old.time_zone, old.anchor, old.dst_gap,
        old.dst_repeat, old.first_state, old.misfire_policy, old.max_lateness_ms, old.catch_up_k, old.overlap_policy,
        old.flexible_window_ms, old.created_at, old.first_starts_after, old.first_firing, NULL, NULL, NULL);
END;
