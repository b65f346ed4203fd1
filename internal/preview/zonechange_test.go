package preview

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/timetable"
)

// TestZoneChangeText: the words for an offset change that is not daylight
// saving: the offsets as people write them, and the wall times the change
// removed (whole days by date) or doubled.
func TestZoneChangeText(t *testing.T) {
	t.Parallel()
	const h = 3600
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name string
		zone string
		c    timetable.OffsetChange
		want string
	}{
		{"a whole day skipped", "Pacific/Apia", timetable.OffsetChange{At: at("2011-12-30T10:00:00Z"), From: -10 * h, To: 14 * h},
			"Pacific/Apia moved from UTC-10 to UTC+14, not daylight saving: 2011-12-30 did not exist"},
		{"an hour skipped", "Europe/Moscow", timetable.OffsetChange{At: at("2011-03-26T23:00:00Z"), From: 3 * h, To: 4 * h},
			"Europe/Moscow moved from UTC+3 to UTC+4, not daylight saving: 2011-03-27 02:00 to 03:00 did not exist"},
		{"an hour repeated", "Europe/Moscow", timetable.OffsetChange{At: at("2014-10-25T22:00:00Z"), From: 4 * h, To: 3 * h},
			"Europe/Moscow moved from UTC+4 to UTC+3, not daylight saving: 2014-10-26 01:00 to 02:00 happened twice"},
		{"two days skipped", "Somewhere/Far", timetable.OffsetChange{At: at("2030-01-01T00:00:00Z"), From: -24 * h, To: 24 * h},
			"Somewhere/Far moved from UTC-24 to UTC+24, not daylight saving: 2029-12-31 to 2030-01-01 did not exist"},
		{"across midnight, half hours", "Asia/Somewhere", timetable.OffsetChange{At: at("2030-01-01T18:00:00Z"), From: 5*h + 1800, To: 7 * h},
			"Asia/Somewhere moved from UTC+5:30 to UTC+7, not daylight saving: 2030-01-01 23:30 to 2030-01-02 01:00 did not exist"},
		{"to UTC, seconds kept", "Africa/Somewhere", timetable.OffsetChange{At: at("1960-01-01T00:00:00Z"), From: -1*h - 30, To: 0},
			"Africa/Somewhere moved from UTC-1:00:30 to UTC+0, not daylight saving: 1959-12-31 22:59:30 to 1960-01-01 00:00 did not exist"},
	}
	for _, tc := range cases {
		if got := zoneChangeText(tc.zone, tc.c); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
