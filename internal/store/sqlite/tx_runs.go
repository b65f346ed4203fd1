package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// The statements of store.RunTx (queries_runs.go). The floor, that a row
// becoming claimable lands after its lane's head, is the schema's
// (migrations/0005_runs.sql), so no statement here or elsewhere carries
// it. SQLite has one writer, so what a transaction read stays as read.

var _ store.RunTx = (*tx)(nil)

// LaneHead reads the lane's head (qLaneHead). The one writer holds every
// lane.
func (t *tx) LaneHead(ctx context.Context, l store.Lane, _ bool) (store.CandidatePos, bool, error) {
	var p store.CandidatePos
	err := t.tx.QueryRowContext(ctx, qLaneHead, l.TenantID, l.Queue, string(l.Lane)).Scan(&p.AvailableAt, &p.Pos)
	if errors.Is(err, sql.ErrNoRows) {
		return store.CandidatePos{}, true, nil
	}
	if err != nil {
		return p, false, translate(err)
	}
	p.Set = true
	return p, true, nil
}

// InsertRun stores r and moves the head (qInsertRun, qMoveLaneHead).
func (t *tx) InsertRun(ctx context.Context, r *store.Run) (int64, error) {
	res, err := t.tx.ExecContext(ctx, qInsertRun, r.TenantID, r.Queue, string(r.Lane.Lane), r.First.AvailableAt, r.First.Pos,
		r.Last.AvailableAt, r.Last.Pos, r.N, r.WorkerID, ms(r.ClaimedAt), ms(r.LeaseExpiresAt))
	if err != nil {
		return 0, fmt.Errorf("insert run: %w", translate(err))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, translate(err)
	}
	res, err = t.tx.ExecContext(ctx, qMoveLaneHead, r.TenantID, r.Queue, string(r.Lane.Lane), r.Last.AvailableAt, r.Last.Pos)
	if err != nil {
		return 0, fmt.Errorf("move lane head: %w", translate(err))
	}
	if err := wantRows(res, 1); err != nil {
		return 0, fmt.Errorf("move lane head: the run ends at or before the head: %w", err)
	}
	return id, nil
}

// RequeueRows puts rows back at at (qRequeueRows).
func (t *tx) RequeueRows(ctx context.Context, _ store.Lane, pos []store.CandidatePos, at time.Time) error {
	if len(pos) == 0 {
		return nil
	}
	rows := make([]int64, len(pos))
	for i, p := range pos {
		rows[i] = p.Pos
	}
	_, err := t.tx.ExecContext(ctx, qRequeueRows, ms(at), string(jsonInts(make([]byte, 0, 2+8*len(rows)), rows)))
	return translate(err)
}

// Runs reads the runs f selects.
func (t *tx) Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	limit := int64(f.Limit)
	if limit <= 0 {
		limit = math.MaxInt64
	}
	var (
		rows *sql.Rows
		err  error
	)
	switch {
	case f.All:
		rows, err = t.tx.QueryContext(ctx, qRunsAll, limit)
	case f.IDs != nil:
		rows, err = t.tx.QueryContext(ctx, qRunsByID, string(jsonInts(make([]byte, 0, 2+8*len(f.IDs)), f.IDs)))
	case f.TenantID != "":
		rows, err = t.tx.QueryContext(ctx, qRunsOfTenant, f.TenantID, limit)
	case !f.ExpiredAt.IsZero():
		rows, err = t.tx.QueryContext(ctx, qRunsExpired, ms(f.ExpiredAt), limit)
	case !f.FinishedBefore.IsZero():
		rows, err = t.tx.QueryContext(ctx, qRunsFinished, ms(f.FinishedBefore), limit)
	default:
		return nil, errors.New("runs: the filter selects nothing")
	}
	if err != nil {
		return nil, translate(err)
	}
	var out []store.Run
	err = eachRow(rows, func(row scanner) error {
		var rr rowcodec.RunRow
		if err := row.Scan(rr.Dest()...); err != nil {
			return err
		}
		out = append(out, rr.Run())
		return nil
	})
	return out, err
}

// RunAcks reads a run's ack ranges (qRunAcks).
func (t *tx) RunAcks(ctx context.Context, runID int64) ([]store.RunAck, error) {
	rows, err := t.tx.QueryContext(ctx, qRunAcks, runID)
	if err != nil {
		return nil, translate(err)
	}
	var out []store.RunAck
	err = eachRow(rows, func(row scanner) error {
		var (
			a  store.RunAck
			at int64
		)
		if err := row.Scan(&a.RunID, &a.First.AvailableAt, &a.First.Pos, &a.Last.AvailableAt, &a.Last.Pos, &a.N, &at); err != nil {
			return err
		}
		a.First.Set, a.Last.Set = true, true
		a.At = fromMS(at)
		out = append(out, a)
		return nil
	})
	return out, err
}

// AppendRunAcks stores the ack ranges and counts them on their runs.
func (t *tx) AppendRunAcks(ctx context.Context, acks []store.RunAck) error {
	for _, a := range acks {
		if _, err := t.tx.ExecContext(ctx, qInsertRunAck, a.RunID, a.First.AvailableAt, a.First.Pos, a.Last.AvailableAt,
			a.Last.Pos, a.N, ms(a.At)); err != nil {
			return fmt.Errorf("append ack of run %d: %w", a.RunID, translate(err))
		}
		res, err := t.tx.ExecContext(ctx, qAddRunAcked, a.RunID, a.N)
		if err != nil {
			return fmt.Errorf("count acks of run %d: %w", a.RunID, translate(err))
		}
		if err := wantRows(res, 1); err != nil {
			return fmt.Errorf("count acks of run %d: %w", a.RunID, err)
		}
	}
	return nil
}

