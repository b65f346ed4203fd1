-- 0008_canceled_names: a tenant's canceled schedules by name, newest
-- change first, as in the SQLite store's 0008_canceled_names.sql: a name
-- no live schedule holds finds the schedule that last held it. Built as a
-- plain CREATE INDEX (migrations run in one transaction): on a large store
-- it holds writes to schedules for the build, a few seconds per million
-- canceled schedules.
CREATE INDEX schedules_canceled_name ON schedules (tenant_id, name, updated_at)
    WHERE state = 'CANCELED';
