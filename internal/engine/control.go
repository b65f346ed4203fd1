package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// updateConflictTries is how many times a change is tried again when
// another change of the same schedule wins the race.
const updateConflictTries = 5

// ChangeResult is what pause, resume, update and cancel did: the schedule
// as stored, and the true counts of older-version occurrences canceled and
// still in flight (claimed ones cannot be recalled).
type ChangeResult struct {
	Schedule record.Schedule
	Canceled int
	InFlight int
}

// Control is the control plane: it creates schedules, reads them, changes
// them (pause, resume, update, cancel, each a new version written by
// WriteVersion), triggers one outside its timetable, and says when one
// fires next. It writes schedules and manual occurrences; the planner,
// which it wakes after every write, turns schedules into occurrences.
type Control struct {
	shards  int       // the store's shard count: a new schedule's shard
	rand    io.Reader // the random part of new ids (Config.Rand)
	store   store.Store
	member  *member // the node's clock (now)
	metrics *metrics.Metrics
	planner *planner  // woken when a schedule may be due within the horizon
	notify  *notifier // wakes waiting claims when a change cancels or a trigger enqueues
	tenants *Tenants  // each tenant's quotas (active_schedules)
}

// now is the time the control plane acts on (member.now).
func (c *Control) now() time.Time { return c.member.now() }

// Create validates and stores a new schedule and returns it. With an
// idempotency key, a second create with the same key and the same body
// returns the first schedule (created false); the same key with another
// body is ErrConflict. A tenant at its active_schedules quota gets a
// *QuotaError naming it (checked on every node in the create's own
// transaction).
func (c *Control) Create(ctx context.Context, tenantID, idempotencyKey string, req schedule.Settings) (sc *record.Schedule, created bool, err error) {
	return c.createOne(ctx, tenantID, idempotencyKey, req, false)
}

// CheckCreate answers as Create would and writes nothing (CheckBatch):
// created means "would be created".
func (c *Control) CheckCreate(ctx context.Context, tenantID, idempotencyKey string, req schedule.Settings) (sc *record.Schedule, created bool, err error) {
	return c.createOne(ctx, tenantID, idempotencyKey, req, true)
}

// createOne is Create, or CheckCreate when dry.
func (c *Control) createOne(ctx context.Context, tenantID, idempotencyKey string, req schedule.Settings, dry bool) (*record.Schedule, bool, error) {
	// A batch of one: the rules of a create are written once, in
	// CreateBatch.
	outs, err := c.createBatch(ctx, tenantID, []BatchItem{{IdempotencyKey: idempotencyKey, Settings: req}}, dry)
	if err != nil {
		return nil, false, err
	}
	o := outs[0]
	return o.Schedule, o.Created, o.Err
}

// firstFiring is where a new schedule's cursor starts: the first firing
// strictly after now. An at instant already past is still taken if it is
// within max_lateness (a create racing its own instant); older ones are
// refused, since they would never fire, and so is an every schedule with
// no firing left before the end of the computable range. after is the instant it searched
// from, which the version history records as the version's lower bound.
func firstFiring(sp *timetable.Timetable, req schedule.Settings, now time.Time) (first, after time.Time, ok bool, err error) {
	after = now
	if req.Kind == timetable.KindAt {
		after = now.Add(-req.MaxLateness)
	}
	f, ok := sp.Next(after)
	if !ok && req.Kind == timetable.KindAt {
		return time.Time{}, time.Time{}, false, schedule.Invalid("at", "%s is more than max_lateness (%s) in the past", req.Expr, req.MaxLateness)
	}
	if !ok && req.Kind == timetable.KindEvery {
		// An anchor past the end is refused by Normalize; this is the
		// rest: a clock so near the end that no interval fits.
		return time.Time{}, time.Time{}, false, schedule.Invalid("every", "%s has no firing after %s before %s, the last instant an every schedule can fire at",
			req.Expr, now.UTC().Format(time.RFC3339), timetable.LastEveryInstant().Format(time.RFC3339))
	}
	if !ok {
		return time.Time{}, time.Time{}, false, nil
	}
	return f.At, after, true, nil
}

// setSettings copies a schedule's settings, normalized, into its record.
func setSettings(sc *record.Schedule, s *schedule.Settings) {
	sc.Name, sc.Queue, sc.Kind, sc.Expr, sc.TimeZone, sc.Anchor = s.Name, s.Queue, s.Kind, s.Expr, s.TimeZone, s.Anchor
	sc.DSTGap, sc.DSTRepeat, sc.Payload = s.DSTGap, s.DSTRepeat, s.Payload
	sc.MisfirePolicy, sc.CatchUpK, sc.MaxLateness = s.MisfirePolicy, s.CatchUpK, s.MaxLateness
	sc.OverlapPolicy, sc.FlexibleWindow, sc.Retry = s.OverlapPolicy, s.FlexibleWindow, s.Retry
}

