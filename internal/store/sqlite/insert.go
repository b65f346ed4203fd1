package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// insertChunk is how many occurrences one multi-row INSERT writes. One
// statement step per chunk instead of per row is most of the cost of a
// planner batch; 64 rows stay far below SQLite's limit on bound parameters
// (32,766).
const insertChunk = 64

// occurrenceInserter writes occurrences within one transaction: rows that
// share a chunkShape insertChunk at a time, each chunk in one statement,
// and the rest one by one. It counts the rows the natural key let in.
type occurrenceInserter struct {
	s         *Store
	ctx       context.Context
	tx        *sql.Tx
	one, many *sql.Stmt
	chunks    []*chunk // one per shape seen, in the order first seen
	args      []any
	last      boxedRow // of chunkRowArgs
	keys      []firing // of the rows being written
	inserted  int
}

// pendingRow is an occurrence waiting in a chunk: o, whose derived id is id
// and whose schedule is at row scheduleRow, stamped with the shard epoch
// and enqueue time given.
type pendingRow struct {
	o           *record.Occurrence
	id          string
	scheduleRow int64
	epoch       int64
	enqueuedAt  time.Time
}

// chunkShape is what the rows of one multi-row insert share: the columns
// bound once per statement (the first of occurrenceChunkColumns), where
// binding each row's own was a sixth of the planner's commit (a text
// argument is copied to C memory and freed again, and database/sql
// converts every argument).
type chunkShape struct {
	enqueuedAt, firstClaimedAt, finishedAt any // nullMS
	state, lane, overlap                   string
	attemptCount, attemptFloor, open       int
	epoch                                  int64
}

// shapeOf returns r's shape, and false when r cannot go in a chunk: its
// retry deadline counts from a replay, not from its firing, or it has a
// column the multi-row insert leaves to its default (a manual occurrence's
// trigger key, a dead reason). The planner's rows have neither.
func shapeOf(r *pendingRow) (chunkShape, bool) {
	o := r.o
	if (!o.RetryFrom.IsZero() && !o.RetryFrom.Equal(o.ScheduledFor)) || o.TriggerKey != "" || o.DeadReason != "" {
		return chunkShape{}, false
	}
	ovl := o.OverlapPolicy
	if ovl == "" {
		ovl = record.OverlapAllow
	}
	return chunkShape{
		enqueuedAt: nullMS(r.enqueuedAt), firstClaimedAt: nullMS(o.FirstClaimedAt), finishedAt: nullMS(o.FinishedAt),
		state: string(o.State), lane: string(o.Lane), overlap: string(ovl),
		attemptCount: o.AttemptCount, attemptFloor: o.AttemptFloor, open: isOpen(o.State), epoch: r.epoch,
	}, true
}

// args appends the shared arguments of qInsertOccurrences.
func (c *chunkShape) args(dst []any) []any {
	return append(dst, c.enqueuedAt, c.state, c.lane, c.attemptCount, c.firstClaimedAt, c.finishedAt,
		c.overlap, c.epoch, c.attemptFloor, c.open)
}

// chunkRowArgs appends r's own arguments of qInsertOccurrences. Each value
// put in an interface is an allocation, and the planner writes thousands
// of rows a batch, so a value that repeats is put in one once: the firing
// time (scheduled_for, retry_from and, for a strict schedule,
// available_at), and the tenant and queue of the row before (rows come in
// claim order, a tenant's queue's together), kept in last.
func chunkRowArgs(dst []any, r *pendingRow, last *boxedRow) []any {
	o := r.o
	at := any(ms(o.ScheduledFor))
	avail := at
	if !o.AvailableAt.Equal(o.ScheduledFor) {
		avail = ms(o.AvailableAt)
	}
	if last.tenant == nil || last.tenant.(string) != o.TenantID {
		last.tenant = o.TenantID
	}
	if last.queue == nil || last.queue.(string) != o.Queue {
		last.queue = o.Queue
	}
	return append(dst, r.id, last.tenant, o.ScheduleID, o.ScheduleVersion, at, avail, last.queue, at, r.scheduleRow)
}

// boxedRow is the tenant and queue of the last row chunkRowArgs wrote,
// each in an interface already.
type boxedRow struct{ tenant, queue any }

// chunk is the rows of one shape waiting for a multi-row insert.
type chunk struct {
	shape chunkShape
	rows  []pendingRow
}

// firing is the natural key of an occurrence row, and its derived id.
type firing struct {
	id           string
	scheduleID   string
	scheduledFor int64
	version      int64
	triggerKey   string
}

// firing returns r's natural key and id, for the check of a row the
// insert left out.
func (r *pendingRow) firing() firing {
	return firing{r.id, r.o.ScheduleID, ms(r.o.ScheduledFor), r.o.ScheduleVersion, r.o.TriggerKey}
}

