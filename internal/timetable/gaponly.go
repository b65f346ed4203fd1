package timetable

import "time"

// settledRules is the instant from which the zone rules this package reads
// repeat every year: the compiled tz data lists each transition up to 2037
// and describes the years after by one yearly rule. An expression that
// finds no firing from here to the end of year 9999 finds none in any
// future year under the zone's present rules.
var settledRules = time.Date(2038, 1, 1, 0, 0, 0, 0, time.UTC)

// GapOnly reports whether a cron timetable whose dst_gap is skip names, in
// every year under its zone's present rules, only wall times that do not
// exist: "30 2 * 3 0#2" in America/New_York, where the second Sunday of
// March is always the day 02:30 is skipped. Such a schedule would never
// fire, which the calendar check at parse time cannot see (it knows no
// zone). first is the earliest of those wall times from 2038 on, for the
// message. With dst_gap shift every such time fires at the gap's end, so a
// shift timetable, or one that is not cron, is never gap-only.
func (s *Timetable) GapOnly() (first SkippedWall, gapOnly bool) {
	if s.def.Kind != KindCron || s.def.DSTGap != GapSkip {
		return SkippedWall{}, false
	}
	seen := false
	_, fires := s.NextObserved(settledRules, func(w SkippedWall) {
		if !seen {
			first, seen = w, true
		}
	})
	if fires || !seen {
		return SkippedWall{}, false
	}
	return first, true
}
