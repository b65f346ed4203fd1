package postgres

// The version history's listings with the first versions kept in
// schedules rows (0006_bulk_create.sql): the rows of schedule_versions
// (qListVersions, qListScheduleVersions of queries.go) merged with those,
// in one statement, so one snapshot (a second version written between
// two reads would move a row from one side to the other unseen). Each
// side is a walk of its key (schedule_versions' (schedule_id, version),
// the schedules' id or (tenant, id)) stopped at the page's limit, and
// only those two pages are sorted together.

const (
	// A first version kept in its schedule's row, read as the
	// schedule_versions row it stands for, in versionColumns' order:
	// version 1, written at the schedule's creation, open. Only while the
	// schedule's version is 1: the write of the second moves it out.
	firstVersionColumns = `schedule_id, 1::bigint, tenant_id, kind, expr, time_zone, anchor, dst_gap, dst_repeat,
    first_state, misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms, created_at,
    first_starts_after, first_firing, NULL::bigint, NULL::bigint, NULL::bigint`
	firstVersionHeld = `version = 1 AND first_state IS NOT NULL`

	// Every schedule's rows from after ($3, $4), of tenant $1 ('' = all).
	qListVersionsMerged = `SELECT * FROM ((` + qListVersions + `)
UNION ALL
(SELECT ` + firstVersionColumns + ` FROM schedules
WHERE ($1::text = '' OR tenant_id = $1) AND schedule_id >= $3::text AND (schedule_id, 1::bigint) > ($3::text, $4::bigint)
    AND $2::text = '' AND ` + firstVersionHeld + `
ORDER BY schedule_id
LIMIT $5)) AS v
ORDER BY schedule_id, version
LIMIT $5`

	// One schedule's ($2) rows from after ($3, $4).
	qListScheduleVersionsMerged = `SELECT * FROM ((` + qListScheduleVersions + `)
UNION ALL
(SELECT ` + firstVersionColumns + ` FROM schedules
WHERE ($1::text = '' OR tenant_id = $1) AND schedule_id = $2
    AND 1 > (CASE WHEN $3::text < $2::text THEN 0 ELSE $4::bigint END) AND $3::text <= $2::text
    AND ` + firstVersionHeld + `)) AS v
ORDER BY version
LIMIT $5`
)