// same reports whether got, the row stored under k's id, is the
// occurrence k would have written. A manual occurrence's id hashes its
// schedule and trigger key alone, so a row of that schedule and key is
// the same occurrence at any time and version (a trigger retried later,
// or after an update); any other id hashes the whole firing.
func (k *firing) same(got *firing) bool {
	if k.triggerKey != "" {
		return got.scheduleID == k.scheduleID && got.triggerKey == k.triggerKey
	}
	return *got == *k
}

func (s *Store) newOccurrenceInserter(ctx context.Context, tx *sql.Tx) *occurrenceInserter {
	return &occurrenceInserter{s: s, ctx: ctx, tx: tx}
}

// add queues o, whose derived id is id and whose schedule is at row
// scheduleRow, stamped with the shard epoch and enqueue time given. o must
// not change before flush.
func (in *occurrenceInserter) add(o *record.Occurrence, id string, scheduleRow, epoch int64, enqueuedAt time.Time) error {
	r := pendingRow{o, id, scheduleRow, epoch, enqueuedAt}
	shape, ok := shapeOf(&r)
	if !ok {
		return in.insertOne(&r)
	}
	var c *chunk
	for _, have := range in.chunks {
		if have.shape == shape {
			c = have
			break
		}
	}
	if c == nil {
		c = &chunk{shape: shape}
		in.chunks = append(in.chunks, c)
	}
	c.rows = append(c.rows, r)
	if len(c.rows) < insertChunk {
		return nil
	}
	many, err := in.s.txStmtOnce(in.ctx, in.tx, &in.many, qInsertOccurrences)
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	in.args = c.shape.args(in.args[:0])
	in.keys = in.keys[:0]
	for i := range c.rows {
		in.args = chunkRowArgs(in.args, &c.rows[i], &in.last)
		in.keys = append(in.keys, c.rows[i].firing())
	}
	if err := in.exec(many, in.args, in.keys); err != nil {
		return fmt.Errorf("insert occurrences %s...: %w", in.keys[0].id, err)
	}
	clear(c.rows)
	c.rows = c.rows[:0]
	return nil
}

// insertOne writes r alone.
func (in *occurrenceInserter) insertOne(r *pendingRow) error {
	one, err := in.s.txStmtOnce(in.ctx, in.tx, &in.one, qInsertOccurrence)
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	in.args = occurrenceArgs(in.args[:0], r.o, r.id, r.scheduleRow, r.epoch, r.enqueuedAt)
	in.keys = append(in.keys[:0], r.firing())
	if err := in.exec(one, in.args, in.keys); err != nil {
		return fmt.Errorf("insert occurrence %s: %w", r.id, err)
	}
	return nil
}

// flush writes the queued rows: those of chunks not yet full, one by one.
func (in *occurrenceInserter) flush() error {
	for _, c := range in.chunks {
		for i := range c.rows {
			if err := in.insertOne(&c.rows[i]); err != nil {
				return err
			}
		}
		clear(c.rows)
		c.rows = c.rows[:0]
	}
	return nil
}

// exec runs an insert of the rows keys. A row it did not write must be
// there already, as the same firing (a duplicate): anything else is a row
// that OR IGNORE let pass, and an error (queries.go).
func (in *occurrenceInserter) exec(st *sql.Stmt, args []any, keys []firing) error {
	res, err := st.ExecContext(in.ctx, args...)
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	in.inserted += int(n)
	if int(n) == len(keys) {
		return nil
	}
	for _, k := range keys {
		if err := in.check(k); err != nil {
			return err
		}
	}
	return nil
}

// check fails unless the row of k's id is k's firing.
func (in *occurrenceInserter) check(k firing) error {
	got := firing{id: k.id}
	err := in.tx.QueryRowContext(in.ctx, qOccurrenceKey, k.id).Scan(&got.scheduleID, &got.scheduledFor, &got.version, &got.triggerKey)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("occurrence %s (%s at %s, version %d): refused by a constraint of the occurrences table",
			k.id, k.scheduleID, fromMS(k.scheduledFor).UTC().Format(time.RFC3339), k.version)
	}
	if err != nil {
		return fmt.Errorf("check occurrence %s: %w", k.id, translate(err))
	}
	if !k.same(&got) {
		return fmt.Errorf("occurrence id %s of %s at %s version %d%s is taken by %s at %s version %d%s (hash collision)",
			k.id, k.scheduleID, fromMS(k.scheduledFor).UTC().Format(time.RFC3339), k.version, triggerNote(k.triggerKey),
			got.scheduleID, fromMS(got.scheduledFor).UTC().Format(time.RFC3339), got.version, triggerNote(got.triggerKey))
	}
	return nil
}

func (in *occurrenceInserter) close() {
	for _, st := range []*sql.Stmt{in.one, in.many} {
		if st != nil {
			st.Close()
		}
	}
}

// triggerNote names a manual occurrence's trigger key in a message.
func triggerNote(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf(" trigger %q", key)
}
