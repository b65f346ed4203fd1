package timetable

import (
	"strings"
	"testing"
)

// TestNearestZone: an unknown zone name is answered with the name it was
// probably meant to be: another case of a real one, or one close enough
// for its length; nothing for a name like none.
func TestNearestZone(t *testing.T) {
	names := []string{"America/New_York", "Asia/Kolkata", "Europe/Berlin", "Europe/Paris", "US/Pacific", "UTC"}
	for _, tc := range []struct{ name, want string }{
		{"europe/berlin", "Europe/Berlin"},
		{"EUROPE/PARIS", "Europe/Paris"},
		{"Europe/Berln", "Europe/Berlin"},
		{"America/New York", "America/New_York"},
		{"US/Pacifc", "US/Pacific"},
		{"utc", "UTC"},
		{"UTX", "UTC"},
		{"Mars/Olympus", ""},
		// A city that is not a zone: eleven bytes allow two edits, and
		// Berlin is two away. The hint is a guess, and says so.
		{"Europe/Bern", "Europe/Berlin"},
		{"Asia/Calcuta", ""}, // an alias the list lacks, two edits from nothing in it
	} {
		got := nearestZone(names, tc.name)
		if got != tc.want {
			t.Errorf("nearestZone(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestUnknownZoneSuggests: LoadZone's error for a mistyped zone names the
// zone meant, from the tz database in use.
func TestUnknownZoneSuggests(t *testing.T) {
	if len(zones.Load().names()) == 0 {
		t.Skip("the tz database in use has no tzdata.zi to list its zones")
	}
	for _, tc := range []struct{ name, want string }{
		{"Europe/Berln", `time zone "Europe/Berln": unknown IANA zone; did you mean Europe/Berlin?`},
		{"europe/berlin", "did you mean Europe/Berlin?"},
		{"Mars/Olympus", `time zone "Mars/Olympus": unknown IANA zone`},
	} {
		_, err := LoadZone(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadZone(%q): %v, want %q", tc.name, err, tc.want)
		}
		if tc.name == "Mars/Olympus" && err != nil && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("LoadZone(%q): %v suggests a zone for a name like none", tc.name, err)
		}
	}
}
