package store

import (
	"context"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// RunTx holds the statements of leased runs (docs/engine.md, "Leased
// runs"): a claim that leases a range of a lane with one row, acks
// appended to a log as ranges of it, and the fold that writes the
// occurrence rows afterwards. A store whose Tx implements it gets the
// run path; the engine claims row by row otherwise. As everywhere in a
// Tx, the statements decide nothing: the engine says which candidates a
// run takes, which ranges an ack covers and when a run is folded.
//
// Two invariants are the store's to keep, on every write and not by each
// statement: a row that becomes claimable (ENQUEUED or RETRY_WAIT) in a
// lane is written at a position after the lane's head (its available_at
// at least the head's + 1 ms), and InsertRun moves the head to the run's
// last position in the transaction that stores the run.
type RunTx interface {
	// LaneHead returns the lane's head: every claimable row of the lane
	// at or before it is held by an unfolded run (Set is false for a lane
	// no run was ever taken from). It also makes this transaction the one
	// claiming from the lane until it ends: a claim of the lane on
	// another node waits, and a write that makes a row of the lane
	// claimable either commits before the head is read or reads the head
	// this transaction leaves (SQLite has one writer; PostgreSQL locks
	// the lane). With wait false a lane another transaction holds is not
	// waited for: held is false and nothing is read (a claim of many
	// tenants, which could otherwise wait for another in a cycle).
	LaneHead(ctx context.Context, lane Lane, wait bool) (head CandidatePos, held bool, err error)
	// InsertRun stores r (its ID ignored) and moves its lane's head to
	// r.Last, and returns the run's id. r.Last must be after the lane's
	// head.
	InsertRun(ctx context.Context, r *Run) (int64, error)
	// RequeueRows puts the lane's rows at positions pos, read by
	// ClaimCandidates in this transaction and still claimable, back on
	// the lane at available_at at (after the head, by the floor),
	// untouched otherwise: a claim looks at them again then.
	RequeueRows(ctx context.Context, lane Lane, pos []CandidatePos, at time.Time) error

	// Runs reads the unfolded runs f selects, by id, and keeps them as
	// read until the transaction ends (SQLite has one writer).
	Runs(ctx context.Context, f RunFilter) ([]Run, error)
	// RunAcks reads the ack ranges of run id, in position order.
	RunAcks(ctx context.Context, runID int64) ([]RunAck, error)
	// AppendRunAcks stores acks and adds each one's N to its run's
	// acked count.
	AppendRunAcks(ctx context.Context, acks []RunAck) error
	// ExtendRun sets run id's lease to until; false when there is no such
	// run (folded).
	ExtendRun(ctx context.Context, id int64, until time.Time) (bool, error)
	// FoldRange writes the claimable rows of r's lane in [first, last] as
	// attempt attempt_count+1 of r (worker, claim time, lease): SUCCEEDED
	// and finished at f.AckedAt when it is set, RUNNING otherwise. A
	// previous attempt of each moves to the history first. It returns how
	// many rows it wrote.
	FoldRange(ctx context.Context, r *Run, first, last CandidatePos, f FoldWrite) (int, error)
	// DeleteRun deletes run id and its ack ranges.
	DeleteRun(ctx context.Context, id int64) error

	// LeasedItems reads, for each of the tenant's occurrences ids that
	// exists, its position and attempt count, and the unfolded run whose
	// range holds it (RunID 0: none; only a claimable row is held) with
	// whether an ack range of that run covers it.
	LeasedItems(ctx context.Context, tenantID string, ids []string) ([]LeasedItem, error)
	// ScheduleRuns returns the ids of the unfolded runs that hold an
	// occurrence of the tenant's schedule.
	ScheduleRuns(ctx context.Context, tenantID, scheduleID string) ([]int64, error)
	// RunTotals sums, per lane of the tenant's unfolded runs (every
	// tenant's with tenantID ""), the occurrences they hold and how many
	// of those are acked.
	RunTotals(ctx context.Context, tenantID string) ([]RunTotal, error)
}

// RelaxedTx is offered by a store whose transactions can commit without
// waiting for the database to flush them (PostgreSQL: synchronous_commit
// off for the transaction). The engine asks for it only in a transaction
// whose loss can cost a redelivery under a new attempt and nothing else:
// acks and nacks, a fold; never a claim. A crash of the database may then lose its last such
// commits (docs/engine.md says how many); a create, a plan, an update or
// any other write never asks.
type RelaxedTx interface {
	RelaxDurability(ctx context.Context) error
}

// Lane names one lane of a tenant's queue.
type Lane struct {
	TenantID string
	Queue    string
	Lane     record.Lane
}

// Run is a leased range of a lane: the occurrences a claim handed out
// with one row.
type Run struct {
	ID int64
	Lane
	// First and Last bound the run's positions, both included.
	First, Last CandidatePos
	// N counts the occurrences the run holds; Acked how many of them
	// ack ranges cover.
	N, Acked       int
	WorkerID       string
	ClaimedAt      time.Time
	LeaseExpiresAt time.Time
}

// RunAck is an ack range: the occurrences of run RunID in [First, Last],
// N of them, acked at At.
type RunAck struct {
	RunID       int64
	First, Last CandidatePos
	N           int
	At          time.Time
}

// RunFilter selects unfolded runs (RunTx.Runs). Exactly one of All,
// IDs, TenantID, ExpiredAt and FinishedBefore is set; Limit caps the
// answer (0: no cap).
type RunFilter struct {
	All      bool
	IDs      []int64
	TenantID string
	// ExpiredAt: runs whose lease ran out at or before it, soonest first.
	ExpiredAt time.Time
	// FinishedBefore: runs acked whole that were claimed before it.
	FinishedBefore time.Time
	Limit          int
}

// FoldWrite says what FoldRange writes: SUCCEEDED at AckedAt when it is
// set, RUNNING under the run's lease otherwise.
type FoldWrite struct {
	AckedAt time.Time
}

// LeasedItem is where an occurrence stands with respect to the runs
// (RunTx.LeasedItems).
type LeasedItem struct {
	OccurrenceID string
	Lane
	Pos          CandidatePos
	State        record.OccurrenceState
	AttemptCount int
	RunID        int64
	Acked        bool
}

// RunTotal is what a lane's unfolded runs hold (RunTx.RunTotals).
type RunTotal struct {
	Lane
	Leased int64
	Acked  int64
}
