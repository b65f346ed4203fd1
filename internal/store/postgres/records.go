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
	"github.com/sched-dev/sched/internal/store/rowcodec"
	"github.com/sched-dev/sched/internal/timetable"
)

// InsertSchedule stores a new schedule as given (the engine sets its
// version, state, shard and times). A taken schedule id, an idempotency key
// the tenant already used, or a name another live schedule of the tenant
// has, is store.ErrConflict.
func (s *Store) InsertSchedule(ctx context.Context, sc *record.Schedule) error {
	if err := rowcodec.CheckPayload("insert", sc); err != nil {
		return err
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
func scheduleArgs(sc *record.Schedule) []any { return rowcodec.ScheduleArgs(sc, nullMS) }

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
// that name, else its canceled one of that name changed last, or
// store.ErrNotFound (see store.Store).
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
	if err := rowcodec.CheckIdempotencyKey(key); err != nil {
		return nil, err
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
	return readAll(ctx, s, "list schedules", scanSchedule, qListSchedules, p.TenantID, p.After, string(p.State), store.ListLimit(p.Limit))
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
	ids, err := rowcodec.OccurrenceIDs(occs, checkStorable)
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) (err error) {
		inserted, err = insertOccurrences(ctx, tx, occs, ids)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	s.noteInserted(inserted)
	return inserted, nil
}

// insertOccurrences is InsertOccurrences in tx, with the occurrences' ids.
func insertOccurrences(ctx context.Context, tx pgx.Tx, occs []record.Occurrence, ids []string) (int, error) {
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
		return 0, notStorable()
	}
	var tenant, schedule string
	err := tx.QueryRow(ctx, qMissingSchedule, tenants, schedules).Scan(&tenant, &schedule)
	if err == nil {
		return 0, fmt.Errorf("schedule %s of %s: %w", schedule, tenant, store.ErrNotFound)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("check schedules: %w", translate(err))
	}
	ins := newOccurrenceInserter(ctx, tx)
	for i := range occs {
		if err := ins.add(&occs[i], ids[i], occs[i].ShardEpoch, occs[i].EnqueuedAt); err != nil {
			return 0, err
		}
	}
	if err := ins.flush(); err != nil {
		return 0, err
	}
	return ins.inserted, nil
}

// checkStorable refuses an occurrence whose trigger key or dead reason is
// not text PostgreSQL can store.
func checkStorable(o *record.Occurrence) error {
	if !storable(o.TriggerKey, string(o.DeadReason)) {
		return fmt.Errorf("trigger key %q or dead reason %q is not valid text", o.TriggerKey, o.DeadReason)
	}
	return nil
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
	if p.After != nil && !storable(p.After.OccurrenceID) {
		return nil, fmt.Errorf("list occurrences: after %q: not valid text", p.After.OccurrenceID)
	}
	afterAt, afterID := rowcodec.ListAfter(p)
	var (
		q    [2]string // oldest first, newest first
		args []any
	)
	switch {
	case p.State == record.OccurrenceDead:
		q = [2]string{qListDeadOccurrencesAsc, qListDeadOccurrencesDesc}
		args = []any{p.TenantID, p.Queue, p.ScheduleID, afterAt, afterID, limit}
	case p.ScheduleID != "":
		q = [2]string{qListScheduleOccurrencesAsc, qListScheduleOccurrencesDesc}
		args = []any{p.ScheduleID, p.TenantID, string(p.State), p.Queue, afterAt, afterID, limit}
	default:
		q = [2]string{qListTenantOccurrencesAsc, qListTenantOccurrencesDesc}
		args = []any{p.TenantID, string(p.State), p.Queue, afterAt, afterID, limit}
	}
	query := q[0]
	if p.Reverse {
		query = q[1]
	}
	return readAll(ctx, s, "list occurrences", scanOccurrence, query, args...)
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

// ListAttempts returns the page of the attempts of the tenant's occurrence
// p selects, by attempt number: a page of the history rows, then the
// latest attempt, which the occurrence row holds, when the page has room
// (rowcodec.PageAttempts). Another tenant's occurrence is
// store.ErrNotFound. One statement reads both, so they come from one
// snapshot.
func (s *Store) ListAttempts(ctx context.Context, p store.ListAttemptsParams) ([]record.Attempt, error) {
	if !storable(p.TenantID, p.OccurrenceID) {
		return nil, fmt.Errorf("list attempts of %q: %w", p.OccurrenceID, notStorable())
	}
	rows, err := s.pool.Query(ctx, qListAttempts, p.TenantID, p.OccurrenceID, p.After, store.ListLimit(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list attempts of %s: %w", p.OccurrenceID, translate(err))
	}
	defer rows.Close()
	var (
		out    []record.Attempt
		latest *record.Attempt
		found  bool
	)
	for rows.Next() {
		var (
			isLatest                 bool
			a                        record.Attempt
			worker, result           pgtype.Text
			claimed, expires, finish pgtype.Int8
			errText                  []byte
		)
		if err := rows.Scan(&isLatest, &a.Attempt, &a.AttemptID, &worker, &claimed, &expires, &finish, &result, &errText); err != nil {
			return nil, fmt.Errorf("list attempts of %s: %w", p.OccurrenceID, translate(err))
		}
		if isLatest {
			found = true
			if !claimed.Valid {
				continue // no attempt recorded yet
			}
			a.AttemptID = record.AttemptID(p.OccurrenceID, a.Attempt)
		}
		a.TenantID, a.OccurrenceID, a.WorkerID = p.TenantID, p.OccurrenceID, worker.String
		a.ClaimedAt, a.LeaseExpiresAt, a.FinishedAt = fromNullMS(claimed), fromNullMS(expires), fromNullMS(finish)
		a.Result = record.AttemptResult(result.String)
		a.Error = string(errText)
		if isLatest {
			latest = &a
		} else {
			out = append(out, a)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list attempts of %s: %w", p.OccurrenceID, translate(err))
	}
	if !found {
		return nil, fmt.Errorf("list attempts of %s: %w", p.OccurrenceID, translate(pgx.ErrNoRows))
	}
	return rowcodec.PageAttempts(out, latest, p), nil
}

// collect reads every row with scan and closes rows. Errors are
// translated.
func collect[T any](rows pgx.Rows, scan func(scanner) (*T, error)) ([]T, error) {
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

// readAll runs q on the pool and reads every row it answers with scan;
// what names the read in errors.
func readAll[T any](ctx context.Context, s *Store, what string, scan func(scanner) (*T, error), q string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	out, err := collect(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// scanner is a pgx.Row or pgx.Rows.
type scanner = rowcodec.Scanner

// payloadArg binds a NOT NULL bytes column (rowcodec.Payload).
func payloadArg(p []byte) []byte { return rowcodec.Payload(p) }

// nullString binds an optional text column (rowcodec.NullString).
func nullString(v string) any { return rowcodec.NullString(v) }

// scanSchedule reads the columns of scheduleColumns, in that order.
func scanSchedule(row scanner) (*record.Schedule, error) {
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
func scanOccurrence(row scanner) (*record.Occurrence, error) {
	var r rawOccurrence
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.finish(), nil
}

// Time encoding (see rowcodec): UTC unix milliseconds; the zero
// time.Time is NULL.

func ms(t time.Time) int64 { return rowcodec.MS(t) }

func fromMS(v int64) time.Time { return rowcodec.FromMS(v) }

func durMS(d time.Duration) int64 { return rowcodec.DurMS(d) }

func fromDurMS(v int64) time.Duration { return rowcodec.FromDurMS(v) }

func nullMS(t time.Time) pgtype.Int8 {
	if t.IsZero() {
		return pgtype.Int8{}
	}
	return pgtype.Int8{Int64: t.UnixMilli(), Valid: true}
}

func fromNullMS(v pgtype.Int8) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.Int64)
}
