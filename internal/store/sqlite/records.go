package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/spec"
	"github.com/sched-dev/sched/internal/store"
)

// InsertSchedule stores a new schedule as given (the engine sets its
// version, state, shard and times). A taken schedule id, or an idempotency
// key the tenant already used, is store.ErrConflict.
func (s *Store) InsertSchedule(ctx context.Context, sc *store.Schedule) error {
	if len(sc.Payload) > store.MaxPayload {
		return fmt.Errorf("insert schedule %s: payload of %d bytes is over %d", sc.ScheduleID, len(sc.Payload), store.MaxPayload)
	}
	payload := sc.Payload
	if payload == nil {
		payload = []byte{} // the column is NOT NULL; no payload is an empty one
	}
	var idem any
	if sc.IdempotencyKey != "" {
		idem = sc.IdempotencyKey
	}
	_, err := s.w.ExecContext(ctx, qInsertSchedule,
		sc.ScheduleID, sc.TenantID, sc.Shard, sc.Name, string(sc.Kind), sc.Expr, sc.TimeZone, nullMS(sc.Anchor),
		string(sc.DSTGap), string(sc.DSTRepeat), sc.Version, string(sc.State), nullMS(sc.NextRunAt), sc.Queue, payload,
		string(sc.MisfirePolicy), durMS(sc.MaxLateness), sc.CatchUpK, string(sc.OverlapPolicy), durMS(sc.FlexibleWindow),
		sc.Retry.MaxAttempts, durMS(sc.Retry.BackoffBase), durMS(sc.Retry.BackoffCap), durMS(sc.Retry.Deadline),
		idem, nullMS(sc.CreatedAt), nullMS(sc.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert schedule %s: %w", sc.ScheduleID, translate(err))
	}
	return nil
}

// GetSchedule returns the tenant's schedule. Another tenant's schedule is
// store.ErrNotFound, exactly like an id that does not exist.
func (s *Store) GetSchedule(ctx context.Context, tenantID, scheduleID string) (*store.Schedule, error) {
	sc, err := scanSchedule(s.r.QueryRowContext(ctx, qGetSchedule, tenantID, scheduleID))
	if err != nil {
		return nil, fmt.Errorf("get schedule %s: %w", scheduleID, translate(err))
	}
	return sc, nil
}

// InsertOccurrences materializes a batch of occurrences in one transaction
// and returns how many were new. A firing already stored (same schedule,
// version and scheduled time) is skipped, so inserting the same batch twice
// inserts nothing the second time. Each occurrence's id is derived with
// store.OccurrenceID; an occurrence may leave OccurrenceID empty, but one
// that carries a different id, or a ScheduledFor that is not a whole second,
// fails the whole batch. An occurrence whose schedule does not exist for
// its tenant fails the batch with store.ErrNotFound.
func (s *Store) InsertOccurrences(ctx context.Context, occs []store.Occurrence) (inserted int, err error) {
	if len(occs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(occs))
	for i := range occs {
		o := &occs[i]
		if o.ScheduledFor.Nanosecond() != 0 {
			return 0, fmt.Errorf("insert occurrences: row %d: scheduled_for %s is not a whole second", i, o.ScheduledFor.Format(time.RFC3339Nano))
		}
		ids[i] = store.OccurrenceID(o.ScheduleID, o.ScheduleVersion, o.ScheduledFor)
		if o.OccurrenceID != "" && o.OccurrenceID != ids[i] {
			return 0, fmt.Errorf("insert occurrences: row %d: occurrence id %s is not the derived %s", i, o.OccurrenceID, ids[i])
		}
	}

	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: begin: %w", translate(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	stmt, err := tx.PrepareContext(ctx, qInsertOccurrence)
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: prepare: %w", translate(err))
	}
	defer stmt.Close()
	for i := range occs {
		o := &occs[i]
		res, err := stmt.ExecContext(ctx,
			ids[i], o.TenantID, o.ScheduleID, o.ScheduleVersion, ms(o.ScheduledFor),
			nullMS(o.AvailableAt), nullMS(o.EnqueuedAt), string(o.State), string(o.Lane), o.Queue,
			o.AttemptCount, nullMS(o.FirstClaimedAt), nullMS(o.FinishedAt))
		if err != nil {
			return 0, fmt.Errorf("insert occurrence %s: %w", ids[i], translate(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("insert occurrence %s: %w", ids[i], translate(err))
		}
		inserted += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("insert occurrences: commit: %w", translate(err))
	}
	return inserted, nil
}

// GetOccurrence returns the tenant's occurrence. Another tenant's
// occurrence is store.ErrNotFound.
func (s *Store) GetOccurrence(ctx context.Context, tenantID, occurrenceID string) (*store.Occurrence, error) {
	o, err := scanOccurrence(s.r.QueryRowContext(ctx, qGetOccurrence, tenantID, occurrenceID))
	if err != nil {
		return nil, fmt.Errorf("get occurrence %s: %w", occurrenceID, translate(err))
	}
	return o, nil
}

// ListOccurrences returns the tenant's occurrences of one schedule, oldest
// scheduled time first. Another tenant's schedule has none.
func (s *Store) ListOccurrences(ctx context.Context, p store.ListOccurrencesParams) ([]store.Occurrence, error) {
	limit := p.Limit
	switch {
	case limit <= 0:
		limit = store.DefaultListLimit
	case limit > store.MaxListLimit:
		limit = store.MaxListLimit
	}
	rows, err := s.r.QueryContext(ctx, qListOccurrences, p.TenantID, p.ScheduleID, limit)
	if err != nil {
		return nil, fmt.Errorf("list occurrences of %s: %w", p.ScheduleID, translate(err))
	}
	defer rows.Close()
	var out []store.Occurrence
	for rows.Next() {
		o, err := scanOccurrence(rows)
		if err != nil {
			return nil, fmt.Errorf("list occurrences of %s: %w", p.ScheduleID, translate(err))
		}
		out = append(out, *o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list occurrences of %s: %w", p.ScheduleID, translate(err))
	}
	return out, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanSchedule reads the columns of scheduleColumns, in that order.
func scanSchedule(row scanner) (*store.Schedule, error) {
	var (
		sc                                     store.Schedule
		kind, gap, repeat, state, misfire, ovl string
		anchor, next                           sql.Null[int64]
		idemKey                                sql.NullString
		lateness, window, base, capMS, dl      int64
		created, updated                       int64
	)
	err := row.Scan(&sc.ScheduleID, &sc.TenantID, &sc.Shard, &sc.Name, &kind, &sc.Expr, &sc.TimeZone, &anchor,
		&gap, &repeat, &sc.Version, &state, &next, &sc.Queue, &sc.Payload,
		&misfire, &lateness, &sc.CatchUpK, &ovl, &window,
		&sc.Retry.MaxAttempts, &base, &capMS, &dl,
		&idemKey, &created, &updated)
	if err != nil {
		return nil, err
	}
	sc.Kind = spec.Kind(kind)
	sc.Anchor = fromNullMS(anchor)
	sc.DSTGap = spec.GapPolicy(gap)
	sc.DSTRepeat = spec.RepeatPolicy(repeat)
	sc.State = store.ScheduleState(state)
	sc.NextRunAt = fromNullMS(next)
	sc.MisfirePolicy = store.MisfirePolicy(misfire)
	sc.MaxLateness = fromDurMS(lateness)
	sc.OverlapPolicy = store.OverlapPolicy(ovl)
	sc.FlexibleWindow = fromDurMS(window)
	sc.Retry.BackoffBase = fromDurMS(base)
	sc.Retry.BackoffCap = fromDurMS(capMS)
	sc.Retry.Deadline = fromDurMS(dl)
	sc.IdempotencyKey = idemKey.String
	sc.CreatedAt = fromMS(created)
	sc.UpdatedAt = fromMS(updated)
	return &sc, nil
}

// scanOccurrence reads the columns of occurrenceColumns, in that order.
func scanOccurrence(row scanner) (*store.Occurrence, error) {
	var (
		o                              store.Occurrence
		state, lane                    string
		scheduledFor, availableAt      int64
		enqueued, firstClaim, finished sql.Null[int64]
	)
	err := row.Scan(&o.OccurrenceID, &o.TenantID, &o.ScheduleID, &o.ScheduleVersion, &scheduledFor,
		&availableAt, &enqueued, &state, &lane, &o.Queue, &o.AttemptCount, &firstClaim, &finished)
	if err != nil {
		return nil, err
	}
	o.ScheduledFor = fromMS(scheduledFor)
	o.AvailableAt = fromMS(availableAt)
	o.EnqueuedAt = fromNullMS(enqueued)
	o.State = store.OccurrenceState(state)
	o.Lane = store.Lane(lane)
	o.FirstClaimedAt = fromNullMS(firstClaim)
	o.FinishedAt = fromNullMS(finished)
	return &o, nil
}

// Time encoding: UTC unix milliseconds; the zero time.Time is NULL.

func ms(t time.Time) int64 { return t.UnixMilli() }

func nullMS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.Null[int64]) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.V)
}

func durMS(d time.Duration) int64 { return d.Milliseconds() }

func fromDurMS(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