// ExtendRun moves a run's lease (qExtendRun).
func (t *tx) ExtendRun(ctx context.Context, id int64, until time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, qExtendRun, id, ms(until))
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

// FoldRange writes a range of a run's rows (qFoldArchived, then
// qArchiveAttempts for those, then qFoldRange).
func (t *tx) FoldRange(ctx context.Context, r *store.Run, first, last store.CandidatePos, f store.FoldWrite) (int, error) {
	lane := []any{r.TenantID, r.Queue, string(r.Lane.Lane), first.AvailableAt, first.Pos, last.AvailableAt, last.Pos}
	rows, err := t.tx.QueryContext(ctx, qFoldArchived, lane...)
	if err != nil {
		return 0, fmt.Errorf("fold run %d: %w", r.ID, translate(err))
	}
	var archive jsonRows
	err = eachRow(rows, func(row scanner) error {
		var (
			rowid, n int64
			id       string
		)
		if err := row.Scan(&rowid, &id, &n); err != nil {
			return err
		}
		archive.row()
		archive.int(rowid)
		archive.str(record.AttemptID(id, n))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("fold run %d: %w", r.ID, err)
	}
	if archive.rows > 0 {
		if _, err := t.tx.ExecContext(ctx, qArchiveAttempts, archive.String()); err != nil {
			return 0, fmt.Errorf("fold run %d: archive attempts: %w", r.ID, translate(err))
		}
	}
	state, finished, result, open := string(record.OccurrenceRunning), any(nil), any(nil), 1
	if !f.AckedAt.IsZero() {
		state, finished, result, open = string(record.OccurrenceSucceeded), ms(f.AckedAt), string(record.ResultSucceeded), 0
	}
	res, err := t.tx.ExecContext(ctx, qFoldRange, append(lane, r.WorkerID, ms(r.ClaimedAt), ms(r.LeaseExpiresAt), state,
		finished, result, open)...)
	if err != nil {
		return 0, fmt.Errorf("fold run %d: %w", r.ID, translate(err))
	}
	n, err := res.RowsAffected()
	return int(n), translate(err)
}

// DeleteRun deletes a run and its acks.
func (t *tx) DeleteRun(ctx context.Context, id int64) error {
	if _, err := t.tx.ExecContext(ctx, qDeleteRunAcks, id); err != nil {
		return translate(err)
	}
	_, err := t.tx.ExecContext(ctx, qDeleteRun, id)
	return translate(err)
}

// LeasedItems reads where each occurrence stands (qLeasedItem, then
// qRunHolding and qRunAcked for a claimable one).
func (t *tx) LeasedItems(ctx context.Context, tenantID string, ids []string) ([]store.LeasedItem, error) {
	var out []store.LeasedItem
	for _, id := range ids {
		it := store.LeasedItem{OccurrenceID: id}
		it.TenantID = tenantID
		var lane, state string
		err := t.tx.QueryRowContext(ctx, qLeasedItem, id, tenantID).Scan(&it.Queue, &lane, &it.Pos.AvailableAt, &it.Pos.Pos,
			&state, &it.AttemptCount)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, translate(err)
		}
		it.Lane.Lane, it.State, it.Pos.Set = record.Lane(lane), record.OccurrenceState(state), true
		if it.State == record.OccurrenceEnqueued || it.State == record.OccurrenceRetryWait {
			err := t.tx.QueryRowContext(ctx, qRunHolding, tenantID, it.Queue, lane, it.Pos.AvailableAt, it.Pos.Pos).Scan(&it.RunID)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, translate(err)
			}
			if it.RunID != 0 {
				if err := t.tx.QueryRowContext(ctx, qRunAcked, it.RunID, it.Pos.AvailableAt, it.Pos.Pos).Scan(&it.Acked); err != nil {
					return nil, translate(err)
				}
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// ScheduleRuns reads the runs holding a schedule's occurrences
// (qScheduleRuns).
func (t *tx) ScheduleRuns(ctx context.Context, tenantID, scheduleID string) ([]int64, error) {
	rows, err := t.tx.QueryContext(ctx, qScheduleRuns, tenantID, scheduleID)
	if err != nil {
		return nil, translate(err)
	}
	var ids []int64
	err = eachRow(rows, func(row scanner) error {
		var id int64
		if err := row.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

// RunTotals sums the unfolded runs per lane (qRunTotals).
func (t *tx) RunTotals(ctx context.Context, tenantID string) ([]store.RunTotal, error) {
	return runTotals(ctx, t.tx, tenantID)
}

// queryer is what runTotals reads through: a transaction, or the store's
// reader pool.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// runTotals reads qRunTotals through q.
func runTotals(ctx context.Context, q queryer, tenantID string) ([]store.RunTotal, error) {
	rows, err := q.QueryContext(ctx, qRunTotals, tenantID)
	if err != nil {
		return nil, translate(err)
	}
	var out []store.RunTotal
	err = eachRow(rows, func(row scanner) error {
		var (
			r    store.RunTotal
			lane string
		)
		if err := row.Scan(&r.TenantID, &r.Queue, &lane, &r.Leased, &r.Acked); err != nil {
			return err
		}
		r.Lane.Lane = record.Lane(lane)
		out = append(out, r)
		return nil
	})
	return out, err
}

// HasRuns says that this store's transactions offer store.RunTx.
func (s *Store) HasRuns() bool { return true }
