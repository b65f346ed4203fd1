package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store/rowcodec"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/store"
)

// The statements of store.QueueTx. Each reads facts or writes what the
// engine decided (engine/queuerules.go); none decides. What a read must
// keep as read until the transaction ends, it locks (FOR UPDATE, FOR
// SHARE, or a schedule's advisory key for the overlap facts).

// ClaimCandidates reads a lane's claimable occurrences, locked FOR UPDATE
// SKIP LOCKED (qClaimCandidates), or, when this transaction holds the
// queue's lock (LaneHead), unlocked (qClaimCandidatesHeld), appended to
// buf. When some have a policy
// other than allow, it takes their schedules' advisory keys
// (qTryLockSchedules) and only then reads their overlap facts
// (qOverlapFacts); a candidate whose key another claim holds is
// Contended. With allow policies alone the read is one statement.
func (t *tx) ClaimCandidates(ctx context.Context, r store.CandidateRead, buf []store.ClaimCandidate) ([]store.ClaimCandidate, error) {
	if !storable(r.TenantID, r.Queue) {
		return buf, nil // nothing stored is in that queue
	}
	afterAt, afterSeq := int64(math.MinInt64), int64(math.MinInt64)
	if r.After.Set {
		afterAt, afterSeq = r.After.AvailableAt, r.After.Pos
	}
	q := qClaimCandidates
	if t.holds(r.TenantID, r.Queue) {
		q = qClaimCandidatesHeld // the queue's only claimer: no row locks (tx_runs.go)
	}
	rows, err := t.tx.Query(ctx, q, r.TenantID, r.Queue, string(r.Lane), ms(r.Now), afterAt, afterSeq, r.Limit)
	if err != nil {
		return buf, translate(err)
	}
	start := len(buf)
	var (
		raw     rawOccurrence
		seq     int64
		payload []byte
	)
	dest := append(append([]any{&seq}, raw.dest()...), &payload)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return buf, translate(err)
		}
		buf = append(buf, store.ClaimCandidate{Occurrence: *raw.finish(), Payload: payload, Pos: seq})
		payload = nil // each candidate keeps its own
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return buf, translate(err)
	}
	return buf, t.overlapFacts(ctx, buf[start:])
}

