package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// The statements of store.RunTx (queries_runs.go), and why leased runs
// stay exact when transactions of several nodes run at once under READ
// COMMITTED (SQLite has one writer, and needed none of this).
//
// The locks. Each queue (a tenant's queue: its three lanes) has an
// advisory lock (migrations/0005_runs.sql, lane_lock_key). A claim takes
// it exclusively in LaneHead, before it reads the head, and holds it until
// it commits. Every write that makes a row claimable takes it shared
// before it reads the head (the floor's triggers, at the end of the
// writing statement) and holds it until it commits; so does a cancel of
// claimable rows (CancelOlderOccurrences, CancelFirings) before it reads
// which rows runs hold. The runs a fold or an ack works on are locked by
// their rows (Runs).
//
// Nothing is lost. A row R becomes claimable in lane L by a transaction W,
// and a claim C of L moves the head to H.
//   - W took the lock shared before C took it: C waits for W's commit, then
//     reads the head and its candidates in statements after that, each
//     with a snapshot taken then, so it sees R as W left it: after any head
//     W read, and a candidate if due. C leases it, passes over it (and puts
//     it back after H, RequeueRows), or leaves it after H.
//   - C took the lock first: W's trigger waits for C's commit, then reads
//     H (a statement of a volatile function has a snapshot of its own)
//     and writes R after it.
// So no row enters a run's range after the claim that took it (Invariant
// 1), and every claimable row of L at or before H is one C leased
// (Invariant 2): C read every claimable row up to H, and no other claim of
// L ran meanwhile. A claimable row leaves a range only by a write of its
// own: a fold (the run's rows locked by the run's row), an expiry (after
// its run's fold), or a cancel that excludes the rows runs hold (the
// heads, read under the lock shared, say which).
//
// Nothing is delivered concurrently twice. A candidate is read after the
// head; a row at or before the head is delivered only by its run (the run
// lock serializes its fold, its acks and its expiry, so an ack is either
// in the ack log the fold reads or finds the run gone and goes to the row),
// and comes back only when the sweep ends the attempt its fold wrote. Two
// claims of a lane do not overlap (the exclusive lock), so the rows a
// claim reads after the head are its alone until it commits: it needs no
// row lock on them, and writes none on what it leases. The writes that
// could change a claimable row under a claim are the cancels, which take
// the lock shared first, and the folds, whose rows are at or before the
// head, never candidates. (A claim on the row path, without LaneHead,
// still locks its candidates FOR UPDATE SKIP LOCKED, as before runs.)
//
// No two transactions wait for each other in a circle through these
// locks:
//   - a claim waits for one queue's lock, and only while it holds no
//     queue's lock shared (shared); otherwise, and in a claim of many
//     tenants (wait false), it tries the lock and passes the queue over;
//   - a writer takes its shared locks last before its commit: a trigger at
//     the end of its writing statement, a cancel just before the cancel;
//     after them it waits for no lock a claim holds while it waits (the
//     runs an ack locked, the rows it acked, a tenant's running key). An
//     update folds its schedule's runs, which may wait for an ack, before
//     it takes the locks, and cancels only the rows runs do not hold, so
//     a run its fold did not see (claimed after its read) is counted in
//     flight, as a RUNNING row is.
//
// One case waits longer without failing: a planner holding a queue's lock
// shared that waits for a schedule row an update holds, while a claim
// waits for the planner's lock and the update for the same lock shared
// behind the claim's request. PostgreSQL finds it at deadlock_timeout and
// lets the update go first.

var (
	_ store.RunTx     = (*tx)(nil)
	_ store.RelaxedTx = (*tx)(nil)

	errNoRunsSelected  = errors.New("runs: the filter selects nothing")
	errHeadNotMoved    = errors.New("the run ends at or before the lane's head")
	errRunsNotCounted  = errors.New("an ack range names a run that is not stored")
	errRunTotalsLength = errors.New("run totals: arrays of different lengths")
)

// queueKey names a tenant's queue in tx.held.
func queueKey(tenantID, queue string) string { return tenantID + "\x00" + queue }

