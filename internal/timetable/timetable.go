// Package timetable is sched's time engine: it parses and validates the three
// schedule kinds (cron in an IANA zone, a one-time "at", a fixed "every"
// interval) and answers one question fast and exactly: given an instant, when
// is the next firing, and why is it where it is?
//
// Cron is local wall-clock time. Wall times are resolved to instants by
// looking at the zone's offsets, never by time.Date, so a wall time in a
// daylight-saving gap or repeat is a decision made by explicit policy
// (GapPolicy, RepeatPolicy) and reported in the firing's Note.
package timetable

import (
	"fmt"
	"strings"
	"time"
)

// Kind is the kind of a schedule.
type Kind string

// The schedule kinds: a cron expression, a single instant (at), and a fixed
// interval (every).
const (
	KindCron  Kind = "cron"
	KindAt    Kind = "at"
	KindEvery Kind = "every"
)

// GapPolicy says what a cron wall time that does not exist (spring forward)
// does.
type GapPolicy string

// RepeatPolicy says what a cron wall time that happens twice (fall back) does.
type RepeatPolicy string

const (
	// GapSkip: the nonexistent wall time does not fire that day (default).
	GapSkip GapPolicy = "skip"
	// GapShift: it fires at the first instant after the gap.
	GapShift GapPolicy = "shift"

	// RepeatFirst: one firing, at the first instant (default).
	RepeatFirst RepeatPolicy = "first"
	// RepeatLast: one firing, at the second instant.
	RepeatLast RepeatPolicy = "last"
	// RepeatAll: a firing at each instant.
	RepeatAll RepeatPolicy = "all"
)

// Limits on intervals: whole seconds, from one second to ten years.
const (
	MinEvery = time.Second
	MaxEvery = 10 * 365 * 24 * time.Hour
)

// Definition is a schedule's timing as a user writes it.
type Definition struct {
	Kind Kind
	// Expr is the cron expression (KindCron), the RFC 3339 instant (KindAt)
	// or the Go duration (KindEvery).
	Expr string
	// TimeZone is the IANA zone; cron reads wall time in it, the other kinds
	// only use it to show local times. A cron Expr's CRON_TZ= prefix may
	// give it instead (see Parse).
	TimeZone string
	// Anchor is the instant an every-interval counts from (zero: the Unix
	// epoch, so "every 1h" fires on the hour in UTC).
	Anchor    time.Time
	DSTGap    GapPolicy    // "" means GapSkip
	DSTRepeat RepeatPolicy // "" means RepeatFirst
}

// Timetable is a validated, compiled schedule timing. It is immutable and safe
// for concurrent use.
type Timetable struct {
	def    Definition
	loc    *time.Location
	zc     *zoneCache
	cron   *cronExpr
	at     int64 // KindAt: unix seconds
	anchor int64 // KindEvery
	every  int64 // KindEvery: seconds
}

// NoteKind classifies why a firing is where it is.
type NoteKind uint8

// The decisions a firing can carry. A gap or a repeat is mostly daylight
// saving; Firing.Cause says when it is a zone change instead.
const (
	NoteNone          NoteKind = iota
	NoteGapShifted             // the wall time did not exist; fired at the end of the gap
	NoteRepeatFirst            // the wall time happened twice; fired at the first only
	NoteRepeatLast             // ... fired at the second only
	NoteRepeatAll1             // ... fired at both; this is the first
	NoteRepeatAll2             // ... fired at both; this is the second
	NoteOffsetChanged          // every: the zone's offset changed since the last firing
)

// Firing is one computed firing time.
type Firing struct {
	// At is the instant, in UTC.
	At time.Time
	// Wall is the nominal wall time (cron) in wall seconds; for a shifted
	// firing it is the wall time that did not exist.
	Wall int64
	Note NoteKind
	// Cause is, for a gap or repeat note, the kind of offset change behind
	// it: daylight saving, or a zone change that is not (ChangeOf has the
	// offsets).
	Cause Cause
	// Merged counts the other matching wall times folded into this shifted
	// firing: later ones in the same gap, and the wall time at the gap's end
	// when it matches too (*/15 through 02:00-03:00 gives 4).
	Merged int
	// PrevOffset is, for NoteOffsetChanged, the offset of the previous firing.
	PrevOffset int
}