// overlapFacts fills in the overlap facts of the candidates whose policy
// is not allow.
func (t *tx) overlapFacts(ctx context.Context, cands []store.ClaimCandidate) error {
	var (
		schedules []string
		seen      map[string]bool
	)
	for i := range cands {
		o := &cands[i].Occurrence
		if o.OverlapPolicy == record.OverlapAllow || seen[o.ScheduleID] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[o.ScheduleID] = true
		schedules = append(schedules, o.ScheduleID)
	}
	if len(schedules) == 0 {
		return nil
	}
	rows, err := t.tx.Query(ctx, qTryLockSchedules, t.s.lockPrefix, schedules)
	if err != nil {
		return fmt.Errorf("overlap keys: %w", translate(err))
	}
	held := make(map[string]bool, len(schedules))
	for rows.Next() {
		var (
			sid string
			ok  bool
		)
		if err := rows.Scan(&sid, &ok); err != nil {
			rows.Close()
			return fmt.Errorf("overlap keys: %w", translate(err))
		}
		held[sid] = ok
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("overlap keys: %w", translate(err))
	}
	var ids []string
	byID := map[string]*store.ClaimCandidate{}
	for i := range cands {
		c := &cands[i]
		o := &c.Occurrence
		if o.OverlapPolicy == record.OverlapAllow {
			continue
		}
		if !held[o.ScheduleID] {
			c.Contended = true
			continue
		}
		ids = append(ids, o.OccurrenceID)
		byID[o.OccurrenceID] = c
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err = t.tx.Query(ctx, qOverlapFacts, ids)
	if err != nil {
		return fmt.Errorf("overlap facts: %w", translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id      string
			running bool
			before  int
		)
		if err := rows.Scan(&id, &running, &before); err != nil {
			return fmt.Errorf("overlap facts: %w", translate(err))
		}
		if c := byID[id]; c != nil {
			c.Running, c.PendingBefore = running, before
		}
	}
	return translate(rows.Err())
}

// ClaimRows claims cands: one UPDATE of their rows, which record the new
// attempts themselves, after one INSERT that moves the previous attempt of
// those claimed again to the history.
func (t *tx) ClaimRows(ctx context.Context, w store.ClaimWrite, cands []*store.ClaimCandidate, out []store.Claimed) ([]store.Claimed, error) {
	if len(cands) == 0 {
		return out, nil
	}
	now, expires := ms(w.Now), ms(w.Now.Add(w.Lease))
	ids := make([]string, len(cands))
	var archOcc, archID []string
	for i, c := range cands {
		o := &c.Occurrence
		ids[i] = o.OccurrenceID
		if n := o.AttemptCount; n > 0 {
			archOcc = append(archOcc, o.OccurrenceID)
			archID = append(archID, record.AttemptID(o.OccurrenceID, int64(n)))
		}
	}
	if len(archOcc) > 0 {
		if _, err := t.tx.Exec(ctx, qArchiveAttempts, archOcc, archID); err != nil {
			return out, fmt.Errorf("archive attempts: %w", translate(err))
		}
	}
	tag, err := t.tx.Exec(ctx, qClaimRows, now, w.WorkerID, expires, ids)
	if err != nil {
		return out, translate(err)
	}
	if n := int(tag.RowsAffected()); n != len(cands) {
		// The rows are locked by this transaction: nothing else can have
		// changed them.
		return out, fmt.Errorf("wrote %d rows of the %d read", n, len(cands))
	}
	for _, c := range cands {
		out = append(out, store.Delivery(c, w))
	}
	return out, nil
}

// SkipOverlap marks cands SKIPPED_OVERLAP in one UPDATE.
func (t *tx) SkipOverlap(ctx context.Context, now time.Time, cands []*store.ClaimCandidate) error {
	if len(cands) == 0 {
		return nil
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.Occurrence.OccurrenceID
	}
	tag, err := t.tx.Exec(ctx, qSkipOverlap, ms(now), ids)
	if err != nil {
		return translate(err)
	}
	if n := int(tag.RowsAffected()); n != len(cands) {
		return fmt.Errorf("skipped %d rows of the %d read", n, len(cands))
	}
	return nil
}

// FinishAttempts applies a batch of finishes within the transaction (see
// Store.FinishAttempts).
func (t *tx) FinishAttempts(ctx context.Context, ps []store.FinishParams) ([]store.FinishResult, error) {
	res, err := t.s.finishTx(ctx, t.tx, ps)
	for i := range res {
		if res[i].Err == nil && res[i].Occurrence.State == record.OccurrenceRetryWait {
			t.shared = true // the floor's trigger locked its queue
			break
		}
	}
	return res, err
}

// NackFacts locks the occurrence, then holds its schedule (qLockOccurrence,
// qNackSchedule), and counts the tenant's retries waiting.
func (t *tx) NackFacts(ctx context.Context, tenantID, occurrenceID string) (store.NackFacts, error) {
	var f store.NackFacts
	o, err := t.LockOccurrence(ctx, tenantID, occurrenceID)
	if err != nil {
		return f, err
	}
	f.Occurrence = *o
	var (
		state                 string
		base, capMS, deadline int64
	)
	err = t.tx.QueryRow(ctx, qNackSchedule, o.ScheduleID).Scan(&f.ScheduleVersion, &state,
		&f.Retry.MaxAttempts, &base, &capMS, &deadline)
	if err != nil {
		return f, translate(err)
	}
	f.ScheduleState = record.ScheduleState(state)
	f.Retry.BackoffBase, f.Retry.BackoffCap, f.Retry.Deadline = fromDurMS(base), fromDurMS(capMS), fromDurMS(deadline)
	if err := t.tx.QueryRow(ctx, qCountRetryWait, tenantID).Scan(&f.RetryWaiting); err != nil {
		return f, translate(err)
	}
	return f, nil
}

// ExpiredAttempts reads and locks up to limit expired attempts with their
// facts (qExpiredAttempts).
func (t *tx) ExpiredAttempts(ctx context.Context, now time.Time, limit int) ([]store.ExpiredAttempt, error) {
	rows, err := t.tx.Query(ctx, qExpiredAttempts, ms(now), limit)
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, rowcodec.ScanExpiredAttempt)
}

