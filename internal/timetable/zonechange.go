package timetable

import "time"

// Cause says what kind of offset change made a wall time skipped, shifted
// or repeated. Most are daylight saving; some are a zone changing its
// standard offset (Moscow in 2011 and 2014) or its whole clock (Samoa
// crossing the date line in 2011, when 2011-12-30 did not exist), and a
// note calling those "DST" would send a reader looking for a DST rule that
// is not there.
type Cause uint8

// The causes of a gap or a repeat.
const (
	CauseNone Cause = iota
	// CauseDST: daylight saving began or ended.
	CauseDST
	// CauseZoneChange: the zone's offset moved for another reason (a new
	// standard offset, a jump across the date line): not daylight saving.
	CauseZoneChange
)

// String renders a Cause as the name used in previews and JSON: "dst",
// "zone_change", or "" for none.
func (c Cause) String() string {
	switch c {
	case CauseDST:
		return "dst"
	case CauseZoneChange:
		return "zone_change"
	}
	return ""
}

// maxDSTStep is the largest offset change still taken for daylight saving
// when the DST flag flips: Troll's is two hours, the largest in use. A
// flip with a larger change (Ust-Nera in 1981 went from +09 to +12, DST
// and a new standard offset at once) is a zone change.
const maxDSTStep = 2 * 3600

// OffsetChange is one change of a zone's UTC offset: the tz database's
// transition at At, with the offsets and DST flags on either side.
type OffsetChange struct {
	At             time.Time // the first instant of the new offset, UTC
	From, To       int       // offsets, seconds east of UTC
	FromDST, ToDST bool      // the tz database's isdst flag on each side
}

// Cause classifies the change: daylight saving when the tz database's DST
// flag flips and the offset moves by at most two hours; otherwise a zone
// change. The flag, not the size, is what tells the two apart: Moscow's
// 2011 and 2014 hour-long changes keep the flag (standard time both
// sides), Samoa's 2011 day-long jump does too (DST both sides), while a
// daylight-saving change always flips it (Dublin's "negative" DST
// included: winter is the flagged side there).
func (c OffsetChange) Cause() Cause {
	d := c.To - c.From
	if d < 0 {
		d = -d
	}
	if c.FromDST != c.ToDST && d <= maxDSTStep {
		return CauseDST
	}
	return CauseZoneChange
}

// changeAt describes the offset change whose first new instant is u.
func changeAt(loc *time.Location, u int64) OffsetChange {
	before, after := time.Unix(u-1, 0).In(loc), time.Unix(u, 0).In(loc)
	_, from := before.Zone()
	_, to := after.Zone()
	return OffsetChange{At: after.UTC(), From: from, To: to, FromDST: before.IsDST(), ToDST: after.IsDST()}
}

// causeAt is changeAt's Cause.
func causeAt(loc *time.Location, u int64) Cause { return changeAt(loc, u).Cause() }

// ChangeOf returns the offset change behind a cron firing's gap or repeat
// note: for a shifted firing the change at the gap's end (the firing
// itself), for the first instant of a repeat the change that follows it,
// for the second the change it follows. ok is false for a firing without
// such a note.
func (s *Timetable) ChangeOf(f Firing) (c OffsetChange, ok bool) {
	u := f.At.Unix()
	switch f.Note {
	case NoteGapShifted:
		return changeAt(s.loc, u), true
	case NoteRepeatFirst, NoteRepeatAll1:
		return changeAt(s.loc, periodAt(s.loc, u).end), true
	case NoteRepeatLast, NoteRepeatAll2:
		return changeAt(s.loc, periodAt(s.loc, u).start), true
	}
	return OffsetChange{}, false
}

// SkippedChange returns the offset change that made a skipped wall time
// not exist: the one at the end of its gap.
func (s *Timetable) SkippedChange(w SkippedWall) OffsetChange { return changeAt(s.loc, w.GapEnd) }
