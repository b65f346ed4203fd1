package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store/rowcodec"

	"github.com/sched-dev/sched/internal/store"
)

// The statements of store.QueueTx. Each reads facts or writes what the
// engine decided (engine/queuerules.go); none decides. SQLite has one
// writer, so what a transaction read stays as read until it ends.

// ClaimCandidates reads a lane's claimable occurrences with their overlap
// facts (qClaimCandidates), appended to buf.
func (t *tx) ClaimCandidates(ctx context.Context, r store.CandidateRead, buf []store.ClaimCandidate) ([]store.ClaimCandidate, error) {
	st, err := t.s.txStmt(ctx, t.tx, qClaimCandidates)
	if err != nil {
		return buf, err
	}
	defer st.Close()
	afterAt, afterRow := int64(math.MinInt64), int64(math.MinInt64)
	if r.After.Set {
		afterAt, afterRow = r.After.AvailableAt, r.After.Pos
	}
	rows, err := st.QueryContext(ctx, r.TenantID, r.Queue, string(r.Lane), ms(r.Now), afterAt, afterRow, r.Limit)
	if err != nil {
		return buf, translate(err)
	}
	defer rows.Close()
	var (
		c       candidateScan
		rowid   int64
		payload []byte
		running bool
		before  int
	)
	dest := append(c.appendDest(append(make([]any, 0, 17), &rowid)), &payload, &running, &before)
	for rows.Next() {
		c.o.TriggerKey = ""
		if err := rows.Scan(dest...); err != nil {
			return buf, translate(err)
		}
		buf = append(buf, store.ClaimCandidate{Occurrence: c.finish(r), Payload: payload, Pos: rowid,
			Running: running, PendingBefore: before})
		payload = nil // each candidate keeps its own
	}
	return buf, translate(rows.Err())
}

// ClaimRows claims cands: one UPDATE of their rows, which record the new
// attempts themselves, after one INSERT that moves the previous attempt of
// those claimed again to the history. The store remembers each row for
// its ack (rowhints.go).
func (t *tx) ClaimRows(ctx context.Context, w store.ClaimWrite, cands []*store.ClaimCandidate, out []store.Claimed) ([]store.Claimed, error) {
	if len(cands) == 0 {
		return out, nil
	}
	now, expires := ms(w.Now), ms(w.Now.Add(w.Lease))
	rows := make([]int64, len(cands))
	var archive jsonRows
	for i, c := range cands {
		rows[i] = c.Pos
		if n := c.Occurrence.AttemptCount; n > 0 {
			archive.row()
			archive.int(c.Pos)
			archive.str(record.AttemptID(c.Occurrence.OccurrenceID, int64(n)))
		}
	}
	ids := jsonInts(make([]byte, 0, 2+len(rows)*8), rows)
	if archive.rows > 0 {
		st, err := t.s.txStmt(ctx, t.tx, qArchiveAttempts)
		if err != nil {
			return out, err
		}
		_, err = st.ExecContext(ctx, archive.String())
		st.Close()
		if err != nil {
			return out, fmt.Errorf("archive attempts: %w", translate(err))
		}
	}
	st, err := t.s.txStmt(ctx, t.tx, qClaimRows)
	if err != nil {
		return out, err
	}
	r, err := st.ExecContext(ctx, now, w.WorkerID, expires, string(ids))
	st.Close()
	if err != nil {
		return out, translate(err)
	}
	if err := wantRows(r, len(cands)); err != nil {
		return out, err
	}
	for _, c := range cands {
		t.s.hints.put(c.Occurrence.OccurrenceID, c.Pos)
		out = append(out, store.Delivery(c, w))
	}
	return out, nil
}

// SkipOverlap marks cands SKIPPED_OVERLAP in one UPDATE.
func (t *tx) SkipOverlap(ctx context.Context, now time.Time, cands []*store.ClaimCandidate) error {
	if len(cands) == 0 {
		return nil
	}
	rows := make([]int64, len(cands))
	for i, c := range cands {
		rows[i] = c.Pos
	}
	st, err := t.s.txStmt(ctx, t.tx, qSkipOverlap)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.ExecContext(ctx, ms(now), string(jsonInts(make([]byte, 0, 2+8*len(rows)), rows)))
	if err != nil {
		return translate(err)
	}
	return wantRows(r, len(cands))
}

// FinishAttempts applies a batch of finishes within the transaction (see
// Store.FinishAttempts).
func (t *tx) FinishAttempts(ctx context.Context, ps []store.FinishParams) ([]store.FinishResult, error) {
	return t.s.finishTx(ctx, t.tx, ps)
}

