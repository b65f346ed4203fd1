package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/store"
)

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
				if !store.IsItemOutcome(err) {
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
		if err := p.Check(); err != nil {
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
		if res[i].Err == nil && res[i].Occurrence.State == record.OccurrenceRetryWait {
			if err := s.notify(ctx, tx, ChannelWork); err != nil {
				return nil, err
			}
			break
		}
	}
	return res, nil
}

// refinish answers a finish that found nothing to write: the same finish
// again (the attempt already ended with the same result) succeeds with the
// occurrence as it is now, and the caller marks it Repeated; anything else
// is stale or not found.
func refinish(ctx context.Context, tx pgx.Tx, p *store.FinishParams) (*record.Occurrence, error) {
	var result pgtype.Text
	err := tx.QueryRow(ctx, qFinishedAttempt, p.TenantID, p.OccurrenceID, p.Attempt).Scan(&result)
	if err != nil {
		return nil, translate(err)
	}
	if result.Valid && record.AttemptResult(result.String) == p.Result {
		o, err := scanOccurrence(tx.QueryRow(ctx, qGetOccurrence, p.TenantID, p.OccurrenceID))
		if err != nil {
			return nil, translate(err)
		}
		return o, nil
	}
	return nil, staleOrMissing(ctx, tx, p.TenantID, p.OccurrenceID, p.Attempt)
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