// SkippedWall is a matching cron wall time that produced no firing because
// it fell in a gap (daylight saving, or a zone change: Cause) under GapSkip.
type SkippedWall struct {
	Wall   int64 // wall seconds
	GapEnd int64 // unix seconds of the first instant after the gap
	Cause  Cause // what made the gap
}

// Parse validates and compiles a definition. Errors are *InvalidError and
// name the bad part.
//
// A cron expression may name its zone itself, as Kubernetes CronJob and
// robfig/cron write it ("CRON_TZ=Europe/Berlin 0 9 * * *", or "TZ=..."):
// Parse moves the prefix into TimeZone, so Definition returns the
// expression without it and the zone set. A TimeZone given as well must be
// the same zone. This is the one place the prefix is read; every caller
// (the API, schedule files, schedctl's offline checks and preview) gets it
// through here.
func Parse(d Definition) (*Timetable, error) {
	d, err := applyZonePrefix(d)
	if err != nil {
		return nil, err
	}
	if d.DSTGap == "" {
		d.DSTGap = GapSkip
	}
	if d.DSTRepeat == "" {
		d.DSTRepeat = RepeatFirst
	}
	switch d.DSTGap {
	case GapSkip, GapShift:
	default:
		return nil, invalid("dst_gap", "dst_gap %q: want skip or shift", d.DSTGap)
	}
	switch d.DSTRepeat {
	case RepeatFirst, RepeatLast, RepeatAll:
	default:
		return nil, invalid("dst_repeat", "dst_repeat %q: want first, last or all", d.DSTRepeat)
	}
	loc, err := LoadZone(d.TimeZone)
	if err != nil {
		return nil, err
	}
	s := &Timetable{def: d, loc: loc, zc: cacheFor(loc)}
	switch d.Kind {
	case KindCron:
		if s.cron, err = parseCron(d.Expr); err != nil {
			return nil, err
		}
	case KindAt:
		t, err := ParseInstant("at", d.Expr)
		if err != nil {
			return nil, err
		}
		if err := wholeSecond("at", t); err != nil {
			return nil, err
		}
		s.at = t.Unix()
	case KindEvery:
		iv, err := ParseEvery(d.Expr)
		if err != nil {
			return nil, err
		}
		s.every = int64(iv / time.Second)
		if !d.Anchor.IsZero() {
			if err := checkYear("anchor", d.Anchor); err != nil {
				return nil, err
			}
			if err := wholeSecond("anchor", d.Anchor); err != nil {
				return nil, err
			}
			s.anchor = d.Anchor.Unix()
			if s.anchor > lastEvery {
				// The anchor is the first firing once it is ahead; past
				// lastEvery there is none, and the schedule would be
				// created already finished, having never fired.
				return nil, invalid("anchor", "anchor %s: after %s, the last instant an every schedule can fire at, so it would never fire",
					d.Anchor.UTC().Format(time.RFC3339), LastEveryInstant().Format(time.RFC3339))
			}
		}
	default:
		return nil, invalid("kind", "schedule kind %q: want cron, at or every", d.Kind)
	}
	return s, nil
}

// LastEveryInstant is the last instant an every schedule can fire at,
// 9999-12-31T09:59:59Z: a firing's wall time must be expressible (year
// 9999 at most) in every zone, and offsets reach +14h. Callers name it
// when they refuse a schedule that would have no firing before it.
func LastEveryInstant() time.Time { return time.Unix(lastEvery, 0).UTC() }

