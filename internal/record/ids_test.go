package record

import (
	"bytes"
	"encoding/binary"
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

// TestNewScheduleIDs: a range of ids is consecutive numbers of one
// millisecond, in ascending order, and stays in that millisecond when the
// random part drawn is near its end (it is drawn again).
func TestNewScheduleIDs(t *testing.T) {
	now := time.Date(2026, 3, 8, 7, 0, 0, 123e6, time.UTC)
	one, err := NewScheduleID(now, bytes.NewReader(bytes.Repeat([]byte{0x5a}, 10)))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := NewScheduleIDs(now, bytes.NewReader(bytes.Repeat([]byte{0x5a}, 10)), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1000 || ids[0] != one {
		t.Fatalf("%d ids, first %s; want 1000, the first as NewScheduleID mints it (%s)", len(ids), ids[0], one)
	}
	floor, ok := ScheduleIDTimeFloor(ids[0])
	if !ok {
		t.Fatalf("ScheduleIDTimeFloor(%s) not ok", ids[0])
	}
	for i, id := range ids {
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("id %d %s does not sort after %s", i, id, ids[i-1])
		}
		if i > 0 && idNumber(t, id)-idNumber(t, ids[i-1]) != 1 {
			t.Fatalf("id %d %s is not the number after %s", i, id, ids[i-1])
		}
		if f, _ := ScheduleIDTimeFloor(id); f != floor || id < floor {
			t.Fatalf("id %d %s: floor %s, want %s (at most the id)", i, id, f, floor)
		}
	}
	first, last, ok := ParseScheduleIDRange(ScheduleIDRange(ids[0], ids[999]))
	if !ok || first != ids[0] || last != ids[999] {
		t.Errorf("range round trip: %s %s %v", first, last, ok)
	}
	for _, bad := range []string{ids[0], ids[999] + ".." + ids[0], "sch_a..sch_bb", "x..y", ids[0] + ".."} {
		if _, _, ok := ParseScheduleIDRange(bad); ok {
			t.Errorf("ParseScheduleIDRange(%q) ok", bad)
		}
	}

	// The random part all ones but for its last byte: 1000 more would
	// carry into the time, so the next 10 bytes are drawn.
	near := append(bytes.Repeat([]byte{0xff}, 9), 0xf0)
	ids, err = NewScheduleIDs(now, bytes.NewReader(append(near, bytes.Repeat([]byte{1}, 10)...)), 1000)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := NewScheduleID(now, bytes.NewReader(bytes.Repeat([]byte{1}, 10)))
	if ids[0] != again {
		t.Errorf("near the end: first %s, want the second draw's %s", ids[0], again)
	}
	if _, err := NewScheduleIDs(now, bytes.NewReader(nil), 2); err == nil {
		t.Error("no randomness: want an error")
	}
}

// idNumber is the low 64 bits of a schedule id's number.
func idNumber(t *testing.T, id string) uint64 {
	t.Helper()
	raw, err := idEncoding.DecodeString(id[len(SchedulePrefix):])
	if err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint64(raw[8:])
}
