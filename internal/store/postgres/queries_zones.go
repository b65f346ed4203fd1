package postgres

// The tz rules the schedules were planned under, and the statements that
// move the firings of schedules whose zone's rules changed (store.ZoneStore,
// store.ZoneTx; see queries.go for the conventions).
const (
	zoneRuleColumns = `zone, tz_version, fingerprint`

	qZoneRules = `SELECT ` + zoneRuleColumns + ` FROM zone_rules ORDER BY zone, tz_version`

	qShardTZVersions = `SELECT shard, tz_version FROM shard_tz`

	qSetShardTZVersion = `INSERT INTO shard_tz (shard, tz_version) VALUES ($1, $2)
ON CONFLICT (shard) DO UPDATE SET tz_version = excluded.tz_version`

	// Shards 0 to $1-1 with no version recorded get $2.
	qRecordNewShardsTZ = `INSERT INTO shard_tz (shard, tz_version)
SELECT g, $2 FROM generate_series(0, $1::int - 1) AS g
ON CONFLICT (shard) DO NOTHING`

	// One statement for every rule: arrays of zones, versions and
	// fingerprints. A row already there keeps its fingerprint: the first
	// rules recorded under a version are what its cursors were computed
	// under.
	qSaveZoneRules = `INSERT INTO zone_rules (` + zoneRuleColumns + `)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
ON CONFLICT (zone, tz_version) DO NOTHING`

	// Every zone an ACTIVE cron schedule is in (a scan of schedules: run
	// when a tz database changes, not on a hot path).
	qCronZones = `SELECT DISTINCT time_zone FROM schedules WHERE state = 'ACTIVE' AND kind = 'cron' ORDER BY time_zone`

	// A page of the shard's ACTIVE cron schedules in the zones $2, after
	// id $3, in id order.
	qZoneSchedules = `SELECT ` + scheduleColumns + `
FROM schedules
WHERE schedule_id > $3 AND shard = $1 AND state = 'ACTIVE' AND kind = 'cron' AND time_zone = ANY($2::text[])
ORDER BY schedule_id
LIMIT $4`

	// The timetable occurrences of the schedules $1 materialized ahead of
	// $2 and untouched (index occurrences_open).
	// An occurrence a run holds has been delivered, though its row says
	// ENQUEUED with no attempt: it is not untouched (notLeased).
	qPendingFirings = `SELECT o.schedule_id, o.schedule_version, o.occurrence_id, o.scheduled_for FROM occurrences o
WHERE o.schedule_id = ANY($1::text[]) AND o.open AND o.state IN ('SCHEDULED', 'ENQUEUED')
    AND o.attempt_count = 0 AND o.trigger_key = '' AND o.scheduled_for > $2
    AND (o.state = 'SCHEDULED' OR ` + notLeased + `)
ORDER BY o.schedule_id, o.scheduled_for`

	// Cancel the occurrences $3 of schedule $2 that are still untouched. A
	// row a claim holds is waited for and then re-checked: by then it has
	// an attempt, and is left alone.
	// An occurrence a run holds is not untouched either: the heads are
	// read after the queues' locks (qLockScheduleQueues), so no claim
	// leases one meanwhile.
	qCancelFirings = `UPDATE occurrences o SET state = 'CANCELED', finished_at = $1
WHERE o.schedule_id = $2 AND o.open AND o.state IN ('SCHEDULED', 'ENQUEUED')
    AND o.attempt_count = 0 AND o.occurrence_id = ANY($3::text[])
    AND (o.state = 'SCHEDULED' OR ` + notLeased + `)`

	// Back on the queue: the schedule's ($1) timetable occurrences of
	// version $2 at the instants $3 that a rezone canceled (the natural
	// key's index).
	qRestoreFirings = `UPDATE occurrences SET state = 'ENQUEUED', finished_at = NULL
WHERE schedule_id = $1 AND scheduled_for = ANY($3::bigint[]) AND schedule_version = $2
    AND trigger_key = '' AND state = 'CANCELED' AND attempt_count = 0`

	// Only while the cursor is still the one read ($5) at version $4, in
	// shard $3.
	qMoveCursor = `UPDATE schedules SET next_run_at = $1
WHERE schedule_id = $2 AND shard = $3 AND state = 'ACTIVE' AND version = $4 AND next_run_at = $5`
)