// ParseEvery parses an every-interval: a Go duration of whole seconds between
// MinEvery and MaxEvery.
func ParseEvery(s string) (time.Duration, error) {
	iv, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, invalid("every", "every %q: not a duration (use e.g. 90s, 15m, 24h)", s)
	}
	switch {
	case iv < MinEvery:
		return 0, invalid("every", "every %q: must be at least 1s", s)
	case iv > MaxEvery:
		return 0, invalid("every", "every %q: must be at most %s (10 years)", s, MaxEvery)
	case iv%time.Second != 0:
		return 0, invalid("every", "every %q: must be a whole number of seconds", s)
	}
	return iv, nil
}

// ParseInstant parses an RFC 3339 timestamp (any offset) for the named part,
// refusing years outside 1..9999.
func ParseInstant(part, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, invalid(part, "%s %q: not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)", part, s)
	}
	if err := checkYear(part, t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// wholeSecond refuses a fraction of a second: firings are whole seconds, and
// rounding either way would fire before the instant asked for or move it.
func wholeSecond(part string, t time.Time) error {
	if t.Nanosecond() != 0 {
		return invalid(part, "%s %s: has a fraction of a second; schedules fire on whole seconds", part, t.Format(time.RFC3339Nano))
	}
	return nil
}

func checkYear(part string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return invalid(part, "%s %s: year %d is outside 1-9999", part, t.Format(time.RFC3339), y)
	}
	return nil
}

// Definition returns the definition the timetable was parsed from, with defaults
// filled in.
func (s *Timetable) Definition() Definition { return s.def }

// Location returns the schedule's zone.
func (s *Timetable) Location() *time.Location { return s.loc }

// Canonical returns the cron expression in its six-field numeric form, or
// "" for other kinds.
func (s *Timetable) Canonical() string {
	if s.cron == nil {
		return ""
	}
	return s.cron.canonical
}

// Next returns the first firing strictly after the instant after; ok is
// false when there is none (an "at" in the past, or past year 9999).
func (s *Timetable) Next(after time.Time) (f Firing, ok bool) {
	return s.next(after.Unix(), nil)
}

// NextObserved is Next, also reporting each matching wall time skipped by a
// gap (daylight saving or a zone change) between after and the returned
// firing.
func (s *Timetable) NextObserved(after time.Time, skipped func(SkippedWall)) (Firing, bool) {
	return s.next(after.Unix(), skipped)
}

func (s *Timetable) next(after int64, skipped func(SkippedWall)) (Firing, bool) {
	switch s.def.Kind {
	case KindAt:
		if s.at > after {
			return Firing{At: time.Unix(s.at, 0).UTC(), Wall: s.at + offsetAt(s.loc, s.at)}, true
		}
		return Firing{}, false
	case KindEvery:
		return s.nextEvery(after)
	}
	return s.nextCron(after, skipped)
}

func offsetAt(loc *time.Location, u int64) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

func (s *Timetable) nextEvery(after int64) (Firing, bool) {
	k := int64(0)
	if after >= s.anchor {
		k = (after-s.anchor)/s.every + 1
	}
	at := s.anchor + k*s.every
	if at > lastEvery || at < s.anchor {
		return Firing{}, false
	}
	f := Firing{At: time.Unix(at, 0).UTC(), Wall: at + offsetAt(s.loc, at)}
	if prev := at - s.every; prev >= s.anchor {
		if po := offsetAt(s.loc, prev); po != f.Wall-at {
			f.Note, f.PrevOffset = NoteOffsetChanged, int(po)
		}
	}
	return f, true
}

