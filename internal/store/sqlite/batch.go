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

// InsertSchedules stores new schedules in multi-row inserts (see
// store.BatchTx).
func (t *tx) InsertSchedules(ctx context.Context, scs []*record.Schedule) error {
	for _, sc := range scs {
		if err := rowcodec.CheckPayload("insert", sc); err != nil {
			return err
		}
	}
	return insertRows(ctx, t, "insert schedules", qInsertSchedulesHead, scheduleColumnCount, len(scs), func(dst []any, i int) []any {
		return append(dst, scheduleArgs(scs[i])...)
	})
}

// InsertScheduleVersions stores version rows in multi-row inserts (see
// store.BatchTx).
func (t *tx) InsertScheduleVersions(ctx context.Context, vs []store.ScheduleVersion) error {
	return insertRows(ctx, t, "insert versions", qInsertVersionsHead, versionColumnCount, len(vs), func(dst []any, i int) []any {
		return append(dst, rowcodec.VersionArgs(&vs[i], nullMS)...)
	})
}

// AppendAudits stores audit rows in multi-row inserts (see store.BatchTx).
func (t *tx) AppendAudits(ctx context.Context, es []store.AuditEntry) error {
	return insertRows(ctx, t, "append audits", qAppendAuditsHead, auditColumnCount, len(es), func(dst []any, i int) []any {
		return append(dst, rowcodec.AuditArgs(&es[i])...)
	})
}

// insertRows writes n rows of cols columns each, args appending row i's
// values, in as few statements as SQLite's limit on bound values allows.
func insertRows(ctx context.Context, t *tx, what, head string, cols, n int, args func(dst []any, i int) []any) error {
	per := maxVariables / cols
	buf := make([]any, 0, min(n, per)*cols)
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		buf = buf[:0]
		for i := start; i < end; i++ {
			buf = args(buf, i)
		}
		if _, err := t.tx.ExecContext(ctx, multiRowInsert(head, end-start, cols), buf...); err != nil {
			return fmt.Errorf("%s (%d rows): %w", what, end-start, translate(err))
		}
	}
	return nil
}
