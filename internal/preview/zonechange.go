package preview

import (
	"fmt"
	"strings"

	"github.com/sched-dev/sched/internal/timetable"
)

// Words for an offset change that is not daylight saving: a zone taking a
// new standard offset (Moscow 2011, 2014) or jumping across the date line
// (Samoa 2011). Calling those a "DST gap" would send a reader looking for
// a daylight-saving rule that is not there.

// skippedText is the note of a wall time skipped by a gap: the DST wording
// the table always had, or what the zone did.
func skippedText(s *timetable.Timetable, w timetable.SkippedWall) string {
	if w.Cause != timetable.CauseZoneChange {
		return "does not exist (DST gap); no firing that day"
	}
	return "does not exist (" + zoneChangeText(s.Location().String(), s.SkippedChange(w)) + "); no firing that day"
}

// zoneChangeText says what a change that is not daylight saving did:
// "Pacific/Apia moved from UTC-10 to UTC+14, not daylight saving:
// 2011-12-30 did not exist".
func zoneChangeText(zone string, c timetable.OffsetChange) string {
	s := fmt.Sprintf("%s moved from %s to %s, not daylight saving", zone, utcOffset(c.From), utcOffset(c.To))
	at := c.At.Unix()
	if c.To > c.From {
		return s + ": " + wallSpan(at+int64(c.From), at+int64(c.To)) + " did not exist"
	}
	return s + ": " + wallSpan(at+int64(c.To), at+int64(c.From)) + " happened twice"
}

// wallSpan names the wall times [from, to): whole days by date
// ("2011-12-30", "2011-12-30 to 2011-12-31"), else the times
// ("2011-03-27 02:00 to 03:00", with the date again when it differs).
func wallSpan(from, to int64) string {
	const day = 86400
	a, b := strings.Replace(timetable.FormatWall(from), "T", " ", 1), strings.Replace(timetable.FormatWall(to), "T", " ", 1)
	if from%day == 0 && to%day == 0 {
		last := strings.Replace(timetable.FormatWall(to-day), "T", " ", 1)[:10]
		if last == a[:10] {
			return a[:10]
		}
		return a[:10] + " to " + last
	}
	trim := func(s string) string { return strings.TrimSuffix(s, ":00") } // 02:00:00 -> 02:00
	if a[:10] == b[:10] {
		return trim(a) + " to " + trim(b[11:])
	}
	return trim(a) + " to " + trim(b)
}

// utcOffset spells an offset as people write a zone's: UTC+14, UTC-10,
// UTC+5:30, UTC+0, and with seconds for the old local mean times that
// have them (UTC-1:00:30).
func utcOffset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	switch h, m, s := sec/3600, sec/60%60, sec%60; {
	case s != 0:
		return fmt.Sprintf("UTC%s%d:%02d:%02d", sign, h, m, s)
	case m != 0:
		return fmt.Sprintf("UTC%s%d:%02d", sign, h, m)
	default:
		return fmt.Sprintf("UTC%s%d", sign, h)
	}
}
