package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sched-dev/sched/internal/limits"
	"github.com/sched-dev/sched/internal/spec"
	"github.com/sched-dev/sched/internal/store"
)

// Defaults and limits of a schedule's settings (SPEC §9), from package
// limits, which schedctl's offline checks share.
const (
	DefaultMaxLateness  = limits.DefaultMaxLateness
	DefaultMaxAttempts  = limits.DefaultMaxAttempts
	DefaultBackoffBase  = limits.DefaultRetryBase
	DefaultBackoffCap   = limits.DefaultRetryCap
	DefaultRetryWindow  = limits.DefaultRetryDeadline
	MaxCatchUpK         = limits.MaxCatchUpK
	MaxNameLen          = limits.MaxNameLen
	MaxQueueLen         = limits.MaxQueueLen
	MaxIdempotencyKey   = limits.MaxIdempotencyKey
	maxSettingDuration  = limits.MaxSettingDuration
	maxFlexibleWindow   = limits.MaxFlexibleWindow
	maxAttemptsLimit    = limits.MaxAttempts
	updateConflictTries = 5
)

// ScheduleSpec is what a caller asks for when creating or updating a
// schedule. Zero values take the defaults of SPEC §9.
type ScheduleSpec struct {
	Name  string
	Queue string

	Kind      spec.Kind
	Expr      string
	TimeZone  string    // cron: required; at, every: defaults to UTC
	Anchor    time.Time // every only
	DSTGap    spec.GapPolicy
	DSTRepeat spec.RepeatPolicy

	Payload []byte

	MisfirePolicy  store.MisfirePolicy
	CatchUpK       int
	MaxLateness    time.Duration
	OverlapPolicy  store.OverlapPolicy
	FlexibleWindow time.Duration
	Retry          store.RetryPolicy
}

// ChangeResult is what pause, resume, update and cancel did: the schedule
// as stored, and the true counts of older-version occurrences canceled and
// still in flight (claimed ones cannot be recalled).
type ChangeResult struct {
	Schedule store.Schedule
	Canceled int
	InFlight int
}

// normalize validates s, fills in defaults, and returns the parsed timing.
func (s *ScheduleSpec) normalize() (*spec.Spec, error) {
	if err := checkText("name", s.Name, MaxNameLen, false); err != nil {
		return nil, err
	}
	if err := checkText("queue", s.Queue, MaxQueueLen, true); err != nil {
		return nil, err
	}
	switch s.Kind {
	case spec.KindCron:
		if s.TimeZone == "" {
			return nil, invalid("time_zone", "a cron schedule needs a time zone (an IANA name such as Europe/Berlin, or UTC)")
		}
	case spec.KindAt, spec.KindEvery:
		if s.TimeZone == "" {
			s.TimeZone = "UTC"
		}
	default:
		return nil, invalid("kind", "kind %q: want cron, at or every", s.Kind)
	}
	if !s.Anchor.IsZero() && s.Kind != spec.KindEvery {
		return nil, invalid("anchor", "an anchor only applies to an every schedule")
	}
	if s.Kind != spec.KindCron && (s.DSTGap != "" || s.DSTRepeat != "") {
		return nil, invalid("dst_gap", "DST options only apply to a cron schedule")
	}
	if s.DSTGap == "" {
		s.DSTGap = spec.GapSkip
	}
	if s.DSTRepeat == "" {
		s.DSTRepeat = spec.RepeatFirst
	}
	sp, err := spec.Parse(spec.Definition{Kind: s.Kind, Expr: s.Expr, Zone: s.TimeZone, Anchor: s.Anchor, Gap: s.DSTGap, Repeat: s.DSTRepeat})
	if err != nil {
		return nil, fromSpec(err)
	}
	if len(s.Payload) > store.MaxPayload {
		return nil, invalid("payload", "payload of %d bytes is over the limit of %d (256 KiB)", len(s.Payload), store.MaxPayload)
	}

	switch s.MisfirePolicy {
	case "":
		s.MisfirePolicy = store.MisfireFireOnce
	case store.MisfireSkip, store.MisfireFireOnce:
	case store.MisfireCatchUp:
		if s.CatchUpK < 1 || s.CatchUpK > MaxCatchUpK {
			return nil, invalid("misfire_policy", "catch_up:%d: K must be 1 to %d", s.CatchUpK, MaxCatchUpK)
		}
	default:
		return nil, invalid("misfire_policy", "%q: want skip, fire_once or catch_up:K", s.MisfirePolicy)
	}
	if s.MisfirePolicy != store.MisfireCatchUp {
		if s.CatchUpK != 0 {
			return nil, invalid("misfire_policy", "K only applies to catch_up")
		}
	}
	if err := setDuration("max_lateness", &s.MaxLateness, DefaultMaxLateness, time.Second, maxSettingDuration); err != nil {
		return nil, err
	}
	switch s.OverlapPolicy {
	case "":
		s.OverlapPolicy = store.OverlapAllow
	case store.OverlapAllow, store.OverlapSkipIfRunning, store.OverlapQueueOne:
	default:
		return nil, invalid("overlap_policy", "%q: want allow, skip_if_running or queue_one", s.OverlapPolicy)
	}
	if s.FlexibleWindow < 0 || s.FlexibleWindow > maxFlexibleWindow || s.FlexibleWindow%time.Second != 0 {
		return nil, invalid("flexible_window", "%s: must be whole seconds from 0 to 24h", s.FlexibleWindow)
	}
	r := &s.Retry
	switch {
	case r.MaxAttempts == 0:
		r.MaxAttempts = DefaultMaxAttempts
	case r.MaxAttempts < 0 || r.MaxAttempts > maxAttemptsLimit:
		return nil, invalid("max_attempts", "%d: must be 1 to %d", r.MaxAttempts, maxAttemptsLimit)
	}
	if err := setDuration("retry_base", &r.BackoffBase, DefaultBackoffBase, time.Millisecond, time.Hour); err != nil {
		return nil, err
	}
	if err := setDuration("retry_cap", &r.BackoffCap, DefaultBackoffCap, time.Millisecond, 24*time.Hour); err != nil {
		return nil, err
	}
	if r.BackoffCap < r.BackoffBase {
		return nil, invalid("retry_cap", "%s is less than retry_base %s", r.BackoffCap, r.BackoffBase)
	}
	if err := setDuration("retry_deadline", &r.Deadline, DefaultRetryWindow, time.Second, maxSettingDuration); err != nil {
		return nil, err
	}
	return sp, nil
}

