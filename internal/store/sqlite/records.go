package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
	"github.com/sched-dev/sched/internal/timetable"
)

var _ store.Store = (*Store)(nil)

// InsertSchedule stores a new schedule as given (the engine sets its
// version, state, shard and times). A taken schedule id, an idempotency key
// the tenant already used, or a name another live schedule of the tenant
// has, is store.ErrConflict.
func (s *Store) InsertSchedule(ctx context.Context, sc *record.Schedule) error {
	if err := rowcodec.CheckPayload("insert", sc); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, qInsertSchedule, scheduleArgs(sc)...); err != nil {
		return fmt.Errorf("insert schedule %s: %w", sc.ScheduleID, translate(err))
	}
	return nil
}

// scheduleArgs is the values of scheduleColumns for sc.
func scheduleArgs(sc *record.Schedule) []any { return rowcodec.ScheduleArgs(sc, nullMS) }

// GetSchedule returns the tenant's schedule. Another tenant's schedule is
// store.ErrNotFound, exactly like an id that does not exist.
func (s *Store) GetSchedule(ctx context.Context, tenantID, scheduleID string) (*record.Schedule, error) {
	sc, err := scanSchedule(s.r.QueryRowContext(ctx, qGetSchedule, tenantID, scheduleID))
	if err != nil {
		return nil, fmt.Errorf("get schedule %s: %w", scheduleID, translate(err))
	}
	return sc, nil
}

// GetScheduleByName returns the tenant's live (not CANCELED) schedule of
// that name, else its canceled one of that name changed last, or
// store.ErrNotFound (see store.Store).
func (s *Store) GetScheduleByName(ctx context.Context, tenantID, name string) (*record.Schedule, error) {
	sc, err := scanSchedule(s.r.QueryRowContext(ctx, qGetScheduleByName, tenantID, name))
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
	sc, err := scanSchedule(s.r.QueryRowContext(ctx, qGetScheduleByIdempotencyKey, tenantID, key))
	if err != nil {
		return nil, fmt.Errorf("get schedule by idempotency key %q: %w", key, translate(err))
	}
	return sc, nil
}

// ListSchedules returns a page of the tenant's schedules in id order.
func (s *Store) ListSchedules(ctx context.Context, p store.ListSchedulesParams) ([]record.Schedule, error) {
	return readAll(ctx, s, "list schedules", scanSchedule, qListSchedules, p.TenantID, p.After, string(p.State), store.ListLimit(p.Limit))
}

