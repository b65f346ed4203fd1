package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

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
			if p.State == record.OccurrenceDead {
				reason = string(p.DeadReason) // a reason with any other state is not stored
			}
			return finishKey{p.TenantID, string(p.State), string(p.Result), p.Error, reason, p.Attempt, ms(p.Now), ms(p.RetryAt)}
		})
		for _, k := range keys {
			group := groups[k]
			args := []any{k.state, k.result, k.error, k.now, k.retryAt, k.tenant, k.attempt, nil, k.deadReason}
			{
				// A batch of finishes of running attempts finishes every
				// one: then the count says so, and each answer is what the
				// item says the row now is (store.FinishResult). Otherwise
				// the form below that names its rows runs. When the store
				// remembers every item's row from its claim, the rows drive
				// (qFinishGroupByRow).
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
						res[i].Occurrence = record.Occurrence{OccurrenceID: ps[i].OccurrenceID, TenantID: k.tenant,
							State: record.OccurrenceState(k.state), AttemptCount: int(k.attempt)}
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
				if !store.IsItemOutcome(err) {
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
		if err := p.Check(); err != nil {
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

// refinish answers a finish that found nothing to write: the same finish
// again (the attempt already ended with the same result) succeeds with the
// occurrence as it is now, and the caller marks it Repeated; anything else
// is stale or not found.
func (s *Store) refinish(ctx context.Context, tx *sql.Tx, p *store.FinishParams) (*record.Occurrence, error) {
	var result sql.NullString
	err := tx.QueryRowContext(ctx, qFinishedAttempt, p.TenantID, p.OccurrenceID, p.Attempt).Scan(&result)
	if err != nil {
		return nil, translate(err)
	}
	if result.Valid && record.AttemptResult(result.String) == p.Result {
		o, err := scanOccurrence(tx.QueryRowContext(ctx, qGetOccurrence, p.TenantID, p.OccurrenceID))
		if err != nil {
			return nil, translate(err)
		}
		return o, nil
	}
	return nil, s.staleOrMissing(ctx, tx, p.TenantID, p.OccurrenceID, p.Attempt)
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
