package api

import "time"

// AuditActor is who made a change: the tenant and the name of the token of
// the request. Token is empty and Local true for a request over the
// daemon's Unix socket without a token (and for the daemon's own work).
type AuditActor struct {
	Tenant string `json:"tenant"`
	Token  string `json:"token"`
	Admin  bool   `json:"admin"`
	Local  bool   `json:"local"`
}

// AuditEntry is one row of the audit log (GET /v1/audit): who changed
// what, when, and the target's version before and after (0: it has none,
// as before a create or for a trigger).
type AuditEntry struct {
	ID         int64      `json:"id"`
	At         time.Time  `json:"at"`
	TenantID   string     `json:"tenant_id"` // the tenant acted upon
	Actor      AuditActor `json:"actor"`
	Action     string     `json:"action"` // e.g. schedule.update, token.revoke
	Target     string     `json:"target"` // a schedule id, occurrence id, tenant id or token name
	OldVersion int64      `json:"old_version"`
	NewVersion int64      `json:"new_version"`
	Detail     string     `json:"detail"`
}

// AuditList is a page of the audit log, oldest first. NextAfter, when not
// zero, is the after= of the next page.
type AuditList struct {
	Entries   []AuditEntry `json:"entries"`
	NextAfter int64        `json:"next_after,omitempty"`
}