// InsertOccurrences materializes a batch of occurrences in one transaction
// and returns how many were new. A firing already stored (same schedule,
// version, scheduled time and trigger key) is skipped, so inserting the
// same batch twice inserts nothing the second time; so is a manual
// occurrence whose id is already stored for the same schedule and trigger
// key, whatever its time (a retried trigger). Each occurrence's id is
// derived with record.OccurrenceID, or record.ManualOccurrenceID when it has
// a TriggerKey; an occurrence may leave OccurrenceID empty, but one that
// carries a different id, or a ScheduledFor that is not a whole second,
// fails the whole batch. An occurrence whose schedule does not exist for
// its tenant fails the batch with store.ErrNotFound. A zero RetryFrom is
// stored as ScheduledFor, an empty OverlapPolicy as allow.
func (s *Store) InsertOccurrences(ctx context.Context, occs []record.Occurrence) (inserted int, err error) {
	if len(occs) == 0 {
		return 0, nil
	}
	ids, err := rowcodec.OccurrenceIDs(occs, nil)
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	err = s.writeTx(ctx, func(tx *sql.Tx) (err error) {
		inserted, err = s.insertOccurrences(ctx, tx, occs, ids)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	return inserted, nil
}

// insertOccurrences is InsertOccurrences in tx, with the occurrences' ids.
func (s *Store) insertOccurrences(ctx context.Context, tx *sql.Tx, occs []record.Occurrence, ids []string) (int, error) {
	// Each schedule must exist for the occurrence's tenant. The schema
	// has no foreign key for it (0001_init.sql says why); this path is
	// not the planner's, so the check is one lookup per schedule here.
	rows := map[[2]string]int64{} // the schedules' rows
	for i := range occs {
		key := [2]string{occs[i].TenantID, occs[i].ScheduleID}
		if _, ok := rows[key]; ok {
			continue
		}
		var row int64
		if err := tx.QueryRowContext(ctx, qScheduleRow, key[0], key[1]).Scan(&row); err != nil {
			return 0, fmt.Errorf("occurrence %s: schedule %s of %s: %w", ids[i], key[1], key[0], translate(err))
		}
		rows[key] = row
	}
	ins := s.newOccurrenceInserter(ctx, tx)
	defer ins.close()
	for i := range occs {
		if err := ins.add(&occs[i], ids[i], rows[[2]string{occs[i].TenantID, occs[i].ScheduleID}], occs[i].ShardEpoch, occs[i].EnqueuedAt); err != nil {
			return 0, err
		}
	}
	if err := ins.flush(); err != nil {
		return 0, err
	}
	return ins.inserted, nil
}

// GetOccurrence returns the tenant's occurrence. Another tenant's
// occurrence is store.ErrNotFound.
func (s *Store) GetOccurrence(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error) {
	o, err := scanOccurrence(s.r.QueryRowContext(ctx, qGetOccurrence, tenantID, occurrenceID))
	if err != nil {
		return nil, fmt.Errorf("get occurrence %s: %w", occurrenceID, translate(err))
	}
	return o, nil
}

// ListOccurrences returns a page of the tenant's occurrences that pass the
// filters, in (scheduled_for, occurrence_id) order, oldest first or, with
// p.Reverse, newest first, strictly after p.After when it is set. Another
// tenant's schedule has none. DEAD ones are read from the dead-letter
// index (with or without a schedule); other ones of a schedule from that
// schedule's rows in index order; and the tenant's rows otherwise.
func (s *Store) ListOccurrences(ctx context.Context, p store.ListOccurrencesParams) ([]record.Occurrence, error) {
	afterAt, afterID := rowcodec.ListAfter(p)
	var query string
	switch {
	case p.State == record.OccurrenceDead:
		query = pick(p.Reverse, qListDeadOccurrences, qListDeadOccurrencesDesc)
	case p.ScheduleID != "":
		query = pick(p.Reverse, qListScheduleOccurrences, qListScheduleOccurrencesDesc)
	default:
		query = pick(p.Reverse, qListTenantOccurrences, qListTenantOccurrencesDesc)
	}
	return readAll(ctx, s, "list occurrences", scanOccurrence, query, p.TenantID, p.ScheduleID, string(p.State), p.Queue,
		store.ListLimit(p.Limit), afterAt, afterID)
}

// pick returns desc when reverse, else asc.
func pick(reverse bool, asc, desc string) string {
	if reverse {
		return desc
	}
	return asc
}

// CountOccurrences counts the tenant's occurrences in a state (every state
// when state is empty). RETRY_WAIT, DEAD and ENQUEUED are counted from
// their indexes.
func (s *Store) CountOccurrences(ctx context.Context, tenantID string, state record.OccurrenceState) (int, error) {
	var row *sql.Row
	switch state {
	case record.OccurrenceRetryWait:
		row = s.r.QueryRowContext(ctx, qCountRetryWait, tenantID)
	case record.OccurrenceDead:
		row = s.r.QueryRowContext(ctx, qCountDead, tenantID)
	case record.OccurrenceEnqueued:
		row = s.r.QueryRowContext(ctx, qCountEnqueued, tenantID)
	default:
		row = s.r.QueryRowContext(ctx, qCountState, tenantID, string(state))
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
// store.ErrNotFound.
func (s *Store) ListAttempts(ctx context.Context, p store.ListAttemptsParams) (_ []record.Attempt, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("list attempts of %s: %w", p.OccurrenceID, err)
		}
	}()
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, translate(err)
	}
	defer tx.Rollback() // read only: nothing to commit
	var (
		cur              record.Attempt
		worker, result   sql.NullString
		claimed, expires sql.Null[int64]
		finished         sql.Null[int64]
	)
	err = tx.QueryRowContext(ctx, qCurrentAttempt, p.TenantID, p.OccurrenceID).
		Scan(&cur.Attempt, &worker, &claimed, &expires, &finished, &result, &cur.Error)
	if err != nil {
		return nil, translate(err)
	}
	rows, err := tx.QueryContext(ctx, qListAttempts, p.OccurrenceID, p.TenantID, p.After, store.ListLimit(p.Limit))
	if err != nil {
		return nil, translate(err)
	}
	out, err := collect(rows, scanAttempt)
	if err != nil || !claimed.Valid {
		return out, err
	}
	cur.AttemptID = record.AttemptID(p.OccurrenceID, cur.Attempt)
	cur.TenantID, cur.OccurrenceID, cur.WorkerID = p.TenantID, p.OccurrenceID, worker.String
	cur.ClaimedAt, cur.LeaseExpiresAt, cur.FinishedAt = fromNullMS(claimed), fromNullMS(expires), fromNullMS(finished)
	cur.Result = record.AttemptResult(result.String)
	return rowcodec.PageAttempts(out, &cur, p), nil
}

// writeTx runs fn in a transaction of the writer (BEGIN IMMEDIATE) and
// commits it; an error or a panic of fn rolls it back. fn's errors come
// back as they are (fn translates them); begin and commit errors are
// translated here.
func (s *Store) writeTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	done = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	if s.ckpt != nil {
		s.ckpt.committed()
	}
	return nil
}

