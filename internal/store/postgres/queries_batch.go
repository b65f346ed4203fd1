package postgres

import "strings"

// The statements of a bulk create (store.BatchTx). The rows themselves go
// in with COPY (pgx's CopyFrom) into the tables and columns named here.

const (
	// The tenant's live schedules under one of the names ($2; index
	// schedules_name) and its schedules created with one of the keys ($3;
	// index schedules_idempotency_key), each name and key one index
	// lookup. The lookups are LATERAL subqueries with LIMIT 1 (a live name
	// and a key are unique per tenant) so that the planner cannot turn them
	// into a walk of the tenant's whole index range with the names as a
	// filter: while a bulk load fills a table autovacuum has not analyzed
	// yet, the planner takes the tenant for a thousand rows, and that walk
	// of 580,000 entries took 2.2 s per batch against 3 ms for the lookups.
	qSchedulesByNamesOrKeys = `SELECT s.* FROM unnest($2::text[]) AS n(name)
CROSS JOIN LATERAL (SELECT ` + scheduleColumns + ` FROM schedules
    WHERE tenant_id = $1 AND name = n.name AND state <> 'CANCELED' LIMIT 1) AS s
UNION
SELECT s.* FROM unnest($3::text[]) AS k(key)
CROSS JOIN LATERAL (SELECT ` + scheduleColumns + ` FROM schedules
    WHERE tenant_id = $1 AND idempotency_key = k.key LIMIT 1) AS s`

	auditInsertColumns = `at, tenant_id, actor_tenant, actor_token, actor_flags, action, target,
    old_version, new_version, detail`
)

// The column lists COPY writes, in the order of the rows' values
// (rowcodec.ScheduleArgs, VersionArgs, AuditArgs).
var (
	// A new schedule's columns, then the three of its first version
	// when its row keeps it (0006_bulk_create.sql), NULL otherwise.
	copyScheduleColumns = append(columnNames(scheduleColumns), "first_state", "first_starts_after", "first_firing")
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
