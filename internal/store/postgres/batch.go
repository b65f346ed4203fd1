package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// A bulk create (store.BatchTx): one read, then one COPY per table.

// SchedulesByNamesOrKeys reads, in the transaction, the tenant's live
// schedules under names and its schedules created with keys (see
// store.BatchTx). Names or keys that are not valid text match nothing.
func (t *tx) SchedulesByNamesOrKeys(ctx context.Context, tenantID string, names, keys []string) ([]record.Schedule, error) {
	names, keys = storableOnly(names), storableOnly(keys)
	if (len(names) == 0 && len(keys) == 0) || !storable(tenantID) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, qSchedulesByNamesOrKeys, tenantID, names, keys)
	if err != nil {
		return nil, fmt.Errorf("schedules by name or key: %w", translate(err))
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("schedules by name or key: %w", err)
	}
	return out, nil
}

// storableOnly is ss without the strings PostgreSQL cannot hold as text.
func storableOnly(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if storable(s) {
			out = append(out, s)
		}
	}
	return out
}

// InsertSchedules stores new schedules with one COPY, each with its
// first version (see store.BatchTx): in the schedule's own row when it
// can hold it (store.NewSchedule.FirstInRow; 0006_bulk_create.sql), else
// as a row of schedule_versions, with a second COPY. The other nodes'
// planners are told to plan when it commits.
func (t *tx) InsertSchedules(ctx context.Context, scs []store.NewSchedule) error {
	if len(scs) == 0 {
		return nil
	}
	rows := make([][]any, len(scs))
	var apart [][]any // the first versions not kept in their rows
	for i := range scs {
		sc, v := scs[i].Schedule, &scs[i].First
		if err := rowcodec.CheckPayload("insert", sc); err != nil {
			return err
		}
		if !storable(sc.TenantID, sc.ScheduleID, sc.Name, sc.Queue, sc.Expr, sc.TimeZone, sc.IdempotencyKey) {
			return fmt.Errorf("insert schedule %q: %w", sc.ScheduleID, notStorable())
		}
		rows[i] = scheduleArgs(sc)
		if scs[i].FirstInRow() {
			rows[i] = append(rows[i], string(v.State), nullMS(v.StartsAfter), nullMS(v.FirstFiring))
			continue
		}
		if !storable(v.TenantID, v.ScheduleID, v.Definition.Expr, v.Definition.TimeZone) {
			return fmt.Errorf("insert version of schedule %q: %w", v.ScheduleID, notStorable())
		}
		rows[i] = append(rows[i], nil, nil, nil)
		apart = append(apart, rowcodec.VersionArgs(v, nullMS))
	}
	if err := t.copy(ctx, "schedules", copyScheduleColumns, rows); err != nil {
		return err
	}
	if err := t.copy(ctx, "schedule_versions", copyVersionColumns, apart); err != nil {
		return err
	}
	return t.s.notify(ctx, t.tx, ChannelPlan)
}

// AppendAudits stores audit rows with one COPY (see store.BatchTx).
func (t *tx) AppendAudits(ctx context.Context, es []store.AuditEntry) error {
	rows := make([][]any, len(es))
	for i := range es {
		e := &es[i]
		if !storable(e.TenantID, e.ActorTenant, e.ActorToken, e.Action, e.Target, e.Detail) {
			return fmt.Errorf("append audit %s: a field is not valid text", e.Action)
		}
		rows[i] = rowcodec.AuditArgs(e)
	}
	return t.copy(ctx, "audit_log", copyAuditColumns, rows)
}

// copy writes rows into table's columns with COPY, in the transaction.
func (t *tx) copy(ctx context.Context, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := t.tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy %d rows into %s: %w", len(rows), table, translate(err))
	}
	return nil
}
