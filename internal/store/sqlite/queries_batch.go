package sqlite

import "strings"

// The statements of a bulk create (store.BatchTx).

// maxVariables is SQLite's limit on bound parameters in one statement
// (SQLITE_MAX_VARIABLE_NUMBER): a multi-row insert writes at most
// maxVariables / columns rows.
const maxVariables = 32766

const (
	// The tenant's live schedules under one of the names (a JSON array,
	// ?2; index schedules_name, its WHERE spelled out) and its schedules
	// created with one of the keys (?3; index schedules_idempotency_key).
	// The JSON rows drive each half (CROSS JOIN keeps them outer): one
	// index lookup a name or key, never a walk of the tenant's schedules.
	qSchedulesByNamesOrKeys = `SELECT ` + scheduleReadColumns + `
FROM json_each(?2) AS j CROSS JOIN schedules
WHERE schedules.tenant_id = ?1 AND schedules.name = j.value AND schedules.state <> 'CANCELED'
UNION
SELECT ` + scheduleReadColumns + `
FROM json_each(?3) AS j CROSS JOIN schedules
WHERE schedules.tenant_id = ?1 AND schedules.idempotency_key IS NOT NULL AND schedules.idempotency_key = j.value`

	// A schedule with the three columns of its first version, kept in
	// its row (0006_bulk_create.sql); NULL when it is not.
	qInsertSchedulesHead = `INSERT INTO schedules (` + scheduleColumns + `, first_state, first_starts_after, first_firing) VALUES `
	qInsertVersionsHead  = `INSERT INTO schedule_versions (` + versionColumns + `) VALUES `
	qAppendAuditsHead    = `INSERT INTO audit_log (at, tenant_id, actor_tenant, actor_token, actor_flags, action, target,
    old_version, new_version, detail) VALUES `
)

// Column counts of the multi-row inserts.
const (
	scheduleColumnCount = 28 + 3
	versionColumnCount  = 21
	auditColumnCount    = 10
)

// multiRowInsert is head followed by rows groups of cols placeholders.
func multiRowInsert(head string, rows, cols int) string {
	group := "(" + strings.Repeat("?,", cols-1) + "?)"
	var b strings.Builder
	b.Grow(len(head) + rows*(len(group)+1))
	b.WriteString(head)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(group)
	}
	return b.String()
}
