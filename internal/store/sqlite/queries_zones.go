package sqlite

// The tz rules the schedules were planned under, and the statements that
// move the firings of schedules whose zone's rules changed (store.ZoneStore,
// store.ZoneTx; see queries.go for the conventions).
const (
	zoneRuleColumns = `zone, tz_version, fingerprint`

	qZoneRules = `SELECT ` + zoneRuleColumns + ` FROM zone_rules ORDER BY zone, tz_version`

	qShardTZVersions = `SELECT shard, tz_version FROM shard_tz`

	qSetShardTZVersion = `INSERT INTO shard_tz (shard, tz_version) VALUES (?1, ?2)
ON CONFLICT (shard) DO UPDATE SET tz_version = excluded.tz_version`

	// Shards 0 to ?1-1 with no version recorded get ?2 (the WHERE lets
	// SQLite read the upsert after a SELECT).
	qRecordNewShardsTZ = `WITH RECURSIVE n(shard) AS (SELECT 0 UNION ALL SELECT shard + 1 FROM n WHERE shard + 1 < ?1)
INSERT INTO shard_tz (shard, tz_version) SELECT shard, ?2 FROM n WHERE ?1 > 0
ON CONFLICT (shard) DO NOTHING`

	// A row already there keeps its fingerprint: the first rules recorded
	// under a version are what its cursors were computed under.
	qSaveZoneRule = `INSERT INTO zone_rules (` + zoneRuleColumns + `) VALUES (?1, ?2, ?3)
ON CONFLICT (zone, tz_version) DO NOTHING`

	// Every zone an ACTIVE cron schedule is in (a scan of schedules: run
	// when a tz database changes, not on a hot path).
	qCronZones = `SELECT DISTINCT time_zone FROM schedules WHERE state = 'ACTIVE' AND kind = 'cron' ORDER BY time_zone`

	// A page of the shard's ACTIVE cron schedules in the zones of the JSON
	// array ?2, after id ?3, in id order (the schedule_id index).
	qZoneSchedules = `SELECT ` + scheduleReadColumns + `
FROM schedules
WHERE schedule_id > ?3 AND shard = ?1 AND state = 'ACTIVE' AND kind = 'cron'
    AND time_zone IN (SELECT value FROM json_each(?2))
ORDER BY schedule_id
LIMIT ?4`

	// The timetable occurrences of the schedules of the JSON array ?1
	// materialized ahead of ?2 and untouched (index occurrences_open, by
	// each schedule's row).
	qPendingFirings = `SELECT o.schedule_id, o.schedule_version, o.occurrence_id, o.scheduled_for
FROM occurrences o INDEXED BY occurrences_open
WHERE o.schedule_row IN (SELECT s.row FROM schedules s WHERE s.schedule_id IN (SELECT value FROM json_each(?1)))
    AND o.open = 1 AND o.state IN ('SCHEDULED', 'ENQUEUED') AND o.attempt_count = 0 AND o.trigger_key = ''
    AND o.scheduled_for > ?2
ORDER BY o.schedule_id, o.scheduled_for`

	// Cancel the occurrences of the JSON array ?3, of schedule ?2, that are
	// still untouched.
	qCancelFirings = `UPDATE occurrences INDEXED BY occurrences_open SET state = 'CANCELED', open = 0, finished_at = ?1
WHERE schedule_row = ` + rowOfSchedule2 + ` AND open = 1 AND state IN ('SCHEDULED', 'ENQUEUED')
    AND attempt_count = 0 AND occurrence_id IN (SELECT value FROM json_each(?3))`

	// Back on the queue: the schedule's (?1) timetable occurrences of
	// version ?2 at the instants of the JSON array ?3 that a rezone
	// canceled (the natural key's index).
	qRestoreFirings = `UPDATE occurrences SET state = 'ENQUEUED', open = 1, finished_at = NULL
WHERE schedule_row = ` + rowOfSchedule1 + ` AND scheduled_for IN (SELECT value FROM json_each(?3))
    AND schedule_version = ?2 AND trigger_key = '' AND state = 'CANCELED' AND attempt_count = 0`

	// The cursor of an ACTIVE schedule lives in schedule_cursors
	// (0001_init.sql); it is moved there, only while it is still the one
	// read (?5) at version ?4 in shard ?3.
	qMoveCursor = `UPDATE schedule_cursors SET next_run_at = ?1
WHERE row = ` + rowOfSchedule2 + ` AND shard = ?3 AND version = ?4 AND next_run_at = ?5`
)
