// Package record holds sched's three records and their vocabulary: a
// Schedule is the future (what to run, when, and how to treat lateness,
// overlap and failure), an Occurrence is one scheduled time of one
// schedule version, an Attempt is one delivery of an occurrence to a
// worker. Three records, never one: a schedule's change never rewrites its
// history, and a redelivery never hides the delivery before it. Here too
// are their states, lanes and policies, and every id sched mints (ids.go).
//
// It imports only the time engine, so every layer can speak of records:
// the stores keep them, the engine decides what happens to them, and
// schedctl reads them without linking either.
package record

import (
	"time"

	"github.com/sched-dev/sched/internal/timetable"
)

// MaxPayload is the largest payload a schedule may carry: 256 KiB.
const MaxPayload = 256 << 10

// ScheduleState is the lifecycle state of a schedule.
type ScheduleState string

// Schedule states.
const (
	ScheduleActive    ScheduleState = "ACTIVE"
	SchedulePaused    ScheduleState = "PAUSED"
	ScheduleCanceled  ScheduleState = "CANCELED"
	ScheduleCompleted ScheduleState = "COMPLETED" // an `at` schedule that fired
)

// OccurrenceState is where an occurrence is in its life:
//
//	SCHEDULED -> ENQUEUED -> RUNNING -> SUCCEEDED
//	                ^          |  |
//	                |          |  +-> RETRY_WAIT -> ENQUEUED
//	                |          +----> DEAD (the dead-letter queue)
//	                +---- replay of a DEAD one, same occurrence_id
//	side states: MISSED, CANCELED, SKIPPED_OVERLAP
type OccurrenceState string

// Occurrence states.
const (
	OccurrenceScheduled      OccurrenceState = "SCHEDULED"
	OccurrenceEnqueued       OccurrenceState = "ENQUEUED"
	OccurrenceRunning        OccurrenceState = "RUNNING"
	OccurrenceSucceeded      OccurrenceState = "SUCCEEDED"
	OccurrenceRetryWait      OccurrenceState = "RETRY_WAIT"
	OccurrenceDead           OccurrenceState = "DEAD"
	OccurrenceMissed         OccurrenceState = "MISSED"
	OccurrenceCanceled       OccurrenceState = "CANCELED"
	OccurrenceSkippedOverlap OccurrenceState = "SKIPPED_OVERLAP"
)

// Lane partitions a tenant's queue so that strict capacity is never consumed
// by flexible or catch-up work.
type Lane string

// Lanes.
const (
	LaneStrict   Lane = "strict"
	LaneFlexible Lane = "flexible"
	LaneCatchUp  Lane = "catchup"
)

// AttemptResult is how a delivery ended. It is empty while the attempt runs.
type AttemptResult string

// Attempt results.
const (
	ResultSucceeded       AttemptResult = "SUCCEEDED"
	ResultFailedRetryable AttemptResult = "FAILED_RETRYABLE"
	ResultFailedPermanent AttemptResult = "FAILED_PERMANENT"
	ResultLeaseExpired    AttemptResult = "LEASE_EXPIRED"
)

// DeadReason says why an occurrence went DEAD (to the dead-letter queue).
type DeadReason string

// Dead reasons. Empty on an occurrence that is not DEAD; a replay clears it.
const (
	DeadPermanentFailure     DeadReason = "permanent_failure"      // a worker nacked it as permanent
	DeadAttemptsExhausted    DeadReason = "attempts_exhausted"     // the retry policy's max attempts were used up
	DeadDeadlinePassed       DeadReason = "deadline_passed"        // the next retry would start after the retry deadline
	DeadRetryBudgetExhausted DeadReason = "retry_budget_exhausted" // the tenant had too many occurrences waiting to retry
)

// MisfirePolicy says what happens to firings found later than
// MaxLateness.
type MisfirePolicy string

// Misfire policies.
const (
	MisfireSkip     MisfirePolicy = "skip"      // all late firings become MISSED
	MisfireFireOnce MisfirePolicy = "fire_once" // the most recent fires, the rest are MISSED
	MisfireCatchUp  MisfirePolicy = "catch_up"  // the most recent CatchUpK fire, oldest first
)

// OverlapPolicy says what a new occurrence does while one of the same
// schedule is running.
type OverlapPolicy string

// Overlap policies.
const (
	OverlapAllow         OverlapPolicy = "allow"
	OverlapSkipIfRunning OverlapPolicy = "skip_if_running"
	OverlapQueueOne      OverlapPolicy = "queue_one"
)

// RetryPolicy bounds the retries of a retryable failure: the delay before
// attempt n+1 is random(0, min(BackoffCap, BackoffBase*2^(n-1))), and the
// occurrence goes DEAD after MaxAttempts attempts or once Deadline has passed
// since its scheduled time, whichever comes first.
type RetryPolicy struct {
	MaxAttempts int
	BackoffBase time.Duration
	BackoffCap  time.Duration
	Deadline    time.Duration
}

