package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// The control plane's statements (store.ControlTx). The writer
// transaction already holds SQLite's one write lock, so reading a row is
// enough to keep it: nobody else can write it before the commit.

// LockScheduleVersion returns the stored version of the tenant's schedule.
func (t *tx) LockScheduleVersion(ctx context.Context, tenantID, scheduleID string) (int64, error) {
	var v int64
	if err := t.tx.QueryRowContext(ctx, qScheduleVersion, tenantID, scheduleID).Scan(&v); err != nil {
		return 0, fmt.Errorf("read version of schedule %s: %w", scheduleID, translate(err))
	}
	return v, nil
}

// WriteScheduleVersion writes sc as version prevVersion+1 while the stored
// version is prevVersion (see store.ControlTx).
func (t *tx) WriteScheduleVersion(ctx context.Context, sc *record.Schedule, prevVersion int64) (*record.Schedule, error) {
	if len(sc.Payload) > record.MaxPayload {
		return nil, fmt.Errorf("write schedule %s: payload of %d bytes is over %d", sc.ScheduleID, len(sc.Payload), record.MaxPayload)
	}
	stored, err := scanSchedule(t.tx.QueryRowContext(ctx, qUpdateSchedule,
		sc.Shard, sc.Name, string(sc.Kind), sc.Expr, sc.TimeZone, nullMS(sc.Anchor),
		string(sc.DSTGap), string(sc.DSTRepeat), prevVersion+1, string(sc.State), nullMS(sc.NextRunAt), sc.Queue, payloadArg(sc.Payload),
		string(sc.MisfirePolicy), durMS(sc.MaxLateness), sc.CatchUpK, string(sc.OverlapPolicy), durMS(sc.FlexibleWindow),
		sc.Retry.MaxAttempts, durMS(sc.Retry.BackoffBase), durMS(sc.Retry.BackoffCap), durMS(sc.Retry.Deadline),
		nullString(sc.IdempotencyKey), nullMS(sc.UpdatedAt),
		sc.TenantID, sc.ScheduleID, prevVersion))
	if errors.Is(err, sql.ErrNoRows) {
		var have int64
		err := t.tx.QueryRowContext(ctx, qScheduleVersion, sc.TenantID, sc.ScheduleID).Scan(&have)
		if err != nil {
			// ErrNotFound when there is no such schedule.
			return nil, fmt.Errorf("write schedule %s: %w", sc.ScheduleID, translate(err))
		}
		return nil, fmt.Errorf("write schedule %s: %w: version %d was read, the stored version is %d", sc.ScheduleID, store.ErrConflict, prevVersion, have)
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
