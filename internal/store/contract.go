package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// ErrStaleEpoch: a planner write presented a shard lease (owner and epoch)
// that is no longer live at the write's time. Nothing was written. This is
// the fence that keeps a paused or partitioned node from acting on shards
// it lost.
var ErrStaleEpoch = errors.New("store: stale shard epoch")

// Store is the contract between the engine and a store driver. Every
// driver (store/sqlite, store/postgres) implements it and passes the
// conformance suite in store/storetest unchanged.
//
// Time is an input: every method that compares with "now" takes Now in its
// params, from the engine's injected clock (plus its measured offset to a
// store's own clock, see ClockSource). Correctness rests on unique keys,
// conditional writes and row locks, never on isolation levels: every method that changes a record says
// what condition the write is under, and what happens when the condition no
// longer holds.
type Store interface {
	// Begin starts a write transaction (see Tx).
	Begin(ctx context.Context) (Tx, error)

	// Schedules.
	InsertSchedule(ctx context.Context, s *record.Schedule) error
	GetSchedule(ctx context.Context, tenantID, scheduleID string) (*record.Schedule, error)
	// GetScheduleByName returns the tenant's live (not CANCELED)
	// schedule of that name, else the canceled one of that name changed
	// last: a name keeps answering after its schedule was canceled, until
	// a new schedule takes it. ErrNotFound when no schedule ever held it.
	GetScheduleByName(ctx context.Context, tenantID, name string) (*record.Schedule, error)
	GetScheduleByIdempotencyKey(ctx context.Context, tenantID, key string) (*record.Schedule, error)
	ListSchedules(ctx context.Context, p ListSchedulesParams) ([]record.Schedule, error)

	// The planner. The shard leases are taken, renewed and given back by
	// the engine's rule, in a transaction of PlannerTx statements.
	InitShards(ctx context.Context, n int) (int, error)
	ListShardLeases(ctx context.Context) ([]ShardLease, error)
	DueSchedules(ctx context.Context, p DueSchedulesParams) ([]record.Schedule, error)
	CommitPlan(ctx context.Context, p Plan) (PlanResult, error)

	// Occurrences.
	InsertOccurrences(ctx context.Context, occs []record.Occurrence) (int, error)
	GetOccurrence(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error)
	ListOccurrences(ctx context.Context, p ListOccurrencesParams) ([]record.Occurrence, error)
	CountOccurrences(ctx context.Context, tenantID string, state record.OccurrenceState) (int, error)
	ListAttempts(ctx context.Context, p ListAttemptsParams) ([]record.Attempt, error)

	// The queue. Its rules (what a claim takes, skips or leaves waiting,
	// what an expired lease or a nack leads to, what a replay and a purge
	// write) live in the engine (engine/queuerules.go), composed from the
	// statements of QueueTx; the methods here decide nothing.
	Heartbeat(ctx context.Context, p HeartbeatParams) (HeartbeatResult, error)
	// FinishAttempts is QueueTx.FinishAttempts in a transaction of its
	// own.
	FinishAttempts(ctx context.Context, ps []FinishParams) ([]FinishResult, error)
	NextAvailable(ctx context.Context, tenantID, queue string) (time.Time, error)
	// FirstUndelivered returns the earliest scheduled_for among the
	// schedule's occurrences of version that are ENQUEUED, never claimed
	// (attempt_count 0) and not manual (TriggerKey empty): the next firing
	// of its timetable not yet delivered, possibly overdue. Zero when there
	// is none. It reads the schedule's open occurrences only, never its
	// history.
	FirstUndelivered(ctx context.Context, tenantID, scheduleID string, version int64) (time.Time, error)

	// Seeing it (see StatsStore).
	StatsStore

	// Nodes (see NodeStore).
	NodeStore

	// The schedules' version history (see HistoryStore).
	HistoryStore
	// Simulated outages (see OutageStore).
	OutageStore
	// Tenants and their tokens (see TenantStore).
	TenantStore
	// Targets (see TargetStore).
	TargetStore
	// The audit log (see AuditStore).
	AuditStore
	// The pacing of catch-up firings (see PacingStore).
	PacingStore
	// Finished history removed by age (see RetentionStore).
	RetentionStore
	// The tz rules the schedules were planned under (see ZoneStore).
	ZoneStore

	Close() error
}

