package store

import (
	"context"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// QueueTx holds the statements the engine's queue composes inside a
// transaction (see Tx). None of them decides anything: the reads return
// the facts the queue's rules need (engine/queuerules.go), and the writes
// apply what the engine decided, each under the condition its comment
// states, in as few statements as the batch allows.
type QueueTx interface {
	// ClaimCandidates reads up to r.Limit claimable occurrences of one lane
	// of a tenant's queue: ENQUEUED or RETRY_WAIT with available_at <= r.Now,
	// oldest available_at first (ties by Pos), strictly after r.After. They
	// are appended to buf (reused by the caller between claims) and
	// returned. Each carries the schedule's current payload and, when its
	// overlap policy is not allow, the facts the overlap rule needs
	// (ClaimCandidate.Running, PendingBefore, Contended) as they stand once
	// this transaction is the only one deciding that schedule's overlap.
	// For a candidate of policy allow the facts are left zero and cost
	// nothing. On PostgreSQL the candidates are locked (FOR UPDATE SKIP
	// LOCKED), so concurrent claims read disjoint sets.
	ClaimCandidates(ctx context.Context, r CandidateRead, buf []ClaimCandidate) ([]ClaimCandidate, error)
	// ClaimRows claims cands, all read by ClaimCandidates in this
	// transaction: each becomes RUNNING under a new attempt (attempt_count
	// + 1, the fencing token) of worker w.WorkerID, claimed at w.Now and
	// leased until w.Now + w.Lease, with first_claimed_at set if unset; a
	// previous attempt moves to the history. The deliveries are appended
	// to out, in cands' order. Writing fewer rows than cands is an error.
	ClaimRows(ctx context.Context, w ClaimWrite, cands []*ClaimCandidate, out []Claimed) ([]Claimed, error)
	// SkipOverlap marks cands, read by ClaimCandidates in this transaction,
	// SKIPPED_OVERLAP (finished at now): the overlap rule left them no
	// delivery.
	SkipOverlap(ctx context.Context, now time.Time, cands []*ClaimCandidate) error

	// FinishAttempts applies a batch of acks and nacks, each with the state
	// the engine decided (see FinishParams), as Store.FinishAttempts does,
	// within this transaction.
	FinishAttempts(ctx context.Context, ps []FinishParams) ([]FinishResult, error)
	// NackFacts reads what deciding a retryable nack needs: the
	// occurrence, its schedule's version, state and retry policy, and how
	// many of the tenant's occurrences are RETRY_WAIT (the retry budget).
	// The occurrence and its schedule stay as read until the transaction
	// ends (PostgreSQL locks them; SQLite has one writer). Another tenant's
	// occurrence is ErrNotFound.
	NackFacts(ctx context.Context, tenantID, occurrenceID string) (NackFacts, error)

	// ExpiredAttempts reads up to limit attempts whose lease ran out at or
	// before now, oldest lease first, with the facts deciding their
	// occurrences' fate needs. On PostgreSQL the rows are locked, and a row
	// another transaction is writing (a late ack) is left to the next
	// pass.
	ExpiredAttempts(ctx context.Context, now time.Time, limit int) ([]ExpiredAttempt, error)
	// EndExpired ends the attempts of ends, read by ExpiredAttempts in this
	// transaction, with result LEASE_EXPIRED at now, and moves each
	// occurrence to its End.State: ENQUEUED (claimable again at now),
	// or DEAD (with End.DeadReason) or CANCELED, both finished at now.
	// Each write applies only while the occurrence is RUNNING at
	// End.Attempt; writing fewer rows than ends is an error.
	EndExpired(ctx context.Context, now time.Time, ends []ExpiredEnd) error

	// LockOccurrence reads one occurrence of a tenant and keeps it as read
	// until the transaction ends. Another tenant's occurrence is
	// ErrNotFound.
	LockOccurrence(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error)
	// Requeue puts a DEAD occurrence back on the queue as p says (a
	// replay), and returns it as written: state ENQUEUED, open, not
	// finished, no dead reason, available at p.AvailableAt, with
	// p.AttemptFloor and p.RetryFrom. It applies only while the occurrence
	// is DEAD; otherwise it is ErrConflict.
	Requeue(ctx context.Context, p RequeueParams) (*record.Occurrence, error)
	// DeadOccurrences returns the ids of up to p.Limit of the tenant's DEAD
	// occurrences that match p's schedule and queue (empty: any), oldest
	// scheduled first (ties by id). On PostgreSQL they are locked, and one
	// another transaction holds (a replay) is passed over.
	DeadOccurrences(ctx context.Context, p PurgeDeadParams) ([]string, error)
	// CancelDead makes the tenant's occurrences ids CANCELED, finished at
	// now, where they are still DEAD, and leaves everything else of them
	// as it is (their dead reason and attempts). It returns how many it
	// wrote.
	CancelDead(ctx context.Context, tenantID string, ids []string, now time.Time) (int, error)

	// CountRunning counts the tenant's RUNNING occurrences in every queue,
	// this transaction's own claims included: what a claim checks against
	// the tenant's running quota. One walk of a partial index of the
	// RUNNING rows of that tenant. The count stays true until the
	// transaction ends: SQLite has one writer; PostgreSQL first takes the
	// tenant's running key (a transaction-scoped advisory lock), so that
	// the claims of one tenant with a quota count one after the other on
	// every node. With wait false a key another transaction holds is not
	// waited for: held is false and nothing is counted (a claim of many
	// tenants, which could otherwise wait for another in a cycle).
	CountRunning(ctx context.Context, tenantID string, wait bool) (n int64, held bool, err error)
}

// CandidateRead selects claim candidates of one lane (QueueTx.ClaimCandidates).
type CandidateRead struct {
	TenantID string
	Queue    string
	Lane     record.Lane
	Now      time.Time
	After    CandidatePos // the zero value: from the start of the lane
	Limit    int
}

// CandidatePos is a position in a lane's claim order: (available_at, Pos)
// of a candidate, in unix milliseconds. The zero value is before every
// candidate.
type CandidatePos struct {
	Set         bool
	AvailableAt int64
	Pos         int64
}

// ClaimCandidate is a claimable occurrence read by a claim, with the facts
// of its schedule the overlap rule needs.
type ClaimCandidate struct {
	Occurrence record.Occurrence
	// Payload is the schedule's current payload.
	Payload []byte
	// Pos orders candidates of equal available_at in a lane, and is the
	// driver's handle of the row (a row number); the engine passes it back
	// only through CandidatePos.
	Pos int64

	// The overlap facts, read for a policy other than allow only.
	//
	// Running: another occurrence of the schedule is RUNNING.
	Running bool
	// PendingBefore counts the schedule's pending occurrences (SCHEDULED,
	// ENQUEUED, RETRY_WAIT) ordered before this one by (scheduled_for,
	// schedule_version, trigger_key): 0 when it is the earliest.
	PendingBefore int
	// Contended: another transaction is deciding this schedule's overlap
	// right now (PostgreSQL), so this one must leave the candidate alone.
	Contended bool
}

// After returns the position just after c, for the next read of its lane.
func (c *ClaimCandidate) After() CandidatePos {
	return CandidatePos{Set: true, AvailableAt: c.Occurrence.AvailableAt.UnixMilli(), Pos: c.Pos}
}

// ClaimWrite is the attempt a claim starts (QueueTx.ClaimRows).
type ClaimWrite struct {
	WorkerID string
	Now      time.Time
	Lease    time.Duration
}

// Delivery is what a claim of candidate c under w hands out: the
// occurrence RUNNING under the next attempt (first claimed now, unless it
// was before), that attempt, and the payload read with it. Times are to
// the millisecond, as stored. Every claim answers with it, the drivers'
// row by row (ClaimRows) and the engine's runs alike.
func Delivery(c *ClaimCandidate, w ClaimWrite) Claimed {
	o := c.Occurrence
	now := time.UnixMilli(w.Now.UnixMilli()).UTC()
	expires := time.UnixMilli(w.Now.Add(w.Lease).UnixMilli()).UTC()
	o.State = record.OccurrenceRunning
	o.AttemptCount++
	if o.FirstClaimedAt.IsZero() {
		o.FirstClaimedAt = now
	}
	n := int64(o.AttemptCount)
	return Claimed{Occurrence: o, Payload: c.Payload, Attempt: record.Attempt{
		AttemptID: record.AttemptID(o.OccurrenceID, n), TenantID: o.TenantID, OccurrenceID: o.OccurrenceID,
		Attempt: n, WorkerID: w.WorkerID, ClaimedAt: now, LeaseExpiresAt: expires,
	}}
}

// NackFacts is what deciding a retryable nack reads (QueueTx.NackFacts).
type NackFacts struct {
	Occurrence      record.Occurrence
	ScheduleVersion int64
	ScheduleState   record.ScheduleState
	Retry           record.RetryPolicy
	// RetryWaiting counts the tenant's RETRY_WAIT occurrences.
	RetryWaiting int
}

// ExpiredAttempt is an attempt whose lease ran out, with its occurrence's
// retry counters and its schedule's news (QueueTx.ExpiredAttempts).
type ExpiredAttempt struct {
	OccurrenceID string
	TenantID     string
	// Attempt is the occurrence's attempt_count: the expired attempt.
	Attempt      int64
	AttemptFloor int
	RetryFrom    time.Time
	// OccurrenceVersion is the schedule version that produced the
	// occurrence; ScheduleVersion and ScheduleState are the schedule's now.
	OccurrenceVersion int64
	ScheduleVersion   int64
	ScheduleState     record.ScheduleState
	Retry             record.RetryPolicy
}

// ExpiredEnd is what becomes of an expired attempt's occurrence
// (QueueTx.EndExpired).
type ExpiredEnd struct {
	OccurrenceID string
	Attempt      int64
	State        record.OccurrenceState // ENQUEUED, DEAD or CANCELED
	DeadReason   record.DeadReason      // with DEAD only
}

// RequeueParams puts a DEAD occurrence back on the queue (QueueTx.Requeue).
type RequeueParams struct {
	TenantID     string
	OccurrenceID string
	AvailableAt  time.Time
	AttemptFloor int
	RetryFrom    time.Time
}
