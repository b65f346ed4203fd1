package postgres

// The audit log's read by a range of targets (store.AuditStore's
// ListAuditTargets); the rest of its statements are in queries.go.

// The rows of one action ($1) whose target lies in [$2, $3] (COLLATE "C":
// byte order), of tenant $4 (empty: every tenant), in id order, at most $5: one
// range of audit_log_target, whose few rows are then sorted.
const qListAuditTargetRange = `SELECT ` + auditColumns + ` FROM audit_log
WHERE target BETWEEN $2 AND $3 AND action = $1 AND ($4 = '' OR tenant_id = $4)
ORDER BY audit_id LIMIT $5`
