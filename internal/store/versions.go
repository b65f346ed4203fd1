package store

import (
	"context"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/timetable"
)

// ScheduleVersion is one version of a schedule as it was written: its
// timing, its state and the policies that shaped its occurrences, and the
// span of firings it may produce. A schedule's row holds only its current
// version; these rows are its history, one per (ScheduleID, Version),
// written in the same transaction as the schedule's row (the create, and
// every new version), so that a reader can tell, for any past firing,
// which version should have produced it.
//
// The firings a version may produce are those of its timetable in
// (StartsAfter, EndsAt] once it is superseded (and, when PlannedUntil is
// recorded, the canceled ones up to it), and after StartsAfter while it
// is the current one. A version that fires nothing (PAUSED, CANCELED,
// or COMPLETED when it was written) has a zero StartsAfter.
type ScheduleVersion struct {
	TenantID   string
	ScheduleID string
	Version    int64
	Definition timetable.Definition
	// State is the schedule's state as this version was written. The
	// planner may complete the schedule later (an at schedule whose
	// firing it materialized) without a new version: the row stays
	// ACTIVE, and the timetable says where it ends.
	State          record.ScheduleState
	MisfirePolicy  record.MisfirePolicy
	MaxLateness    time.Duration
	CatchUpK       int
	OverlapPolicy  record.OverlapPolicy
	FlexibleWindow time.Duration

	// WrittenAt is when the version was written.
	WrittenAt time.Time
	// StartsAfter is the exclusive lower bound of the version's firings:
	// the instant its first firing was searched from (for a create, the
	// create's time; for a later version, the later of the change's time
	// and the last firing kept). Zero when the version fires nothing.
	StartsAfter time.Time
	// FirstFiring is the cursor written with the version; zero for none.
	FirstFiring time.Time
	// SupersededAt is when the next version was written; zero while this
	// one is current.
	SupersededAt time.Time
	// EndsAt is the inclusive upper bound of a superseded version's
	// firings: the latest firing already materialized and not canceled
	// when the next version was written. Firings of this version after it
	// were canceled by the change. Zero when none was kept (or while the
	// version is current).
	EndsAt time.Time
	// PlannedUntil is how far the planner had got under a superseded
	// version: the schedule's cursor when the next version was written,
	// if it was ACTIVE then. Every firing of the version in (StartsAfter,
	// PlannedUntil) was materialized or counted missed, and those after
	// EndsAt were canceled by the change, so each of them has a row even
	// when a row at the end of the version went missing and EndsAt moved
	// back. Zero when the version was not ACTIVE when superseded (or
	// while it is current).
	PlannedUntil time.Time
}

// Superseded reports whether a newer version was written after v.
func (v *ScheduleVersion) Superseded() bool { return !v.SupersededAt.IsZero() }

// NewScheduleVersion is the history row of sc's current version, written
// at writtenAt, whose firings start strictly after startsAfter (zero: it
// fires nothing). It is open: not superseded.
func NewScheduleVersion(sc *record.Schedule, writtenAt, startsAfter time.Time) ScheduleVersion {
	return ScheduleVersion{
		TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: sc.Version, Definition: sc.Definition(),
		State: sc.State, MisfirePolicy: sc.MisfirePolicy, MaxLateness: sc.MaxLateness, CatchUpK: sc.CatchUpK,
		OverlapPolicy: sc.OverlapPolicy, FlexibleWindow: sc.FlexibleWindow,
		WrittenAt: writtenAt, StartsAfter: startsAfter, FirstFiring: sc.NextRunAt,
	}
}

// ListScheduleVersionsParams selects version rows, ordered by
// (schedule_id, version). TenantID and ScheduleID are optional filters.
// Paging is by keyset: only rows strictly after (AfterScheduleID,
// AfterVersion) come back; an empty AfterScheduleID starts at the
// beginning.
type ListScheduleVersionsParams struct {
	TenantID        string
	ScheduleID      string
	AfterScheduleID string
	AfterVersion    int64
	Limit           int // 0 means DefaultListLimit; at most MaxListLimit
}

// HistoryStore reads the schedules' version history. It is part of the
// Store interface. Its reads take no write lock (plain reads; on SQLite the
// read pool), so an audit can run beside a busy planner.
type HistoryStore interface {
	// ListScheduleVersions returns a page of version rows (see
	// ListScheduleVersionsParams), across tenants unless one is named.
	ListScheduleVersions(ctx context.Context, p ListScheduleVersionsParams) ([]ScheduleVersion, error)
}

// HistoryTx holds the control plane's statements that write the version
// history, in the transaction that writes the schedule (see ControlTx).
type HistoryTx interface {
	// InsertSchedule stores a new schedule as given, like
	// Store.InsertSchedule, inside the transaction, so that its first
	// version row commits with it.
	InsertSchedule(ctx context.Context, sc *record.Schedule) error

	// InsertScheduleVersion stores v as a new version row. A row already
	// stored for (ScheduleID, Version) is ErrConflict.
	InsertScheduleVersion(ctx context.Context, v ScheduleVersion) error

	// CloseScheduleVersion marks the schedule's version row superseded at
	// supersededAt, its firings ending at endsAt (zero: none kept), the
	// planner having got to plannedUntil under it (zero: not recorded).
	// Only an open row is written; a schedule stored without history (no
	// row for the version) or a row already closed is left alone, without
	// an error.
	CloseScheduleVersion(ctx context.Context, scheduleID string, version int64, supersededAt, endsAt, plannedUntil time.Time) error
}