// LaneHead takes the lane's queue lock exclusively (qLockQueue, or
// qTryLockQueue when wait is false or when this transaction may hold a
// queue's lock shared) and then reads the head (qLaneHead), both in one
// round trip: the head is read by a statement after the lock, with a
// snapshot taken after any claim that held it committed.
func (t *tx) LaneHead(ctx context.Context, l store.Lane, wait bool) (store.CandidatePos, bool, error) {
	if !storable(l.TenantID, l.Queue) {
		return store.CandidatePos{}, true, nil // nothing stored is in that queue
	}
	key := queueKey(l.TenantID, l.Queue)
	b := &pgx.Batch{}
	lock := !t.held[key]
	if lock {
		q := qTryLockQueue
		if wait && !t.shared {
			q = qLockQueue
		}
		b.Queue(q, t.s.schema, l.TenantID, l.Queue)
	}
	b.Queue(qLaneHead, l.TenantID, l.Queue, string(l.Lane))
	br := t.tx.SendBatch(ctx, b)
	defer br.Close()
	if lock {
		var held bool
		if err := br.QueryRow().Scan(&held); err != nil {
			return store.CandidatePos{}, false, fmt.Errorf("lock queue %s: %w", l.Queue, translate(err))
		}
		if !held {
			return store.CandidatePos{}, false, translate(br.Close())
		}
		if t.held == nil {
			t.held = map[string]bool{}
		}
		t.held[key] = true
	}
	var p store.CandidatePos
	err := br.QueryRow().Scan(&p.AvailableAt, &p.Pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.CandidatePos{}, true, translate(br.Close())
	}
	if err != nil {
		return store.CandidatePos{}, false, fmt.Errorf("lane head: %w", translate(err))
	}
	p.Set = true
	return p, true, translate(br.Close())
}

// holds says whether this transaction holds the tenant's queue's lock
// exclusively: it is the queue's only claimer.
func (t *tx) holds(tenantID, queue string) bool { return t.held[queueKey(tenantID, queue)] }

// InsertRun stores r and moves the head, in one statement (qInsertRun).
func (t *tx) InsertRun(ctx context.Context, r *store.Run) (int64, error) {
	var id, moved int64
	err := t.tx.QueryRow(ctx, qInsertRun, r.TenantID, r.Queue, string(r.Lane.Lane), r.First.AvailableAt, r.First.Pos,
		r.Last.AvailableAt, r.Last.Pos, r.N, r.WorkerID, ms(r.ClaimedAt), ms(r.LeaseExpiresAt)).Scan(&id, &moved)
	if err != nil {
		return 0, fmt.Errorf("insert run: %w", translate(err))
	}
	if moved != 1 {
		return 0, fmt.Errorf("move lane head: %w", errHeadNotMoved)
	}
	return id, nil
}

// RequeueRows puts rows back at at (qRequeueRows); the floor's trigger
// moves those at or before the head past it.
func (t *tx) RequeueRows(ctx context.Context, l store.Lane, pos []store.CandidatePos, at time.Time) error {
	if len(pos) == 0 || !storable(l.TenantID, l.Queue) {
		return nil
	}
	ats, seqs := make([]int64, len(pos)), make([]int64, len(pos))
	for i, p := range pos {
		ats[i], seqs[i] = p.AvailableAt, p.Pos
	}
	if _, err := t.tx.Exec(ctx, qRequeueRows, l.TenantID, l.Queue, string(l.Lane), ms(at), ats, seqs); err != nil {
		return fmt.Errorf("requeue %d rows: %w", len(pos), translate(err))
	}
	return nil
}

// Runs reads and locks the runs f selects (qRunsByID and the others).
func (t *tx) Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	limit := int64(f.Limit)
	if limit <= 0 {
		limit = math.MaxInt64
	}
	var (
		rows pgx.Rows
		err  error
	)
	switch {
	case f.All:
		rows, err = t.tx.Query(ctx, qRunsAll, limit)
	case f.IDs != nil:
		rows, err = t.tx.Query(ctx, qRunsByID, f.IDs)
	case f.TenantID != "":
		if !storable(f.TenantID) {
			return nil, nil
		}
		rows, err = t.tx.Query(ctx, qRunsOfTenant, f.TenantID, limit)
	case !f.ExpiredAt.IsZero():
		rows, err = t.tx.Query(ctx, qRunsExpired, ms(f.ExpiredAt), limit)
	case !f.FinishedBefore.IsZero():
		rows, err = t.tx.Query(ctx, qRunsFinished, ms(f.FinishedBefore), limit)
	default:
		return nil, errNoRunsSelected
	}
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", translate(err))
	}
	out, err := collect(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return out, nil
}

// scanRun reads the columns of runColumns, in that order.
func scanRun(row scanner) (*store.Run, error) {
	var rr rowcodec.RunRow
	if err := row.Scan(rr.Dest()...); err != nil {
		return nil, err
	}
	r := rr.Run()
	return &r, nil
}

