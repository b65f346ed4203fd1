package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// lanes in the order claims serve them: strict capacity is never taken by
// the other lanes (SPEC §5).
var lanes = [...]store.Lane{store.LaneStrict, store.LaneFlexible, store.LaneCatchUp}

// ClaimOccurrences takes up to p.Limit available occurrences of the
// tenant's queue in one transaction (see store.ClaimParams). Candidates
// come lane by lane, oldest available_at first. Those of overlap policy
// allow are claimed together; skip_if_running and queue_one ones are
// decided one at a time against the schedule's RUNNING occurrences,
// including those claimed earlier in the batch. When overlap decisions
// leave the batch short, the lane is read further, so waiting queue_one
// occurrences never block the ones behind them. The occurrences it marks
// SKIPPED_OVERLAP are added to *p.Skipped once the claim has committed.
func (s *Store) ClaimOccurrences(ctx context.Context, p store.ClaimParams) ([]store.Claimed, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	var (
		out     []store.Claimed
		skipped int
	)
	err := s.writeTx(ctx, func(tx *sql.Tx) (err error) {
		out, skipped, err = s.claimTx(ctx, tx, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", p.Queue, err)
	}
	addSkipped(p, skipped)
	return out, nil
}

// addSkipped adds n to *p.Skipped, when the caller asked for the count.
func addSkipped(p store.ClaimParams, n int) {
	if p.Skipped != nil {
		*p.Skipped += n
	}
}

// claimTx is the claim of ClaimOccurrences within tx. It also returns how
// many occurrences it marked SKIPPED_OVERLAP.
func (s *Store) claimTx(ctx context.Context, tx *sql.Tx, p store.ClaimParams) ([]store.Claimed, int, error) {
	c := claimer{s: s, ctx: ctx, tx: tx, p: p, now: ms(p.Now), expires: ms(p.Now.Add(p.Lease))}
	defer c.close()
	for _, lane := range lanes {
		afterAt, afterRow := int64(math.MinInt64), int64(math.MinInt64)
		for len(c.out) < p.Limit {
			want := p.Limit - len(c.out)
			cands, err := c.candidates(lane, afterAt, afterRow, want)
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
				break // the lane has no more
			}
			last := cands[len(cands)-1]
			afterAt, afterRow = last.raw.availableAt, last.rowid
		}
	}
	return c.out, c.skipped, nil
}

// FinishAndClaim applies the finishes fs exactly as FinishAttempts does and
// then claims as ClaimOccurrences does, in one transaction: one commit (one
// fsync) where the two calls pay two. The claim sees the finishes (an
// occurrence just acked no longer counts as RUNNING for overlap). A store
// error fails both and writes nothing; a bad claim request fails before
// anything is written.
func (s *Store) FinishAndClaim(ctx context.Context, fs []store.FinishParams, p store.ClaimParams) ([]store.FinishResult, []store.Claimed, error) {
	if err := p.Check(); err != nil {
		return nil, nil, fmt.Errorf("finish and claim: %w", err)
	}
	var (
		res     []store.FinishResult
		out     []store.Claimed
		skipped int
	)
	err := s.writeTx(ctx, func(tx *sql.Tx) (err error) {
		if res, err = s.finishTx(ctx, tx, fs); err != nil {
			return fmt.Errorf("finish attempts: %w", err)
		}
		if out, skipped, err = s.claimTx(ctx, tx, p); err != nil {
			return fmt.Errorf("claim %s: %w", p.Queue, err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("finish and claim: %w", err)
	}
	addSkipped(p, skipped)
	return res, out, nil
}

// candidatePool holds candidate buffers between claims.
var candidatePool = sync.Pool{New: func() any { return new([]candidate) }}

// candidate is a claimable occurrence read by a claim.
type candidate struct {
	rowid   int64
	raw     rawOccurrence
	payload []byte
}

// claimer is the state of one claim transaction.
type claimer struct {
	s            *Store
	ctx          context.Context
	tx           *sql.Tx
	p            store.ClaimParams
	now, expires int64

	pending []*candidate // decided to claim, not yet written
	out     []store.Claimed
	skipped int // marked SKIPPED_OVERLAP
	archive jsonRows

	// buf holds the candidates read, reused by every read of the claim
	// and, through candidatePool, by the claims after it: a batch of 1000
	// candidates is a quarter of a megabyte, which allocated afresh per
	// read (and grown by append) was a seventh of BenchmarkClaimAck's CPU.
	// bufUsed is the most of it any read filled.
	buf     *[]candidate
	bufUsed int

	cands, claim, archiveSt, running, earliest, skip *sql.Stmt
}

func (c *claimer) candidates(lane store.Lane, afterAt, afterRow int64, limit int) ([]candidate, error) {
	st, err := c.stmt(&c.cands, qClaimCandidates)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(c.ctx, c.p.TenantID, c.p.Queue, string(lane), c.now, afterAt, afterRow, limit)
	if err != nil {
		return nil, fmt.Errorf("read %s lane: %w", lane, translate(err))
	}
	defer rows.Close()
	if c.buf == nil {
		c.buf = candidatePool.Get().(*[]candidate)
	}
	out := (*c.buf)[:0]
	defer func() {
		*c.buf = out
		c.bufUsed = max(c.bufUsed, len(out))
	}()
	dest := make([]any, 0, occurrenceClaimArity+2)
	for rows.Next() {
		out = append(out, candidate{})
		cd := &out[len(out)-1]
		dest = append(cd.raw.appendClaimDest(append(dest[:0], &cd.rowid)), &cd.payload)
		if err := rows.Scan(dest...); err != nil {
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
	running, err := c.stmt(&c.running, qScheduleRunning)
	if err != nil {
		return err
	}
	var isRunning bool
	if err := running.QueryRowContext(c.ctx, sid).Scan(&isRunning); err != nil {
		return fmt.Errorf("overlap of %s: %w", sid, translate(err))
	}
	if !isRunning {
		c.pending = append(c.pending, cd)
		return nil
	}
	if policy == store.OverlapQueueOne {
		earliest, err := c.stmt(&c.earliest, qEarliestPending)
		if err != nil {
			return err
		}
		var first int64
		if err := earliest.QueryRowContext(c.ctx, sid).Scan(&first); err != nil {
			return fmt.Errorf("overlap of %s: %w", sid, translate(err))
		}
		if first == cd.rowid {
			return nil // the one that waits
		}
	}
	skip, err := c.stmt(&c.skip, qSkipOverlap)
	if err != nil {
		return err
	}
	if _, err := skip.ExecContext(c.ctx, c.now, cd.rowid); err != nil {
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
	if c.out == nil {
		// One allocation rather than append's doublings, up to a batch
		// the engine allows (a store caller may ask for more).
		c.out = make([]store.Claimed, 0, min(c.p.Limit, 1024))
	}
	ids := make([]byte, 0, 2+len(c.pending)*8)
	ids = append(ids, '[')
	c.archive.reset()
	for i, cd := range c.pending {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, cd.rowid, 10)
		if n := cd.raw.o.AttemptCount; n > 0 {
			c.archive.row()
			c.archive.int(cd.rowid)
			c.archive.str(store.AttemptID(cd.raw.o.OccurrenceID, int64(n)))
		}
	}
	ids = append(ids, ']')
	if c.archive.rows > 0 {
		st, err := c.stmt(&c.archiveSt, qArchiveAttempts)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(c.ctx, c.archive.String()); err != nil {
			return fmt.Errorf("archive attempts: %w", translate(err))
		}
	}
	claim, err := c.stmt(&c.claim, qClaimRows)
	if err != nil {
		return err
	}
	r, err := claim.ExecContext(c.ctx, c.now, c.p.WorkerID, c.expires, string(ids))
	if err != nil {
		return fmt.Errorf("claim rows: %w", translate(err))
	}
	if err := wantRows(r, len(c.pending)); err != nil {
		return fmt.Errorf("claim rows: %w", err)
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
		c.s.hints.put(o.OccurrenceID, cd.rowid)
		c.out = append(c.out, store.Claimed{Occurrence: *o, Attempt: a, Payload: cd.payload})
	}
	c.pending = c.pending[:0]
	return nil
}

// wantRows checks that a write of rows read in the same transaction wrote
// every one of them.
func wantRows(r sql.Result, want int) error {
	n, err := r.RowsAffected()
	if err != nil {
		return translate(err)
	}
	if int(n) != want {
		return fmt.Errorf("wrote %d rows of the %d read", n, want)
	}
	return nil
}

// stmt returns *st, made a statement of the transaction the first time.
func (c *claimer) stmt(st **sql.Stmt, query string) (*sql.Stmt, error) {
	return c.s.txStmtOnce(c.ctx, c.tx, st, query)
}

func (c *claimer) close() {
	if c.buf != nil {
		clear((*c.buf)[:c.bufUsed]) // no payload or id outlives its claim in the pool
		candidatePool.Put(c.buf)
		c.buf = nil
	}
	for _, st := range []*sql.Stmt{c.cands, c.claim, c.archiveSt, c.running, c.earliest, c.skip} {
		if st != nil {
			st.Close()
		}
	}
}

// Heartbeat extends the lease of the occurrence's current, unfinished
// attempt and says whether the worker should stop. Anything else is
// store.ErrStaleAttempt; another tenant's occurrence is store.ErrNotFound.
func (s *Store) Heartbeat(ctx context.Context, p store.HeartbeatParams) (store.HeartbeatResult, error) {
	if p.Lease <= 0 {
		return store.HeartbeatResult{}, fmt.Errorf("heartbeat %s attempt %d: lease %v: want a positive lease", p.OccurrenceID, p.Attempt, p.Lease)
	}
	var (
		res     store.HeartbeatResult
		expires int64
	)
	err := s.hot[qHeartbeat].QueryRowContext(ctx, ms(p.Now.Add(p.Lease)), p.OccurrenceID, p.Attempt, p.TenantID).
		Scan(&expires, &res.Superseded, &res.Canceled)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.staleOrMissing(ctx, s.w, p.TenantID, p.OccurrenceID, p.Attempt)
	}
	if err != nil {
		return store.HeartbeatResult{}, fmt.Errorf("heartbeat %s attempt %d: %w", p.OccurrenceID, p.Attempt, translate(err))
	}
	res.LeaseExpiresAt = fromMS(expires)
	return res, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// staleOrMissing explains why a write to an attempt found nothing to
// write: store.ErrNotFound when the tenant has no such occurrence,
// store.ErrStaleAttempt otherwise.
func (s *Store) staleOrMissing(ctx context.Context, q querier, tenantID, occurrenceID string, attempt int64) error {
	var state string
	err := q.QueryRowContext(ctx, qOccurrenceState, tenantID, occurrenceID).Scan(&state)
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
	err := s.writeTx(ctx, func(tx *sql.Tx) (err error) {
		res, err = s.finishTx(ctx, tx, ps)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("finish attempts: %w", err)
	}
	return res, nil
}

// finishTx is the batch of FinishAttempts within tx.
func (s *Store) finishTx(ctx context.Context, tx *sql.Tx, ps []store.FinishParams) ([]store.FinishResult, error) {
	res := make([]store.FinishResult, len(ps))
	if len(ps) == 0 {
		return res, nil
	}
	// qFinishGroup, qFinishGroupCount and qFinishGroupByRow, made when
	// first used.
	var full, count, byRow *sql.Stmt
	defer func() {
		for _, st := range []*sql.Stmt{full, count, byRow} {
			if st != nil {
				st.Close()
			}
		}
	}()
	// finishKey is what the items of one statement share: everything but
	// the occurrence id.
	type finishKey struct {
		tenant, state, result, error, deadReason string
		attempt, now, retryAt                    int64
		brief                                    bool
	}
	var (
		seen  = map[string]bool{}
		run   []int // items of the current run
		js    jsonRows
		byOcc = map[string]int{}
		ended = map[int]bool{}
		raw   rawOccurrence
		dest  = raw.dest()
	)
	// The items are applied as if one after the other, in runs in which no
	// occurrence appears twice; a run's items go in one statement per
	// group of items that share everything but the occurrence (all of a
	// batch of acks, usually).
	apply := func() error {
		if len(run) == 0 {
			return nil
		}
		clear(byOcc)
		clear(ended)
		for _, i := range run {
			byOcc[ps[i].OccurrenceID] = i
		}
		keys, groups := groupInOrder(run, func(i int) finishKey {
			p := &ps[i]
			var reason string
			if p.State == store.OccurrenceDead {
				reason = string(p.DeadReason) // a reason with any other state is not stored
			}
			return finishKey{p.TenantID, string(p.State), string(p.Result), p.Error, reason, p.Attempt, ms(p.Now), ms(p.RetryAt), p.Brief}
		})
		for _, k := range keys {
			group := groups[k]
			args := []any{k.state, k.result, k.error, k.now, k.retryAt, k.tenant, k.attempt, nil, k.deadReason}
			if k.brief {
				// A batch of acks of running attempts finishes every one:
				// then the count says so, and each answer is what the item
				// says the row now is. Otherwise the full form below runs,
				// and answers with more than a brief finish must. When the
				// store remembers every item's row from its claim, the
				// rows drive (qFinishGroupByRow).
				query, stp := qFinishGroupByRow, &byRow
				rows, ok := s.hintedRows(ps, group)
				if !ok {
					query, stp, rows = qFinishGroupCount, &count, occurrenceIDs(&js, ps, group)
				}
				args[7] = rows
				st, err := s.txStmtOnce(ctx, tx, stp, query)
				if err != nil {
					return fmt.Errorf("finish occurrences: %w", err)
				}
				all, err := briefWrite(ctx, tx, st, len(group), args...)
				if err != nil {
					return fmt.Errorf("finish occurrences: %w", err)
				}
				if all {
					for _, i := range group {
						res[i].Occurrence = store.Occurrence{OccurrenceID: ps[i].OccurrenceID, TenantID: k.tenant,
							State: store.OccurrenceState(k.state), AttemptCount: int(k.attempt)}
						ended[i] = true
					}
					continue
				}
			}
			args[7] = occurrenceIDs(&js, ps, group)
			st, err := s.txStmtOnce(ctx, tx, &full, qFinishGroup)
			if err != nil {
				return fmt.Errorf("finish occurrences: %w", err)
			}
			rows, err := st.QueryContext(ctx, args...)
			if err != nil {
				return fmt.Errorf("finish occurrences: %w", translate(err))
			}
			// Each row goes straight to its result, through one scan
			// buffer.
			err = eachRow(rows, func(row scanner) error {
				if err := row.Scan(dest...); err != nil {
					return err
				}
				o := raw.finish()
				i := byOcc[o.OccurrenceID]
				res[i].Occurrence = *o
				ended[i] = true
				return nil
			})
			if err != nil {
				return fmt.Errorf("finish occurrences: %w", err)
			}
		}
		for _, i := range run {
			if ended[i] {
				continue
			}
			p := &ps[i]
			o, err := s.refinish(ctx, tx, p)
			if err != nil {
				res[i].Err = fmt.Errorf("finish %s attempt %d: %w", p.OccurrenceID, p.Attempt, err)
				if !isOutcome(err) {
					return res[i].Err
				}
				continue
			}
			res[i].Occurrence, res[i].Repeated = *o, true
		}
		// The run's finished attempts need their rows no more: their
		// occurrences are done or wait for another claim, which hints its
		// row again. A refused item (stale) keeps its hint for the
		// attempt still running.
		s.hints.drop(func(yield func(string) bool) {
			for _, i := range run {
				if res[i].Err == nil && !yield(ps[i].OccurrenceID) {
					return
				}
			}
		})
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
	return res, nil
}

// occurrenceIDs returns the ids of the items group of ps as a JSON array
// of [occurrence_id], written with js.
func occurrenceIDs(js *jsonRows, ps []store.FinishParams, group []int) string {
	js.reset()
	for _, i := range group {
		js.row()
		js.str(ps[i].OccurrenceID)
	}
	return js.String()
}

// hintedRows returns the rowids of the items group of ps as a flat JSON
// array, when the store remembers every one (rowhints.go).
func (s *Store) hintedRows(ps []store.FinishParams, group []int) (string, bool) {
	rows, ok := s.hints.lookup(func(yield func(string) bool) {
		for _, i := range group {
			if !yield(ps[i].OccurrenceID) {
				return
			}
		}
	}, len(group))
	if !ok {
		return "", false
	}
	return string(jsonInts(make([]byte, 0, 2+8*len(rows)), rows)), true
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
func (s *Store) refinish(ctx context.Context, tx *sql.Tx, p *store.FinishParams) (*store.Occurrence, error) {
	var result sql.NullString
	err := tx.QueryRowContext(ctx, qFinishedAttempt, p.TenantID, p.OccurrenceID, p.Attempt).Scan(&result)
	if err != nil {
		return nil, translate(err)
	}
	if result.Valid && store.AttemptResult(result.String) == p.Result {
		o, err := scanOccurrence(tx.QueryRowContext(ctx, qGetOccurrence, p.TenantID, p.OccurrenceID))
		if err != nil {
			return nil, translate(err)
		}
		return o, nil
	}
	return nil, s.staleOrMissing(ctx, tx, p.TenantID, p.OccurrenceID, p.Attempt)
}

// ExpireLeases ends up to limit attempts whose lease ran out at or before
// now, oldest lease first, in one transaction, and counts what it did.
// Each gets result LEASE_EXPIRED. Its occurrence, RUNNING at that attempt
// (the only place a live attempt exists), becomes CANCELED when its
// schedule has moved on (a newer version than the occurrence's, or
// CANCELED); else DEAD when its attempts since the last replay have
// reached the schedule's retry_max_attempts (dead reason
// attempts_exhausted) or its retry deadline (retry_from +
// retry_deadline_ms) has passed (deadline_passed); else claimable again at
// now (ENQUEUED). Dead is split by the reason stored (DeadAttempts,
// DeadDeadline).
func (s *Store) ExpireLeases(ctx context.Context, now time.Time, limit int) (store.ExpireResult, error) {
	if limit <= 0 {
		return store.ExpireResult{}, fmt.Errorf("expire leases: limit %d: want a positive limit", limit)
	}
	type expired struct {
		occ                 string
		attempt             int64
		floor, maxAttempts  int64
		retryFrom, deadline int64
		movedOn             bool
	}
	at := ms(now)
	var res store.ExpireResult
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res = store.ExpireResult{}
		rows, err := tx.QueryContext(ctx, qExpiredAttempts, at, limit)
		if err != nil {
			return translate(err)
		}
		var all []expired
		for rows.Next() {
			var e expired
			if err := rows.Scan(&e.occ, &e.attempt, &e.floor, &e.retryFrom, &e.maxAttempts, &e.deadline, &e.movedOn); err != nil {
				rows.Close()
				return translate(err)
			}
			all = append(all, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		for _, e := range all {
			args := []any{at, e.occ, e.attempt}
			var q string
			switch {
			case e.movedOn:
				q = qCancelExpired
				res.Canceled++
			case e.attempt-e.floor >= e.maxAttempts:
				q = qKillExpired
				args = append(args, string(store.DeadAttemptsExhausted))
				res.Dead++
				res.DeadAttempts++
			case at >= e.retryFrom+e.deadline:
				q = qKillExpired
				args = append(args, string(store.DeadDeadlinePassed))
				res.Dead++
				res.DeadDeadline++
			default:
				q = qRequeueExpired
				res.Requeued++
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("attempt %d of %s: %w", e.attempt, e.occ, translate(err))
			}
		}
		res.Expired = len(all)
		return nil
	})
	if err != nil {
		return store.ExpireResult{}, fmt.Errorf("expire leases: %w", err)
	}
	return res, nil
}

// ReplayOccurrence puts a DEAD occurrence back on the queue at now, with
// the same occurrence id and no dead reason: the next claim is attempt
// attempt_count+1, and the retry policy counts attempts and the deadline
// afresh from here. An occurrence in another state is store.ErrConflict;
// another tenant's is store.ErrNotFound.
func (s *Store) ReplayOccurrence(ctx context.Context, tenantID, occurrenceID string, now time.Time) (*store.Occurrence, error) {
	var o *store.Occurrence
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		o, err = scanOccurrence(tx.QueryRowContext(ctx, qReplay, ms(now), tenantID, occurrenceID))
		if !errors.Is(err, sql.ErrNoRows) {
			return translate(err)
		}
		var state string
		if err := tx.QueryRowContext(ctx, qOccurrenceState, tenantID, occurrenceID).Scan(&state); err != nil {
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
// match p's filters, oldest scheduled first, in one transaction, and
// returns how many (see store.Store). They keep their dead reason and
// their attempts, and leave the dead-letter queue for good.
func (s *Store) PurgeDead(ctx context.Context, p store.PurgeDeadParams) (int, error) {
	if p.Limit < 1 || p.Limit > store.MaxListLimit {
		return 0, fmt.Errorf("purge dead of %s: limit %d: want 1 to %d", p.TenantID, p.Limit, store.MaxListLimit)
	}
	var n int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, qPurgeDead, p.TenantID, p.ScheduleID, p.Queue, p.Limit, ms(p.Now))
		if err != nil {
			return translate(err)
		}
		n, err = r.RowsAffected()
		return translate(err)
	})
	if err != nil {
		return 0, fmt.Errorf("purge dead of %s: %w", p.TenantID, err)
	}
	return int(n), nil
}

// NextAvailable returns the earliest available_at among the claimable
// occurrences of the tenant's queue, or the zero time when it has none.
func (s *Store) NextAvailable(ctx context.Context, tenantID, queue string) (time.Time, error) {
	var t sql.Null[int64]
	if err := s.r.QueryRowContext(ctx, qNextAvailable, tenantID, queue).Scan(&t); err != nil {
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
	var t sql.Null[int64]
	if err := s.r.QueryRowContext(ctx, qFirstUndelivered, tenantID, scheduleID, version).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("first undelivered of %s: %w", scheduleID, translate(err))
	}
	return fromNullMS(t), nil
}
