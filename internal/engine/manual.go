package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// MaxTriggerKey bounds a trigger's idempotency key, in bytes.
const MaxTriggerKey = 200

// Trigger fires a schedule now, once, outside its timetable, as `kubectl
// create job --from=cronjob` does: a manual occurrence of the schedule's
// current version, in the strict lane, available at once, with the
// schedule's queue and overlap policy (decided at claim time like any
// other). Its id depends on the schedule and key alone
// (record.ManualOccurrenceID), so triggering again with the same key returns
// the first occurrence (created false); an empty key is replaced by a
// random one, so every such trigger is a new occurrence. Paused and
// completed schedules can be triggered; a canceled one cannot.
func (e *Engine) Trigger(ctx context.Context, tenantID, ref, key string) (*record.Occurrence, bool, error) {
	if key != "" {
		if err := schedule.CheckText("idempotency_key", key, MaxTriggerKey, false); err != nil {
			return nil, false, err
		}
	}
	sc, err := e.Get(ctx, tenantID, ref)
	if err != nil {
		return nil, false, err
	}
	if key == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, false, fmt.Errorf("trigger %s: %w", sc.ScheduleID, err)
		}
		key = "auto-" + hex.EncodeToString(b[:])
	}
	id := record.ManualOccurrenceID(sc.ScheduleID, key)
	if o, err := e.store.GetOccurrence(ctx, tenantID, id); err == nil {
		return o, false, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, false, fmt.Errorf("trigger %s: %w", sc.ScheduleID, err)
	}
	if sc.State == record.ScheduleCanceled {
		return nil, false, fmt.Errorf("schedule %s is CANCELED; only a live schedule can be triggered: %w", sc.ScheduleID, ErrConflict)
	}
	now := e.now().Truncate(time.Millisecond)
	at := now.Truncate(time.Second) // scheduled times are whole seconds
	o := record.Occurrence{
		OccurrenceID: id, TenantID: tenantID, ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
		ScheduledFor: at, AvailableAt: now, EnqueuedAt: now, State: record.OccurrenceEnqueued,
		Lane: record.LaneStrict, Queue: sc.Queue, OverlapPolicy: sc.OverlapPolicy, RetryFrom: at, TriggerKey: key,
	}
	n, err := e.store.InsertOccurrences(ctx, []record.Occurrence{o})
	if err != nil || n == 0 {
		// A concurrent trigger with the same key may have written it first.
		if got, gerr := e.store.GetOccurrence(ctx, tenantID, id); gerr == nil && got.TriggerKey == key {
			return got, false, nil
		}
		if err == nil {
			err = fmt.Errorf("occurrence %s was not written", id)
		}
		return nil, false, fmt.Errorf("trigger %s: %w", sc.ScheduleID, err)
	}
	e.metrics.Triggers.Inc()
	e.notify.broadcast()
	got, err := e.store.GetOccurrence(ctx, tenantID, id)
	if err != nil {
		return nil, false, fmt.Errorf("trigger %s: read back: %w", sc.ScheduleID, err)
	}
	return got, true, nil
}

// DLQFilter selects a tenant's dead-letter entries; empty fields match all.
type DLQFilter struct {
	TenantID   string
	ScheduleID string
	Queue      string
}

// ReplayDead replays up to limit (1..store.MaxListLimit) of the DEAD
// occurrences f matches, oldest first, each as Replay does (same id, a new
// attempt, a fresh set of retries), and returns their ids, and whether
// more may match (the caller calls again). It is idempotent: what it
// replayed is no longer DEAD, so a call again, or after a failure part way,
// replays only what is still DEAD.
func (e *Engine) ReplayDead(ctx context.Context, f DLQFilter, limit int) (ids []string, more bool, err error) {
	page, err := e.store.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: f.TenantID, ScheduleID: f.ScheduleID,
		Queue: f.Queue, State: record.OccurrenceDead, Limit: limit})
	if err != nil {
		return nil, false, fmt.Errorf("replay the dead-letter queue: %w", err)
	}
	for i := range page {
		if _, err := e.Replay(ctx, f.TenantID, page[i].OccurrenceID); err != nil {
			if errors.Is(err, store.ErrConflict) {
				continue // replayed or purged meanwhile
			}
			return ids, false, err
		}
		ids = append(ids, page[i].OccurrenceID)
	}
	return ids, len(page) == limit, nil
}

// PurgeDead takes up to limit (1..store.MaxListLimit) of the DEAD
// occurrences f matches out of the dead-letter queue: each becomes
// CANCELED, keeping its dead reason and attempts as history. It returns
// how many, and whether more may match (the caller calls again).
func (e *Engine) PurgeDead(ctx context.Context, f DLQFilter, limit int) (int, bool, error) {
	n, err := PurgeDead(ctx, e.store, store.PurgeDeadParams{TenantID: f.TenantID, ScheduleID: f.ScheduleID, Queue: f.Queue,
		Now: e.now().Truncate(time.Millisecond), Limit: limit})
	if err != nil {
		return 0, false, fmt.Errorf("purge the dead-letter queue: %w", err)
	}
	e.metrics.Purged.Add(float64(n))
	return n, n == limit, nil
}

// NextFire is the next firing of sc not yet delivered: the earliest
// occurrence of its current version on the queue and never claimed (it may
// be overdue, waiting for a worker), else its planner cursor. Zero when
// the schedule will not fire again. Manual occurrences are not part of the
// timetable and do not count.
func (e *Engine) NextFire(ctx context.Context, sc *record.Schedule) (time.Time, error) {
	if sc.State != record.ScheduleActive {
		return time.Time{}, nil
	}
	t, err := e.store.FirstUndelivered(ctx, sc.TenantID, sc.ScheduleID, sc.Version)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return time.Time{}, fmt.Errorf("next firing of %s: %w", sc.ScheduleID, err)
	}
	if t.IsZero() {
		return sc.NextRunAt, nil
	}
	return t, nil
}