// RunAcks reads a run's ack ranges (qRunAcks).
func (t *tx) RunAcks(ctx context.Context, runID int64) ([]store.RunAck, error) {
	rows, err := t.tx.Query(ctx, qRunAcks, runID)
	if err != nil {
		return nil, fmt.Errorf("acks of run %d: %w", runID, translate(err))
	}
	out, err := collect(rows, func(row scanner) (*store.RunAck, error) {
		var (
			a  store.RunAck
			at int64
		)
		if err := row.Scan(&a.RunID, &a.First.AvailableAt, &a.First.Pos, &a.Last.AvailableAt, &a.Last.Pos, &a.N, &at); err != nil {
			return nil, err
		}
		a.First.Set, a.Last.Set = true, true
		a.At = fromMS(at)
		return &a, nil
	})
	if err != nil {
		return nil, fmt.Errorf("acks of run %d: %w", runID, err)
	}
	return out, nil
}

// AppendRunAcks stores the ack ranges and counts them on their runs, in
// one statement (qAppendRunAcks).
func (t *tx) AppendRunAcks(ctx context.Context, acks []store.RunAck) error {
	if len(acks) == 0 {
		return nil
	}
	cols := [7][]int64{}
	runs := map[int64]bool{}
	for _, a := range acks {
		for i, v := range [7]int64{a.RunID, a.First.AvailableAt, a.First.Pos, a.Last.AvailableAt, a.Last.Pos, int64(a.N), ms(a.At)} {
			cols[i] = append(cols[i], v)
		}
		runs[a.RunID] = true
	}
	var counted int
	err := t.tx.QueryRow(ctx, qAppendRunAcks, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6]).Scan(&counted)
	if err != nil {
		return fmt.Errorf("append %d acks: %w", len(acks), translate(err))
	}
	if counted != len(runs) {
		return fmt.Errorf("append %d acks: counted on %d runs of %d: %w", len(acks), counted, len(runs), errRunsNotCounted)
	}
	return nil
}

// ExtendRun moves a run's lease (qExtendRun).
func (t *tx) ExtendRun(ctx context.Context, id int64, until time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, qExtendRun, id, ms(until))
	if err != nil {
		return false, fmt.Errorf("extend run %d: %w", id, translate(err))
	}
	return tag.RowsAffected() == 1, nil
}

