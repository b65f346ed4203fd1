package sqlite

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
// store.HistoryTx).
func (t *tx) InsertSchedule(ctx context.Context, sc *record.Schedule) error {
	if err := rowcodec.CheckPayload("insert", sc); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, qInsertSchedule, scheduleArgs(sc)...); err != nil {
		return fmt.Errorf("insert schedule %s: %w", sc.ScheduleID, translate(err))
	}
	return nil
}

// InsertScheduleVersion stores a version row (see store.HistoryTx).
func (t *tx) InsertScheduleVersion(ctx context.Context, v store.ScheduleVersion) error {
	if _, err := t.tx.ExecContext(ctx, qInsertVersion, rowcodec.VersionArgs(&v, nullMS)...); err != nil {
		return fmt.Errorf("insert version %d of schedule %s: %w", v.Version, v.ScheduleID, translate(err))
	}
	return nil
}

// CloseScheduleVersion marks an open version row superseded (see
// store.HistoryTx).
func (t *tx) CloseScheduleVersion(ctx context.Context, scheduleID string, version int64, supersededAt, endsAt, plannedUntil time.Time) error {
	if _, err := t.tx.ExecContext(ctx, qCloseVersion, scheduleID, version, ms(supersededAt), nullMS(endsAt), nullMS(plannedUntil)); err != nil {
		return fmt.Errorf("close version %d of schedule %s: %w", version, scheduleID, translate(err))
	}
	return nil
}

// ListScheduleVersions returns a page of version rows from the read pool
// (see store.HistoryStore).
func (s *Store) ListScheduleVersions(ctx context.Context, p store.ListScheduleVersionsParams) ([]store.ScheduleVersion, error) {
	q := qListVersions
	if p.ScheduleID != "" {
		q = qListScheduleVersions
	}
	return readAll(ctx, s, "list schedule versions", rowcodec.ScanVersion, q, rowcodec.ListVersionsArgs(p)...)
}