// nextCron walks matching wall times upward from the earliest wall time an
// instant after "after" can have, resolves each to instants under the DST
// policies, and keeps the earliest instant after "after". Under every policy
// but RepeatAll the mapping from wall time to instant is monotone, so the
// first hit is the answer; under RepeatAll a repeat's second instant can come
// after later wall times' first instants, so the walk goes on until a wall
// time's earliest instant passes the best found.
func (s *Timetable) nextCron(after int64, skipped func(SkippedWall)) (Firing, bool) {
	c := s.cron
	p := s.zc.periodAt(after)
	// Fast path: a period that started well before and ends well after; every
	// wall time mapping into its middle has exactly one instant.
	fastLo, fastHi := p.start+maxOffsetSwing, p.end-maxOffsetSwing
	var w int64
	if after >= fastLo && after < fastHi {
		w = after + p.off + 1
	} else {
		// Near a transition: start from the smallest offset nearby, so a
		// wall time repeated after "after" is not missed.
		zw := window(s.loc, after, after+maxOffsetSwing)
		minOff := p.off
		for i := 0; i < zw.n; i++ {
			minOff = min(minOff, zw.p[i].off)
		}
		w = after + minOff + 1
	}
	var best Firing
	found := false
	for {
		var ok bool
		if w, ok = c.nextWall(w); !ok {
			return best, found
		}
		if u := w - p.off; u >= fastLo && u < fastHi {
			switch {
			case u > maxWall || found && u >= best.At.Unix():
				return best, found
			case u <= after:
				w++
				continue
			}
			return Firing{At: time.Unix(u, 0).UTC(), Wall: w}, true
		}
		r := resolve(s.loc, w)
		var cand [2]Firing
		n := 0
		switch {
		case r.n == 1:
			cand[0], n = Firing{At: time.Unix(r.at[0], 0).UTC(), Wall: w}, 1
		case r.n == 2 && s.def.DSTRepeat == RepeatFirst:
			cand[0], n = Firing{At: time.Unix(r.at[0], 0).UTC(), Wall: w, Note: NoteRepeatFirst, Cause: causeAt(s.loc, r.change)}, 1
		case r.n == 2 && s.def.DSTRepeat == RepeatLast:
			cand[0], n = Firing{At: time.Unix(r.at[1], 0).UTC(), Wall: w, Note: NoteRepeatLast, Cause: causeAt(s.loc, r.change)}, 1
		case r.n == 2:
			c := causeAt(s.loc, r.change)
			cand[0] = Firing{At: time.Unix(r.at[0], 0).UTC(), Wall: w, Note: NoteRepeatAll1, Cause: c}
			cand[1], n = Firing{At: time.Unix(r.at[1], 0).UTC(), Wall: w, Note: NoteRepeatAll2, Cause: c}, 2
		case s.def.DSTGap == GapShift:
			cand[0], n = Firing{At: time.Unix(r.gapEnd, 0).UTC(), Wall: w, Note: NoteGapShifted, Cause: causeAt(s.loc, r.gapEnd)}, 1
		default:
			if skipped != nil && r.gapEnd > after && (!found || r.gapEnd <= best.At.Unix()) {
				skipped(SkippedWall{Wall: w, GapEnd: r.gapEnd, Cause: causeAt(s.loc, r.gapEnd)})
			}
		}
		if n > 0 && cand[0].At.Unix() > maxWall {
			return best, found
		}
		if n > 0 && found && cand[0].At.Unix() >= best.At.Unix() {
			if cand[0].At.Equal(best.At) && best.Note == NoteGapShifted {
				best.Merged++ // another wall time folded into the shifted firing
				w++
				continue
			}
			return best, true
		}
		for i := 0; i < n; i++ {
			if u := cand[i].At.Unix(); u > after && (!found || u < best.At.Unix()) {
				best, found = cand[i], true
				break
			}
		}
		if found && n > 0 && best.At.Equal(cand[0].At) && best.Note != NoteGapShifted {
			return best, true // monotone from here on
		}
		w++
	}
}

// String renders a NoteKind as the event name used in previews and JSON.
func (k NoteKind) String() string {
	switch k {
	case NoteGapShifted:
		return "gap_shifted"
	case NoteRepeatFirst:
		return "repeat_first"
	case NoteRepeatLast:
		return "repeat_last"
	case NoteRepeatAll1, NoteRepeatAll2:
		return "repeat_all"
	case NoteOffsetChanged:
		return "offset_changed"
	}
	return ""
}

// FormatWall renders wall seconds as an RFC 3339 local time without offset.
func FormatWall(w int64) string {
	y, mo, d, h, mi, sec := splitWall(w)
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", y, mo, d, h, mi, sec)
}
