package record

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOccurrenceIDPinned pins the id encoding. If this test fails, the
// change would give every firing a new id and break deduplication across an
// upgrade: do not update the expected values, revert the change. (They were
// computed independently of this package, from the encoding documented on
// OccurrenceID, when every id took one alphabet, before the first release.)
func TestOccurrenceIDPinned(t *testing.T) {
	at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC) // unix 1772953200
	for _, tc := range []struct {
		got, want string
	}{
		{OccurrenceID("sch_123", 1, at), "occ_g1kqq7jg8hrjds96tmofldd7"},
		{OccurrenceID("", 0, time.Unix(0, 0)), "occ_g0000000a6uo5ha2togmf89e"},
		{AttemptID("occ_x", 1), "att_fb0a1midmjm9j45hkcv3gribqc"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

func TestOccurrenceIDInputs(t *testing.T) {
	at := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)
	id := OccurrenceID("sch_1", 3, at)

	// The instant counts, not its zone or representation.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	if got := OccurrenceID("sch_1", 3, at.In(ny)); got != id {
		t.Errorf("same instant in New York: %s, want %s", got, id)
	}
	if got := OccurrenceID("sch_1", 3, at.Add(999*time.Millisecond)); got != id {
		t.Errorf("sub-second part changed the id: %s, want %s", got, id)
	}

	// Every input counts, and the length prefixes keep field boundaries.
	seen := map[string]string{id: "base"}
	for name, other := range map[string]string{
		"schedule":       OccurrenceID("sch_2", 3, at),
		"version":        OccurrenceID("sch_1", 4, at),
		"time":           OccurrenceID("sch_1", 3, at.Add(time.Second)),
		"negative time":  OccurrenceID("sch_1", 3, time.Unix(-1, 0)),
		"attempt of id":  AttemptID(id, 3),
		"prefix in id":   OccurrenceID("sch_1\x00", 3, at),
		"long schedule":  OccurrenceID("sch_1sch_1sch_1", 3, at),
		"version in id":  OccurrenceID("sch_13", 0, at),
		"another at 1":   AttemptID("occ_a", 1),
		"another at 2":   AttemptID("occ_a", 2),
		"attempt vs occ": AttemptID("sch_1", 3),
	} {
		if prev, dup := seen[other]; dup {
			t.Errorf("%s: id %s collides with %s", name, other, prev)
		}
		seen[other] = name
	}
	if len(id) != len("occ_")+8+16 {
		t.Errorf("id %q: want occ_, 8 characters of time and 16 of hash", id)
	}
}

// TestOccurrenceIDSortsByTime: ids compare like their scheduled times, so a
// burst of firings lands together in an id index.
func TestOccurrenceIDSortsByTime(t *testing.T) {
	times := []int64{-1 << 35, -86400, -1, 0, 1, 59, 60, 1772953200, 1772953201, 253402300799}
	for i := 1; i < len(times); i++ {
		a := OccurrenceID("sch_z", 9, time.Unix(times[i-1], 0))
		b := OccurrenceID("sch_a", 1, time.Unix(times[i], 0))
		if a >= b {
			t.Errorf("id at %d (%s) does not sort before id at %d (%s)", times[i-1], a, times[i], b)
		}
	}
}
