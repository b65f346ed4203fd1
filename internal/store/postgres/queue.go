package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/store"
)

// lanes in the order claims serve them: strict capacity is never taken by
// the other lanes (SPEC §5).
var lanes = [...]store.Lane{store.LaneStrict, store.LaneFlexible, store.LaneCatchUp}

// ClaimOccurrences takes up to p.Limit available occurrences of the
// tenant's queue in one transaction (see store.ClaimParams). Candidates
// come lane by lane, oldest available_at first, each locked FOR UPDATE
// SKIP LOCKED, so that concurrent claimers take disjoint sets. Those of
// overlap policy allow are claimed together; skip_if_running and queue_one
// ones are decided one at a time against the schedule's RUNNING
// occurrences, including those claimed earlier in the batch, while this
// claim holds the schedule's advisory lock (qTryLockSchedule). When overlap
// decisions leave the batch short, the lane is read further, so waiting
// queue_one occurrences never block the ones behind them. p.Skipped, when
// set, grows by the occurrences marked SKIPPED_OVERLAP once the claim has
// committed.
func (s *Store) ClaimOccurrences(ctx context.Context, p store.ClaimParams) ([]store.Claimed, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if !storable(p.TenantID, p.Queue) {
		return nil, nil // nothing stored is in that queue
	}
	var (
		out     []store.Claimed
		skipped int
	)
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		out, skipped, err = s.claimTx(ctx, tx, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", p.Queue, err)
	}
	if p.Skipped != nil {
		*p.Skipped += skipped
	}
	return out, nil
}

// claimTx is the claim of ClaimOccurrences within tx. It returns the
// deliveries and how many occurrences it marked SKIPPED_OVERLAP.
func (s *Store) claimTx(ctx context.Context, tx pgx.Tx, p store.ClaimParams) ([]store.Claimed, int, error) {
	c := claimer{s: s, ctx: ctx, tx: tx, p: p, now: ms(p.Now), expires: ms(p.Now.Add(p.Lease))}
	for _, lane := range lanes {
		afterAt, afterSeq := int64(math.MinInt64), int64(math.MinInt64)
		for len(c.out) < p.Limit {
			want := p.Limit - len(c.out)
			cands, err := c.candidates(lane, afterAt, afterSeq, want)
			if err != nil {
				return nil, 0, err
			}
			for i := range cands {
				if err := c.decide(&cands[i]); err != nil {
					return nil, 0, err
				}
			}
			if err := c.flush(); err != nil {
				return nil, 0, err
			}
			if len(cands) < want {
				break // the lane has no more (that another claim does not hold)
			}
			last := cands[len(cands)-1]
			afterAt, afterSeq = last.raw.availableAt, last.seq
		}
	}
	return c.out, c.skipped, nil
}