// ListSchedulesParams selects a tenant's schedules, in schedule id order
// (ids are time-ordered, so this is creation order).
type ListSchedulesParams struct {
	TenantID string
	State    record.ScheduleState // empty: any state
	After    string               // return ids greater than this one (paging); empty: from the start
	Limit    int                  // 0 means DefaultListLimit; at most MaxListLimit
}

// ShardLease is a planner's hold on one logical shard. Epoch grows every
// time the shard changes owner or is taken again after its lease expired;
// every planner write is conditional on (Shard, Owner, Epoch) and on the
// lease being live at the write's time.
type ShardLease struct {
	Shard     int
	Owner     string
	Epoch     int64
	ExpiresAt time.Time
}

// AcquireShardParams asks for a shard (see engine.AcquireShard): it is
// granted when the shard has no lease, when the lease has expired at Now
// (the epoch grows), or when Owner already holds it (a renewal: the epoch
// stays). A live lease of another owner is ErrConflict.
type AcquireShardParams struct {
	Shard int
	Owner string
	TTL   time.Duration
	Now   time.Time
}

// DueSchedulesParams selects one shard's ACTIVE schedules whose next_run_at
// is at or before Until, earliest cursor first (ties by schedule id). The
// schedules come back with what the planner reads (PlannerFields); a
// driver may leave the rest empty (the payload, the largest column, and
// the name, retry policy, idempotency key, missed count and times): each
// column read costs the reader, and the planner reads every due schedule.
//
// With AfterID set, only schedules after (AfterRunAt, AfterID) in that
// order come back: the planner pages through a shard's due schedules, and
// reads the next page while the previous one commits.
type DueSchedulesParams struct {
	Shard      int
	Until      time.Time
	Limit      int
	AfterRunAt time.Time
	AfterID    string
}

// After reports the keyset position of AfterRunAt and AfterID for a
// query: (next_run_at, schedule_id) must compare greater than it. Without
// AfterID it is a position before every schedule.
func (p DueSchedulesParams) After() (runAtMS int64, id string) {
	if p.AfterID == "" {
		return math.MinInt64, ""
	}
	return p.AfterRunAt.UnixMilli(), p.AfterID
}

// Plan is one planner batch: several schedules' firings committed in one
// transaction under one shard lease.
type Plan struct {
	Lease ShardLease
	Now   time.Time
	Items []PlanItem
}

// PlanItem advances one schedule. The store applies it only if the
// schedule is still ACTIVE at Version with next_run_at = Cursor (a
// conditional write); otherwise it skips the item entirely (Stale) and the
// planner reads the schedule again next pass. When it applies, the store
// sets next_run_at = NextRunAt (zero: none), state = State, adds
// MissedCount to the schedule's count of firings missed without a row,
// and inserts Occurrences (ENQUEUED ones go straight onto the queue with
// enqueued_at = Plan.Now; MISSED ones are history), each stamped with the
// lease's epoch. An occurrence already stored is left alone (Duplicates).
type PlanItem struct {
	TenantID    string
	ScheduleID  string
	Version     int64
	Cursor      time.Time
	NextRunAt   time.Time
	State       record.ScheduleState
	MissedCount int64
	Occurrences []record.Occurrence
}

// PlanResult counts what CommitPlan did.
type PlanResult struct {
	Applied    int // items written
	Stale      int // items whose schedule changed since it was read
	Inserted   int // occurrence rows written
	Duplicates int // occurrences that were already stored
}