// collect reads every row with scan and closes rows. Errors are
// translated.
func collect[T any](rows *sql.Rows, scan func(scanner) (*T, error)) ([]T, error) {
	var out []T
	err := eachRow(rows, func(row scanner) error {
		v, err := scan(row)
		if err != nil {
			return err
		}
		out = append(out, *v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readAll runs q on a reader connection and reads every row it answers
// with scan; what names the read in errors.
func readAll[T any](ctx context.Context, s *Store, what string, scan func(scanner) (*T, error), q string, args ...any) ([]T, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	out, err := collect(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// eachRow calls fn on every row and closes rows. Errors are translated.
func eachRow(rows *sql.Rows, fn func(scanner) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return translate(err)
		}
	}
	return translate(rows.Err())
}

// payloadArg binds a NOT NULL bytes column (rowcodec.Payload).
func payloadArg(p []byte) []byte { return rowcodec.Payload(p) }

// nullString binds an optional text column (rowcodec.NullString).
func nullString(v string) any { return rowcodec.NullString(v) }

// scanner is a *sql.Row or *sql.Rows.
type scanner = rowcodec.Scanner

// scanSchedule reads the columns of scheduleColumns, in that order.
func scanSchedule(row scanner) (*record.Schedule, error) {
	// A scanner of its own: the schedule it returns is not overwritten.
	return newScheduleScan(false).scan(row)
}

// scheduleScan reads rows of scheduleColumns, or of dueScheduleColumns for
// the planner's read, into one set of destinations that it reuses: the
// planner reads thousands of schedules a page, and a page then allocates
// only the strings it keeps.
type scheduleScan struct {
	sc  record.Schedule
	due bool // reading dueScheduleColumns
	row int64
	// The enum columns (kind, gap, repeat, state, misfire, overlap), read
	// as sql.RawBytes when raw (for *sql.Rows: Row.Scan refuses it) and
	// turned into the package's constants without allocating.
	raw                               bool
	rawEnums                          [6]sql.RawBytes
	strEnums                          [6]string
	anchor, next                      sql.Null[int64]
	idemKey                           sql.NullString
	lateness, window, base, capMS, dl int64
	created, updated                  int64
	dest                              []any
}

// newScheduleScan reads scheduleColumns; raw for *sql.Rows.
func newScheduleScan(raw bool) *scheduleScan {
	s := &scheduleScan{raw: raw}
	e := s.enumDest()
	sc := &s.sc
	s.dest = append(s.dest, &sc.ScheduleID, &sc.TenantID, &sc.Shard, &sc.Name, e[0], &sc.Expr, &sc.TimeZone, &s.anchor,
		e[1], e[2], &sc.Version, e[3], &s.next, &sc.Queue, &sc.Payload,
		e[4], &s.lateness, &sc.CatchUpK, e[5], &s.window,
		&sc.Retry.MaxAttempts, &s.base, &s.capMS, &s.dl,
		&s.idemKey, &sc.MissedCount, &s.created, &s.updated)
	return s
}

// newDueScan reads dueScheduleColumns, from *sql.Rows, into schedules that
// are ACTIVE; the caller sets their shard.
func newDueScan() *scheduleScan {
	s := &scheduleScan{raw: true, due: true}
	e := s.enumDest()
	sc := &s.sc
	s.dest = append(s.dest, &s.row, &sc.ScheduleID, &sc.TenantID, e[0], &sc.Expr, &sc.TimeZone, &s.anchor,
		e[1], e[2], &sc.Version, &s.next, &sc.Queue,
		e[4], &s.lateness, &sc.CatchUpK, e[5], &s.window)
	s.rawEnums[3] = sql.RawBytes(record.ScheduleActive) // never scanned over
	return s
}

// enumDest returns the destinations of the enum columns.
func (s *scheduleScan) enumDest() [6]any {
	var e [6]any
	for i := range e {
		if s.raw {
			e[i] = &s.rawEnums[i]
		} else {
			e[i] = &s.strEnums[i]
		}
	}
	return e
}

// scan reads one row. The schedule it returns is overwritten by the next
// scan: copy it to keep it.
func (s *scheduleScan) scan(row scanner) (*record.Schedule, error) {
	sc := &s.sc
	if err := row.Scan(s.dest...); err != nil {
		return nil, err
	}
	sc.Kind = timetable.Kind(s.enum(0))
	sc.Anchor = fromNullMS(s.anchor)
	sc.DSTGap = timetable.GapPolicy(s.enum(1))
	sc.DSTRepeat = timetable.RepeatPolicy(s.enum(2))
	sc.State = record.ScheduleState(s.enum(3))
	sc.NextRunAt = fromNullMS(s.next)
	sc.MisfirePolicy = record.MisfirePolicy(s.enum(4))
	sc.MaxLateness = fromDurMS(s.lateness)
	sc.OverlapPolicy = record.OverlapPolicy(s.enum(5))
	sc.FlexibleWindow = fromDurMS(s.window)
	if s.due {
		return sc, nil
	}
	sc.Retry.BackoffBase = fromDurMS(s.base)
	sc.Retry.BackoffCap = fromDurMS(s.capMS)
	sc.Retry.Deadline = fromDurMS(s.dl)
	sc.IdempotencyKey = s.idemKey.String
	sc.CreatedAt = fromMS(s.created)
	sc.UpdatedAt = fromMS(s.updated)
	return sc, nil
}

func (s *scheduleScan) enum(i int) string {
	if !s.raw {
		return s.strEnums[i]
	}
	if v, ok := scheduleEnums[string(s.rawEnums[i])]; ok {
		return v
	}
	return string(s.rawEnums[i])
}

// scheduleEnums holds every value of the schedules table's enum columns
// (its CHECK constraints), each once.
var scheduleEnums = func() map[string]string {
	m := map[string]string{}
	for _, v := range []string{
		string(timetable.KindCron), string(timetable.KindAt), string(timetable.KindEvery),
		string(timetable.GapSkip), string(timetable.GapShift),
		string(timetable.RepeatFirst), string(timetable.RepeatLast), string(timetable.RepeatAll),
		string(record.ScheduleActive), string(record.SchedulePaused), string(record.ScheduleCanceled), string(record.ScheduleCompleted),
		string(record.MisfireSkip), string(record.MisfireFireOnce), string(record.MisfireCatchUp),
		string(record.OverlapAllow), string(record.OverlapSkipIfRunning), string(record.OverlapQueueOne),
	} {
		m[v] = v
	}
	return m
}()

// rawOccurrence is the Scan destinations of occurrenceColumns (dest) or
// occurrenceClaimColumns (appendClaimDest), in that order, into a raw
// occurrence that finish turns into a record.Occurrence.
type rawOccurrence struct {
	o                                    record.Occurrence
	state, lane, ovl, deadReason         string
	scheduledFor, availableAt, retryFrom int64
	enqueued, firstClaim, finished       sql.Null[int64]
}

// dest returns the scan destinations of occurrenceColumns.
func (r *rawOccurrence) dest() []any {
	return append(r.appendClaimDest(make([]any, 0, occurrenceArity)), &r.deadReason, &r.o.LastError)
}

// appendClaimDest appends the scan destinations of occurrenceClaimColumns
// to dst: a scan of many rows reuses one slice. The columns it leaves out
// keep what they hold (a claim's rows hold none).
func (r *rawOccurrence) appendClaimDest(dst []any) []any {
	o := &r.o
	return append(dst, &o.OccurrenceID, &o.TenantID, &o.ScheduleID, &o.ScheduleVersion, &r.scheduledFor,
		&r.availableAt, &r.enqueued, &r.state, &r.lane, &o.Queue, &o.AttemptCount, &r.firstClaim, &r.finished,
		&r.ovl, &o.ShardEpoch, &o.AttemptFloor, &r.retryFrom, &o.TriggerKey)
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
	return o
}

// candidateScan reads rows of candidateColumns into one set of
// destinations it reuses: a claim reads a thousand candidates, and each
// column it need not read, or read as a string, is a lock and an
// allocation of the driver less (the enums come as raw bytes and become
// constants). The tenant, queue and lane are the read's.
type candidateScan struct {
	o                         record.Occurrence
	state, ovl                sql.RawBytes
	scheduledFor, availableAt int64
	retryFrom                 int64
	enqueued, firstClaim      sql.Null[int64]
}

// appendDest appends the destinations of candidateColumns to dst.
func (c *candidateScan) appendDest(dst []any) []any {
	o := &c.o
	return append(dst, &o.OccurrenceID, &o.ScheduleID, &o.ScheduleVersion, &c.scheduledFor, &c.availableAt, &c.enqueued,
		&c.state, &o.AttemptCount, &c.firstClaim, &c.ovl, &o.AttemptFloor, &c.retryFrom, &o.TriggerKey)
}

// finish returns the candidate scanned, of the read r.
func (c *candidateScan) finish(r store.CandidateRead) record.Occurrence {
	o := c.o
	o.TenantID, o.Queue, o.Lane = r.TenantID, r.Queue, r.Lane
	o.ScheduledFor, o.AvailableAt, o.RetryFrom = fromMS(c.scheduledFor), fromMS(c.availableAt), fromMS(c.retryFrom)
	o.EnqueuedAt, o.FirstClaimedAt = fromNullMS(c.enqueued), fromNullMS(c.firstClaim)
	o.State = record.OccurrenceEnqueued
	if string(c.state) == string(record.OccurrenceRetryWait) {
		o.State = record.OccurrenceRetryWait
	}
	o.OverlapPolicy = overlapOf(c.ovl)
	return o
}

// overlapOf is the policy b names, without a string of its own.
func overlapOf(b []byte) record.OverlapPolicy {
	for _, p := range [...]record.OverlapPolicy{record.OverlapAllow, record.OverlapSkipIfRunning, record.OverlapQueueOne} {
		if string(b) == string(p) {
			return p
		}
	}
	return record.OverlapPolicy(b)
}

// scanOccurrence reads the columns of occurrenceColumns, in that order.
func scanOccurrence(row scanner) (*record.Occurrence, error) {
	var r rawOccurrence
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.finish(), nil
}

// occurrenceArgs appends the values of occurrenceInsertColumns for o,
// whose id is id and whose schedule is at row scheduleRow, to args. Zero
// RetryFrom is ScheduledFor and empty OverlapPolicy is allow. LastError is
// not written: it is read from the latest attempt.
func occurrenceArgs(args []any, o *record.Occurrence, id string, scheduleRow, epoch int64, enqueuedAt time.Time) []any {
	retryFrom, ovl := rowcodec.InsertDefaults(o)
	return append(args,
		id, o.TenantID, o.ScheduleID, o.ScheduleVersion, ms(o.ScheduledFor),
		ms(o.AvailableAt), nullMS(enqueuedAt), string(o.State), string(o.Lane), o.Queue,
		o.AttemptCount, nullMS(o.FirstClaimedAt), nullMS(o.FinishedAt),
		string(ovl), epoch, o.AttemptFloor, ms(retryFrom), o.TriggerKey, string(o.DeadReason), isOpen(o.State), scheduleRow)
}

// isOpen is the open column for an occurrence in state st.
func isOpen(st record.OccurrenceState) int {
	switch st {
	case record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRunning, record.OccurrenceRetryWait:
		return 1
	}
	return 0
}

// scanAttempt reads the columns of attemptColumns, in that order.
func scanAttempt(row scanner) (*record.Attempt, error) {
	var (
		a                record.Attempt
		claimed, expires int64
		finished         sql.Null[int64]
		result           sql.NullString
	)
	err := row.Scan(&a.AttemptID, &a.TenantID, &a.OccurrenceID, &a.Attempt, &a.WorkerID,
		&claimed, &expires, &finished, &result, &a.Error)
	if err != nil {
		return nil, err
	}
	a.ClaimedAt = fromMS(claimed)
	a.LeaseExpiresAt = fromMS(expires)
	a.FinishedAt = fromNullMS(finished)
	a.Result = record.AttemptResult(result.String)
	return &a, nil
}

// Time encoding (see rowcodec): UTC unix milliseconds; the zero
// time.Time is NULL.

func ms(t time.Time) int64 { return rowcodec.MS(t) }

func fromMS(v int64) time.Time { return rowcodec.FromMS(v) }

func durMS(d time.Duration) int64 { return rowcodec.DurMS(d) }

func fromDurMS(v int64) time.Duration { return rowcodec.FromDurMS(v) }

func nullMS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromNullMS(v sql.Null[int64]) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.V)
}
