package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
func (c *Control) Trigger(ctx context.Context, tenantID, ref, key string) (*record.Occurrence, bool, error) {
	if key != "" {
		if err := schedule.CheckText("idempotency_key", key, MaxTriggerKey, false); err != nil {
			return nil, false, err
		}
	}
	sc, err := c.Get(ctx, tenantID, ref)
	if err != nil {
		return nil, false, err
	}
	if key == "" {
		var b [16]byte
		if _, err := io.ReadFull(c.rand, b[:]); err != nil {
			return nil, false, fmt.Errorf("trigger %s: %w", sc.ScheduleID, err)
		}
		key = "auto-" + hex.EncodeToString(b[:])
	}
	id := record.ManualOccurrenceID(sc.ScheduleID, key)
	if o, err := readOccurrence(ctx, c.store, tenantID, id, nil); err == nil {
		return o, false, nil // a retried trigger: the occurrence as it stands
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, false, fmt.Errorf("trigger %s: %w", sc.ScheduleID, err)
	}
	if sc.State == record.ScheduleCanceled {
		return nil, false, fmt.Errorf("schedule %s is CANCELED; only a live schedule can be triggered: %w", sc.ScheduleID, ErrConflict)
	}
	now := c.now().Truncate(time.Millisecond)
	at := now.Truncate(time.Second) // scheduled times are whole seconds
	o := record.Occurrence{
		OccurrenceID: id, TenantID: tenantID, ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
		ScheduledFor: at, AvailableAt: now, EnqueuedAt: now, State: record.OccurrenceEnqueued,
		Lane: record.LaneStrict, Queue: sc.Queue, OverlapPolicy: sc.OverlapPolicy, RetryFrom: at, TriggerKey: key,
	}
	// The occurrence and its audit row commit together.
	var n int
	err = store.InTx(ctx, c.store, func(tx store.Tx) (err error) {
		if n, err = tx.InsertOccurrences(ctx, []record.Occurrence{o}); err != nil || n == 0 {
			return err
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: tenantID, action: AuditScheduleTrigger, target: sc.ScheduleID,
			detail: fmt.Sprintf("occurrence %s of version %d", id, sc.Version)})
	})
	if err != nil || n == 0 {
		// A concurrent trigger with the same key may have written it first.
		if got, gerr := c.store.GetOccurrence(ctx, tenantID, id); gerr == nil && got.TriggerKey == key {
			return got, false, nil
		}
		if err == nil {
			err = fmt.Errorf("occurrence %s was not written", id)
		}
		return nil, false, fmt.Errorf("trigger %s: %w", sc.ScheduleID, err)
	}
	c.metrics.Triggers.Inc()
	c.notify.broadcast()
	got, err := c.store.GetOccurrence(ctx, tenantID, id)
	if err != nil {
		return nil, false, fmt.Errorf("trigger %s: read back: %w", sc.ScheduleID, err)
	}
	return got, true, nil
}