// ClaimParams takes up to Limit available occurrences of one tenant's
// queue, each under a new attempt whose lease runs until Now + Lease (the
// engine's claim, engine.ClaimOccurrences).
//
// Available means ENQUEUED or RETRY_WAIT with available_at <= Now. Lanes
// are served in order strict, flexible, catch-up, each oldest available_at
// first, so the other lanes never take strict capacity. The overlap policy
// stored on each occurrence is decided in the same transaction:
// skip_if_running marks it SKIPPED_OVERLAP (finished) while another
// occurrence of the same schedule is RUNNING, including one claimed earlier
// in this batch; queue_one leaves the schedule's earliest pending
// occurrence waiting and marks the others SKIPPED_OVERLAP. A claim sets
// state RUNNING, increments attempt_count (the new attempt number, the
// fencing token), sets first_claimed_at if unset, and inserts the Attempt.
type ClaimParams struct {
	TenantID string
	Queue    string
	WorkerID string
	Limit    int
	Lease    time.Duration
	Now      time.Time
	// Skipped, when not nil, is incremented by the number of occurrences
	// the claim marked SKIPPED_OVERLAP (for metrics). Left alone when the
	// claim fails.
	Skipped *int
	// MaxRunning, when positive, is the tenant's running quota: the claim
	// takes no more than brings the tenant's RUNNING occurrences, in
	// every queue, to MaxRunning (QueueTx.CountRunning, read in the
	// claim's transaction), and nothing once they are there. Zero:
	// unlimited, and nothing is counted.
	MaxRunning int64
}

// ExpireResult counts what the engine's lease expiry
// (engine.ExpireLeases) did: Expired attempts in all, and
// what became of their occurrences.
type ExpireResult struct {
	Expired  int // attempts ended LEASE_EXPIRED
	Requeued int // occurrences claimable again (a redelivery follows)
	Dead     int // occurrences DEAD: DeadAttempts + DeadDeadline
	Canceled int // occurrences CANCELED (their schedule moved on)

	DeadAttempts int // of Dead, those with reason attempts_exhausted
	DeadDeadline int // of Dead, those with reason deadline_passed
}

// PurgeDeadParams selects a tenant's DEAD occurrences to purge
// (QueueTx.DeadOccurrences, engine.PurgeDead); ScheduleID and Queue are
// optional filters.
type PurgeDeadParams struct {
	TenantID   string
	ScheduleID string
	Queue      string
	Now        time.Time
	Limit      int // 1..MaxListLimit
}

// Claimed is one delivery: the occurrence as claimed, its new attempt, and
// the schedule's current payload.
type Claimed struct {
	Occurrence record.Occurrence
	Attempt    record.Attempt
	Payload    []byte
}

// HeartbeatParams extends the lease of the current attempt to Now + Lease.
// Anything but the occurrence's current, unfinished attempt is
// ErrStaleAttempt.
type HeartbeatParams struct {
	TenantID     string
	OccurrenceID string
	Attempt      int64
	Lease        time.Duration
	Now          time.Time
}

// HeartbeatResult answers a heartbeat: the new lease, and whether the
// worker should stop (cooperative cancellation).
type HeartbeatResult struct {
	LeaseExpiresAt time.Time
	Superseded     bool // the schedule has a newer version than the occurrence's
	Canceled       bool // the schedule is CANCELED
}

