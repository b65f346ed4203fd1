package store

import (
	"context"
	"time"
)

// AuditEntry is one row of the audit log: who changed what, when, and
// from which version to which. It records the change, never its content:
// Detail is a short note (a count, a state, an occurrence id), never a
// payload or a token.
type AuditEntry struct {
	// ID is the row's number, given by the store on append: ascending in
	// the order rows were appended (not a gap-free sequence).
	ID int64
	At time.Time
	// TenantID is the tenant acted upon (the schedule's, the tenant
	// changed): whose log the row is in.
	TenantID string
	// ActorTenant and ActorToken are who acted: the tenant and the name
	// of the token of the request ("" for a local request over the
	// daemon's Unix socket, or the daemon's own work).
	ActorTenant string
	ActorToken  string
	ActorAdmin  bool
	ActorLocal  bool
	// Action names the change, e.g. "schedule.update", "token.revoke".
	Action string
	// Target is what was changed: a schedule id, an occurrence id, a
	// tenant id or a token name; "" when the change has none (an outage).
	Target string
	// OldVersion and NewVersion are the target's versions before and
	// after; 0 when it has none (a create has no old version).
	OldVersion, NewVersion int64
	Detail                 string
}

// AuditClockSlack bounds how far out of id order the audit log's times
// run: a row is stamped with its node's clock (set to the store's) before
// its insert gives it an id, so it may carry an earlier time than a row
// appended before it, by the time its transaction took to reach the
// insert (at most a request's timeout) and the nodes' clock error, never
// by more than this. Hence every row stamped more than AuditClockSlack
// before Since was appended before every row stamped at or after Since,
// and a listing with Since starts its walk after the last such row.
const AuditClockSlack = 5 * time.Minute

// MaxAuditDetail bounds AuditEntry.Detail, in bytes; the engine cuts a
// longer one.
const MaxAuditDetail = 500

// AuditTx appends to the audit log inside the transaction of the change it
// records, so that a change and its row commit together or not at all.
type AuditTx interface {
	// AppendAudit stores e as a new row (its ID is ignored).
	AppendAudit(ctx context.Context, e AuditEntry) error
}

// ListAuditParams selects audit rows: TenantID "" is every tenant's,
// Target "" any target, a zero Since any time; only rows with an id above
// AfterID (the last one of the previous page), at most Limit of them
// (ListLimit), ascending by id.
//
// A page reads about as many rows as it returns: a store walks, in id
// order, the rows of Target when it is set, else those of TenantID when it
// is set, else the whole log, from AfterID; with Since, from no earlier
// than the last row stamped more than AuditClockSlack before Since (an
// index seek). Only the rows stamped within AuditClockSlack before Since,
// and within it before that row, are read and passed over.
type ListAuditParams struct {
	TenantID string
	Target   string
	Since    time.Time
	AfterID  int64
	Limit    int
}

// AuditTargetRange selects the rows of one Action whose Target lies
// between From and To (both included, in byte order), of TenantID ("" is
// every tenant's): at most Limit of them (ListLimit), ascending by id. A
// store reads them from its index of targets, one range of it. The engine
// finds by it the entry of the bulk create that made a schedule, whose
// target is a range of schedule ids starting at or below the schedule's
// own (record.ScheduleIDRange).
type AuditTargetRange struct {
	TenantID string
	Action   string
	From, To string
	Limit    int
}

// AuditStore reads and ages the audit log. It is part of the Store
// interface. Nothing in it edits a row: rows leave only by age.
type AuditStore interface {
	// ListAudit returns the rows p selects, ascending by id.
	ListAudit(ctx context.Context, p ListAuditParams) ([]AuditEntry, error)
	// ListAuditTargets returns the rows p selects, ascending by id.
	ListAuditTargets(ctx context.Context, p AuditTargetRange) ([]AuditEntry, error)
	// PurgeAudit deletes at most limit rows older than before (At <
	// before), the oldest first, and returns how many it deleted; a
	// caller deletes everything by calling again until it returns fewer
	// than limit.
	PurgeAudit(ctx context.Context, before time.Time, limit int) (int, error)
}
