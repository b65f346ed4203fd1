-- 0008_canceled_names: a tenant's canceled schedules by name, newest
-- change first, so that a name no live schedule holds finds the schedule
-- that last held it (GetScheduleByName: `schedctl get NAME` and `audit
-- --schedule NAME` after a cancel). schedules_name holds the live names
-- only; a canceled schedule's row never changes again, so this index costs
-- one entry per cancel and nothing on the planner's path.
CREATE INDEX schedules_canceled_name ON schedules (tenant_id, name, updated_at)
    WHERE state = 'CANCELED';
