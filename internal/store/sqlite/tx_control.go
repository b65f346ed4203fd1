package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// The control plane's statements (store.ControlTx). The writer
// transaction already holds SQLite's one write lock, so reading a row is
// enough to keep it: nobody else can write it before the commit.

// LockScheduleVersion returns the stored version of the tenant's
// schedule, its state and its cursor (see store.ControlTx).
func (t *tx) LockScheduleVersion(ctx context.Context, tenantID, scheduleID string) (store.LockedSchedule, error) {
	var (
		l      store.LockedSchedule
		state  string
		cursor sql.Null[int64]
	)
	if err := t.tx.QueryRowContext(ctx, qLockScheduleVersion, tenantID, scheduleID).Scan(&l.Version, &state, &cursor); err != nil {
		return store.LockedSchedule{}, fmt.Errorf("read version of schedule %s: %w", scheduleID, translate(err))
	}
	l.State, l.NextRunAt = record.ScheduleState(state), fromNullMS(cursor)
	return l, nil
}

// WriteScheduleVersion writes sc as version prevVersion+1 while the stored
// version is prevVersion (see store.ControlTx).
func (t *tx) WriteScheduleVersion(ctx context.Context, sc *record.Schedule, prevVersion int64) (*record.Schedule, error) {
	if err := rowcodec.CheckPayload("write", sc); err != nil {
		return nil, err
	}
	stored, err := scanSchedule(t.tx.QueryRowContext(ctx, qUpdateSchedule, rowcodec.ScheduleVersionArgs(sc, prevVersion, nullMS)...))
	if errors.Is(err, sql.ErrNoRows) {
		var have int64
		err := t.tx.QueryRowContext(ctx, qScheduleVersion, sc.TenantID, sc.ScheduleID).Scan(&have)
		return nil, codec.VersionNotWritten(sc.ScheduleID, prevVersion, have, err)
	}
	if err != nil {
		return nil, fmt.Errorf("write schedule %s: %w", sc.ScheduleID, translate(err))
	}
	return stored, nil
}

// CancelOlderOccurrences cancels the schedule's older-version occurrences
// no worker holds and counts the RUNNING ones (see store.ControlTx). With
// one writer nothing moves an occurrence between the two statements.
func (t *tx) CancelOlderOccurrences(ctx context.Context, scheduleID string, version int64, now time.Time) (canceled, inFlight int, err error) {
	r, err := t.tx.ExecContext(ctx, qCancelPending, ms(now), scheduleID, version)
	if err != nil {
		return 0, 0, fmt.Errorf("cancel older occurrences of %s: %w", scheduleID, translate(err))
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, 0, fmt.Errorf("cancel older occurrences of %s: %w", scheduleID, translate(err))
	}
	if err := t.tx.QueryRowContext(ctx, qCountRunningOlder, scheduleID, version).Scan(&inFlight); err != nil {
		return 0, 0, fmt.Errorf("count occurrences of %s in flight: %w", scheduleID, translate(err))
	}
	return int(n), inFlight, nil
}

// LastKeptFiring returns the latest timetable firing of the schedule not
// canceled, or zero (see store.ControlTx).
func (t *tx) LastKeptFiring(ctx context.Context, scheduleID string) (time.Time, error) {
	var last sql.Null[int64]
	err := t.tx.QueryRowContext(ctx, qLastKept, scheduleID).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("last kept occurrence of %s: %w", scheduleID, translate(err))
	}
	return fromNullMS(last), nil
}