// FinishParams ends attempt Attempt of an occurrence: an ack or a nack.
// The engine decides State from the result and the retry policy:
// SUCCEEDED, RETRY_WAIT (claimable again at RetryAt), DEAD, or CANCELED.
// SUCCEEDED, DEAD and CANCELED finish the occurrence (finished_at = Now).
//
// CANCELED ends only a FAILED_RETRYABLE attempt: an occurrence whose
// schedule has moved on (the schedule's version is newer than the
// occurrence's schedule_version, or the schedule is CANCELED) is never
// retried, so the engine finishes a retryable nack of it CANCELED instead
// of RETRY_WAIT or DEAD. A permanent nack of it is still DEAD, and an ack
// still SUCCEEDED. The store does not re-check the schedule: the state is
// the engine's decision, like RETRY_WAIT and DEAD. The write
// applies only while Attempt is the occurrence's current attempt and the
// occurrence is RUNNING. The same finish sent twice (a retried ack whose
// answer was lost) finds the attempt already finished with the same Result
// and succeeds without writing; any other finish of an old or finished
// attempt is ErrStaleAttempt.
type FinishParams struct {
	TenantID     string
	OccurrenceID string
	Attempt      int64
	Result       record.AttemptResult
	Error        string
	State        record.OccurrenceState
	RetryAt      time.Time
	Now          time.Time
	// DeadReason is why, when State is DEAD; empty otherwise.
	DeadReason record.DeadReason
}

// FinishResult is the outcome of one FinishParams of a batch: what the
// finish left of the occurrence, or the error for that item alone.
type FinishResult struct {
	// Occurrence holds at least OccurrenceID, TenantID, State and
	// AttemptCount as the finish left them (a store may fill more): the
	// engine needs no more, and reading back every column of every row of
	// a batch of acks was a third of the cost of the batch. A caller that
	// answers with the whole occurrence reads it (QueueTx.LockOccurrence)
	// in the finish's transaction.
	Occurrence record.Occurrence
	Err        error
	// Repeated is true when the finish had already been taken (the same
	// finish sent again) and nothing was written: counters count a finish
	// once.
	Repeated bool
}

// Node registration. Every schedd node on a store heartbeats a row of its
// own; the planners of all nodes read the live rows to share the shards
// evenly (ceil(shards / live nodes) each), and `schedctl cluster` shows
// them. A node row is advisory: it decides how many shards a node asks for,
// never whether a planner write applies (the shard epoch does that). A
// node stopped cleanly removes its own row; the live nodes remove the row
// of one that died once its heartbeat is old enough and its leases have
// expired (RemoveDeadNodes).
//
// These methods are part of the Store interface (NodeStore is embedded in
// it); they are listed apart to keep the planner's contract readable.
type NodeStore interface {
	// HeartbeatNode registers p.NodeID, or renews its row: address and
	// clock offset are overwritten, last_heartbeat = p.Now, expires_at =
	// p.Now + p.TTL; started_at is set on the first heartbeat of the row
	// and kept after. An unconditional upsert: a node always owns its own
	// row. A TTL that is not positive or an empty NodeID is an error.
	HeartbeatNode(ctx context.Context, p NodeHeartbeat) (Node, error)
	// ListNodes returns every node row, live or expired, by node id. A row
	// is live at t when ExpiresAt is after t; callers decide with their
	// own notion of now.
	ListNodes(ctx context.Context) ([]Node, error)
	// RemoveNode deletes the node's row (a clean shutdown); removing a node
	// that has no row is not an error.
	RemoveNode(ctx context.Context, nodeID string) error
	// RemoveDeadNodes deletes, in one conditional statement, the rows of
	// the nodes dead at p.Now (of p.NodeID alone, when set): a row whose
	// last heartbeat is before p.HeartbeatBefore, whose registration has
	// expired (ExpiresAt at or before p.Now) and whose node owns no shard
	// lease live at p.Now (expiring after it). A node that may still hold
	// a live lease is never removed, whatever its heartbeat. It returns the
	// ids removed, in order; none is not an error. The engine decides the
	// bound (engine.DeadNodeLeases) and reads the rows again to say why a
	// node was kept.
	RemoveDeadNodes(ctx context.Context, p RemoveDeadNodesParams) ([]string, error)
}

