package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// DefaultShards is the number of logical shards schedd gives a new
// SQLite store. SQLite has one writer and one node: shards there divide no
// work among nodes and only cut the planner's transactions smaller, and one
// large transaction writes a burst's index pages once where sixteen small
// ones rewrite them (docs/engine.md).
const DefaultShards = 1

// InitShards records n as the number of logical shards on the first call
// and returns the recorded number on every call, so that a node started
// with another count can refuse to run.
func (s *Store) InitShards(ctx context.Context, n int) (int, error) {
	return rowcodec.InitShards(n, func(arg string) (have string, err error) {
		err = s.writeTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, qInitShards, arg); err != nil {
				return translate(err)
			}
			return translate(tx.QueryRowContext(ctx, qGetShards).Scan(&have))
		})
		return have, err
	})
}

// ListShardLeases returns every shard lease, live or expired, by shard.
func (s *Store) ListShardLeases(ctx context.Context) ([]store.ShardLease, error) {
	return readAll(ctx, s, "list shard leases", rowcodec.ScanShardLease, qListShardLeases)
}

// maxDuePrealloc bounds the room DueSchedules makes up front for a page
// (the planner's pages are at most 5,000).
const maxDuePrealloc = 10_000

// DueSchedules returns up to p.Limit (DefaultListLimit when 0) ACTIVE
// schedules of the shard whose cursor is at or before p.Until, earliest
// cursor first, ties by id, with the fields the planner reads
// (record.Schedule.PlannerFields) and no others.
//
// It reads on a reader connection, so that the planner can read its next
// page while the writer commits the previous one: the two run on two
// cores. (A reader's page cache is dropped whenever the file changed since
// its last read, so it reads the pages back from the file and the WAL, one
// system call a page; on the writer, the read was cheaper but could not
// overlap a commit.)
func (s *Store) DueSchedules(ctx context.Context, p store.DueSchedulesParams) ([]record.Schedule, error) {
	limit := rowcodec.DueLimit(p)
	afterAt, afterID := p.After()
	rows, err := s.r.QueryContext(ctx, qDueSchedules, p.Shard, ms(p.Until), limit, afterAt, afterID)
	if err != nil {
		return nil, fmt.Errorf("due schedules of shard %d: %w", p.Shard, translate(err))
	}
	out := make([]record.Schedule, 0, min(limit, maxDuePrealloc))
	schedRows := make([]int64, 0, cap(out))
	scan := newDueScan()
	err = eachRow(rows, func(r scanner) error {
		sc, err := scan.scan(r)
		if err != nil {
			return err
		}
		sc.Shard = p.Shard
		out = append(out, *sc)
		schedRows = append(schedRows, scan.row)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("due schedules of shard %d: %w", p.Shard, err)
	}
	// The plan that advances them finds them by row (see scheduleRows).
	s.hints.schedules.put(func(i int) string { return out[i].ScheduleID }, schedRows)
	return out, nil
}

// advanceKey is what the plan items advanced by one statement share:
// everything but the schedule id.
type advanceKey struct {
	tenant  string
	version int64
	cursor  int64
	next    any // nullMS of the next run
	state   record.ScheduleState
	missed  int64
}

// pendingOccurrence is an occurrence of a plan with its derived id,
// waiting to be inserted.
type pendingOccurrence struct {
	o    *record.Occurrence
	id   string
	item int // the index of its plan item
}

// claimOrder is the order a plan's occurrences are inserted in: a tenant's
// queue's occurrences of one batch become neighbours in the table, so that
// a claim and its ack rewrite a few pages of them rather than one page per
// occurrence (the batch's schedules come in cursor order, every tenant's
// mixed).
func claimOrder(a, b pendingOccurrence) int {
	return cmp.Or(cmp.Compare(a.o.TenantID, b.o.TenantID), cmp.Compare(a.o.Queue, b.o.Queue),
		cmp.Compare(a.o.Lane, b.o.Lane), a.o.AvailableAt.Compare(b.o.AvailableAt), cmp.Compare(a.id, b.id))
}

// preparePlan checks the occurrences of items and derives their ids
// (rowcodec.PlanIDs), and returns them all in claimOrder. It only reads
// items.
func preparePlan(items []store.PlanItem) ([]pendingOccurrence, error) {
	ids, err := rowcodec.PlanIDs(items, nil)
	if err != nil {
		return nil, err
	}
	var out []pendingOccurrence
	for i := range items {
		for j := range items[i].Occurrences {
			out = append(out, pendingOccurrence{o: &items[i].Occurrences[j], id: ids[i][j], item: i})
		}
	}
	slices.SortFunc(out, claimOrder)
	return out, nil
}

// CommitPlan writes one planner batch in one transaction (see store.Plan).
// It first checks that p.Lease is still the shard's lease and live at
// p.Now, else it writes nothing and fails with store.ErrStaleEpoch. Each
// item then advances its schedule only if the schedule is still ACTIVE, at
// the item's version and cursor, and in the leased shard; otherwise the item
// is Stale and none of its occurrences is written. An occurrence must
// belong to its item's schedule, tenant and version, and carry its derived
// id or none; a plan that breaks this fails whole and writes nothing.
//
// The occurrences' ids (a hash each) and their claim order are worked out
// before the transaction begins, so that the one writer connection, which
// claims and acks wait for too, is held for the SQL alone.
func (s *Store) CommitPlan(ctx context.Context, p store.Plan) (res store.PlanResult, err error) {
	occs, err := preparePlan(p.Items)
	if err != nil {
		return res, fmt.Errorf("commit plan of shard %d: %w", p.Lease.Shard, err)
	}

	err = s.writeTx(ctx, func(tx *sql.Tx) error {
		check, err := s.txStmt(ctx, tx, qCheckLease)
		if err != nil {
			return fmt.Errorf("check lease: %w", err)
		}
		var one int
		if err := codec.LeaseChecked(check.QueryRowContext(ctx, rowcodec.LeaseCheckArgs(p)...).Scan(&one), p); err != nil {
			return err
		}

		rows, err := s.itemRows(ctx, tx, p.Items)
		if err != nil {
			return err
		}
		adv := advancer{s: s, ctx: ctx, tx: tx, shard: p.Lease.Shard, applied: make([]int64, len(p.Items))}
		// Each run of items (rowcodec.PlanRuns) advances its schedules in
		// one UPDATE.
		err = rowcodec.PlanRuns(p.Items, func(run []int) error {
			// Items that share everything but the schedule (a burst's
			// schedules of one tenant and version, say) go in one
			// statement.
			keys, groups := groupInOrder(run, func(i int) advanceKey {
				it := &p.Items[i]
				return advanceKey{it.TenantID, it.Version, ms(it.Cursor), nullMS(it.NextRunAt), it.State, it.MissedCount}
			})
			for _, k := range keys {
				if err := adv.advance(k, p.Items, rows, groups[k]); err != nil {
					return fmt.Errorf("advance schedules: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, row := range adv.applied {
			if row == 0 {
				res.Stale++
			} else {
				res.Applied++
			}
		}

		ins := s.newOccurrenceInserter(ctx, tx)
		defer ins.close()
		written := 0
		for k := range occs {
			po := &occs[k]
			row := adv.applied[po.item]
			if row == 0 {
				continue // a stale item writes none of its occurrences
			}
			enqueued := po.o.EnqueuedAt
			if po.o.State == record.OccurrenceEnqueued {
				enqueued = p.Now
			}
			if err := ins.add(po.o, po.id, row, p.Lease.Epoch, enqueued); err != nil {
				return err
			}
			written++
		}
		if err := ins.flush(); err != nil {
			return err
		}
		res.Inserted = ins.inserted
		res.Duplicates = written - ins.inserted
		return nil
	})
	if err != nil {
		return store.PlanResult{}, fmt.Errorf("commit plan of shard %d: %w", p.Lease.Shard, err)
	}
	return res, nil
}

// itemRows returns the schedule row of each plan item: the row
// DueSchedules read it at (see scheduleRows), else the row of its schedule
// id, looked up in one statement for the batch, or 0 when there is no such
// schedule (the item is stale).
func (s *Store) itemRows(ctx context.Context, tx *sql.Tx, items []store.PlanItem) ([]int64, error) {
	rows := make([]int64, len(items))
	if s.hints.schedules.take(func(i int) string { return items[i].ScheduleID }, rows) == len(items) {
		return rows, nil
	}
	var js jsonRows
	for i := range items {
		if rows[i] == 0 {
			js.row()
			js.str(items[i].ScheduleID)
		}
	}
	if js.rows == 0 {
		return rows, nil
	}
	found := map[string]int64{}
	q, err := tx.QueryContext(ctx, qScheduleRows, js.String())
	if err != nil {
		return nil, fmt.Errorf("schedule rows: %w", translate(err))
	}
	if err := scanIDRows(q, found); err != nil {
		return nil, fmt.Errorf("schedule rows: %w", err)
	}
	for i := range items {
		if rows[i] == 0 {
			rows[i] = found[items[i].ScheduleID]
		}
	}
	return rows, nil
}

// advancer runs the conditional writes of one plan's items, a group of
// items that share an advanceKey at a time, and records the schedules it
// wrote.
type advancer struct {
	s     *Store
	ctx   context.Context
	tx    *sql.Tx
	shard int
	// brief, full, state and missed are the statements of
	// qAdvanceCursorsBrief, qAdvanceCursors, qAdvanceSchedulesState and
	// qAddMissed, prepared when first needed.
	brief, full, state, missed *sql.Stmt
	rows                       []int64 // of the group being written
	js                         []byte  // the same, as a JSON array
	// applied holds, for each plan item, the row of its schedule once
	// written, and 0 until then.
	applied []int64
}

// advance writes the schedules of the items group (indexes into items,
// whose rows are rows) that still match k.
//
// A group that keeps its schedules ACTIVE is first written by the brief
// form, which does not say which schedules it wrote: a write with
// RETURNING costs a fifth more, as SQLite then reads every column's old
// value and keeps the answer in a temporary table. When it wrote every
// schedule (the planner's case: nothing changed since its read) that is
// the answer; otherwise the group rolls back to before it and runs the
// full form, which names them.
func (a *advancer) advance(k advanceKey, items []store.PlanItem, rows []int64, group []int) error {
	a.rows = a.rows[:0]
	for _, i := range group {
		if rows[i] != 0 { // no such schedule: stale
			a.rows = append(a.rows, rows[i])
		}
	}
	n := len(a.rows)
	if n == 0 {
		return nil
	}
	a.js = jsonInts(a.js[:0], a.rows)
	args := []any{k.next, k.missed, string(a.js), k.tenant, k.version, k.cursor, a.shard}
	if k.state != record.ScheduleActive || k.next == nil {
		// The schedule leaves schedule_cursors: its row is written.
		st, err := a.s.txStmtOnce(a.ctx, a.tx, &a.state, qAdvanceSchedulesState)
		if err != nil {
			return err
		}
		_, err = a.returning(st, append(args, string(k.state)), items, group)
		return err
	}
	brief, err := a.s.txStmtOnce(a.ctx, a.tx, &a.brief, qAdvanceCursorsBrief)
	if err != nil {
		return err
	}
	all, err := briefWrite(a.ctx, a.tx, brief, n, args...)
	if err != nil {
		return err
	}
	written := args[2]
	if all {
		for _, i := range group {
			a.applied[i] = rows[i] // 0 for no such schedule
		}
	} else {
		st, err := a.s.txStmtOnce(a.ctx, a.tx, &a.full, qAdvanceCursors)
		if err != nil {
			return err
		}
		if written, err = a.returning(st, args, items, group); err != nil {
			return err
		}
	}
	if k.missed == 0 {
		return nil
	}
	st, err := a.s.txStmtOnce(a.ctx, a.tx, &a.missed, qAddMissed)
	if err != nil {
		return err
	}
	if _, err := st.ExecContext(a.ctx, k.missed, written); err != nil {
		return fmt.Errorf("missed count: %w", translate(err))
	}
	return nil
}

// returning runs a form of the advance of the items group that names the
// schedules it wrote, records them, and returns their rows as a JSON
// array.
func (a *advancer) returning(st *sql.Stmt, args []any, items []store.PlanItem, group []int) (string, error) {
	rows, err := st.QueryContext(a.ctx, args...)
	if err != nil {
		return "", translate(err)
	}
	wrote := map[string]int64{}
	if err := scanIDRows(rows, wrote); err != nil {
		return "", err
	}
	var rs []int64
	for _, i := range group {
		if row, ok := wrote[items[i].ScheduleID]; ok {
			a.applied[i] = row
			rs = append(rs, row)
		}
	}
	return string(jsonInts(nil, rs)), nil
}

// scanIDRows reads rows of (schedule_id, row) into m, and closes rows.
func scanIDRows(rows *sql.Rows, m map[string]int64) error {
	return eachRow(rows, func(r scanner) error {
		var (
			id  string
			row int64
		)
		if err := r.Scan(&id, &row); err != nil {
			return err
		}
		m[id] = row
		return nil
	})
}
