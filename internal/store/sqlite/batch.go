package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// A bulk create (store.BatchTx): one read, then multi-row inserts of at
// most maxVariables bound values each.

// SchedulesByNamesOrKeys reads, in the transaction, the tenant's live
// schedules under names and its schedules created with keys (see
// store.BatchTx).
func (t *tx) SchedulesByNamesOrKeys(ctx context.Context, tenantID string, names, keys []string) ([]record.Schedule, error) {
	if len(names) == 0 && len(keys) == 0 {
		return nil, nil
	}
	nj, err := json.Marshal(nonNil(names))
	if err != nil {
		return nil, fmt.Errorf("schedules by name or key: %w", err)
	}
	kj, err := json.Marshal(nonNil(keys))
	if err != nil {
		return nil, fmt.Errorf("schedules by name or key: %w", err)
	}
	rows, err := t.tx.QueryContext(ctx, qSchedulesByNamesOrKeys, tenantID, string(nj), string(kj))
	if err != nil {
		return nil, fmt.Errorf("schedules by name or key: %w", translate(err))
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("schedules by name or key: %w", err)
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// InsertSchedules stores new schedules in multi-row inserts, each with
// its first version row (see store.BatchTx): in the schedule's own row
// when it can hold it (store.NewSchedule.FirstInRow; migration 0006),
// else as a row of schedule_versions. A version row was as much work
// again as half the schedule's own insert; kept in the row, it costs
// three columns.
func (t *tx) InsertSchedules(ctx context.Context, scs []store.NewSchedule) error {
	var apart []store.ScheduleVersion // the first versions not held in their rows
	inRow := make([]bool, len(scs))
	for i := range scs {
		if err := rowcodec.CheckPayload("insert", scs[i].Schedule); err != nil {
			return err
		}
		inRow[i] = scs[i].FirstInRow()
		if !inRow[i] {
			apart = append(apart, scs[i].First)
		}
	}
	err := insertRows(ctx, t, "insert schedules", qInsertSchedulesHead, scheduleColumnCount, len(scs), func(dst []any, i int) []any {
		dst = append(dst, scheduleArgs(scs[i].Schedule)...)
		if !inRow[i] {
			return append(dst, nil, nil, nil)
		}
		v := &scs[i].First
		return append(dst, string(v.State), nullMS(v.StartsAfter), nullMS(v.FirstFiring))
	})
	if err != nil {
		return err
	}
	return insertRows(ctx, t, "insert versions", qInsertVersionsHead, versionColumnCount, len(apart), func(dst []any, i int) []any {
		return append(dst, rowcodec.VersionArgs(&apart[i], nullMS)...)
	})
}

// AppendAudits stores audit rows in multi-row inserts (see store.BatchTx).
func (t *tx) AppendAudits(ctx context.Context, es []store.AuditEntry) error {
	return insertRows(ctx, t, "append audits", qAppendAuditsHead, auditColumnCount, len(es), func(dst []any, i int) []any {
		return append(dst, rowcodec.AuditArgs(&es[i])...)
	})
}

// multiRowChunks are the row counts of the multi-row inserts, largest
// first: n rows go in as many of the largest as fit, then the next, so a
// batch of 1,000 is 8 statements a table. Each size's statement is
// prepared once, when the store opens (hotQueries): parsing a statement
// of hundreds of rows was a fifth of a batch's insert.
var multiRowChunks = []int{64, 16, 4, 1}

// multiRowHeads are the tables' multi-row inserts, with their column
// counts.
var multiRowHeads = []struct {
	head string
	cols int
}{{qInsertSchedulesHead, scheduleColumnCount}, {qInsertVersionsHead, versionColumnCount}, {qAppendAuditsHead, auditColumnCount}}

// multiRowText holds the text of each multi-row insert, by head and row
// count, built once.
var multiRowText = map[multiRowKey]string{}

type multiRowKey struct {
	head string
	rows int
}

func init() {
	for _, h := range multiRowHeads {
		for _, n := range multiRowChunks {
			if n*h.cols > maxVariables {
				panic(fmt.Sprintf("sqlite: a multi-row insert of %d rows of %d columns binds more than %d values", n, h.cols, maxVariables))
			}
			q := multiRowInsert(h.head, n, h.cols)
			multiRowText[multiRowKey{h.head, n}] = q
			hotQueries = append(hotQueries, q)
		}
	}
}

// insertRows writes n rows of cols columns each, args appending row i's
// values, in chunks of multiRowChunks rows, each one prepared statement.
func insertRows(ctx context.Context, t *tx, what, head string, cols, n int, args func(dst []any, i int) []any) error {
	buf := make([]any, 0, min(n, multiRowChunks[0])*cols)
	for start := 0; start < n; {
		size := multiRowChunks[len(multiRowChunks)-1]
		for _, c := range multiRowChunks {
			if c <= n-start {
				size = c
				break
			}
		}
		buf = buf[:0]
		for i := start; i < start+size; i++ {
			buf = args(buf, i)
		}
		st, err := t.s.txStmt(ctx, t.tx, multiRowText[multiRowKey{head, size}])
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if _, err := st.ExecContext(ctx, buf...); err != nil {
			return fmt.Errorf("%s (%d rows): %w", what, size, translate(err))
		}
		start += size
	}
	return nil
}