// FinishAndClaim applies the finishes fs exactly as FinishAttempts does and
// then claims as ClaimOccurrences does, in one transaction: one commit
// where the two calls pay two. The claim sees the finishes (an occurrence
// just acked no longer counts as RUNNING for overlap). A store error fails
// both and writes nothing; a bad claim request fails before anything is
// written.
func (s *Store) FinishAndClaim(ctx context.Context, fs []store.FinishParams, p store.ClaimParams) ([]store.FinishResult, []store.Claimed, error) {
	if err := p.Check(); err != nil {
		return nil, nil, fmt.Errorf("finish and claim: %w", err)
	}
	var (
		res     []store.FinishResult
		out     []store.Claimed
		skipped int
	)
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		if res, err = s.finishTx(ctx, tx, fs); err != nil {
			return fmt.Errorf("finish attempts: %w", err)
		}
		if !storable(p.TenantID, p.Queue) {
			return nil
		}
		if out, skipped, err = s.claimTx(ctx, tx, p); err != nil {
			return fmt.Errorf("claim %s: %w", p.Queue, err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("finish and claim: %w", err)
	}
	if p.Skipped != nil {
		*p.Skipped += skipped
	}
	return res, out, nil
}

// candidate is a claimable occurrence read (and locked) by a claim.
type candidate struct {
	seq        int64
	raw        rawOccurrence
	hasAttempt bool // the row records an attempt (claimed_at is set)
	payload    []byte
}

// claimer is the state of one claim transaction.
type claimer struct {
	s            *Store
	ctx          context.Context
	tx           pgx.Tx
	p            store.ClaimParams
	now, expires int64

	pending []*candidate // decided to claim, not yet written
	out     []store.Claimed
	skipped int // occurrences marked SKIPPED_OVERLAP
}

func (c *claimer) candidates(lane store.Lane, afterAt, afterSeq int64, limit int) ([]candidate, error) {
	rows, err := c.tx.Query(c.ctx, qClaimCandidates, c.p.TenantID, c.p.Queue, string(lane), c.now, afterAt, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("read %s lane: %w", lane, translate(err))
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		out = append(out, candidate{})
		cd := &out[len(out)-1]
		dest := append([]any{&cd.seq}, cd.raw.dest()...)
		if err := rows.Scan(append(dest, &cd.hasAttempt, &cd.payload)...); err != nil {
			return nil, fmt.Errorf("read %s lane: %w", lane, translate(err))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s lane: %w", lane, translate(err))
	}
	return out, nil
}

// decide claims, skips or leaves a candidate.
func (c *claimer) decide(cd *candidate) error {
	if len(c.out)+len(c.pending) >= c.p.Limit {
		return nil
	}
	policy := store.OverlapPolicy(cd.raw.ovl)
	if policy == store.OverlapAllow {
		c.pending = append(c.pending, cd)
		return nil
	}
	// The database must show the claims decided so far in this batch.
	if err := c.flush(); err != nil {
		return err
	}
	sid := cd.raw.o.ScheduleID
	// Only the holder of the schedule's key decides its overlap; another
	// claim deciding for it right now keeps it, and this candidate waits
	// for a later claim (still ENQUEUED, untouched).
	var locked bool
	if err := c.tx.QueryRow(c.ctx, qTryLockSchedule, c.s.lockPrefix+sid).Scan(&locked); err != nil {
		return fmt.Errorf("overlap of %s: %w", sid, translate(err))
	}
	if !locked {
		return nil
	}
	var isRunning bool
	if err := c.tx.QueryRow(c.ctx, qScheduleRunning, sid).Scan(&isRunning); err != nil {
		return fmt.Errorf("overlap of %s: %w", sid, translate(err))
	}
	if !isRunning {
		c.pending = append(c.pending, cd)
		return nil
	}
	if policy == store.OverlapQueueOne {
		var first string
		if err := c.tx.QueryRow(c.ctx, qEarliestPending, sid).Scan(&first); err != nil {
			return fmt.Errorf("overlap of %s: %w", sid, translate(err))
		}
		if first == cd.raw.o.OccurrenceID {
			return nil // the one that waits
		}
	}
	if _, err := c.tx.Exec(c.ctx, qSkipOverlap, c.now, cd.raw.o.OccurrenceID); err != nil {
		return fmt.Errorf("skip %s: %w", cd.raw.o.OccurrenceID, translate(err))
	}
	c.skipped++
	return nil
}

// flush claims the pending candidates: one UPDATE of their rows, which
// record the new attempts themselves, after one INSERT that moves the
// previous attempt of those claimed again to the history.
func (c *claimer) flush() error {
	if len(c.pending) == 0 {
		return nil
	}
	ids := make([]string, len(c.pending))
	var archOcc, archID []string
	for i, cd := range c.pending {
		ids[i] = cd.raw.o.OccurrenceID
		if n := cd.raw.o.AttemptCount; n > 0 && cd.hasAttempt {
			archOcc = append(archOcc, cd.raw.o.OccurrenceID)
			archID = append(archID, store.AttemptID(cd.raw.o.OccurrenceID, int64(n)))
		}
	}
	if len(archOcc) > 0 {
		if _, err := c.tx.Exec(c.ctx, qArchiveAttempts, archOcc, archID); err != nil {
			return fmt.Errorf("archive attempts: %w", translate(err))
		}
	}
	tag, err := c.tx.Exec(c.ctx, qClaimRows, c.now, c.p.WorkerID, c.expires, ids)
	if err != nil {
		return fmt.Errorf("claim rows: %w", translate(err))
	}
	if n := int(tag.RowsAffected()); n != len(c.pending) {
		// The rows are locked by this transaction: nothing else can have
		// changed them.
		return fmt.Errorf("claim rows: wrote %d rows of the %d read", n, len(c.pending))
	}
	for _, cd := range c.pending {
		o := cd.raw.finish()
		o.State = store.OccurrenceRunning
		o.AttemptCount++
		if o.FirstClaimedAt.IsZero() {
			o.FirstClaimedAt = fromMS(c.now)
		}
		a := store.Attempt{
			AttemptID:      store.AttemptID(o.OccurrenceID, int64(o.AttemptCount)),
			TenantID:       o.TenantID,
			OccurrenceID:   o.OccurrenceID,
			Attempt:        int64(o.AttemptCount),
			WorkerID:       c.p.WorkerID,
			ClaimedAt:      fromMS(c.now),
			LeaseExpiresAt: fromMS(c.expires),
		}
		c.out = append(c.out, store.Claimed{Occurrence: *o, Attempt: a, Payload: cd.payload})
	}
	c.pending = c.pending[:0]
	return nil
}

// Heartbeat extends the lease of the occurrence's current, unfinished
// attempt and says whether the worker should stop. Anything else is
// store.ErrStaleAttempt; another tenant's occurrence is store.ErrNotFound.
func (s *Store) Heartbeat(ctx context.Context, p store.HeartbeatParams) (store.HeartbeatResult, error) {
	if p.Lease <= 0 {
		return store.HeartbeatResult{}, fmt.Errorf("heartbeat %s attempt %d: lease %v: want a positive lease", p.OccurrenceID, p.Attempt, p.Lease)
	}
	if !storable(p.TenantID, p.OccurrenceID) {
		return store.HeartbeatResult{}, fmt.Errorf("heartbeat %q attempt %d: %w", p.OccurrenceID, p.Attempt, notStorable())
	}
	var (
		res     store.HeartbeatResult
		expires int64
	)
	err := s.pool.QueryRow(ctx, qHeartbeat, ms(p.Now.Add(p.Lease)), p.OccurrenceID, p.Attempt, p.TenantID).
		Scan(&expires, &res.Superseded, &res.Canceled)
	if errors.Is(err, pgx.ErrNoRows) {
		err = staleOrMissing(ctx, s.pool, p.TenantID, p.OccurrenceID, p.Attempt)
	}
	if err != nil {
		return store.HeartbeatResult{}, fmt.Errorf("heartbeat %s attempt %d: %w", p.OccurrenceID, p.Attempt, translate(err))
	}
	res.LeaseExpiresAt = fromMS(expires)
	return res, nil
}

// querier is a *pgxpool.Pool or a pgx.Tx.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// staleOrMissing explains why a write to an attempt found nothing to
// write: store.ErrNotFound when the tenant has no such occurrence,
// store.ErrStaleAttempt otherwise.
func staleOrMissing(ctx context.Context, q querier, tenantID, occurrenceID string, attempt int64) error {
	var state string
	err := q.QueryRow(ctx, qOccurrenceState, tenantID, occurrenceID).Scan(&state)
	if err != nil {
		return translate(err)
	}
	return fmt.Errorf("%w: attempt %d is not the current attempt of the %s occurrence", store.ErrStaleAttempt, attempt, state)
}

// FinishAttempts applies a batch of acks and nacks in one transaction (see
// store.FinishParams). Each item has its own result: a stale or invalid
// item fails alone and writes nothing, and the others still apply. An
// error of the store itself (busy, full) fails the whole batch.
//
// The items are applied as if one after the other, in a few statements:
// the batch is cut into runs in which no occurrence appears twice, and each
// run ends its attempts and moves their occurrences in one UPDATE (the
// current attempt lives in the occurrence row). An item it did not write
// (stale, not found, or the same finish again) is then answered on its own;
// the same finish again is Repeated, with nothing written.
func (s *Store) FinishAttempts(ctx context.Context, ps []store.FinishParams) ([]store.FinishResult, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	var res []store.FinishResult
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		res, err = s.finishTx(ctx, tx, ps)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("finish attempts: %w", err)
	}
	return res, nil
}

// finishArrays holds a run of finishes column by column, in the order
// qFinishBatch reads them.
type finishArrays struct {
	occ                []string
	attempt            []int64
	tenant, state, res []string
	errText            [][]byte
	now, retryAt       []int64
	deadReason         []string
}

func (f *finishArrays) reset() {
	f.occ, f.attempt, f.tenant, f.state, f.res = f.occ[:0], f.attempt[:0], f.tenant[:0], f.state[:0], f.res[:0]
	f.errText, f.now, f.retryAt, f.deadReason = f.errText[:0], f.now[:0], f.retryAt[:0], f.deadReason[:0]
}

// finishTx is the batch of FinishAttempts within tx.
func (s *Store) finishTx(ctx context.Context, tx pgx.Tx, ps []store.FinishParams) ([]store.FinishResult, error) {
	res := make([]store.FinishResult, len(ps))
	if len(ps) == 0 {
		return res, nil
	}
	var (
		seen  = map[string]bool{}
		run   []int // items of the current run
		f     finishArrays
		byOcc = map[string]int{}
		ended = map[int]bool{}
	)
	apply := func() error {
		if len(run) == 0 {
			return nil
		}
		f.reset()
		clear(byOcc)
		clear(ended)
		for _, i := range run {
			p := &ps[i]
			f.occ = append(f.occ, p.OccurrenceID)
			f.attempt = append(f.attempt, p.Attempt)
			f.tenant = append(f.tenant, p.TenantID)
			f.state = append(f.state, string(p.State))
			f.res = append(f.res, string(p.Result))
			f.errText = append(f.errText, append([]byte{}, p.Error...)) // never nil: nil binds as NULL
			f.now = append(f.now, ms(p.Now))
			f.retryAt = append(f.retryAt, ms(p.RetryAt))
			f.deadReason = append(f.deadReason, string(p.DeadReason))
			byOcc[p.OccurrenceID] = i
		}
		rows, err := tx.Query(ctx, qFinishBatch, f.occ, f.attempt, f.tenant, f.state, f.res, f.errText, f.now, f.retryAt, f.deadReason)
		if err != nil {
			return fmt.Errorf("finish occurrences: %w", translate(err))
		}
		moved, err := collect(rows, scanOccurrence)
		if err != nil {
			return fmt.Errorf("finish occurrences: %w", err)
		}
		for _, o := range moved {
			i := byOcc[o.OccurrenceID]
			res[i].Occurrence = o
			ended[i] = true
		}
		for _, i := range run {
			if ended[i] {
				continue
			}
			p := &ps[i]
			o, err := refinish(ctx, tx, p)
			if err != nil {
				res[i].Err = fmt.Errorf("finish %s attempt %d: %w", p.OccurrenceID, p.Attempt, err)
				if !isOutcome(err) {
					return res[i].Err
				}
				continue
			}
			res[i].Occurrence, res[i].Repeated = *o, true
		}
		run = run[:0]
		clear(seen)
		return nil
	}
	for i := range ps {
		p := &ps[i]
		if err := checkFinish(p); err != nil {
			res[i].Err = fmt.Errorf("finish %s attempt %d: %w", p.OccurrenceID, p.Attempt, err)
			continue
		}
		if !storable(p.TenantID, p.OccurrenceID) {
			res[i].Err = fmt.Errorf("finish %q attempt %d: %w", p.OccurrenceID, p.Attempt, notStorable())
			continue
		}
		if !storable(string(p.DeadReason)) {
			res[i].Err = fmt.Errorf("finish %s attempt %d: dead reason %q is not valid text", p.OccurrenceID, p.Attempt, p.DeadReason)
			continue
		}
		if seen[p.OccurrenceID] {
			if err := apply(); err != nil {
				return nil, err
			}
		}
		seen[p.OccurrenceID] = true
		run = append(run, i)
	}
	if err := apply(); err != nil {
		return nil, err
	}
	for i := range res {
		// A retry is claimable at its retry time: wake waiting claims
		// (on every node) to take it into their sleep.
		if res[i].Err == nil && res[i].Occurrence.State == store.OccurrenceRetryWait {
			if err := s.notify(ctx, tx, ChannelWork); err != nil {
				return nil, err
			}
			break
		}
	}
	return res, nil
}

// isOutcome tells a per-item answer (stale, not found) from an error of
// the store.
func isOutcome(err error) bool {
	return errors.Is(err, store.ErrStaleAttempt) || errors.Is(err, store.ErrNotFound)
}

// checkFinish refuses a finish the engine should never send.
func checkFinish(p *store.FinishParams) error {
	switch p.State {
	case store.OccurrenceSucceeded, store.OccurrenceDead:
	case store.OccurrenceRetryWait:
		if p.RetryAt.IsZero() {
			return errors.New("RETRY_WAIT without a retry time")
		}
	case store.OccurrenceCanceled:
		if p.Result != store.ResultFailedRetryable {
			return fmt.Errorf("result %q: only a FAILED_RETRYABLE attempt ends CANCELED", p.Result)
		}
	default:
		return fmt.Errorf("state %q: a finish ends in SUCCEEDED, RETRY_WAIT, DEAD or CANCELED", p.State)
	}
	switch p.Result {
	case store.ResultSucceeded, store.ResultFailedRetryable, store.ResultFailedPermanent:
	default:
		return fmt.Errorf("result %q: a worker's attempt ends SUCCEEDED, FAILED_RETRYABLE or FAILED_PERMANENT", p.Result)
	}
	return nil
}

// refinish answers a finish that found nothing to write: the same finish
// again (the attempt already ended with the same result) succeeds with the
// occurrence as it is now, and the caller marks it Repeated; anything else
// is stale or not found.
func refinish(ctx context.Context, tx pgx.Tx, p *store.FinishParams) (*store.Occurrence, error) {
	var result pgtype.Text
	err := tx.QueryRow(ctx, qFinishedAttempt, p.TenantID, p.OccurrenceID, p.Attempt).Scan(&result)
	if err != nil {
		return nil, translate(err)
	}
	if result.Valid && store.AttemptResult(result.String) == p.Result {
		o, err := scanOccurrence(tx.QueryRow(ctx, qGetOccurrence, p.TenantID, p.OccurrenceID))
		if err != nil {
			return nil, translate(err)
		}
		return o, nil
	}
	return nil, staleOrMissing(ctx, tx, p.TenantID, p.OccurrenceID, p.Attempt)
}

// ExpireLeases ends up to limit attempts whose lease ran out at or before
// now, oldest lease first, in one transaction, and counts what it did.
// Each gets result LEASE_EXPIRED. Its occurrence, RUNNING at that attempt
// (the only place a live attempt exists), becomes CANCELED when its
// schedule has moved on (a newer version than the occurrence's, or
// CANCELED); else DEAD when its attempts since the last replay have
// reached the schedule's retry_max_attempts (reason attempts_exhausted) or
// its retry deadline (retry_from + retry_deadline_ms) has passed (reason
// deadline_passed); else claimable again at now (ENQUEUED). Dead is split
// by the reason stored (DeadAttempts, DeadDeadline). Rows another
// transaction is writing (a late ack) are left to the next pass.
func (s *Store) ExpireLeases(ctx context.Context, now time.Time, limit int) (store.ExpireResult, error) {
	if limit <= 0 {
		return store.ExpireResult{}, fmt.Errorf("expire leases: limit %d: want a positive limit", limit)
	}
	at := ms(now)
	var res store.ExpireResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res = store.ExpireResult{} // counted anew on each run of fn

		rows, err := tx.Query(ctx, qExpiredAttempts, at, limit)
		if err != nil {
			return translate(err)
		}
		var (
			occs     []string
			attempts []int64
			states   []string
			reasons  []string
			counts   store.ExpireResult
		)
		for rows.Next() {
			var (
				occ                         string
				attempt, floor, maxAttempts int64
				retryFrom, deadline         int64
				movedOn                     bool
			)
			if err := rows.Scan(&occ, &attempt, &floor, &retryFrom, &maxAttempts, &deadline, &movedOn); err != nil {
				rows.Close()
				return translate(err)
			}
			occs = append(occs, occ)
			attempts = append(attempts, attempt)
			state, reason := store.OccurrenceEnqueued, store.DeadReason("")
			switch {
			case movedOn:
				state = store.OccurrenceCanceled
				counts.Canceled++
			case attempt-floor >= maxAttempts:
				state, reason = store.OccurrenceDead, store.DeadAttemptsExhausted
				counts.Dead++
				counts.DeadAttempts++
			case at >= retryFrom+deadline:
				state, reason = store.OccurrenceDead, store.DeadDeadlinePassed
				counts.Dead++
				counts.DeadDeadline++
			default:
				counts.Requeued++
			}
			states = append(states, string(state))
			reasons = append(reasons, string(reason))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		if len(occs) == 0 {
			return nil
		}
		tag, err := tx.Exec(ctx, qExpireAttempts, at, occs, attempts, states, reasons)
		if err != nil {
			return translate(err)
		}
		if got := int(tag.RowsAffected()); got != len(occs) {
			// The rows are locked by this transaction.
			return fmt.Errorf("ended %d attempts of the %d read", got, len(occs))
		}
		res = counts
		res.Expired = len(occs)
		if res.Requeued > 0 {
			return s.notify(ctx, tx, ChannelWork)
		}
		return nil
	})
	if err != nil {
		return store.ExpireResult{}, fmt.Errorf("expire leases: %w", err)
	}
	return res, nil
}