// EndExpired writes the ends in one UPDATE (qExpireAttempts), and wakes
// waiting claims on every node when some occurrence is claimable again.
func (t *tx) EndExpired(ctx context.Context, now time.Time, ends []store.ExpiredEnd) error {
	if len(ends) == 0 {
		return nil
	}
	var (
		occs, states, reasons []string
		attempts              []int64
		requeued              bool
	)
	for _, e := range ends {
		occs = append(occs, e.OccurrenceID)
		attempts = append(attempts, e.Attempt)
		states = append(states, string(e.State))
		reason := ""
		if e.State == record.OccurrenceDead {
			reason = string(e.DeadReason)
		}
		reasons = append(reasons, reason)
		requeued = requeued || e.State == record.OccurrenceEnqueued
	}
	t.shared = t.shared || requeued // the floor's trigger locks their queues
	tag, err := t.tx.Exec(ctx, qExpireAttempts, ms(now), occs, attempts, states, reasons)
	if err != nil {
		return translate(err)
	}
	if got := int(tag.RowsAffected()); got != len(ends) {
		// The rows are locked by this transaction.
		return fmt.Errorf("ended %d attempts of the %d read", got, len(ends))
	}
	if requeued {
		return t.s.notify(ctx, t.tx, ChannelWork)
	}
	return nil
}

// LockOccurrence reads one occurrence FOR UPDATE (qLockOccurrence).
func (t *tx) LockOccurrence(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error) {
	if !storable(tenantID, occurrenceID) {
		return nil, fmt.Errorf("occurrence %q: %w", occurrenceID, notStorable())
	}
	o, err := scanOccurrence(t.tx.QueryRow(ctx, qLockOccurrence, tenantID, occurrenceID))
	if err != nil {
		return nil, translate(err)
	}
	return o, nil
}

// Requeue writes a replay (qRequeueDead), and wakes waiting claims on
// every node.
func (t *tx) Requeue(ctx context.Context, p store.RequeueParams) (*record.Occurrence, error) {
	if !storable(p.TenantID, p.OccurrenceID) {
		return nil, fmt.Errorf("occurrence %q: %w", p.OccurrenceID, notStorable())
	}
	t.shared = true // the floor's trigger locks its queue
	o, err := scanOccurrence(t.tx.QueryRow(ctx, qRequeueDead, ms(p.AvailableAt), p.AttemptFloor, ms(p.RetryFrom),
		p.TenantID, p.OccurrenceID))
	if errors.Is(err, pgx.ErrNoRows) {
		var state string
		if err := t.tx.QueryRow(ctx, qOccurrenceState, p.TenantID, p.OccurrenceID).Scan(&state); err != nil {
			return nil, translate(err)
		}
		return nil, fmt.Errorf("%w: the occurrence is %s; only a DEAD one can be requeued", store.ErrConflict, state)
	}
	if err != nil {
		return nil, translate(err)
	}
	return o, t.s.notify(ctx, t.tx, ChannelWork)
}

// DeadOccurrences reads and locks the ids of DEAD occurrences to purge
// (qDeadOccurrences).
func (t *tx) DeadOccurrences(ctx context.Context, p store.PurgeDeadParams) ([]string, error) {
	if !storable(p.TenantID, p.ScheduleID, p.Queue) {
		return nil, nil // nothing stored matches
	}
	rows, err := t.tx.Query(ctx, qDeadOccurrences, p.TenantID, p.ScheduleID, p.Queue, p.Limit)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, translate(err)
}

// CancelDead writes a purge (qCancelDead).
func (t *tx) CancelDead(ctx context.Context, tenantID string, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := t.tx.Exec(ctx, qCancelDead, tenantID, ms(now), ids)
	if err != nil {
		return 0, translate(err)
	}
	return int(tag.RowsAffected()), nil
}
