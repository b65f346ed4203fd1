package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// The schedules' version history (store.HistoryStore, store.HistoryTx).

// InsertSchedule stores a new schedule inside the transaction (see
// store.HistoryTx); the other nodes' planners are told to plan when it
// commits, as Store.InsertSchedule tells them.
func (t *tx) InsertSchedule(ctx context.Context, sc *record.Schedule) error {
	if err := rowcodec.CheckPayload("insert", sc); err != nil {
		return err
	}
	if !storable(sc.TenantID, sc.ScheduleID) {
		return fmt.Errorf("insert schedule %q: %w", sc.ScheduleID, notStorable())
	}
	if _, err := t.tx.Exec(ctx, qInsertSchedule, scheduleArgs(sc)...); err != nil {
		return fmt.Errorf("insert schedule %s: %w", sc.ScheduleID, translate(err))
	}
	return t.s.notify(ctx, t.tx, ChannelPlan)
}

// InsertScheduleVersion stores a version row (see store.HistoryTx).
func (t *tx) InsertScheduleVersion(ctx context.Context, v store.ScheduleVersion) error {
	if !storable(v.TenantID, v.ScheduleID, v.Definition.Expr, v.Definition.TimeZone) {
		return fmt.Errorf("insert version of schedule %q: %w", v.ScheduleID, notStorable())
	}
	if _, err := t.tx.Exec(ctx, qInsertVersion, rowcodec.VersionArgs(&v, nullMS)...); err != nil {
		return fmt.Errorf("insert version %d of schedule %s: %w", v.Version, v.ScheduleID, translate(err))
	}
	return nil
}

// CloseScheduleVersion marks an open version row superseded (see
// store.HistoryTx).
func (t *tx) CloseScheduleVersion(ctx context.Context, scheduleID string, version int64, supersededAt, endsAt, plannedUntil time.Time) error {
	if !storable(scheduleID) {
		return fmt.Errorf("close version of schedule %q: %w", scheduleID, notStorable())
	}
	if _, err := t.tx.Exec(ctx, qCloseVersion, scheduleID, version, ms(supersededAt), nullMS(endsAt), nullMS(plannedUntil)); err != nil {
		return fmt.Errorf("close version %d of schedule %s: %w", version, scheduleID, translate(err))
	}
	return nil
}

// ListScheduleVersions returns a page of version rows, read from the pool
// without a lock (see store.HistoryStore): those of schedule_versions and
// the first versions kept in schedules rows (queries_history.go).
func (s *Store) ListScheduleVersions(ctx context.Context, p store.ListScheduleVersionsParams) ([]store.ScheduleVersion, error) {
	if !storable(p.TenantID, p.ScheduleID, p.AfterScheduleID) {
		return nil, fmt.Errorf("list schedule versions: %w", notStorable())
	}
	q := qListVersionsMerged
	if p.ScheduleID != "" {
		q = qListScheduleVersionsMerged
	}
	return readAll(ctx, s, "list schedule versions", rowcodec.ScanVersion, q, rowcodec.ListVersionsArgs(p)...)
}
