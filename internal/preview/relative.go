package preview

import (
	"fmt"
	"time"
)

// relUnits are the units of a relative time, largest first. A year is 365
// days: the column is for reading at a glance, and a whole count of days
// is exact where a calendar year would depend on the dates.
var relUnits = []struct {
	d    time.Duration
	name string
}{
	{365 * 24 * time.Hour, "y"},
	{24 * time.Hour, "d"},
	{time.Hour, "h"},
	{time.Minute, "min"},
	{time.Second, "s"},
}

// Relative says how far a firing is from the preview's from, as
// systemd-analyze calendar does: the largest unit and the next one when it
// is not zero, the rest dropped ("in 3 h 12 min", "in 2 d 4 h", "in 45 s").
// Zero is "now"; a negative duration reads "... ago". It is computed from
// the two instants it is given, never from the clock.
func Relative(d time.Duration) string {
	switch {
	case d == 0:
		return "now"
	case d < 0:
		return span(-d) + " ago"
	}
	return "in " + span(d)
}

// span renders a positive duration in at most two units, truncated to the
// second; under a second it is "0 s".
func span(d time.Duration) string {
	for i, u := range relUnits {
		if d < u.d {
			continue
		}
		s := fmt.Sprintf("%d %s", d/u.d, u.name)
		if i+1 < len(relUnits) {
			next := relUnits[i+1]
			if n := d % u.d / next.d; n > 0 {
				s += fmt.Sprintf(" %d %s", n, next.name)
			}
		}
		return s
	}
	return "0 s"
}
