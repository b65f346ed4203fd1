package rowcodec

import (
	"fmt"
	"math"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// ScheduleArgs is the values of the schedules table's columns for sc, in
// the order both drivers name them (schedule_id, tenant_id, shard, name,
// kind, expr, time_zone, anchor, dst_gap, dst_repeat, version, state,
// next_run_at, queue, payload, misfire_policy, max_lateness_ms, catch_up_k,
// overlap_policy, flexible_window_ms, the retry policy's four columns,
// idempotency_key, missed_count, created_at, updated_at). nullMS binds an
// optional instant in the driver's type.
func ScheduleArgs[N any](sc *record.Schedule, nullMS func(time.Time) N) []any {
	return []any{sc.ScheduleID, sc.TenantID, sc.Shard, sc.Name, string(sc.Kind), sc.Expr, sc.TimeZone, nullMS(sc.Anchor),
		string(sc.DSTGap), string(sc.DSTRepeat), sc.Version, string(sc.State), nullMS(sc.NextRunAt), sc.Queue, Payload(sc.Payload),
		string(sc.MisfirePolicy), DurMS(sc.MaxLateness), sc.CatchUpK, string(sc.OverlapPolicy), DurMS(sc.FlexibleWindow),
		sc.Retry.MaxAttempts, DurMS(sc.Retry.BackoffBase), DurMS(sc.Retry.BackoffCap), DurMS(sc.Retry.Deadline),
		NullString(sc.IdempotencyKey), sc.MissedCount, nullMS(sc.CreatedAt), nullMS(sc.UpdatedAt)}
}

// ScheduleVersionArgs is the values of a conditional write of sc as
// version prevVersion+1 (store.ControlTx.WriteScheduleVersion): the
// columns a new version sets (shard, name, kind, expr, time_zone, anchor,
// dst_gap, dst_repeat, version, state, next_run_at, queue, payload, the
// misfire, overlap and retry policies, idempotency_key, updated_at), then
// the key (tenant_id, schedule_id) and the version the write expects.
func ScheduleVersionArgs[N any](sc *record.Schedule, prevVersion int64, nullMS func(time.Time) N) []any {
	return []any{sc.Shard, sc.Name, string(sc.Kind), sc.Expr, sc.TimeZone, nullMS(sc.Anchor),
		string(sc.DSTGap), string(sc.DSTRepeat), prevVersion + 1, string(sc.State), nullMS(sc.NextRunAt), sc.Queue, Payload(sc.Payload),
		string(sc.MisfirePolicy), DurMS(sc.MaxLateness), sc.CatchUpK, string(sc.OverlapPolicy), DurMS(sc.FlexibleWindow),
		sc.Retry.MaxAttempts, DurMS(sc.Retry.BackoffBase), DurMS(sc.Retry.BackoffCap), DurMS(sc.Retry.Deadline),
		NullString(sc.IdempotencyKey), nullMS(sc.UpdatedAt),
		sc.TenantID, sc.ScheduleID, prevVersion}
}

// VersionNotWritten explains a conditional write of version prevVersion+1
// of a schedule that wrote nothing: readErr and have are the read of the
// stored version that follows it (store.ErrNotFound when there is no such
// schedule, after c.Translate), and a stored version other than
// prevVersion is store.ErrConflict.
func (c Codec) VersionNotWritten(scheduleID string, prevVersion, have int64, readErr error) error {
	if readErr != nil {
		return fmt.Errorf("write schedule %s: %w", scheduleID, c.Translate(readErr))
	}
	return fmt.Errorf("write schedule %s: %w: version %d was read, the stored version is %d", scheduleID, store.ErrConflict, prevVersion, have)
}

// OccurrenceID checks o and returns its derived id: a manual one's (a
// trigger key) from its schedule and key (record.ManualOccurrenceID), any
// other's from its firing (record.OccurrenceID). A ScheduledFor that is not
// a whole second, or an id other than the derived one, is refused; an
// empty OccurrenceID is the derived one.
func OccurrenceID(o *record.Occurrence) (string, error) {
	if o.ScheduledFor.Nanosecond() != 0 {
		return "", fmt.Errorf("scheduled_for %s is not a whole second", o.ScheduledFor.Format(time.RFC3339Nano))
	}
	var id string
	if o.Manual() {
		id = record.ManualOccurrenceID(o.ScheduleID, o.TriggerKey)
	} else {
		id = record.OccurrenceID(o.ScheduleID, o.ScheduleVersion, o.ScheduledFor)
	}
	if o.OccurrenceID != "" && o.OccurrenceID != id {
		return "", fmt.Errorf("occurrence id %s is not the derived %s", o.OccurrenceID, id)
	}
	return id, nil
}

// PlanIDs checks the occurrences of a plan's items and returns their
// derived ids, item by item: an occurrence must be of its item's schedule,
// tenant and version, and pass OccurrenceID (with check, a driver's own
// test of it, when not nil). A plan that breaks this fails whole.
func PlanIDs(items []store.PlanItem, check func(*record.Occurrence) error) ([][]string, error) {
	ids := make([][]string, len(items))
	for i := range items {
		it := &items[i]
		ids[i] = make([]string, len(it.Occurrences))
		for j := range it.Occurrences {
			o := &it.Occurrences[j]
			if o.ScheduleID != it.ScheduleID || o.TenantID != it.TenantID || o.ScheduleVersion != it.Version {
				return nil, fmt.Errorf("item %d (%s): occurrence %d is of %s/%s version %d, not the item's",
					i, it.ScheduleID, j, o.TenantID, o.ScheduleID, o.ScheduleVersion)
			}
			var err error
			if check != nil {
				err = check(o)
			}
			if err == nil {
				ids[i][j], err = OccurrenceID(o)
			}
			if err != nil {
				return nil, fmt.Errorf("item %d (%s): occurrence %d: %w", i, it.ScheduleID, j, err)
			}
		}
	}
	return ids, nil
}

// InsertDefaults is what an occurrence is stored with where it leaves a
// field empty: a zero RetryFrom is ScheduledFor, an empty OverlapPolicy is
// allow.
func InsertDefaults(o *record.Occurrence) (retryFrom time.Time, overlap record.OverlapPolicy) {
	retryFrom, overlap = o.RetryFrom, o.OverlapPolicy
	if retryFrom.IsZero() {
		retryFrom = o.ScheduledFor
	}
	if overlap == "" {
		overlap = record.OverlapAllow
	}
	return retryFrom, overlap
}

// ListAfter is the keyset position a page of p starts after, as
// (scheduled_for in unix milliseconds, occurrence id): p.After, or,
// without it, a position before every row in the listing's order (no
// stored scheduled_for is at either end of the int64 range, and no
// occurrence id is empty).
func ListAfter(p store.ListOccurrencesParams) (int64, string) {
	switch {
	case p.After != nil:
		return MS(p.After.ScheduledFor), p.After.OccurrenceID
	case p.Reverse:
		return math.MaxInt64, ""
	}
	return math.MinInt64, ""
}

// OccurrenceIDs checks occs and returns their derived ids (OccurrenceID,
// after check, a driver's own test, when not nil): one bad occurrence
// fails the batch.
func OccurrenceIDs(occs []record.Occurrence, check func(*record.Occurrence) error) ([]string, error) {
	ids := make([]string, len(occs))
	for i := range occs {
		var err error
		if check != nil {
			err = check(&occs[i])
		}
		if err == nil {
			ids[i], err = OccurrenceID(&occs[i])
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return ids, nil
}

// CheckIdempotencyKey refuses a lookup by the empty idempotency key with
// store.ErrNotFound: the empty key is no key, and finds nothing.
func CheckIdempotencyKey(key string) error {
	if key == "" {
		return fmt.Errorf("get schedule by idempotency key: empty key: %w", store.ErrNotFound)
	}
	return nil
}

// PageAttempts is the page of an occurrence's attempts p selects, from a
// driver's page of its history (the rows numbered above p.After, at most
// ListLimit(p.Limit) of them, by number) and its latest attempt, which the
// occurrence row holds (nil: none recorded yet). The latest is numbered
// above every history row, so it ends the page when the page has room.
func PageAttempts(history []record.Attempt, latest *record.Attempt, p store.ListAttemptsParams) []record.Attempt {
	if latest != nil && latest.Attempt > p.After && len(history) < store.ListLimit(p.Limit) {
		history = append(history, *latest)
	}
	return history
}