// setDuration fills in a default for zero and checks the range, to the
// millisecond (the store's precision).
func setDuration(field string, d *time.Duration, def, lo, hi time.Duration) error {
	if *d == 0 {
		*d = def
		return nil
	}
	if *d < lo || *d > hi {
		return invalid(field, "%s: must be from %s to %s", *d, lo, hi)
	}
	if *d%time.Millisecond != 0 {
		return invalid(field, "%s: must be whole milliseconds", *d)
	}
	return nil
}

// checkText refuses empty, over-long, invalid UTF-8 and control
// characters. strict also limits the text to letters, digits and . _ - :
// (queues end up in metric labels and URLs).
func checkText(field, s string, max int, strict bool) error {
	switch {
	case s == "":
		return invalid(field, "must not be empty")
	case len(s) > max:
		return invalid(field, "%d bytes is over the limit of %d", len(s), max)
	case !utf8.ValidString(s):
		return invalid(field, "is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return invalid(field, "%q contains a control character", s)
		}
		if strict && !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-:", r))) {
			return invalid(field, "%q: use only letters, digits and . _ - :", s)
		}
	}
	if s != strings.TrimSpace(s) {
		return invalid(field, "%q has leading or trailing space", s)
	}
	return nil
}

// Create validates and stores a new schedule and returns it. With an
// idempotency key, a second create with the same key and the same body
// returns the first schedule (created false); the same key with another
// body is ErrConflict.
func (e *Engine) Create(ctx context.Context, tenantID, idempotencyKey string, req ScheduleSpec) (sc *store.Schedule, created bool, err error) {
	if err := checkText("tenant", tenantID, MaxQueueLen, true); err != nil {
		return nil, false, err
	}
	if idempotencyKey != "" {
		if err := checkText("idempotency_key", idempotencyKey, MaxIdempotencyKey, false); err != nil {
			return nil, false, err
		}
	}
	sp, err := req.normalize()
	if err != nil {
		return nil, false, err
	}
	now := e.now().Truncate(time.Millisecond)
	first, ok, err := firstFiring(sp, req, now)
	if err != nil {
		return nil, false, err
	}
	id, err := newScheduleID(now)
	if err != nil {
		return nil, false, err
	}
	sc = &store.Schedule{
		TenantID: tenantID, ScheduleID: id, Shard: ShardOf(id, e.cfg.Shards), Name: req.Name,
		Kind: req.Kind, Expr: req.Expr, TimeZone: req.TimeZone, Anchor: req.Anchor,
		DSTGap: req.DSTGap, DSTRepeat: req.DSTRepeat,
		Version: 1, State: store.ScheduleActive, NextRunAt: first,
		Queue: req.Queue, Payload: req.Payload,
		MisfirePolicy: req.MisfirePolicy, MaxLateness: req.MaxLateness, CatchUpK: req.CatchUpK,
		OverlapPolicy: req.OverlapPolicy, FlexibleWindow: req.FlexibleWindow, Retry: req.Retry,
		IdempotencyKey: idempotencyKey, CreatedAt: now, UpdatedAt: now,
	}
	if !ok {
		sc.State, sc.NextRunAt = store.ScheduleCompleted, time.Time{}
	}
	err = e.store.InsertSchedule(ctx, sc)
	if errors.Is(err, store.ErrConflict) {
		if idempotencyKey != "" {
			prev, gerr := e.store.GetScheduleByIdempotencyKey(ctx, tenantID, idempotencyKey)
			if gerr == nil {
				if sameBody(prev, sc) {
					return prev, false, nil
				}
				return nil, false, fmt.Errorf("idempotency key %q was used for schedule %s with another body: %w", idempotencyKey, prev.ScheduleID, ErrConflict)
			}
		}
		return nil, false, fmt.Errorf("create schedule: name %q is already used by a live schedule: %w", req.Name, ErrConflict)
	}
	if err != nil {
		return nil, false, fmt.Errorf("create schedule %q: %w", req.Name, err)
	}
	e.planner.wake()
	return sc, true, nil
}