// FoldRange writes a range of a run's rows: the previous attempts of
// those that had one to the history (qFoldArchived, qArchiveAttempts),
// then the rows (qFoldRange). The run is locked (Runs), so no ack or
// other fold of it runs meanwhile.
func (t *tx) FoldRange(ctx context.Context, r *store.Run, first, last store.CandidatePos, f store.FoldWrite) (int, error) {
	lane := []any{r.TenantID, r.Queue, string(r.Lane.Lane), first.AvailableAt, first.Pos, last.AvailableAt, last.Pos}
	rows, err := t.tx.Query(ctx, qFoldArchived, lane...)
	if err != nil {
		return 0, fmt.Errorf("fold run %d: %w", r.ID, translate(err))
	}
	var archOcc, archID []string
	for rows.Next() {
		var (
			id string
			n  int64
		)
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return 0, fmt.Errorf("fold run %d: %w", r.ID, translate(err))
		}
		archOcc, archID = append(archOcc, id), append(archID, record.AttemptID(id, n))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("fold run %d: %w", r.ID, translate(err))
	}
	if len(archOcc) > 0 {
		if _, err := t.tx.Exec(ctx, qArchiveAttempts, archOcc, archID); err != nil {
			return 0, fmt.Errorf("fold run %d: archive attempts: %w", r.ID, translate(err))
		}
	}
	state, finished, result := string(record.OccurrenceRunning), pgtype.Int8{}, pgtype.Text{}
	if !f.AckedAt.IsZero() {
		state, finished = string(record.OccurrenceSucceeded), nullMS(f.AckedAt)
		result = pgtype.Text{String: string(record.ResultSucceeded), Valid: true}
	}
	tag, err := t.tx.Exec(ctx, qFoldRange, append(lane, r.WorkerID, ms(r.ClaimedAt), ms(r.LeaseExpiresAt), state,
		finished, result)...)
	if err != nil {
		return 0, fmt.Errorf("fold run %d: %w", r.ID, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// DeleteRun deletes a run and its acks (qDeleteRun).
func (t *tx) DeleteRun(ctx context.Context, id int64) error {
	if _, err := t.tx.Exec(ctx, qDeleteRun, id); err != nil {
		return fmt.Errorf("delete run %d: %w", id, translate(err))
	}
	return nil
}

// LeasedItems reads where each occurrence stands, in one statement
// (qLeasedItems).
func (t *tx) LeasedItems(ctx context.Context, tenantID string, ids []string) ([]store.LeasedItem, error) {
	ids = storableOnly(ids)
	if len(ids) == 0 || !storable(tenantID) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, qLeasedItems, tenantID, ids)
	if err != nil {
		return nil, fmt.Errorf("leased items: %w", translate(err))
	}
	out, err := collect(rows, func(row scanner) (*store.LeasedItem, error) {
		var (
			it          store.LeasedItem
			lane, state string
		)
		if err := row.Scan(&it.OccurrenceID, &it.Queue, &lane, &it.Pos.AvailableAt, &it.Pos.Pos, &state, &it.AttemptCount,
			&it.RunID, &it.Acked); err != nil {
			return nil, err
		}
		it.TenantID = tenantID
		it.Lane.Lane, it.State, it.Pos.Set = record.Lane(lane), record.OccurrenceState(state), true
		return &it, nil
	})
	if err != nil {
		return nil, fmt.Errorf("leased items: %w", err)
	}
	return out, nil
}

// ScheduleRuns reads the runs holding a schedule's claimable occurrences
// (qScheduleRuns). It takes no queue lock: the update that folds them
// takes the locks afterwards, when it cancels (CancelOlderOccurrences),
// and cancels none of the rows a run claimed since holds.
func (t *tx) ScheduleRuns(ctx context.Context, tenantID, scheduleID string) ([]int64, error) {
	if !storable(tenantID, scheduleID) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, qScheduleRuns, tenantID, scheduleID)
	if err != nil {
		return nil, fmt.Errorf("runs of schedule %s: %w", scheduleID, translate(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("runs of schedule %s: %w", scheduleID, translate(err))
	}
	return ids, nil
}

// RunTotals sums the unfolded runs per lane (qRunTotals). Right after
// CountRunning of the same tenant it answers what that statement read of
// the runs, in its snapshot (see qCountRunningWithRuns), once.
func (t *tx) RunTotals(ctx context.Context, tenantID string) ([]store.RunTotal, error) {
	if ts, ok := t.running[tenantID]; ok {
		delete(t.running, tenantID)
		return ts, nil
	}
	return runTotals(ctx, t.tx, tenantID)
}

// runTotals reads qRunTotals through q.
func runTotals(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, tenantID string) ([]store.RunTotal, error) {
	if !storable(tenantID) {
		return nil, nil
	}
	rows, err := q.Query(ctx, qRunTotals, tenantID)
	if err != nil {
		return nil, fmt.Errorf("run totals: %w", translate(err))
	}
	out, err := collect(rows, scanRunTotal)
	if err != nil {
		return nil, fmt.Errorf("run totals: %w", err)
	}
	return out, nil
}

// scanRunTotal reads a row of qRunTotals.
func scanRunTotal(row scanner) (*store.RunTotal, error) {
	var (
		r    store.RunTotal
		lane string
	)
	if err := row.Scan(&r.TenantID, &r.Queue, &lane, &r.Leased, &r.Acked); err != nil {
		return nil, err
	}
	r.Lane.Lane = record.Lane(lane)
	return &r, nil
}

// RelaxDurability lets the transaction commit without waiting for the
// WAL flush (store.RelaxedTx): a crash of the server may lose it, which
// the engine asks only of a claim, acks and a fold.
func (t *tx) RelaxDurability(ctx context.Context) error {
	if _, err := t.tx.Exec(ctx, qRelaxDurability); err != nil {
		return fmt.Errorf("relax durability: %w", translate(err))
	}
	return nil
}

// lockScheduleQueues takes, shared, the queue locks of the schedule's
// open occurrences (qLockScheduleQueues): no claim of those queues runs
// until this transaction ends, and none ran since a statement after this
// one reads the heads.
func (t *tx) lockScheduleQueues(ctx context.Context, scheduleID string) error {
	t.shared = true
	var n int64
	if err := t.tx.QueryRow(ctx, qLockScheduleQueues, t.s.schema, scheduleID).Scan(&n); err != nil {
		return fmt.Errorf("lock the queues of schedule %s: %w", scheduleID, translate(err))
	}
	return nil
}

// HasRuns says that this store's transactions offer store.RunTx.
func (s *Store) HasRuns() bool { return true }
