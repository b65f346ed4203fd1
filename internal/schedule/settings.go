// Package schedule is the one source of a schedule's rules: the settings
// a caller asks for (Settings), their defaults and limits, how the API's
// strings for them are read (FromRequest and the Parse functions), and
// how they are validated and completed (Settings.Normalize). schedd's
// engine and HTTP server use it, and schedctl checks files and flags
// offline with it, so a schedule passes schedctl's check exactly when it
// passes schedd's (bar what needs the store or the clock: a name taken, an
// at instant already past).
//
// It links only the time engine (internal/timetable), the records
// (internal/record, whose policy types the settings use) and the API's
// wire types, never the engine, the server, a store or a database driver:
// schedctl must stay free of those.
package schedule

import (
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/timetable"
)

// Defaults of a schedule's settings, taken when a setting is left out.
const (
	DefaultMaxLateness   = 60 * time.Second
	DefaultMaxAttempts   = 10
	DefaultRetryBase     = time.Second
	DefaultRetryCap      = 5 * time.Minute
	DefaultRetryDeadline = 24 * time.Hour
)

// Limits of a schedule's settings and names.
const (
	MaxCatchUpK        = 1000                // catch_up:K: K is 1 to this
	MaxNameLen         = 128                 // bytes of a schedule's (or a worker's) name
	MaxQueueLen        = 64                  // bytes of a queue's name or a tenant id
	MaxIdempotencyKey  = 256                 // bytes of a create's idempotency key
	MaxSettingDuration = 30 * 24 * time.Hour // max_lateness and retry_deadline
	MaxFlexibleWindow  = 24 * time.Hour
	MaxAttempts        = 1000 // max_attempts is 1 to this
	MaxRetryBase       = time.Hour
	MaxRetryCap        = 24 * time.Hour
)

// Settings is what a caller asks for when creating or updating a schedule.
// Zero values take the defaults above once normalized.
type Settings struct {
	Name  string
	Queue string
	// Target names the tenant's target the firings are delivered into
	// instead of a queue of the built-in one ("" for none). Normalize
	// sets Queue to the target's own queue (record.TargetQueue), which is
	// how the schedule is stored.
	Target string

	Kind      timetable.Kind
	Expr      string
	TimeZone  string    // cron: required; at, every: defaults to UTC
	Anchor    time.Time // every only
	DSTGap    timetable.GapPolicy
	DSTRepeat timetable.RepeatPolicy

	Payload []byte // a JSON value; nil for none

	MisfirePolicy  record.MisfirePolicy
	CatchUpK       int
	MaxLateness    time.Duration
	OverlapPolicy  record.OverlapPolicy
	FlexibleWindow time.Duration
	Retry          record.RetryPolicy
}

// Normalize validates s, fills in its defaults, and returns its parsed
// timing. Errors are *ValidationError naming the first bad setting, in
// the order the fields are declared.
func (s *Settings) Normalize() (*timetable.Timetable, error) {
	if err := CheckName(s.Name); err != nil {
		return nil, err
	}
	if err := s.queueOrTarget(CheckNewQueue); err != nil {
		return nil, err
	}
	return s.normalize()
}

// queueOrTarget checks the queue with checkQueue, or, for a schedule
// with a target, the target's name, and sets the queue to the target's.
func (s *Settings) queueOrTarget(checkQueue func(string) error) error {
	if s.Target == "" {
		if _, ok := record.QueueTarget(s.Queue); ok {
			return Invalid("queue", "%q: a queue starting with @ is a target's; name the target instead (target %q)", s.Queue, s.Queue[1:])
		}
		return checkQueue(s.Queue)
	}
	if err := CheckTargetName(s.Target); err != nil {
		return err
	}
	q := record.TargetQueue(s.Target)
	if s.Queue != "" && s.Queue != q {
		return Invalid("queue", "%q: a schedule with a target (%q) has no queue of its own; give one or the other", s.Queue, s.Target)
	}
	s.Queue = q
	return nil
}

// NormalizeUpdate is Normalize for an update, whose name and queue may be
// the ones the schedule has stored, made before the rule of names would
// refuse them new (a queue in upper case, a name with a zero-width
// joiner): here they are checked as references (CheckStoredName,
// CheckQueueRef), and the caller checks with CheckKept, once it has read
// the schedule, that those it changes follow the rule of new names. A
// full replacement must not force a schedule onto another queue, away
// from its workers, to change its timing.
func (s *Settings) NormalizeUpdate() (*timetable.Timetable, error) {
	if err := CheckStoredName(s.Name); err != nil {
		return nil, err
	}
	if err := s.queueOrTarget(CheckQueueRef); err != nil {
		return nil, err
	}
	return s.normalize()
}

// CheckKept checks the name and queue of an update (NormalizeUpdate) of a
// schedule stored with name and queue: one it changes follows the rule of
// new names (CheckName, CheckNewQueue); one it keeps is taken as stored.
func (s *Settings) CheckKept(name, queue string) error {
	if s.Name != name {
		if err := CheckName(s.Name); err != nil {
			return err
		}
	}
	if _, target := record.QueueTarget(s.Queue); s.Queue != queue && !target {
		return CheckNewQueue(s.Queue)
	}
	return nil
}

