package store

import (
	"context"

	"github.com/sched-dev/sched/internal/record"
)

// BatchTx holds the statements a bulk create composes inside one
// transaction (see Tx): a read of which names and idempotency keys are
// taken already, then multi-row writes of the new schedules with their
// first versions. Each is one statement (or a few, for a driver's limit
// on bound values) however many rows it takes, so a batch costs a
// handful of round trips, not a few per schedule. Which items may be
// written (taken names, replayed keys, the quota) is the engine's
// decision, made from the read or, when the insert goes through, from
// none (the unique indexes refuse a taken name or key): on PostgreSQL a
// failed statement aborts the whole transaction.
type BatchTx interface {
	// SchedulesByNamesOrKeys returns the tenant's schedules that are live
	// (not CANCELED) under one of names, or were created with one of keys
	// (in any state), each once, in no particular order. Empty lists match
	// nothing; the empty key is no key.
	SchedulesByNamesOrKeys(ctx context.Context, tenantID string, names, keys []string) ([]record.Schedule, error)

	// InsertSchedules stores new schedules, each as InsertSchedule does
	// one, with the row of its first version, as
	// HistoryTx.InsertScheduleVersion does one: ListScheduleVersions
	// returns it, CloseScheduleVersion closes it. A live name or an
	// idempotency key already taken is ErrConflict, and then nothing of
	// the transaction can be committed. A store may keep a first version
	// in its schedule's own row until the second version is written (the
	// SQLite store does, when the row is the schedule's as created: see
	// NewSchedule.FirstInRow).
	InsertSchedules(ctx context.Context, scs []NewSchedule) error

	// AppendAudits stores audit rows, as AuditTx.AppendAudit does one.
	AppendAudits(ctx context.Context, es []AuditEntry) error
}

// NewSchedule is a schedule to create and the row of its first version.
type NewSchedule struct {
	Schedule *record.Schedule
	First    ScheduleVersion
}

// FirstInRow reports whether the first version row says nothing the
// schedule's row does not, but for the three values a store keeping it in
// that row adds to it (its State, StartsAfter and FirstFiring): version 1
// of the schedule, open, written when the schedule was created, with the
// schedule's definition and policies. NewScheduleVersion of a schedule
// just built, at its CreatedAt, is such a row.
func (n *NewSchedule) FirstInRow() bool {
	sc, v, d := n.Schedule, &n.First, &n.First.Definition
	return sc.Version == 1 && v.Version == 1 && v.TenantID == sc.TenantID && v.ScheduleID == sc.ScheduleID &&
		d.Kind == sc.Kind && d.Expr == sc.Expr && d.TimeZone == sc.TimeZone && d.Anchor.Equal(sc.Anchor) &&
		d.DSTGap == sc.DSTGap && d.DSTRepeat == sc.DSTRepeat && v.MisfirePolicy == sc.MisfirePolicy && v.MaxLateness == sc.MaxLateness &&
		v.CatchUpK == sc.CatchUpK && v.OverlapPolicy == sc.OverlapPolicy && v.FlexibleWindow == sc.FlexibleWindow &&
		v.WrittenAt.Equal(sc.CreatedAt) && v.SupersededAt.IsZero() && v.EndsAt.IsZero() && v.PlannedUntil.IsZero()
}
