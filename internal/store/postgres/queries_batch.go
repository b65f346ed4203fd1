package postgres

import "strings"

// The statements of a bulk create (store.BatchTx). The rows themselves go
// in with COPY (pgx's CopyFrom) into the tables and columns named here.

const (
	// The tenant's live schedules under one of the names ($2; index
	// schedules_name) and its schedules created with one of the keys ($3;
	// index schedules_idempotency_key).
	qSchedulesByNamesOrKeys = `SELECT ` + scheduleColumns + ` FROM schedules
WHERE tenant_id = $1 AND state <> 'CANCELED' AND name = ANY($2::text[])
UNION
SELECT ` + scheduleColumns + ` FROM schedules
WHERE tenant_id = $1 AND idempotency_key IS NOT NULL AND idempotency_key = ANY($3::text[])`

	auditInsertColumns = `at, tenant_id, actor_tenant, actor_token, actor_flags, action, target,
    old_version, new_version, detail`
)

// The column lists COPY writes, in the order of the rows' values
// (rowcodec.ScheduleArgs, VersionArgs, AuditArgs).
var (
	copyScheduleColumns = columnNames(scheduleColumns)
	copyVersionColumns  = columnNames(versionColumns)
	copyAuditColumns    = columnNames(auditInsertColumns)
)

// columnNames splits a column list as the queries write it.
func columnNames(list string) []string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}