// sameBody reports whether two schedules were made from the same request.
func sameBody(a, b *record.Schedule) bool {
	return a.Name == b.Name && a.Queue == b.Queue && a.Kind == b.Kind && a.Expr == b.Expr &&
		a.TimeZone == b.TimeZone && a.Anchor.Equal(b.Anchor) && a.DSTGap == b.DSTGap && a.DSTRepeat == b.DSTRepeat &&
		bytes.Equal(a.Payload, b.Payload) && a.MisfirePolicy == b.MisfirePolicy && a.CatchUpK == b.CatchUpK &&
		a.MaxLateness == b.MaxLateness && a.OverlapPolicy == b.OverlapPolicy && a.FlexibleWindow == b.FlexibleWindow &&
		a.Retry == b.Retry
}

// Get returns a schedule by id or by name.
func (c *Control) Get(ctx context.Context, tenantID, ref string) (*record.Schedule, error) {
	if record.IsScheduleID(ref) {
		sc, err := c.store.GetSchedule(ctx, tenantID, ref)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return sc, err
		}
	}
	sc, err := c.store.GetScheduleByName(ctx, tenantID, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("schedule %q: %w", ref, ErrNotFound)
	}
	return sc, err
}

// List returns a tenant's schedules in creation order.
func (c *Control) List(ctx context.Context, p store.ListSchedulesParams) ([]record.Schedule, error) {
	return c.store.ListSchedules(ctx, p)
}

// NextFire is the next firing of sc not yet delivered: the earliest
// occurrence of its current version on the queue and never claimed (it may
// be overdue, waiting for a worker), else its planner cursor. Zero when
// the schedule will not fire again. Manual occurrences are not part of the
// timetable and do not count.
func (c *Control) NextFire(ctx context.Context, sc *record.Schedule) (time.Time, error) {
	if sc.State != record.ScheduleActive {
		return time.Time{}, nil
	}
	t, err := c.store.FirstUndelivered(ctx, sc.TenantID, sc.ScheduleID, sc.Version)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return time.Time{}, fmt.Errorf("next firing of %s: %w", sc.ScheduleID, err)
	}
	if t.IsZero() {
		return sc.NextRunAt, nil
	}
	return t, nil
}

// Pause stops new firings: the version grows, unclaimed occurrences are
// canceled, and the cursor is cleared. Pausing a paused schedule changes
// nothing.
func (c *Control) Pause(ctx context.Context, tenantID, ref string) (ChangeResult, error) {
	return c.change(ctx, tenantID, ref, AuditSchedulePause, func(sc *record.Schedule, now time.Time) (bool, nextFunc, error) {
		switch sc.State {
		case record.SchedulePaused:
			return false, nil, nil
		case record.ScheduleActive:
		default:
			return false, nil, fmt.Errorf("schedule %s is %s and cannot be paused: %w", sc.ScheduleID, sc.State, ErrConflict)
		}
		sc.State, sc.NextRunAt = record.SchedulePaused, time.Time{}
		return true, nil, nil
	})
}

// Resume starts a paused schedule again from the first firing after the
// resume time (and after any firing already materialized). Resuming an
// active schedule changes nothing.
func (c *Control) Resume(ctx context.Context, tenantID, ref string) (ChangeResult, error) {
	return c.change(ctx, tenantID, ref, AuditScheduleResume, func(sc *record.Schedule, now time.Time) (bool, nextFunc, error) {
		switch sc.State {
		case record.ScheduleActive:
			return false, nil, nil
		case record.SchedulePaused:
		default:
			return false, nil, fmt.Errorf("schedule %s is %s and cannot be resumed: %w", sc.ScheduleID, sc.State, ErrConflict)
		}
		sp, err := timetable.Parse(sc.Definition())
		if err != nil {
			return false, nil, fmt.Errorf("resume %s: %w", sc.ScheduleID, err)
		}
		sc.State = record.ScheduleActive
		return true, nextAfter(sp, now), nil
	})
}

// Update replaces a schedule's settings with req: the version grows,
// unclaimed occurrences of older versions are canceled, and an active
// schedule's new version starts strictly after the last firing already
// materialized and not canceled, so no firing time runs under two versions.
// A paused schedule stays paused.
func (c *Control) Update(ctx context.Context, tenantID, ref string, req schedule.Settings) (ChangeResult, error) {
	return c.update(ctx, tenantID, ref, req, false)
}

// CheckUpdate answers as Update would and writes nothing: the new version
// as it would be stored, with its next firing and the occurrences it
// would cancel, from Update's own transaction, rolled back.
func (c *Control) CheckUpdate(ctx context.Context, tenantID, ref string, req schedule.Settings) (ChangeResult, error) {
	return c.update(ctx, tenantID, ref, req, true)
}

