package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// insertChunk is how many occurrences one multi-row INSERT writes. One
// statement step per chunk instead of per row is most of the cost of a
// planner batch; 64 rows of 18 columns stay far below SQLite's limit on
// bound parameters (32,766).
const insertChunk = 64

// occurrenceInserter writes occurrences within one transaction, insertChunk
// rows per statement, and counts the rows the natural key let in.
type occurrenceInserter struct {
	s         *Store
	ctx       context.Context
	tx        *sql.Tx
	one, many *sql.Stmt
	args      []any
	keys      []firing // of the pending rows
	inserted  int
}

// firing is the natural key of an occurrence row, and its derived id.
type firing struct {
	id           string
	scheduleID   string
	scheduledFor int64
	version      int64
}

func (s *Store) newOccurrenceInserter(ctx context.Context, tx *sql.Tx) *occurrenceInserter {
	return &occurrenceInserter{s: s, ctx: ctx, tx: tx}
}

// add queues o, whose derived id is id and whose schedule is at row
// scheduleRow, stamped with the shard epoch and enqueue time given.
func (in *occurrenceInserter) add(o *store.Occurrence, id string, scheduleRow, epoch int64, enqueuedAt time.Time) error {
	in.args = occurrenceArgs(in.args, o, id, scheduleRow, epoch, enqueuedAt)
	in.keys = append(in.keys, firing{id, o.ScheduleID, ms(o.ScheduledFor), o.ScheduleVersion})
	if len(in.keys) < insertChunk {
		return nil
	}
	many, err := in.s.txStmtOnce(in.ctx, in.tx, &in.many, qInsertOccurrences)
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	if err := in.exec(many, in.args, in.keys); err != nil {
		return fmt.Errorf("insert occurrences %s...: %w", in.keys[0].id, err)
	}
	in.reset()
	return nil
}

// flush writes the queued rows.
func (in *occurrenceInserter) flush() error {
	if len(in.keys) == 0 {
		return nil
	}
	one, err := in.s.txStmtOnce(in.ctx, in.tx, &in.one, qInsertOccurrence)
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	for i := range in.keys {
		if err := in.exec(one, in.args[i*occurrenceInsertArity:(i+1)*occurrenceInsertArity], in.keys[i:i+1]); err != nil {
			return fmt.Errorf("insert occurrence %s: %w", in.keys[i].id, err)
		}
	}
	in.reset()
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
	var got firing
	err := in.tx.QueryRowContext(in.ctx, qOccurrenceKey, k.id).Scan(&got.scheduleID, &got.scheduledFor, &got.version)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("occurrence %s (%s at %s, version %d): refused by a constraint of the occurrences table",
			k.id, k.scheduleID, fromMS(k.scheduledFor).UTC().Format(time.RFC3339), k.version)
	}
	if err != nil {
		return fmt.Errorf("check occurrence %s: %w", k.id, translate(err))
	}
	if got.scheduleID != k.scheduleID || got.scheduledFor != k.scheduledFor || got.version != k.version {
		return fmt.Errorf("occurrence id %s of %s at %s version %d is taken by %s at %s version %d (hash collision)",
			k.id, k.scheduleID, fromMS(k.scheduledFor).UTC().Format(time.RFC3339), k.version,
			got.scheduleID, fromMS(got.scheduledFor).UTC().Format(time.RFC3339), got.version)
	}
	return nil
}

func (in *occurrenceInserter) reset() {
	clear(in.args)
	in.args, in.keys = in.args[:0], in.keys[:0]
}

func (in *occurrenceInserter) close() {
	for _, st := range []*sql.Stmt{in.one, in.many} {
		if st != nil {
			st.Close()
		}
	}
}