// normalize is Normalize past the name and the queue.
func (s *Settings) normalize() (*timetable.Timetable, error) {
	switch s.Kind {
	case timetable.KindCron:
		if _, prefixed := timetable.ZonePrefix(s.Expr); s.TimeZone == "" && !prefixed {
			return nil, Invalid("time_zone", "a cron schedule needs a time zone (an IANA name such as Europe/Berlin, or UTC, or a CRON_TZ= prefix on the expression)")
		}
	case timetable.KindAt, timetable.KindEvery:
		if s.TimeZone == "" {
			s.TimeZone = "UTC"
		}
	default:
		return nil, Invalid("kind", "kind %q: want cron, at or every", s.Kind)
	}
	if !s.Anchor.IsZero() && s.Kind != timetable.KindEvery {
		return nil, Invalid("anchor", "an anchor only applies to an every schedule")
	}
	if s.Kind != timetable.KindCron && (s.DSTGap != "" || s.DSTRepeat != "") {
		// Name the option that was given, so a client can point at it.
		field := "dst_gap"
		if s.DSTGap == "" {
			field = "dst_repeat"
		}
		return nil, Invalid(field, "DST options only apply to a cron schedule")
	}
	if s.DSTGap == "" {
		s.DSTGap = timetable.GapSkip
	}
	if s.DSTRepeat == "" {
		s.DSTRepeat = timetable.RepeatFirst
	}
	sp, err := timetable.Parse(timetable.Definition{Kind: s.Kind, Expr: s.Expr, TimeZone: s.TimeZone, Anchor: s.Anchor, DSTGap: s.DSTGap, DSTRepeat: s.DSTRepeat})
	if err != nil {
		return nil, FromTimetable(err)
	}
	// Parse moved a CRON_TZ= prefix into the zone: keep that form, so the
	// schedule is stored and compared without the prefix.
	d := sp.Definition()
	s.Expr, s.TimeZone = d.Expr, d.TimeZone
	if first, never := sp.GapOnly(); never {
		// Created, it would be COMPLETED at once, having never fired.
		return nil, Invalid("cron", "cron expression %q never fires in %s with dst_gap skip: every wall time it names falls in a gap of the zone's clock (e.g. %s); use dst_gap shift to fire at the gap's end, or another time of day",
			d.Expr, d.TimeZone, strings.Replace(timetable.FormatWall(first.Wall), "T", " ", 1)[:16])
	}
	if len(s.Payload) > record.MaxPayload {
		return nil, Invalid("payload", "payload of %d bytes is over the limit of %d (256 KiB)", len(s.Payload), record.MaxPayload)
	}

	switch s.MisfirePolicy {
	case "":
		s.MisfirePolicy = record.MisfireFireOnce
	case record.MisfireSkip, record.MisfireFireOnce:
	case record.MisfireCatchUp:
		if s.CatchUpK < 1 || s.CatchUpK > MaxCatchUpK {
			return nil, Invalid("misfire_policy", "catch_up:%d: K must be 1 to %d", s.CatchUpK, MaxCatchUpK)
		}
	default:
		return nil, Invalid("misfire_policy", "%q: want skip, fire_once or catch_up:K", s.MisfirePolicy)
	}
	if s.MisfirePolicy != record.MisfireCatchUp && s.CatchUpK != 0 {
		return nil, Invalid("misfire_policy", "K only applies to catch_up")
	}
	if err := SetDuration("max_lateness", &s.MaxLateness, DefaultMaxLateness, time.Second, MaxSettingDuration); err != nil {
		return nil, err
	}
	switch s.OverlapPolicy {
	case "":
		s.OverlapPolicy = record.OverlapAllow
	case record.OverlapAllow, record.OverlapSkipIfRunning, record.OverlapQueueOne:
	default:
		return nil, Invalid("overlap_policy", "%q: want allow, skip_if_running or queue_one", s.OverlapPolicy)
	}
	if s.FlexibleWindow < 0 || s.FlexibleWindow > MaxFlexibleWindow || s.FlexibleWindow%time.Second != 0 {
		return nil, Invalid("flexible_window", "%s: must be whole seconds from 0 to 24h", s.FlexibleWindow)
	}
	r := &s.Retry
	switch {
	case r.MaxAttempts == 0:
		r.MaxAttempts = DefaultMaxAttempts
	case r.MaxAttempts < 0 || r.MaxAttempts > MaxAttempts:
		return nil, Invalid("max_attempts", "%d: must be 1 to %d", r.MaxAttempts, MaxAttempts)
	}
	if err := SetDuration("retry_base", &r.BackoffBase, DefaultRetryBase, time.Millisecond, MaxRetryBase); err != nil {
		return nil, err
	}
	if err := SetDuration("retry_cap", &r.BackoffCap, DefaultRetryCap, time.Millisecond, MaxRetryCap); err != nil {
		return nil, err
	}
	if r.BackoffCap < r.BackoffBase {
		return nil, Invalid("retry_cap", "%s is less than retry_base %s", r.BackoffCap, r.BackoffBase)
	}
	if err := SetDuration("retry_deadline", &r.Deadline, DefaultRetryDeadline, time.Second, MaxSettingDuration); err != nil {
		return nil, err
	}
	return sp, nil
}

// SetDuration fills in def for a zero *d and checks that any other value
// is from lo to hi and a whole number of milliseconds (the store's
// precision). Errors are *ValidationError of field.
func SetDuration(field string, d *time.Duration, def, lo, hi time.Duration) error {
	if *d == 0 {
		*d = def
		return nil
	}
	if *d < lo || *d > hi {
		return Invalid(field, "%s: must be from %s to %s", *d, lo, hi)
	}
	if *d%time.Millisecond != 0 {
		return Invalid(field, "%s: must be whole milliseconds", *d)
	}
	return nil
}
