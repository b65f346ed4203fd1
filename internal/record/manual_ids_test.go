package record

import (
	"strings"
	"testing"
	"time"
)

// TestManualOccurrenceIDPinned pins the manual id encoding. A retried
// trigger (the same idempotency key) must name the same occurrence across
// an upgrade, so if this test fails, revert the change rather than update
// the expected values. (They were computed independently of this package,
// from the encoding documented on ManualOccurrenceID, when every id took
// one alphabet, before the first release.)
func TestManualOccurrenceIDPinned(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{ManualOccurrenceID("sch_123", "retry-me"), "occ_z06vb3ij3rbi2420oju1rrp76"},
		{ManualOccurrenceID("sch_123", "a"), "occ_z78236jvu5c4qtl4hg1hs0tfl"},
		{ManualOccurrenceID("", ""), "occ_z0qhr9jhek5e1rfbea32acj9i"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

// TestManualOccurrenceIDInputs: the id depends on the schedule and the key,
// every one of their bytes, and nothing else.
func TestManualOccurrenceIDInputs(t *testing.T) {
	id := ManualOccurrenceID("sch_1", "key-1")
	if again := ManualOccurrenceID("sch_1", "key-1"); again != id {
		t.Errorf("the same trigger twice: %s, then %s", id, again)
	}
	if !strings.HasPrefix(id, "occ_z") || len(id) != len("occ_z")+24 {
		t.Errorf("id %q: want occ_z and 24 characters of hash", id)
	}
	for _, c := range id[len("occ_z"):] {
		if !strings.ContainsRune("0123456789abcdefghijklmnopqrstuv", c) {
			t.Errorf("id %q: %q is not lower-case base32hex", id, c)
		}
	}

	seen := map[string]string{id: "base"}
	for name, other := range map[string]string{
		"key":                    ManualOccurrenceID("sch_1", "key-2"),
		"schedule":               ManualOccurrenceID("sch_2", "key-1"),
		"field boundary":         ManualOccurrenceID("sch_1k", "ey-1"),
		"swapped":                ManualOccurrenceID("key-1", "sch_1"),
		"empty key":              ManualOccurrenceID("sch_1", ""),
		"timetable id":           OccurrenceID("sch_1", 1, time.Unix(0, 0)),
		"timetable id, key-like": OccurrenceID("key-1", 1, time.Unix(0, 0)),
	} {
		if prev, dup := seen[other]; dup {
			t.Errorf("%s: id %s collides with %s", name, other, prev)
		}
		seen[other] = name
	}
}

// TestManualOccurrenceIDSortsAfterTimetable: a manual id never looks like
// a timetable id and sorts after every one of them, so in a listing by
// (scheduled_for, occurrence_id) a manual occurrence comes after the
// timetable's firing of the same second.
func TestManualOccurrenceIDSortsAfterTimetable(t *testing.T) {
	for _, sec := range []int64{-1 << 35, 0, 1772953200, 253402300799, 1<<39 - 1} {
		tt := OccurrenceID("sch_1", 1, time.Unix(sec, 0))
		for _, key := range []string{"", "a", "zzzz", "key-1"} {
			if m := ManualOccurrenceID("sch_1", key); m <= tt {
				t.Errorf("manual id %s (key %q) does not sort after timetable id %s (unix %d)", m, key, tt, sec)
			}
		}
	}
}
