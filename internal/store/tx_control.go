package store

import (
	"context"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// ControlTx holds the statements the engine's control plane composes inside
// a transaction (see Tx): a new version of a schedule (an update, pause,
// resume or cancel) is one transaction of these. The rule they make up
// (which occurrences a new version cancels, where its cursor starts, when
// it has nothing left to fire) is the engine's; each statement only reads
// or writes what it says, under the condition it states.
type ControlTx interface {
	// LockScheduleVersion returns the stored version of the tenant's
	// schedule, its state and its cursor as the planner last advanced it,
	// and keeps any other writer of the schedule (an update, a planner's
	// advance) waiting until the transaction ends, so what it read stays
	// stored until then. ErrNotFound when the tenant has no such schedule.
	LockScheduleVersion(ctx context.Context, tenantID, scheduleID string) (LockedSchedule, error)

	// WriteScheduleVersion writes sc (all its fields) as version
	// prevVersion+1, whatever sc.Version says, only while the stored
	// version is prevVersion: ErrConflict otherwise, and ErrNotFound when
	// the tenant has no such schedule. A name another live schedule of the
	// tenant has is ErrConflict too. The schedule id, tenant and creation
	// time are keys and history, and the missed count belongs to the
	// planner (CommitPlan adds to it without changing the version): the
	// write keeps the stored ones. It returns the schedule as stored.
	WriteScheduleVersion(ctx context.Context, sc *record.Schedule, prevVersion int64) (*record.Schedule, error)

	// CancelOlderOccurrences cancels the open occurrences of the schedule
	// whose version is older than version and that no worker holds:
	// SCHEDULED, ENQUEUED and RETRY_WAIT become CANCELED (finished_at =
	// now). It returns how many it canceled, and how many older-version
	// occurrences a worker holds (RUNNING), which cannot be recalled and
	// are in flight.
	CancelOlderOccurrences(ctx context.Context, scheduleID string, version int64, now time.Time) (canceled, inFlight int, err error)

	// LastKeptFiring returns the latest scheduled_for among the schedule's
	// timetable occurrences (TriggerKey empty) that are not CANCELED, of
	// any version; zero when there is none. Manual occurrences do not
	// count: a trigger's time is when someone asked, possibly later than
	// firings not yet materialized.
	LastKeptFiring(ctx context.Context, scheduleID string) (time.Time, error)

	// The version history written with the schedule (see HistoryTx).
	HistoryTx
}

// LockedSchedule is what LockScheduleVersion reads of the schedule it
// locks: the version a change is made from, and how far the planner had
// got under it, which the version history records when the change
// supersedes it.
type LockedSchedule struct {
	Version int64
	State   record.ScheduleState
	// NextRunAt is the schedule's cursor: every firing before it was
	// materialized (or counted missed) by the planner. Zero when it has
	// none.
	NextRunAt time.Time
}
