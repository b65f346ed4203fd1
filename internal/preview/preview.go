// Package preview computes and renders the next firings of a schedule
// definition, with a note on every daylight-saving decision. It is what
// `schedctl preview` prints offline and what create and update show.
package preview

import (
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/timetable"
)

// Count limits: the default number of firings and the most one preview may ask.
const (
	DefaultCount = 10
	MaxCount     = 10000
)

// Request asks for the firings of Def strictly after From.
type Request struct {
	Def   timetable.Definition
	From  time.Time
	Count int
}

// Result is a computed preview. Its JSON form is a stable contract for
// scripts: fields are only ever added.
type Result struct {
	Kind       timetable.Kind         `json:"kind"`
	Expression string                 `json:"expression"`
	TimeZone   string                 `json:"time_zone"`
	TZVersion  string                 `json:"tz_version"`
	Canonical  string                 `json:"canonical,omitempty"`
	Anchor     *time.Time             `json:"anchor,omitempty"`
	DSTGap     timetable.GapPolicy    `json:"dst_gap,omitempty"`
	DSTRepeat  timetable.RepeatPolicy `json:"dst_repeat,omitempty"`
	From       time.Time              `json:"from"`
	Firings    []Firing               `json:"firings"`
	DSTEvents  []Event                `json:"dst_events"`
	// End says why there are fewer firings than asked for, if there are.
	End string `json:"end,omitempty"`
}

// Firing is one firing: the instant in UTC, the same instant in the
// schedule's zone, and the DST note when a decision placed it.
type Firing struct {
	ScheduledFor time.Time `json:"scheduled_for"`
	// Local is the same instant in the schedule's zone, RFC 3339 with a
	// numeric offset (never "Z": London in winter is +00:00, not UTC).
	Local string `json:"local"`
	Note  string `json:"note,omitempty"`
	// Event is the machine-readable kind of the note (gap_shifted,
	// repeat_first, repeat_last, repeat_all, offset_changed).
	Event string `json:"event,omitempty"`
	// Cause is, for a gap or repeat event, what moved the clock: "dst"
	// (daylight saving) or "zone_change" (the zone's offset moved for
	// another reason, e.g. a new standard offset).
	Cause string `json:"cause,omitempty"`
	// local is the instant in the zone, for the table.
	local time.Time
}

// Event is one clock-change decision: a skipped, shifted or repeated wall
// time, or an offset change under an every-interval. Most are daylight
// saving; Cause tells the others apart.
type Event struct {
	// Local is the wall time in the zone, without offset: a skipped one has
	// no instant to attach an offset to.
	Local string `json:"local"`
	Event string `json:"event"`
	// Cause is "dst" or "zone_change" for a gap or repeat (see Firing.Cause).
	Cause string `json:"cause,omitempty"`
	// Note says in words what happened, for a gap_skipped event (the other
	// events' firings carry their note).
	Note string `json:"note,omitempty"`
	// ScheduledFor is the firing the decision produced, if any.
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
	// before is the index of the firing this event was met on the way to.
	before int
}

// LocalLayout formats local times: RFC 3339 with a numeric offset always.
const LocalLayout = "2006-01-02T15:04:05-07:00"

// Event names beyond timetable.NoteKind's.
const EventGapSkipped = "gap_skipped"

// Compute validates the definition and computes the preview.
func Compute(req Request) (*Result, error) {
	if req.Count == 0 {
		req.Count = DefaultCount
	}
	if req.Count < 1 || req.Count > MaxCount {
		return nil, &timetable.InvalidError{Field: "count", Msg: fmt.Sprintf("count %d: must be between 1 and %d", req.Count, MaxCount)}
	}
	s, err := timetable.Parse(req.Def)
	if err != nil {
		return nil, err
	}
	def := s.Definition()
	loc := s.Location()
	res := &Result{
		Kind:       def.Kind,
		Expression: def.Expr,
		TimeZone:   def.TimeZone,
		TZVersion:  timetable.TZVersion(),
		Canonical:  s.Canonical(),
		From:       req.From.UTC(),
		Firings:    make([]Firing, 0, req.Count),
		DSTEvents:  []Event{},
	}
	switch def.Kind {
	case timetable.KindCron:
		res.DSTGap, res.DSTRepeat = def.DSTGap, def.DSTRepeat
	case timetable.KindEvery:
		a := def.Anchor.UTC()
		if def.Anchor.IsZero() {
			a = time.Unix(0, 0).UTC()
		}
		res.Anchor = &a
	}
	skipped := func(w timetable.SkippedWall) {
		res.DSTEvents = append(res.DSTEvents, Event{Local: timetable.FormatWall(w.Wall), Event: EventGapSkipped,
			Cause: w.Cause.String(), Note: skippedText(s, w), before: len(res.Firings)})
	}
	after := req.From
	for len(res.Firings) < req.Count {
		f, ok := s.NextObserved(after, skipped)
		if !ok {
			res.End = endReason(def.Kind)
			break
		}
		after = f.At
		pf := Firing{ScheduledFor: f.At, Local: f.At.In(loc).Format(LocalLayout), local: f.At.In(loc), Note: noteText(s, f),
			Event: f.Note.String(), Cause: f.Cause.String()}
		res.Firings = append(res.Firings, pf)
		if f.Note != timetable.NoteNone && f.Note != timetable.NoteRepeatAll2 {
			at := f.At
			res.DSTEvents = append(res.DSTEvents, Event{Local: timetable.FormatWall(f.Wall), Event: f.Note.String(), Cause: f.Cause.String(), ScheduledFor: &at})
		}
	}
	return res, nil
}

func endReason(k timetable.Kind) string {
	if k == timetable.KindAt {
		return "an at schedule fires once; no firing after from"
	}
	return "no firing before the end of year 9999"
}

// noteText explains a firing's clock-change decision in words.
func noteText(s *timetable.Timetable, f timetable.Firing) string {
	loc := s.Location()
	hm := timetable.FormatWall(f.Wall)[11:]
	if hm[6:] == "00" {
		hm = hm[:5]
	}
	why := func(dst string) string { // the parenthesis saying what moved the clock
		if c, ok := s.ChangeOf(f); ok && f.Cause == timetable.CauseZoneChange {
			return "(" + zoneChangeText(loc.String(), c) + ")"
		}
		return "(" + dst + ")"
	}
	switch f.Note {
	case timetable.NoteGapShifted:
		s := fmt.Sprintf("%s does not exist %s; shifted to the first instant after the gap", hm, why("DST gap"))
		if f.Merged > 0 {
			s += fmt.Sprintf(", merged with %d later wall time(s)", f.Merged)
		}
		return s
	case timetable.NoteRepeatFirst:
		return fmt.Sprintf("%s happens twice %s; fires at the first only", hm, why("DST repeat"))
	case timetable.NoteRepeatLast:
		return fmt.Sprintf("%s happens twice %s; fires at the second only", hm, why("DST repeat"))
	case timetable.NoteRepeatAll1:
		return fmt.Sprintf("%s happens twice %s; first of two firings", hm, why("DST repeat"))
	case timetable.NoteRepeatAll2:
		return fmt.Sprintf("%s happens twice %s; second of two firings", hm, why("DST repeat"))
	case timetable.NoteOffsetChanged:
		_, off := f.At.In(loc).Zone()
		return fmt.Sprintf("UTC offset changed from %s to %s; the interval is elapsed time, so local time moved", fmtOffset(f.PrevOffset), fmtOffset(off))
	}
	return ""
}

func fmtOffset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("%c%02d:%02d", sign, sec/3600, sec/60%60)
}