// NackFacts reads the occurrence, then its schedule's news and the
// tenant's retries waiting (qNackFacts).
func (t *tx) NackFacts(ctx context.Context, tenantID, occurrenceID string) (store.NackFacts, error) {
	var f store.NackFacts
	o, err := scanOccurrence(t.tx.QueryRowContext(ctx, qGetOccurrence, tenantID, occurrenceID))
	if err != nil {
		return f, translate(err)
	}
	f.Occurrence = *o
	var state string
	var base, capMS, deadline int64
	err = t.tx.QueryRowContext(ctx, qNackFacts, tenantID, occurrenceID).Scan(&f.ScheduleVersion, &state,
		&f.Retry.MaxAttempts, &base, &capMS, &deadline, &f.RetryWaiting)
	if err != nil {
		return f, translate(err)
	}
	f.ScheduleState = record.ScheduleState(state)
	f.Retry.BackoffBase, f.Retry.BackoffCap, f.Retry.Deadline = fromDurMS(base), fromDurMS(capMS), fromDurMS(deadline)
	return f, nil
}

// ExpiredAttempts reads up to limit expired attempts with their facts
// (qExpiredAttempts).
func (t *tx) ExpiredAttempts(ctx context.Context, now time.Time, limit int) ([]store.ExpiredAttempt, error) {
	rows, err := t.tx.QueryContext(ctx, qExpiredAttempts, ms(now), limit)
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, rowcodec.ScanExpiredAttempt)
}

// EndExpired writes the ends in one UPDATE (qEndExpired).
func (t *tx) EndExpired(ctx context.Context, now time.Time, ends []store.ExpiredEnd) error {
	if len(ends) == 0 {
		return nil
	}
	var js jsonRows
	for _, e := range ends {
		js.row()
		js.str(e.OccurrenceID)
		js.int(e.Attempt)
		js.str(string(e.State))
		reason := ""
		if e.State == record.OccurrenceDead {
			reason = string(e.DeadReason)
		}
		js.str(reason)
	}
	r, err := t.tx.ExecContext(ctx, qEndExpired, ms(now), js.String())
	if err != nil {
		return translate(err)
	}
	if err := wantRows(r, len(ends)); err != nil {
		return fmt.Errorf("end expired attempts: %w", err)
	}
	return nil
}

// LockOccurrence reads one occurrence.
func (t *tx) LockOccurrence(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error) {
	o, err := scanOccurrence(t.tx.QueryRowContext(ctx, qGetOccurrence, tenantID, occurrenceID))
	if err != nil {
		return nil, translate(err)
	}
	return o, nil
}

// Requeue writes a replay (qRequeueDead).
func (t *tx) Requeue(ctx context.Context, p store.RequeueParams) (*record.Occurrence, error) {
	o, err := scanOccurrence(t.tx.QueryRowContext(ctx, qRequeueDead, ms(p.AvailableAt), p.AttemptFloor, ms(p.RetryFrom),
		p.TenantID, p.OccurrenceID))
	if errors.Is(err, sql.ErrNoRows) {
		var state string
		if err := t.tx.QueryRowContext(ctx, qOccurrenceState, p.TenantID, p.OccurrenceID).Scan(&state); err != nil {
			return nil, translate(err)
		}
		return nil, fmt.Errorf("%w: the occurrence is %s; only a DEAD one can be requeued", store.ErrConflict, state)
	}
	if err != nil {
		return nil, translate(err)
	}
	return o, nil
}

// DeadOccurrences reads the ids of DEAD occurrences to purge
// (qDeadOccurrences).
func (t *tx) DeadOccurrences(ctx context.Context, p store.PurgeDeadParams) ([]string, error) {
	rows, err := t.tx.QueryContext(ctx, qDeadOccurrences, p.TenantID, p.ScheduleID, p.Queue, p.Limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err)
		}
		ids = append(ids, id)
	}
	return ids, translate(rows.Err())
}

// CancelDead writes a purge (qCancelDead).
func (t *tx) CancelDead(ctx context.Context, tenantID string, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var js jsonRows
	for _, id := range ids {
		js.row()
		js.str(id)
	}
	r, err := t.tx.ExecContext(ctx, qCancelDead, ms(now), js.String(), tenantID)
	if err != nil {
		return 0, translate(err)
	}
	n, err := r.RowsAffected()
	return int(n), translate(err)
}
