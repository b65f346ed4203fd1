package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// InsertSchedule stores a new schedule as given (the engine sets its
// version, state, shard and times). A taken schedule id, an idempotency key
// the tenant already used, or a name another live schedule of the tenant
// has, is store.ErrConflict.
func (s *Store) InsertSchedule(ctx context.Context, sc *record.Schedule) error {
	if len(sc.Payload) > record.MaxPayload {
		return fmt.Errorf("insert schedule %s: payload of %d bytes is over %d", sc.ScheduleID, len(sc.Payload), record.MaxPayload)
	}
	// In a transaction with the notification that wakes the other nodes'
	// planners.
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qInsertSchedule, scheduleArgs(sc)...); err != nil {
			return translate(err)
		}
		return s.notify(ctx, tx, ChannelPlan)
	})
	if err != nil {
		return fmt.Errorf("insert schedule %s: %w", sc.ScheduleID, err)
	}
	return nil
}

// scheduleArgs is the values of scheduleColumns for sc.
func scheduleArgs(sc *record.Schedule) []any {
	return []any{sc.ScheduleID, sc.TenantID, sc.Shard, sc.Name, string(sc.Kind), sc.Expr, sc.TimeZone, nullMS(sc.Anchor),
		string(sc.DSTGap), string(sc.DSTRepeat), sc.Version, string(sc.State), nullMS(sc.NextRunAt), sc.Queue, payloadArg(sc.Payload),
		string(sc.MisfirePolicy), durMS(sc.MaxLateness), sc.CatchUpK, string(sc.OverlapPolicy), durMS(sc.FlexibleWindow),
		sc.Retry.MaxAttempts, durMS(sc.Retry.BackoffBase), durMS(sc.Retry.BackoffCap), durMS(sc.Retry.Deadline),
		nullString(sc.IdempotencyKey), sc.MissedCount, nullMS(sc.CreatedAt), nullMS(sc.UpdatedAt)}
}

// GetSchedule returns the tenant's schedule. Another tenant's schedule is
// store.ErrNotFound, exactly like an id that does not exist.
func (s *Store) GetSchedule(ctx context.Context, tenantID, scheduleID string) (*record.Schedule, error) {
	if !storable(tenantID, scheduleID) {
		return nil, fmt.Errorf("get schedule %q: %w", scheduleID, notStorable())
	}
	sc, err := scanSchedule(s.pool.QueryRow(ctx, qGetSchedule, tenantID, scheduleID))
	if err != nil {
		return nil, fmt.Errorf("get schedule %s: %w", scheduleID, translate(err))
	}
	return sc, nil
}

// GetScheduleByName returns the tenant's live (not CANCELED) schedule of
// that name, or store.ErrNotFound.
func (s *Store) GetScheduleByName(ctx context.Context, tenantID, name string) (*record.Schedule, error) {
	if !storable(tenantID, name) {
		return nil, fmt.Errorf("get schedule named %q: %w", name, notStorable())
	}
	sc, err := scanSchedule(s.pool.QueryRow(ctx, qGetScheduleByName, tenantID, name))
	if err != nil {
		return nil, fmt.Errorf("get schedule named %q: %w", name, translate(err))
	}
	return sc, nil
}

// GetScheduleByIdempotencyKey returns the tenant's schedule created with
// that idempotency key, in whatever state it is now, or store.ErrNotFound.
// The empty key is no key: it finds nothing.
func (s *Store) GetScheduleByIdempotencyKey(ctx context.Context, tenantID, key string) (*record.Schedule, error) {
	if key == "" {
		return nil, fmt.Errorf("get schedule by idempotency key: empty key: %w", store.ErrNotFound)
	}
	if !storable(tenantID, key) {
		return nil, fmt.Errorf("get schedule by idempotency key %q: %w", key, notStorable())
	}
	sc, err := scanSchedule(s.pool.QueryRow(ctx, qGetScheduleByIdempotencyKey, tenantID, key))
	if err != nil {
		return nil, fmt.Errorf("get schedule by idempotency key %q: %w", key, translate(err))
	}
	return sc, nil
}