// firstFiring is where a new schedule's cursor starts: the first firing
// strictly after now. An at instant already past is still taken if it is
// within max_lateness (a create racing its own instant); older ones are
// refused, since they would never fire.
func firstFiring(sp *spec.Spec, req ScheduleSpec, now time.Time) (time.Time, bool, error) {
	after := now
	if req.Kind == spec.KindAt {
		after = now.Add(-req.MaxLateness)
	}
	f, ok := sp.Next(after)
	if !ok && req.Kind == spec.KindAt {
		return time.Time{}, false, invalid("at", "%s is more than max_lateness (%s) in the past", req.Expr, req.MaxLateness)
	}
	if !ok {
		return time.Time{}, false, nil
	}
	return f.At, true, nil
}

// sameBody reports whether two schedules were made from the same request.
func sameBody(a, b *store.Schedule) bool {
	return a.Name == b.Name && a.Queue == b.Queue && a.Kind == b.Kind && a.Expr == b.Expr &&
		a.TimeZone == b.TimeZone && a.Anchor.Equal(b.Anchor) && a.DSTGap == b.DSTGap && a.DSTRepeat == b.DSTRepeat &&
		bytes.Equal(a.Payload, b.Payload) && a.MisfirePolicy == b.MisfirePolicy && a.CatchUpK == b.CatchUpK &&
		a.MaxLateness == b.MaxLateness && a.OverlapPolicy == b.OverlapPolicy && a.FlexibleWindow == b.FlexibleWindow &&
		a.Retry == b.Retry
}

// Get returns a schedule by id or by name.
func (e *Engine) Get(ctx context.Context, tenantID, ref string) (*store.Schedule, error) {
	if strings.HasPrefix(ref, schedulePrefix) {
		sc, err := e.store.GetSchedule(ctx, tenantID, ref)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return sc, err
		}
	}
	sc, err := e.store.GetScheduleByName(ctx, tenantID, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("schedule %q: %w", ref, ErrNotFound)
	}
	return sc, err
}

// List returns a tenant's schedules in creation order.
func (e *Engine) List(ctx context.Context, p store.ListSchedulesParams) ([]store.Schedule, error) {
	return e.store.ListSchedules(ctx, p)
}

// Pause stops new firings: the version grows, unclaimed occurrences are
// canceled, and the cursor is cleared. Pausing a paused schedule changes
// nothing.
func (e *Engine) Pause(ctx context.Context, tenantID, ref string) (ChangeResult, error) {
	return e.change(ctx, tenantID, ref, func(sc *store.Schedule, now time.Time) (bool, nextFunc, error) {
		switch sc.State {
		case store.SchedulePaused:
			return false, nil, nil
		case store.ScheduleActive:
		default:
			return false, nil, fmt.Errorf("schedule %s is %s and cannot be paused: %w", sc.ScheduleID, sc.State, ErrConflict)
		}
		sc.State, sc.NextRunAt = store.SchedulePaused, time.Time{}
		return true, nil, nil
	})
}

// Resume starts a paused schedule again from the first firing after the
// resume time (and after any firing already materialized). Resuming an
// active schedule changes nothing.
func (e *Engine) Resume(ctx context.Context, tenantID, ref string) (ChangeResult, error) {
	return e.change(ctx, tenantID, ref, func(sc *store.Schedule, now time.Time) (bool, nextFunc, error) {
		switch sc.State {
		case store.ScheduleActive:
			return false, nil, nil
		case store.SchedulePaused:
		default:
			return false, nil, fmt.Errorf("schedule %s is %s and cannot be resumed: %w", sc.ScheduleID, sc.State, ErrConflict)
		}
		sp, err := spec.Parse(sc.Definition())
		if err != nil {
			return false, nil, fmt.Errorf("resume %s: %w", sc.ScheduleID, err)
		}
		sc.State = store.ScheduleActive
		return true, nextAfter(sp, now), nil
	})
}

