package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// The control plane's statements (store.ControlTx).
//
// LockScheduleVersion holds the schedule's row (FOR NO KEY UPDATE) until the
// commit, so a concurrent plan of the schedule either committed before it
// (and its occurrences are canceled or kept by the statements after it) or
// finds the version changed and is stale. Claims and finishes of the older
// versions' occurrences may run meanwhile; the cancel and the in-flight
// count (qCountInFlightOlder) come out as if each had run wholly before or
// after the change.

// LockScheduleVersion returns the stored version of the tenant's
// schedule, its state and its cursor, and locks its row until the
// transaction ends.
func (t *tx) LockScheduleVersion(ctx context.Context, tenantID, scheduleID string) (store.LockedSchedule, error) {
	if !storable(tenantID, scheduleID) {
		return store.LockedSchedule{}, fmt.Errorf("read version of schedule %q: %w", scheduleID, notStorable())
	}
	var (
		l      store.LockedSchedule
		state  string
		cursor pgtype.Int8
	)
	if err := t.tx.QueryRow(ctx, qLockScheduleVersion, tenantID, scheduleID).Scan(&l.Version, &state, &cursor); err != nil {
		return store.LockedSchedule{}, fmt.Errorf("read version of schedule %s: %w", scheduleID, translate(err))
	}
	l.State, l.NextRunAt = record.ScheduleState(state), fromNullMS(cursor)
	return l, nil
}

// WriteScheduleVersion writes sc as version prevVersion+1 while the stored
// version is prevVersion (see store.ControlTx). The other nodes' planners
// are told to plan again, and their claims to read the queue again
// (canceled occurrences may free an overlap), when the transaction
// commits.
func (t *tx) WriteScheduleVersion(ctx context.Context, sc *record.Schedule, prevVersion int64) (*record.Schedule, error) {
	if err := rowcodec.CheckPayload("write", sc); err != nil {
		return nil, err
	}
	if !storable(sc.TenantID, sc.ScheduleID) {
		return nil, fmt.Errorf("write schedule %q: %w", sc.ScheduleID, notStorable())
	}
	stored, err := scanSchedule(t.tx.QueryRow(ctx, qUpdateSchedule, rowcodec.ScheduleVersionArgs(sc, prevVersion, nullMS)...))
	if errors.Is(err, pgx.ErrNoRows) {
		var have int64
		err := t.tx.QueryRow(ctx, qScheduleVersion, sc.TenantID, sc.ScheduleID).Scan(&have)
		return nil, codec.VersionNotWritten(sc.ScheduleID, prevVersion, have, err)
	}
	if err != nil {
		return nil, fmt.Errorf("write schedule %s: %w", sc.ScheduleID, translate(err))
	}
	if err := t.s.notify(ctx, t.tx, ChannelPlan); err != nil {
		return nil, err
	}
	if err := t.s.notify(ctx, t.tx, ChannelWork); err != nil {
		return nil, err
	}
	return stored, nil
}

// CancelOlderOccurrences cancels the schedule's older-version occurrences
// no worker holds (a run holding one counts as a worker) and counts the
// ones still open after it, those a worker held (see qCancelPending,
// qCountInFlightOlder and store.ControlTx). It first takes the schedule's
// queues' locks shared (lockScheduleQueues), so that no claim leases one
// of them between the cancel's read of the heads and the commit.
func (t *tx) CancelOlderOccurrences(ctx context.Context, scheduleID string, version int64, now time.Time) (canceled, inFlight int, err error) {
	if !storable(scheduleID) {
		return 0, 0, fmt.Errorf("cancel older occurrences of %q: %w", scheduleID, notStorable())
	}
	// No claim of the schedule's queues runs from here until the commit,
	// and the cancel reads which rows runs hold after it (tx_runs.go).
	if err := t.lockScheduleQueues(ctx, scheduleID); err != nil {
		return 0, 0, fmt.Errorf("cancel older occurrences of %s: %w", scheduleID, err)
	}
	tag, err := t.tx.Exec(ctx, qCancelPending, ms(now), scheduleID, version)
	if err != nil {
		return 0, 0, fmt.Errorf("cancel older occurrences of %s: %w", scheduleID, translate(err))
	}
	if err := t.tx.QueryRow(ctx, qCountInFlightOlder, scheduleID, version).Scan(&inFlight); err != nil {
		return 0, 0, fmt.Errorf("count occurrences of %s in flight: %w", scheduleID, translate(err))
	}
	return int(tag.RowsAffected()), inFlight, nil
}

// LastKeptFiring returns the latest timetable firing of the schedule not
// canceled, or zero (see store.ControlTx).
func (t *tx) LastKeptFiring(ctx context.Context, scheduleID string) (time.Time, error) {
	if !storable(scheduleID) {
		return time.Time{}, fmt.Errorf("last kept occurrence of %q: %w", scheduleID, notStorable())
	}
	var last pgtype.Int8
	err := t.tx.QueryRow(ctx, qLastKept, scheduleID).Scan(&last)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, fmt.Errorf("last kept occurrence of %s: %w", scheduleID, translate(err))
	}
	return fromNullMS(last), nil
}