// update is Update, or CheckUpdate when dry.
func (c *Control) update(ctx context.Context, tenantID, ref string, req schedule.Settings, dry bool) (ChangeResult, error) {
	sp, err := req.NormalizeUpdate()
	if err != nil {
		return ChangeResult{}, err
	}
	if err := checkTarget(ctx, c.store, tenantID, req.Queue); err != nil {
		return ChangeResult{}, err
	}
	return c.changeDry(ctx, tenantID, ref, AuditScheduleUpdate, dry, func(sc *record.Schedule, now time.Time) (bool, nextFunc, error) {
		switch sc.State {
		case record.ScheduleActive, record.SchedulePaused:
		default:
			return false, nil, fmt.Errorf("schedule %s is %s and cannot be updated: %w", sc.ScheduleID, sc.State, ErrConflict)
		}
		// A name or queue stored before the rule of names may be kept.
		if err := req.CheckKept(sc.Name, sc.Queue); err != nil {
			return false, nil, err
		}
		setSettings(sc, &req)
		if sc.State != record.ScheduleActive {
			return true, nil, nil
		}
		return true, nextAfter(sp, now), nil
	})
}

// Cancel ends a schedule for good: the version grows, unclaimed
// occurrences are canceled, and the schedule stays as history. Canceling a
// canceled schedule changes nothing.
func (c *Control) Cancel(ctx context.Context, tenantID, ref string) (ChangeResult, error) {
	return c.change(ctx, tenantID, ref, AuditScheduleCancel, func(sc *record.Schedule, now time.Time) (bool, nextFunc, error) {
		if sc.State == record.ScheduleCanceled {
			return false, nil, nil
		}
		sc.State, sc.NextRunAt = record.ScheduleCanceled, time.Time{}
		return true, nil, nil
	})
}

// nextFunc computes a new version's cursor from the last firing kept.
type nextFunc func(lastKept time.Time) time.Time

// startsAfter is the bound a changed schedule's firings start strictly
// after: the later of the change's time and the last firing kept.
func startsAfter(now time.Time) func(lastKept time.Time) time.Time {
	return func(lastKept time.Time) time.Time {
		if lastKept.After(now) {
			return lastKept
		}
		return now
	}
}

// nextAfter is the first firing strictly after startsAfter(now).
func nextAfter(sp *timetable.Timetable, now time.Time) nextFunc {
	bound := startsAfter(now)
	return func(lastKept time.Time) time.Time {
		f, ok := sp.Next(bound(lastKept))
		if !ok {
			return time.Time{}
		}
		return f.At
	}
}

// change is the read-modify-write of every control-plane change. mutate
// edits the schedule read and says whether anything changes; WriteVersion
// writes it as the next version, in one transaction, only if nobody else
// wrote in between, and change retries a few times when somebody did.
func (c *Control) change(ctx context.Context, tenantID, ref, action string, mutate func(*record.Schedule, time.Time) (bool, nextFunc, error)) (ChangeResult, error) {
	return c.changeDry(ctx, tenantID, ref, action, false, mutate)
}

// changeDry is change; when dry it writes nothing (VersionChange.DryRun)
// and answers what change would have.
func (c *Control) changeDry(ctx context.Context, tenantID, ref, action string, dry bool, mutate func(*record.Schedule, time.Time) (bool, nextFunc, error)) (ChangeResult, error) {
	// A new version's cursor is computed and written under one tz
	// database (tzreload.go).
	c.planner.rules.RLock()
	defer c.planner.rules.RUnlock()
	for try := 0; ; try++ {
		sc, err := c.Get(ctx, tenantID, ref)
		if err != nil {
			return ChangeResult{}, err
		}
		now := c.now().Truncate(time.Millisecond)
		prev, before := sc.Version, *sc
		changed, next, err := mutate(sc, now)
		if err != nil {
			return ChangeResult{}, err
		}
		if !changed {
			return ChangeResult{Schedule: *sc}, nil
		}
		sc.UpdatedAt = now
		sc.NextRunAt = time.Time{}
		vc := VersionChange{Schedule: sc, PrevVersion: prev, Now: now, Next: next, Action: action, DryRun: dry, Before: &before}
		if next != nil {
			vc.StartsAfter = startsAfter(now)
		}
		res, err := WriteVersion(ctx, c.store, vc)
		if errors.Is(err, store.ErrConflict) && try < updateConflictTries {
			continue // another change won the race; read it and try again
		}
		if err != nil {
			return ChangeResult{}, fmt.Errorf("change schedule %s: %w", sc.ScheduleID, err)
		}
		if dry {
			return res, nil
		}
		c.planner.noteZone(sc.Kind, sc.TimeZone)
		c.planner.wake()
		c.notify.broadcast()
		return res, nil
	}
}