// Update replaces a schedule's settings with req: the version grows,
// unclaimed occurrences of older versions are canceled, and an active
// schedule's new version starts strictly after the last firing already
// materialized and not canceled, so no firing time runs under two versions.
// A paused schedule stays paused.
func (e *Engine) Update(ctx context.Context, tenantID, ref string, req ScheduleSpec) (ChangeResult, error) {
	sp, err := req.normalize()
	if err != nil {
		return ChangeResult{}, err
	}
	return e.change(ctx, tenantID, ref, func(sc *store.Schedule, now time.Time) (bool, nextFunc, error) {
		switch sc.State {
		case store.ScheduleActive, store.SchedulePaused:
		default:
			return false, nil, fmt.Errorf("schedule %s is %s and cannot be updated: %w", sc.ScheduleID, sc.State, ErrConflict)
		}
		sc.Name, sc.Queue, sc.Kind, sc.Expr, sc.TimeZone, sc.Anchor = req.Name, req.Queue, req.Kind, req.Expr, req.TimeZone, req.Anchor
		sc.DSTGap, sc.DSTRepeat, sc.Payload = req.DSTGap, req.DSTRepeat, req.Payload
		sc.MisfirePolicy, sc.CatchUpK, sc.MaxLateness = req.MisfirePolicy, req.CatchUpK, req.MaxLateness
		sc.OverlapPolicy, sc.FlexibleWindow, sc.Retry = req.OverlapPolicy, req.FlexibleWindow, req.Retry
		if sc.State != store.ScheduleActive {
			return true, nil, nil
		}
		return true, nextAfter(sp, now), nil
	})
}

// Cancel ends a schedule for good: the version grows, unclaimed
// occurrences are canceled, and the schedule stays as history. Canceling a
// canceled schedule changes nothing.
func (e *Engine) Cancel(ctx context.Context, tenantID, ref string) (ChangeResult, error) {
	return e.change(ctx, tenantID, ref, func(sc *store.Schedule, now time.Time) (bool, nextFunc, error) {
		if sc.State == store.ScheduleCanceled {
			return false, nil, nil
		}
		sc.State, sc.NextRunAt = store.ScheduleCanceled, time.Time{}
		return true, nil, nil
	})
}

// nextFunc computes a new version's cursor from the last firing kept.
type nextFunc func(lastKept time.Time) time.Time

// nextAfter is the first firing strictly after both now and lastKept.
func nextAfter(sp *spec.Spec, now time.Time) nextFunc {
	return func(lastKept time.Time) time.Time {
		from := now
		if lastKept.After(from) {
			from = lastKept
		}
		f, ok := sp.Next(from)
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
func (e *Engine) change(ctx context.Context, tenantID, ref string, mutate func(*store.Schedule, time.Time) (bool, nextFunc, error)) (ChangeResult, error) {
	for try := 0; ; try++ {
		sc, err := e.Get(ctx, tenantID, ref)
		if err != nil {
			return ChangeResult{}, err
		}
		now := e.now().Truncate(time.Millisecond)
		prev := sc.Version
		changed, next, err := mutate(sc, now)
		if err != nil {
			return ChangeResult{}, err
		}
		if !changed {
			return ChangeResult{Schedule: *sc}, nil
		}
		sc.UpdatedAt = now
		sc.NextRunAt = time.Time{}
		res, err := WriteVersion(ctx, e.store, VersionChange{Schedule: sc, PrevVersion: prev, Now: now, Next: next})
		if errors.Is(err, store.ErrConflict) && try < updateConflictTries {
			continue // another change won the race; read it and try again
		}
		if err != nil {
			return ChangeResult{}, fmt.Errorf("change schedule %s: %w", sc.ScheduleID, err)
		}
		e.planner.wake()
		e.notify.broadcast()
		return res, nil
	}
}

const schedulePrefix = "sch_"

// newScheduleID returns "sch_" and 26 base32 characters: 48 bits of the
// creation time in milliseconds, then 80 random bits. Ids sort by creation
// time, so listing by id lists in creation order.
func newScheduleID(now time.Time) (string, error) {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		return "", fmt.Errorf("new schedule id: %w", err)
	}
	return schedulePrefix + idEncoding.EncodeToString(b[:]), nil
}

// ShardOf is the logical shard of a schedule: fnv32a(schedule_id) mod n.
func ShardOf(scheduleID string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(scheduleID))
	return int(h.Sum32() % uint32(n))
}
