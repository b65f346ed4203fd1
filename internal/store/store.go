// Package store defines sched's durable records and the contract
// every store driver keeps: the record types and their states, the derived
// occurrence id, and the sentinel errors drivers translate their native
// errors into. It imports no database driver; drivers live in
// subpackages (store/sqlite, later store/postgres) and are checked by one
// conformance suite (store/storetest).
//
// Three records, never one: a Schedule is the future, an Occurrence is one
// scheduled time, an Attempt is one delivery of an occurrence.
//
// Time encoding. Drivers keep every instant to the millisecond, in UTC
// (SQLite: INTEGER unix milliseconds), and every duration to the
// millisecond. Milliseconds, not seconds, because the queue's times need
// sub-second precision (a 2 s test lease, heartbeats at a third of it,
// delivery-lag histograms with sub-second buckets); integers, not text,
// because they compare and index as numbers with no format or zone to parse,
// map one to one onto PostgreSQL's BIGINT, and cover year 9999 with room to
// spare. ScheduledFor is the exception that proves the rule: it is always a
// whole second, because the occurrence id hashes it as unix seconds.
package store

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"time"

	"github.com/sched-dev/sched/internal/timetable"
)

// Sentinel errors. Every driver translates its native errors into these in
// one function, so the engine and the API never look at a driver's error
// types. Test with errors.Is; the driver's message stays in the chain.
var (
	// ErrNotFound: no such record for this tenant. A record of another
	// tenant is not found either, so ids cannot be probed across tenants.
	// A write that references a missing parent (an occurrence of a schedule
	// that does not exist for its tenant) is ErrNotFound too.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a uniqueness rule refused the write (a schedule id or a
	// tenant's idempotency key already taken), or a conditional write found
	// the record changed since it was read.
	ErrConflict = errors.New("store: conflict")
	// ErrStaleAttempt: an ack, nack or heartbeat presented an attempt number
	// (fencing token) that is no longer the occurrence's current one.
	ErrStaleAttempt = errors.New("store: stale attempt")
	// ErrBusy: the store is locked or busy (SQLite: SQLITE_BUSY after
	// busy_timeout). Nothing was written; the operation can be retried.
	ErrBusy = errors.New("store: busy")
	// ErrStoreFull: the store is out of space. Nothing was written; the
	// daemon stays up and answers store_full until space is freed.
	ErrStoreFull = errors.New("store: full")
	// ErrCorrupt: the store's integrity check failed. The store refuses to
	// serve and never repairs silently.
	ErrCorrupt = errors.New("store: corrupt")
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

// ListOccurrencesParams selects a tenant's occurrences, ordered by
// (scheduled_for, occurrence_id), oldest first, or newest first with
// Reverse. Every filter is optional except TenantID.
//
// Paging is by keyset: After is the key of the last occurrence of the
// previous page, and only occurrences strictly after it in the list's
// order come back. A row added while a client pages appears at most once,
// and every row that existed when paging began appears exactly once.
type ListOccurrencesParams struct {
	TenantID   string
	ScheduleID string          // empty: every schedule of the tenant
	State      OccurrenceState // empty: any state
	Queue      string          // empty: any queue
	Limit      int             // 0 means DefaultListLimit; at most MaxListLimit
	Reverse    bool            // newest first
	After      *OccurrenceKey  // nil: from the start
}

// OccurrenceKey is an occurrence's position in a listing.
type OccurrenceKey struct {
	ScheduledFor time.Time
	OccurrenceID string
}

// Limits on list operations.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// b32 is RFC 4648 base32 in lower case without padding: short, case-stable
// ids that are safe in URLs, file names and log lines.
var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// b32hex is RFC 4648 base32hex in lower case without padding: its alphabet
// is in ASCII order, so encodings of equal length sort like their numbers.
var b32hex = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// OccurrenceID is the id of the occurrence of schedule version version at
// scheduledFor. It is derived, never random, so the same firing gets the
// same id after a crash, a failover, a retry or a manual replay, and workers
// can deduplicate on it.
//
// It is "occ_", then scheduledFor as UTC unix seconds plus 2^39 in 8
// characters of lower-case base32hex (0-9a-v, which sorts like the numbers
// it encodes), then the first 80 bits of the SHA-256 of a length-prefixed
// encoding of a type tag, the schedule id, the version and scheduledFor as
// UTC unix seconds, in 16 characters of base32. Sub-second parts are not
// part of the id; stores refuse them.
//
// The time prefix makes ids sort by scheduled time, so the ids of one burst
// of firings are neighbours in an index rather than spread over all of it:
// a store's id index takes a burst as appends, not as random writes. The
// hash tells apart the firings of one second; two that collided would be
// refused by the id's unique index, never merged.
//
// The encoding is pinned by a test: changing it after a release would give
// every future firing a new id and break deduplication across an upgrade.
func OccurrenceID(scheduleID string, version int64, scheduledFor time.Time) string {
	// The hash input is built on the stack and hashed with Sum256, and the
	// id encoded into one array: the planner derives an id per firing, and
	// a hash.Hash plus its intermediate slices were a tenth of its
	// allocations.
	var buf [96]byte
	b := appendField(buf[:0], "occurrence")
	b = appendField(b, scheduleID)
	b = appendInt(b, version)
	sec := scheduledFor.Unix()
	b = appendInt(b, sec)
	sum := sha256.Sum256(b)
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(sec+1<<39)<<24) // 40 bits, left-aligned
	var id [4 + 8 + 16]byte
	copy(id[:], "occ_")
	b32hex.Encode(id[4:12], t[:5])
	b32.Encode(id[12:], sum[:10])
	return string(id[:])
}

// ManualOccurrenceID is the id of the manual occurrence of a schedule
// triggered with key. It depends on the schedule and the key alone, not on
// the time of the trigger, so a retried trigger names the same occurrence.
//
// It is "occ_z", then the first 120 bits of the SHA-256 of a
// length-prefixed encoding of a type tag, the schedule id and the key, in
// 24 characters of base32. "z" is outside base32hex, so manual ids never
// look like, and sort after, every timetable id (OccurrenceID).
func ManualOccurrenceID(scheduleID, key string) string {
	var buf [160]byte
	b := appendField(buf[:0], "manual")
	b = appendField(b, scheduleID)
	b = appendField(b, key)
	sum := sha256.Sum256(b)
	var id [5 + 24]byte
	copy(id[:], "occ_z")
	b32.Encode(id[5:], sum[:15])
	return string(id[:])
}

// AttemptID is the id of attempt number attempt of an occurrence, derived
// like OccurrenceID, so a retried claim after an ambiguous commit names the
// same row.
func AttemptID(occurrenceID string, attempt int64) string {
	var buf [80]byte
	b := appendField(buf[:0], "attempt")
	b = appendField(b, occurrenceID)
	b = appendInt(b, attempt)
	sum := sha256.Sum256(b)
	var id [4 + 26]byte
	copy(id[:], "att_")
	b32.Encode(id[4:], sum[:16])
	return string(id[:])
}

// appendField appends s with a big-endian uint64 length prefix, so that no
// two different field sequences encode to the same bytes.
func appendField(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendInt appends v as a field of its 8 big-endian bytes.
func appendInt(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint64(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}