// ListSchedules returns a page of the tenant's schedules in id order (byte
// order, as in SQLite: the id columns are COLLATE "C").
func (s *Store) ListSchedules(ctx context.Context, p store.ListSchedulesParams) ([]record.Schedule, error) {
	if !storable(p.TenantID, string(p.State)) {
		return nil, nil // no such tenant or state
	}
	if !storable(p.After) {
		return nil, fmt.Errorf("list schedules: after %q: not valid text", p.After)
	}
	rows, err := s.pool.Query(ctx, qListSchedules, p.TenantID, p.After, string(p.State), store.ListLimit(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", translate(err))
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return out, nil
}

// InsertOccurrences materializes a batch of occurrences in one transaction
// and returns how many were new. A firing already stored (same schedule,
// version, scheduled time and trigger key) is skipped, so inserting the
// same batch twice inserts nothing the second time; so is a manual
// occurrence whose schedule and trigger key are stored, whatever its time.
// Each occurrence's id is derived with record.OccurrenceID, or
// record.ManualOccurrenceID when it has a trigger key; an occurrence may
// leave OccurrenceID empty, but one that carries a different id, or a
// ScheduledFor that is not a whole second, fails the whole batch. An occurrence whose schedule does not exist for
// its tenant fails the batch with store.ErrNotFound. A zero RetryFrom is
// stored as ScheduledFor, an empty OverlapPolicy as allow.
func (s *Store) InsertOccurrences(ctx context.Context, occs []record.Occurrence) (inserted int, err error) {
	if len(occs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(occs))
	for i := range occs {
		if ids[i], err = occurrenceID(&occs[i]); err != nil {
			return 0, fmt.Errorf("insert occurrences: row %d: %w", i, err)
		}
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// Each schedule must exist for the occurrence's tenant (the schema
		// has no foreign key for it; 0001_init.sql says why): one query for
		// the batch's distinct pairs.
		var tenants, schedules []string
		seen := map[[2]string]bool{}
		for i := range occs {
			key := [2]string{occs[i].TenantID, occs[i].ScheduleID}
			if !seen[key] {
				seen[key] = true
				tenants, schedules = append(tenants, key[0]), append(schedules, key[1])
			}
		}
		if !storable(tenants...) || !storable(schedules...) {
			return notStorable()
		}
		var tenant, schedule string
		err := tx.QueryRow(ctx, qMissingSchedule, tenants, schedules).Scan(&tenant, &schedule)
		if err == nil {
			return fmt.Errorf("schedule %s of %s: %w", schedule, tenant, store.ErrNotFound)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("check schedules: %w", translate(err))
		}
		ins := newOccurrenceInserter(ctx, tx)
		for i := range occs {
			if err := ins.add(&occs[i], ids[i], occs[i].ShardEpoch, occs[i].EnqueuedAt); err != nil {
				return err
			}
		}
		if err := ins.flush(); err != nil {
			return err
		}
		inserted = ins.inserted
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	return inserted, nil
}

// occurrenceID checks o and returns its derived id: record.OccurrenceID,
// or record.ManualOccurrenceID for a manual occurrence (a trigger key).
func occurrenceID(o *record.Occurrence) (string, error) {
	if o.ScheduledFor.Nanosecond() != 0 {
		return "", fmt.Errorf("scheduled_for %s is not a whole second", o.ScheduledFor.Format(time.RFC3339Nano))
	}
	if !storable(o.TriggerKey, string(o.DeadReason)) {
		return "", fmt.Errorf("trigger key %q or dead reason %q is not valid text", o.TriggerKey, o.DeadReason)
	}
	id := record.OccurrenceID(o.ScheduleID, o.ScheduleVersion, o.ScheduledFor)
	if o.Manual() {
		id = record.ManualOccurrenceID(o.ScheduleID, o.TriggerKey)
	}
	if o.OccurrenceID != "" && o.OccurrenceID != id {
		return "", fmt.Errorf("occurrence id %s is not the derived %s", o.OccurrenceID, id)
	}
	return id, nil
}

// GetOccurrence returns the tenant's occurrence. Another tenant's
// occurrence is store.ErrNotFound.
func (s *Store) GetOccurrence(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error) {
	if !storable(tenantID, occurrenceID) {
		return nil, fmt.Errorf("get occurrence %q: %w", occurrenceID, notStorable())
	}
	o, err := scanOccurrence(s.pool.QueryRow(ctx, qGetOccurrence, tenantID, occurrenceID))
	if err != nil {
		return nil, fmt.Errorf("get occurrence %s: %w", occurrenceID, translate(err))
	}
	return o, nil
}

// ListOccurrences returns a page of the tenant's occurrences that pass the
// filters, in (scheduled_for, occurrence_id) order, newest first with
// p.Reverse, strictly after p.After (see store.ListOccurrencesParams).
// Another tenant's schedule has none. For DEAD it reads the dead-letter
// index; otherwise, with a schedule, that schedule's rows in index order,
// and without one the tenant's rows.
func (s *Store) ListOccurrences(ctx context.Context, p store.ListOccurrencesParams) ([]record.Occurrence, error) {
	if !storable(p.TenantID, p.ScheduleID, string(p.State), p.Queue) {
		return nil, nil // nothing stored matches
	}
	limit := store.ListLimit(p.Limit)
	// The first page starts from a key before every row in the listing's
	// order (no stored time is at either end of the int64 range).
	afterAt, afterID := int64(math.MinInt64), ""
	if p.Reverse {
		afterAt = math.MaxInt64
	}
	if p.After != nil {
		if !storable(p.After.OccurrenceID) {
			return nil, fmt.Errorf("list occurrences: after %q: not valid text", p.After.OccurrenceID)
		}
		afterAt, afterID = ms(p.After.ScheduledFor), p.After.OccurrenceID
	}
	var (
		rows pgx.Rows
		err  error
	)
	switch {
	case p.State == record.OccurrenceDead:
		q := qListDeadOccurrencesAsc
		if p.Reverse {
			q = qListDeadOccurrencesDesc
		}
		rows, err = s.pool.Query(ctx, q, p.TenantID, p.Queue, p.ScheduleID, afterAt, afterID, limit)
	case p.ScheduleID != "":
		q := qListScheduleOccurrencesAsc
		if p.Reverse {
			q = qListScheduleOccurrencesDesc
		}
		rows, err = s.pool.Query(ctx, q, p.ScheduleID, p.TenantID, string(p.State), p.Queue, afterAt, afterID, limit)
	default:
		q := qListTenantOccurrencesAsc
		if p.Reverse {
			q = qListTenantOccurrencesDesc
		}
		rows, err = s.pool.Query(ctx, q, p.TenantID, string(p.State), p.Queue, afterAt, afterID, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("list occurrences: %w", translate(err))
	}
	out, err := collect(rows, scanOccurrence)
	if err != nil {
		return nil, fmt.Errorf("list occurrences: %w", err)
	}
	return out, nil
}

// CountOccurrences counts the tenant's occurrences in a state (every state
// when state is empty). RETRY_WAIT, DEAD and ENQUEUED are counted from
// their indexes.
func (s *Store) CountOccurrences(ctx context.Context, tenantID string, state record.OccurrenceState) (int, error) {
	if !storable(tenantID, string(state)) {
		return 0, nil
	}
	var row pgx.Row
	switch state {
	case record.OccurrenceRetryWait:
		row = s.pool.QueryRow(ctx, qCountRetryWait, tenantID)
	case record.OccurrenceDead:
		row = s.pool.QueryRow(ctx, qCountDead, tenantID)
	case record.OccurrenceEnqueued:
		row = s.pool.QueryRow(ctx, qCountEnqueued, tenantID)
	default:
		row = s.pool.QueryRow(ctx, qCountState, tenantID, string(state))
	}
	var n int
	if err := row.Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s occurrences: %w", state, translate(err))
	}
	return n, nil
}

// ListAttempts returns the attempts of the tenant's occurrence, by attempt
// number: the history rows, then the latest attempt, which the occurrence
// row holds. Another tenant's occurrence is store.ErrNotFound. One
// statement reads both, so they come from one snapshot.
func (s *Store) ListAttempts(ctx context.Context, tenantID, occurrenceID string) ([]record.Attempt, error) {
	if !storable(tenantID, occurrenceID) {
		return nil, fmt.Errorf("list attempts of %q: %w", occurrenceID, notStorable())
	}
	rows, err := s.pool.Query(ctx, qListAttempts, tenantID, occurrenceID)
	if err != nil {
		return nil, fmt.Errorf("list attempts of %s: %w", occurrenceID, translate(err))
	}
	defer rows.Close()
	var (
		out   []record.Attempt
		found bool
	)
	for rows.Next() {
		var (
			latest                   bool
			a                        record.Attempt
			worker, result           pgtype.Text
			claimed, expires, finish pgtype.Int8
			errText                  []byte
		)
		if err := rows.Scan(&latest, &a.Attempt, &a.AttemptID, &worker, &claimed, &expires, &finish, &result, &errText); err != nil {
			return nil, fmt.Errorf("list attempts of %s: %w", occurrenceID, translate(err))
		}
		if latest {
			found = true
			if !claimed.Valid {
				continue // no attempt recorded yet
			}
			a.AttemptID = record.AttemptID(occurrenceID, a.Attempt)
		}
		a.TenantID, a.OccurrenceID, a.WorkerID = tenantID, occurrenceID, worker.String
		a.ClaimedAt, a.LeaseExpiresAt, a.FinishedAt = fromNullMS(claimed), fromNullMS(expires), fromNullMS(finish)
		a.Result = record.AttemptResult(result.String)
		a.Error = string(errText)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list attempts of %s: %w", occurrenceID, translate(err))
	}
	if !found {
		return nil, fmt.Errorf("list attempts of %s: %w", occurrenceID, translate(pgx.ErrNoRows))
	}
	return out, nil
}

// collect reads every row with scan and closes rows. Errors are
// translated.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (*T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// payloadArg binds a payload: the column is NOT NULL, and no payload is an
// empty one (pgx binds a nil []byte as NULL).
func payloadArg(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}

func nullString(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// scanSchedule reads the columns of scheduleColumns, in that order.
func scanSchedule(row pgx.Row) (*record.Schedule, error) {
	var (
		sc                                     record.Schedule
		kind, gap, repeat, state, misfire, ovl string
		anchor, next                           pgtype.Int8
		idemKey                                pgtype.Text
		lateness, window, base, capMS, dl      int64
		created, updated                       int64
	)
	err := row.Scan(&sc.ScheduleID, &sc.TenantID, &sc.Shard, &sc.Name, &kind, &sc.Expr, &sc.TimeZone, &anchor,
		&gap, &repeat, &sc.Version, &state, &next, &sc.Queue, &sc.Payload,
		&misfire, &lateness, &sc.CatchUpK, &ovl, &window,
		&sc.Retry.MaxAttempts, &base, &capMS, &dl,
		&idemKey, &sc.MissedCount, &created, &updated)
	if err != nil {
		return nil, err
	}
	sc.Kind = timetable.Kind(kind)
	sc.Anchor = fromNullMS(anchor)
	sc.DSTGap = timetable.GapPolicy(gap)
	sc.DSTRepeat = timetable.RepeatPolicy(repeat)
	sc.State = record.ScheduleState(state)
	sc.NextRunAt = fromNullMS(next)
	sc.MisfirePolicy = record.MisfirePolicy(misfire)
	sc.MaxLateness = fromDurMS(lateness)
	sc.OverlapPolicy = record.OverlapPolicy(ovl)
	sc.FlexibleWindow = fromDurMS(window)
	sc.Retry.BackoffBase = fromDurMS(base)
	sc.Retry.BackoffCap = fromDurMS(capMS)
	sc.Retry.Deadline = fromDurMS(dl)
	sc.IdempotencyKey = idemKey.String
	sc.CreatedAt = fromMS(created)
	sc.UpdatedAt = fromMS(updated)
	return &sc, nil
}

// rawOccurrence is the Scan destinations of occurrenceColumns, in that
// order, that finish turns into a record.Occurrence.
type rawOccurrence struct {
	o                                    record.Occurrence
	state, lane, ovl, deadReason         string
	scheduledFor, availableAt, retryFrom int64
	enqueued, firstClaim, finished       pgtype.Int8
	lastError                            []byte
}

func (r *rawOccurrence) dest() []any {
	o := &r.o
	return []any{&o.OccurrenceID, &o.TenantID, &o.ScheduleID, &o.ScheduleVersion, &r.scheduledFor,
		&r.availableAt, &r.enqueued, &r.state, &r.lane, &o.Queue, &o.AttemptCount, &r.firstClaim, &r.finished,
		&r.ovl, &o.ShardEpoch, &o.AttemptFloor, &r.retryFrom, &o.TriggerKey, &r.deadReason, &r.lastError}
}

func (r *rawOccurrence) finish() *record.Occurrence {
	o := &r.o
	o.ScheduledFor = fromMS(r.scheduledFor)
	o.AvailableAt = fromMS(r.availableAt)
	o.EnqueuedAt = fromNullMS(r.enqueued)
	o.State = record.OccurrenceState(r.state)
	o.Lane = record.Lane(r.lane)
	o.FirstClaimedAt = fromNullMS(r.firstClaim)
	o.FinishedAt = fromNullMS(r.finished)
	o.OverlapPolicy = record.OverlapPolicy(r.ovl)
	o.RetryFrom = fromMS(r.retryFrom)
	o.DeadReason = record.DeadReason(r.deadReason)
	o.LastError = string(r.lastError)
	return o
}

// scanOccurrence reads the columns of occurrenceColumns, in that order.
func scanOccurrence(row pgx.Row) (*record.Occurrence, error) {
	var r rawOccurrence
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.finish(), nil
}

// scanShardLease reads the columns of shardLeaseColumns.
func scanShardLease(row pgx.Row) (*store.ShardLease, error) {
	var (
		l       store.ShardLease
		expires int64
	)
	if err := row.Scan(&l.Shard, &l.Owner, &l.Epoch, &expires); err != nil {
		return nil, err
	}
	l.ExpiresAt = fromMS(expires)
	return &l, nil
}

// Time encoding: UTC unix milliseconds; the zero time.Time is NULL.

func ms(t time.Time) int64 { return t.UnixMilli() }

func nullMS(t time.Time) pgtype.Int8 {
	if t.IsZero() {
		return pgtype.Int8{}
	}
	return pgtype.Int8{Int64: t.UnixMilli(), Valid: true}
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// atMS is t as the store keeps it: UTC, to the millisecond; zero stays zero.
func atMS(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return fromMS(ms(t))
}

func fromNullMS(v pgtype.Int8) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.Int64)
}

func durMS(d time.Duration) int64 { return d.Milliseconds() }

func fromDurMS(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