// ReplayOccurrence puts a DEAD occurrence back on the queue at now, with
// the same occurrence id: the next claim is attempt attempt_count+1, and
// the retry policy counts attempts and the deadline afresh from here. An
// occurrence in another state is store.ErrConflict; another tenant's is
// store.ErrNotFound.
func (s *Store) ReplayOccurrence(ctx context.Context, tenantID, occurrenceID string, now time.Time) (*store.Occurrence, error) {
	if !storable(tenantID, occurrenceID) {
		return nil, fmt.Errorf("replay %q: %w", occurrenceID, notStorable())
	}
	var o *store.Occurrence
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		o, err = scanOccurrence(tx.QueryRow(ctx, qReplay, ms(now), tenantID, occurrenceID))
		if err == nil {
			return s.notify(ctx, tx, ChannelWork)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return translate(err)
		}
		var state string
		if err := tx.QueryRow(ctx, qOccurrenceState, tenantID, occurrenceID).Scan(&state); err != nil {
			return translate(err)
		}
		return fmt.Errorf("%w: the occurrence is %s; only a DEAD one can be replayed", store.ErrConflict, state)
	})
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", occurrenceID, err)
	}
	return o, nil
}

// PurgeDead cancels up to p.Limit of the tenant's DEAD occurrences that
// match p's schedule and queue (empty: any), oldest scheduled first, at
// p.Now, and returns how many it canceled. Each keeps its dead reason and
// attempts as history, and being CANCELED can no longer be replayed. A
// DEAD occurrence a concurrent replay takes first is left to the replay and
// not counted.
func (s *Store) PurgeDead(ctx context.Context, p store.PurgeDeadParams) (int, error) {
	if p.Limit < 1 || p.Limit > store.MaxListLimit {
		return 0, fmt.Errorf("purge dead of %s: limit %d: want 1..%d", p.TenantID, p.Limit, store.MaxListLimit)
	}
	if !storable(p.TenantID, p.ScheduleID, p.Queue) {
		return 0, nil // nothing stored matches
	}
	tag, err := s.pool.Exec(ctx, qPurgeDead, p.TenantID, ms(p.Now), p.ScheduleID, p.Queue, p.Limit)
	if err != nil {
		return 0, fmt.Errorf("purge dead of %s: %w", p.TenantID, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// NextAvailable returns the earliest available_at among the claimable
// occurrences of the tenant's queue, or the zero time when it has none.
func (s *Store) NextAvailable(ctx context.Context, tenantID, queue string) (time.Time, error) {
	if !storable(tenantID, queue) {
		return time.Time{}, nil
	}
	var t pgtype.Int8
	if err := s.pool.QueryRow(ctx, qNextAvailable, tenantID, queue).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("next available in %s: %w", queue, translate(err))
	}
	return fromNullMS(t), nil
}

// FirstUndelivered returns the earliest scheduled_for among the tenant's
// schedule's occurrences of version that are ENQUEUED, never claimed
// (attempt_count 0) and not manual: the next firing of its timetable not
// yet delivered. It reads the schedule's open occurrences alone (index
// occurrences_open), never its history. The zero time when there is none,
// and also, with no error, when the tenant has no such schedule (another
// tenant's schedule is not found).
func (s *Store) FirstUndelivered(ctx context.Context, tenantID, scheduleID string, version int64) (time.Time, error) {
	if !storable(tenantID, scheduleID) {
		return time.Time{}, nil // nothing stored has that id
	}
	var t pgtype.Int8
	if err := s.pool.QueryRow(ctx, qFirstUndelivered, tenantID, scheduleID, version).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("first undelivered of %s: %w", scheduleID, translate(err))
	}
	return fromNullMS(t), nil
}