// RemoveDeadNodesParams selects the dead nodes RemoveDeadNodes removes.
type RemoveDeadNodesParams struct {
	NodeID          string    // empty: every node
	HeartbeatBefore time.Time // only rows whose last heartbeat is before it
	Now             time.Time // expiry of the row and of the leases is judged at it
}

// NodeHeartbeat is one node's heartbeat.
type NodeHeartbeat struct {
	NodeID  string
	Address string        // where the node serves the API (informational)
	TTL     time.Duration // the row is live until Now + TTL
	Now     time.Time
	// ClockOffset is the node's measured offset to the store's clock (the
	// store's minus the node's), recorded for operators, who compare the
	// nodes' clocks with it.
	ClockOffset time.Duration
}

// Node is a registered node.
type Node struct {
	NodeID        string
	Address       string
	StartedAt     time.Time
	LastHeartbeat time.Time
	ExpiresAt     time.Time
	ClockOffset   time.Duration
}

// ClockSource is implemented by stores with a clock of their own (the
// PostgreSQL store): ClockOffset is the store's clock minus the caller's.
// The engine adds it to its own clock to get "now" for every comparison
// the store makes (shard leases, plan commits, claims, claim leases), so
// that nodes with skewed clocks agree. A store without it (SQLite: one
// process, one clock) has offset 0.
type ClockSource interface {
	ClockOffset(ctx context.Context) (time.Duration, error)
}

// StatsStore is what `schedctl status`, `schedctl top` and the metrics'
// gauges read: a snapshot of the queue computed by the store, and the
// per-minute figures every node writes, so that any node can answer for the
// whole cluster. These methods are part of the Store interface.
type StatsStore interface {
	// Snapshot reads the queue as it stands at p.Now, across all tenants
	// or, when p.TenantID is set, of that tenant alone: one pass per
	// figure, each bounded by the number of open (not finished) and DEAD
	// occurrences and of schedules due within the p.Buckets minutes from
	// p.Now, never by the history. A tenant's snapshot reads its own
	// occurrences only, through indexes that lead with the tenant, and
	// the due schedules of the shards it has live schedules on.
	Snapshot(ctx context.Context, p SnapshotParams) (Snapshot, error)
	// WriteStatMinutes upserts rows by (NodeID, Minute), replacing Data,
	// and deletes every row (of any node) whose Minute is before
	// deleteBefore, in one transaction.
	WriteStatMinutes(ctx context.Context, rows []StatMinute, deleteBefore time.Time) error
	// ReadStatMinutes returns every row whose Minute is at or after since,
	// by minute then node id.
	ReadStatMinutes(ctx context.Context, since time.Time) ([]StatMinute, error)
}

// SnapshotParams asks for a snapshot at Now. Buckets is the number of
// one-minute buckets of DueBacklog (1..1440; 60 by default), counted from
// BacklogFrom (zero: Now), which is at or before Now: a caller that
// labels the buckets by clock minute passes Now truncated to the minute.
// TenantID, when set, limits every figure to that tenant's occurrences and
// schedules ("" counts every tenant's), so that a tenant's status shows
// nothing of another's.
type SnapshotParams struct {
	Now         time.Time
	Buckets     int
	BacklogFrom time.Time
	TenantID    string
}

