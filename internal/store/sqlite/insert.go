package sqlite

import (
	"context"
	"database/sql"
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
	rows      int
	ids       []string // of the pending rows, for error messages
	inserted  int
}

func (s *Store) newOccurrenceInserter(ctx context.Context, tx *sql.Tx) *occurrenceInserter {
	return &occurrenceInserter{s: s, ctx: ctx, tx: tx}
}

// add queues o, whose derived id is id, stamped with the shard epoch and
// enqueue time given.
func (in *occurrenceInserter) add(o *store.Occurrence, id string, epoch int64, enqueuedAt time.Time) error {
	in.args = occurrenceArgs(in.args, o, id, epoch, enqueuedAt)
	in.ids = append(in.ids, id)
	in.rows++
	if in.rows < insertChunk {
		return nil
	}
	if in.many == nil {
		st, err := in.s.txStmt(in.ctx, in.tx, qInsertOccurrences)
		if err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		in.many = st
	}
	if err := in.exec(in.many, in.args); err != nil {
		return fmt.Errorf("insert occurrences %s...: %w", in.ids[0], err)
	}
	in.reset()
	return nil
}

// flush writes the queued rows.
func (in *occurrenceInserter) flush() error {
	if in.rows == 0 {
		return nil
	}
	if in.one == nil {
		st, err := in.s.txStmt(in.ctx, in.tx, qInsertOccurrence)
		if err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		in.one = st
	}
	for i := range in.rows {
		if err := in.exec(in.one, in.args[i*occurrenceInsertArity:(i+1)*occurrenceInsertArity]); err != nil {
			return fmt.Errorf("insert occurrence %s: %w", in.ids[i], err)
		}
	}
	in.reset()
	return nil
}

func (in *occurrenceInserter) exec(st *sql.Stmt, args []any) error {
	res, err := st.ExecContext(in.ctx, args...)
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	in.inserted += int(n)
	return nil
}

func (in *occurrenceInserter) reset() {
	clear(in.args)
	in.args, in.ids, in.rows = in.args[:0], in.ids[:0], 0
}

func (in *occurrenceInserter) close() {
	for _, st := range []*sql.Stmt{in.one, in.many} {
		if st != nil {
			st.Close()
		}
	}
}