// Schedule is the future: what to run, when, and how to handle lateness,
// overlap and failure. Every update, pause or cancel bumps Version;
// occurrences are tied to the version that produced them.
type Schedule struct {
	TenantID   string
	ScheduleID string // globally unique; occurrence ids hash it
	// Shard is hash(schedule_id) mod N, set by the engine; planners scan
	// only the shards they lease.
	Shard int
	Name  string

	// Timing, as the user wrote it; see timetable.Definition.
	Kind      timetable.Kind
	Expr      string    // cron expression, RFC 3339 instant or Go duration
	TimeZone  string    // IANA zone name
	Anchor    time.Time // every: the instant intervals count from; zero for none
	DSTGap    timetable.GapPolicy
	DSTRepeat timetable.RepeatPolicy

	Version int64 // 1 at creation
	State   ScheduleState
	// NextRunAt is the planner's durable UTC cursor: the next firing not yet
	// materialized. Zero when there is none (completed, canceled).
	NextRunAt time.Time

	Queue   string
	Payload []byte // opaque to the scheduler, at most MaxPayload bytes

	MisfirePolicy  MisfirePolicy
	MaxLateness    time.Duration
	CatchUpK       int // catch_up only: 1..1000
	OverlapPolicy  OverlapPolicy
	FlexibleWindow time.Duration // 0: strict
	Retry          RetryPolicy

	// IdempotencyKey is the caller's key for an idempotent create, unique
	// per tenant; empty for none.
	IdempotencyKey string

	// MissedCount counts firings the planner found too late and recorded
	// without an occurrence row: each recovery records at most a bounded
	// number of MISSED rows and only counts the rest.
	MissedCount int64

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Definition returns the schedule's timing for the time engine.
func (s *Schedule) Definition() timetable.Definition {
	return timetable.Definition{
		Kind:      s.Kind,
		Expr:      s.Expr,
		TimeZone:  s.TimeZone,
		Anchor:    s.Anchor,
		DSTGap:    s.DSTGap,
		DSTRepeat: s.DSTRepeat,
	}
}

// PlannerFields returns the fields of s that the planner reads, and that
// DueSchedules must return: its identity, its definition, version,
// state, shard and cursor, and the policies that shape its occurrences.
// The others are zero.
func (s *Schedule) PlannerFields() Schedule {
	return Schedule{
		ScheduleID: s.ScheduleID, TenantID: s.TenantID, Shard: s.Shard,
		Kind: s.Kind, Expr: s.Expr, TimeZone: s.TimeZone, Anchor: s.Anchor, DSTGap: s.DSTGap, DSTRepeat: s.DSTRepeat,
		Version: s.Version, State: s.State, NextRunAt: s.NextRunAt, Queue: s.Queue,
		MisfirePolicy: s.MisfirePolicy, MaxLateness: s.MaxLateness, CatchUpK: s.CatchUpK,
		OverlapPolicy: s.OverlapPolicy, FlexibleWindow: s.FlexibleWindow,
	}
}

// Occurrence is one scheduled time of one schedule version. At most one
// exists per (ScheduleID, ScheduleVersion, ScheduledFor), and its id is
// derived from those three (OccurrenceID), so a second materialization of
// the same firing, by a restarted or stale node, is a no-op.
type Occurrence struct {
	OccurrenceID    string // OccurrenceID(ScheduleID, ScheduleVersion, ScheduledFor)
	TenantID        string // the schedule's tenant
	ScheduleID      string
	ScheduleVersion int64
	ScheduledFor    time.Time // UTC, a whole second
	// AvailableAt is when a worker may first claim it: ScheduledFor for
	// strict schedules, plus a stable offset within the flexible window
	// otherwise; later, the end of a retry backoff.
	AvailableAt    time.Time
	EnqueuedAt     time.Time // zero until enqueued
	State          OccurrenceState
	Lane           Lane
	Queue          string
	AttemptCount   int       // attempts started so far
	FirstClaimedAt time.Time // zero until first claimed
	FinishedAt     time.Time // zero until SUCCEEDED, DEAD, MISSED, CANCELED or SKIPPED_OVERLAP

	// OverlapPolicy is the policy of the schedule version that produced
	// the occurrence, decided at claim time.
	OverlapPolicy OverlapPolicy
	// ShardEpoch is the epoch of the shard lease the planner held when it
	// wrote the occurrence (0 when written outside the planner): an audit
	// trail for fencing.
	ShardEpoch int64
	// AttemptFloor is AttemptCount as of the last replay (0 before any):
	// the retry policy's max attempts counts attempts above it, so a
	// replayed occurrence gets a fresh set of retries while attempt numbers
	// keep growing.
	AttemptFloor int
	// RetryFrom is when the retry deadline starts counting: ScheduledFor,
	// or the time of the last replay.
	RetryFrom time.Time

	// TriggerKey is set on a manual occurrence (a trigger outside the
	// schedule's timetable): the caller's idempotency key, or a random one.
	// Empty for every occurrence the planner writes. It is part of the
	// natural key, so a manual occurrence never collides with the planner's
	// firing of the same second; its id is ManualOccurrenceID.
	TriggerKey string
	// DeadReason says why the occurrence is DEAD; empty otherwise. Kept
	// when a purge cancels a DEAD occurrence, cleared by a replay.
	DeadReason DeadReason
	// LastError is the error of the occurrence's latest attempt (the
	// worker's nack message), empty when it has none. Read only: stores
	// fill it on reads from the attempt that holds it.
	LastError string
}

// Manual reports whether o was triggered by hand rather than by the
// schedule's timetable.
func (o *Occurrence) Manual() bool { return o.TriggerKey != "" }

// Attempt is one delivery of an occurrence to a worker, under a visibility
// lease. Attempt (1, 2, ...) is the fencing token: acks, nacks and
// heartbeats must present the current one, or get ErrStaleAttempt.
type Attempt struct {
	AttemptID      string // AttemptID(OccurrenceID, Attempt)
	TenantID       string
	OccurrenceID   string
	Attempt        int64
	WorkerID       string
	ClaimedAt      time.Time
	LeaseExpiresAt time.Time
	FinishedAt     time.Time     // zero while running
	Result         AttemptResult // empty while running
	Error          string        // the worker's error for a failed attempt
}