// Snapshot is the queue at one instant.
type Snapshot struct {
	// Depth counts occurrences by tenant, queue, lane and state, for the
	// open states (SCHEDULED, ENQUEUED, RUNNING, RETRY_WAIT) and DEAD.
	// Ready counts, of ENQUEUED and RETRY_WAIT ones, those due at Now
	// (available_at <= Now); the others of those states are not yet due.
	Depth []DepthRow
	// OldestReady is the ready occurrence (ENQUEUED or RETRY_WAIT,
	// available_at <= Now) with the earliest available_at, nil when none
	// is ready: how long a firing has waited for a worker.
	OldestReady *record.Occurrence
	// DueBacklog[i] counts firings that become due in minute i from
	// From (BacklogFrom, or Now): [From + i min, From + (i+1) min). It
	// adds two sources that never overlap: occurrences already
	// materialized and not yet claimed (SCHEDULED, ENQUEUED, RETRY_WAIT) by
	// available_at, and ACTIVE schedules by their cursor, next_run_at, the
	// next firing not yet materialized. A schedule counts once, at its
	// cursor, however often it fires beyond it.
	DueBacklog []int64
	// QueueOldestReady is, for each tenant's queue with a ready
	// occurrence (as OldestReady: ENQUEUED or RETRY_WAIT, available_at <=
	// Now, held by no run), the earliest available_at of its ready
	// occurrences, by tenant then queue: how long each queue has kept a
	// firing waiting for a worker. A queue with none ready has no entry.
	// The earliest of them is OldestReady's. Like OldestReady, it costs a
	// seek per lane (lane_heads), not the queue's depth.
	QueueOldestReady []QueueOldestReady
}

// QueueOldestReady is one entry of Snapshot.QueueOldestReady.
type QueueOldestReady struct {
	TenantID    string
	Queue       string
	AvailableAt time.Time
}

// DepthRow is one group of Snapshot.Depth.
type DepthRow struct {
	TenantID string
	Queue    string
	Lane     record.Lane
	State    record.OccurrenceState
	Count    int64
	Ready    int64
}

// StatMinute is one node's figures for one minute, written by the engine
// as the minute goes on. Data is the engine's own encoding; the store keeps
// it as opaque bytes (at most 64 KiB).
type StatMinute struct {
	NodeID string
	Minute time.Time // the start of the minute, UTC
	Data   []byte
}

// Simulated outages. An operator may ask every node on a store to behave
// for a while as if the engine were down (`schedctl simulate outage`), to
// rehearse what the schedules' misfire policies do after one. The request
// must reach every node of a cluster, so it is a row here that each node
// reads at every planner pass. The engine decides what an outage stops;
// the store only keeps the rows.
//
// These methods are part of the Store interface (OutageStore is embedded
// in it).
type OutageStore interface {
	// InsertOutage stores o with a new id, which it returns, unless an
	// outage is in progress at o.StartedAt (one not canceled whose EndsAt
	// is after it): then it writes nothing and returns ErrConflict.
	// o.CanceledAt is ignored (a new outage is not canceled). Two inserts
	// racing on PostgreSQL may both succeed; CurrentOutage then answers
	// the later one.
	InsertOutage(ctx context.Context, o Outage) (int64, error)
	// CurrentOutage returns the outage in progress at now (not canceled,
	// EndsAt after now), the latest started when there are several; nil
	// when there is none. A small read: the engine calls it every pass.
	CurrentOutage(ctx context.Context, now time.Time) (*Outage, error)
	// CancelOutages sets CanceledAt = now on every outage in progress at
	// now and returns them as canceled, by id; none is not an error.
	CancelOutages(ctx context.Context, now time.Time) ([]Outage, error)
}

// Outage is one simulated outage.
type Outage struct {
	ID int64
	// Shards are the shards it stops, ascending; empty: all of them.
	Shards     []int
	StartedAt  time.Time
	EndsAt     time.Time
	CanceledAt time.Time // zero while not canceled
	// CreatedBy is the node that took the request.
	CreatedBy string
}

// Check reports what is wrong with o as a row to insert.
func (o *Outage) Check() error {
	switch {
	case o.CreatedBy == "":
		return errors.New("outage: empty created_by")
	case !o.EndsAt.After(o.StartedAt):
		return fmt.Errorf("outage: ends_at %s is not after started_at %s", o.EndsAt, o.StartedAt)
	}
	for i, sh := range o.Shards {
		if sh < 0 || (i > 0 && sh <= o.Shards[i-1]) {
			return fmt.Errorf("outage: shards %v must be ascending, distinct and not negative", o.Shards)
		}
	}
	return nil
}
