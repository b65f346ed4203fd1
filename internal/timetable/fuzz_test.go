package timetable

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Fuzz targets: no input string may panic Parse or Next or make them run
// long. The seed corpus runs with every `go test`; run longer with
//
//	go test ./internal/timetable -run '^$' -fuzz FuzzParse -fuzztime 60s
//	go test ./internal/timetable -run '^$' -fuzz FuzzNext -fuzztime 60s
//
// A crasher is written to testdata/fuzz/<Fuzz>/ and kept there.

// fuzzLimit bounds one Parse plus one Next. Both take microseconds; the
// bound leaves room for coverage instrumentation and a busy machine while
// still catching a search that runs away (gronx spends milliseconds).
const fuzzLimit = time.Second

// fuzzFrom is the fixed instant FuzzParse asks for the next firing after.
var fuzzFrom = time.Date(2026, 5, 17, 12, 34, 56, 0, time.UTC)

// FuzzParse: arbitrary expression and zone strings through Parse. It must
// not panic, must be fast, must reject with a non-empty *InvalidError, and an
// accepted schedule must behave: a cron has a next firing after a 2026
// instant (every accepted expression fires before year 9999), the firing
// matches the expression, and its time marshals to JSON. (A cron whose
// every matching wall time falls in a DST gap fires only with dst_gap
// shift; under skip it has none, which is checked as such.)
func FuzzParse(f *testing.F) {
	seeds := []struct {
		expr, zone string
		kind       uint8 // 0 cron, 1 at, 2 every
	}{
		{"0 9 * * MON-FRI", "America/New_York", 0},
		{"*/5 * * * *", "UTC", 0},
		{"0 0 29 2 *", "UTC", 0},
		{"0 0 31 2 *", "UTC", 0},
		{"0 0 30 2 *", "Europe/Berlin", 0},
		{"0 0 31 4,6,9,11 *", "UTC", 0},
		{"59 23 31 12 *", "Pacific/Kiritimati", 0},
		{"30 2 * * *", "America/New_York", 0},
		{"0 0 * * *", "America/Santiago", 0},
		{"15,45 1,2 * * *", "Australia/Lord_Howe", 0},
		{"0 12 30 12 *", "Pacific/Apia", 0},
		{"*/0 * * * *", "UTC", 0},
		{"*/7 */13 * * * *", "Asia/Kolkata", 0},
		{"0 0 ? * 7", "UTC", 0},
		{"0 0 L * *", "UTC", 0},
		{"0 0 * * 5#2", "UTC", 0},
		{"0 0 L-3 * *", "UTC", 0},
		{"0 0 L-30 2 *", "UTC", 0},
		{"0 0 15W * *", "America/New_York", 0},
		{"0 0 30W 2 *", "UTC", 0},
		{"0 0 LW 2 *", "Europe/London", 0},
		{"30 2 * 3 0#2", "America/New_York", 0},
		{"0 0 * 2 1#5", "UTC", 0},
		{"0 0 * * FRIL", "UTC", 0},
		{"0 0 L,15 * 1#1,3#3", "UTC", 0},
		{"0 0 LW * */6", "UTC", 0},
		{"0 0 * * 5#6", "UTC", 0},
		{"*/15, * * * *", "UTC", 0},
		{"30 15 31 12 * 2024", "UTC", 0},
		{"@every 5m", "UTC", 0},
		{"0 0 * * friday", "UTC", 0},
		{"@daily", "Europe/London", 0},
		{"@REBOOT", "UTC", 0},
		{"0 5 3 4 */0004", "UTC", 0},
		{"1,,2 * * * *", "UTC", 0},
		{strings.Repeat("1,", 200) + "1 * * * *", "UTC", 0},
		{secondsList(64) + " * * * * *", "UTC", 0},
		{"* * * * *", "", 0},
		{"* * * * *", "Local", 0},
		{"* * * * *", "../../etc/passwd", 0},
		{"* * * * *", "/etc/localtime", 0},
		{"* * * * *", "America/Argentina/../../../etc/passwd", 0},
		{"* * * * *", "Mars/Olympus", 0},
		{"* * * * *", strings.Repeat("A", 1024), 0},
		{"2027-03-14T09:00:00-04:00", "America/New_York", 1},
		{"2020-01-01T00:00:00Z", "UTC", 1},
		{"0000-01-01T00:00:00Z", "UTC", 1},
		{"9999-12-31T23:59:59Z", "UTC", 1},
		{"10000-01-01T00:00:00Z", "UTC", 1},
		{"90s", "UTC", 2},
		{"24h", "America/New_York", 2},
		{"9999999999h", "UTC", 2},
		{"1500ms", "UTC", 2},
		{"-1s", "UTC", 2},
	}
	for _, s := range seeds {
		f.Add(s.expr, s.zone, s.kind)
	}
	kinds := [...]Kind{KindCron, KindAt, KindEvery}
	f.Fuzz(func(t *testing.T, expr, zone string, kind uint8) {
		k := kinds[int(kind)%len(kinds)]
		start := time.Now()
		s, err := Parse(Definition{Kind: k, Expr: expr, TimeZone: zone})
		if err != nil {
			ie, ok := err.(*InvalidError)
			if !ok {
				t.Fatalf("Parse(%s %q, %q): error %T %v, want *InvalidError", k, expr, zone, err, err)
			}
			if ie.Msg == "" || ie.Field == "" {
				t.Fatalf("Parse(%s %q, %q): empty InvalidError %+v", k, expr, zone, ie)
			}
			if s != nil {
				t.Fatalf("Parse(%s %q, %q): a timetable together with error %v", k, expr, zone, err)
			}
			if d := time.Since(start); d > fuzzLimit {
				t.Fatalf("Parse(%s %q, %q): rejection took %v", k, expr, zone, d)
			}
			return
		}
		fr, ok := s.Next(fuzzFrom)
		if d := time.Since(start); d > fuzzLimit {
			t.Fatalf("Parse+Next(%s %q, %q) took %v", k, expr, zone, d)
		}
		switch k {
		case KindCron:
			if !ok {
				// A day form can pick only days whose matching wall times
				// fall in a DST gap (30 2 * 3 0#2 in New York is always
				// the spring-forward day): under skip there is no firing,
				// but shifted out of the gap there must be one.
				d := s.Definition()
				d.DSTGap = GapShift
				sh, err := Parse(d)
				if err != nil {
					t.Fatalf("cron %q in %q: accepted with skip, refused with shift: %v", expr, zone, err)
				}
				f2, ok2 := sh.Next(fuzzFrom)
				if !ok2 || f2.Note != NoteGapShifted {
					t.Fatalf("cron %q in %q accepted (canonical %q) but has no firing after %v", expr, zone, s.Canonical(), fuzzFrom)
				}
				return
			}
			if !s.cron.matchWall(fr.Wall) {
				t.Fatalf("cron %q: firing %v has wall %s, which does not match", expr, fr.At, FormatWall(fr.Wall))
			}
			if fr.Note != NoteGapShifted {
				if w := fr.At.Unix() + offsetAt(s.loc, fr.At.Unix()); w != fr.Wall {
					t.Fatalf("cron %q in %q: firing %v reads %s on the wall, Firing.Wall says %s",
						expr, zone, fr.At, FormatWall(w), FormatWall(fr.Wall))
				}
			}
		case KindAt:
			want, perr := ParseInstant("at", expr)
			if perr != nil {
				t.Fatalf("at %q accepted by Parse but not by ParseInstant: %v", expr, perr)
			}
			if ok != (want.Unix() > fuzzFrom.Unix()) {
				t.Fatalf("at %q: Next(%v) ok=%v", expr, fuzzFrom, ok)
			}
		case KindEvery:
			if !ok {
				t.Fatalf("every %q: no firing after %v", expr, fuzzFrom)
			}
		}
		if ok {
			if !fr.At.After(fuzzFrom) {
				t.Fatalf("%s %q: Next(%v) = %v, not after", k, expr, fuzzFrom, fr.At)
			}
			if fr.At.Year() > 9999 {
				t.Fatalf("%s %q: firing %v is past year 9999", k, expr, fr.At)
			}
			if _, err := json.Marshal(fr.At); err != nil {
				t.Fatalf("%s %q: json.Marshal(%v): %v", k, expr, fr.At, err)
			}
		}
	})
}

// zoneIndex returns the index of a zone in diffZones, for FuzzNext seeds.
func zoneIndex(tb testing.TB, name string) uint8 {
	for i, z := range diffZones {
		if z == name {
			return uint8(i)
		}
	}
	tb.Fatalf("%s is not in diffZones", name)
	return 0
}

var (
	fuzzStartMin = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	fuzzStartMax = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// clampStart maps any int64 into [1970, 2100).
func clampStart(u int64) int64 {
	span := fuzzStartMax - fuzzStartMin
	m := u % span
	if m < 0 {
		m += span
	}
	return fuzzStartMin + m
}

// FuzzNext: a cron expression in one of diffZones from a start in 1970..2100,
// under the gap and repeat options the last two bytes pick, compared with
// the brute-force reference over the next 2 days (2 hours when the seconds
// field is not just 0, since the reference then walks every second).
func FuzzNext(f *testing.F) {
	u := func(s string) int64 {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			f.Fatal(err)
		}
		return t.Unix()
	}
	ny, lh := zoneIndex(f, "America/New_York"), zoneIndex(f, "Australia/Lord_Howe")
	scl, apia := zoneIndex(f, "America/Santiago"), zoneIndex(f, "Pacific/Apia")
	// gap: 0 skip, 1 shift; repeat: 0 first, 1 last, 2 all.
	f.Add("30 2 * * *", ny, u("2026-03-07T12:00:00Z"), uint8(0), uint8(0))      // spring forward, skipped
	f.Add("30 2 * * *", ny, u("2026-03-07T12:00:00Z"), uint8(1), uint8(0))      // ... shifted to 03:00
	f.Add("*/15 * * * *", ny, u("2026-03-07T20:00:00Z"), uint8(1), uint8(2))    // several walls fold into one
	f.Add("30 1 * * *", ny, u("2026-10-31T12:00:00Z"), uint8(0), uint8(0))      // fall back, first
	f.Add("30 1 * * *", ny, u("2026-10-31T12:00:00Z"), uint8(0), uint8(1))      // ... last
	f.Add("*/20 * * * *", ny, u("2026-10-31T20:00:00Z"), uint8(0), uint8(2))    // ... all
	f.Add("*/20 30 1 * * *", ny, u("2026-11-01T05:00:00Z"), uint8(0), uint8(2)) // seconds through the repeat
	f.Add("15,45 1,2 * * *", lh, u("2026-04-04T00:00:00Z"), uint8(0), uint8(2)) // Lord Howe: 30-minute repeat
	f.Add("15,45 2 * * *", lh, u("2026-10-03T00:00:00Z"), uint8(1), uint8(0))   // ... 30-minute gap
	f.Add("*/10 * * * *", lh, u("2026-10-03T12:00:00Z"), uint8(0), uint8(0))    // ...
	f.Add("0 0 * * *", scl, u("2026-09-05T00:00:00Z"), uint8(0), uint8(0))      // Santiago: midnight gap, skipped
	f.Add("30 0 * * *", scl, u("2026-09-05T00:00:00Z"), uint8(1), uint8(0))     // ... shifted
	f.Add("0 23 * * *", scl, u("2026-04-04T00:00:00Z"), uint8(0), uint8(2))     // ... 23:00 repeated
	f.Add("0 12 * * *", apia, u("2011-12-29T00:00:00Z"), uint8(0), uint8(0))    // Apia skipped 2011-12-30
	f.Add("0 9 * * FRI", apia, u("2011-12-29T00:00:00Z"), uint8(1), uint8(0))   // the lost day was a Friday
	f.Add("0 0 30 12 *", apia, u("2011-12-29T06:00:00Z"), uint8(1), uint8(0))   // a whole-day gap, shifted
	f.Add("0 9 * * MON-FRI", ny, u("2027-03-13T00:00:00Z"), uint8(0), uint8(0)) // the common case
	f.Add("0 0 29 2 *", zoneIndex(f, "UTC"), u("2028-02-28T00:00:00Z"), uint8(0), uint8(0))
	f.Add("* * * * *", zoneIndex(f, "Pacific/Chatham"), u("2027-04-03T12:00:00Z"), uint8(1), uint8(2))
	// The day forms on DST days: the second Sunday of March in New York,
	// the last Sunday of March and October in Berlin, a last day of the
	// month that is a transition day, a W day beside one.
	berlin := zoneIndex(f, "Europe/Berlin")
	f.Add("30 2 * 3 0#2", ny, u("2027-03-13T00:00:00Z"), uint8(1), uint8(0))
	f.Add("*/30 2 * 3 SUNL", berlin, u("2027-03-27T12:00:00Z"), uint8(0), uint8(0))
	f.Add("*/20 2 * 10 0L", berlin, u("2027-10-30T12:00:00Z"), uint8(0), uint8(2))
	f.Add("30 2 L 3 *", berlin, u("2030-03-30T12:00:00Z"), uint8(1), uint8(0))
	f.Add("30 2 L-3 3 *", berlin, u("2027-03-27T12:00:00Z"), uint8(0), uint8(0))
	f.Add("0 1 8W * *", ny, u("2026-11-01T00:00:00Z"), uint8(0), uint8(1))
	f.Add("0 0 LW * 5#1", scl, u("2026-09-04T00:00:00Z"), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, expr string, zone uint8, start int64, gap, repeat uint8) {
		name := diffZones[int(zone)%len(diffZones)]
		s, err := Parse(Definition{Kind: KindCron, Expr: expr, TimeZone: name,
			DSTGap: gapPolicies[int(gap)%len(gapPolicies)], DSTRepeat: repeatPolicies[int(repeat)%len(repeatPolicies)]})
		if err != nil {
			return
		}
		from := clampStart(start)
		window := int64(2 * 86400)
		if s.cron.sec != 1 { // a seconds field that is not just "0"
			window = 2 * 3600
		}
		compareWithReference(t, s, from, from+window)
	})
}

// FuzzDayForms: expressions built by the fuzzer's choices from the special
// day forms (L, L-n, nW, LW, nL, n#k, in lists, with the other day field
// plain, starred or special), in one of diffZones, from a start in
// 1970..2100, against the brute-force reference over four days around a
// month's end. The generator reaches forms a string mutator rarely
// assembles.
//
//	go test ./internal/timetable -run '^$' -fuzz FuzzDayForms -fuzztime 60s
func FuzzDayForms(f *testing.F) {
	for i := uint64(0); i < 8; i++ {
		f.Add(i, uint8(i), int64(i)*977_000_003, uint8(i%2), uint8(i%3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, zone uint8, start int64, gap, repeat uint8) {
		r := rand.New(rand.NewPCG(seed, 13))
		expr := randomDayExpr(r, []string{"0", "30", "*/30"}[r.IntN(3)], []string{"0", "2", "1-3", "*/6"}[r.IntN(4)])
		name := diffZones[int(zone)%len(diffZones)]
		s, err := Parse(Definition{Kind: KindCron, Expr: expr, TimeZone: name,
			DSTGap: gapPolicies[int(gap)%len(gapPolicies)], DSTRepeat: repeatPolicies[int(repeat)%len(repeatPolicies)]})
		if err != nil {
			if !strings.Contains(err.Error(), "can never fire") {
				t.Fatalf("generated %q refused: %v", expr, err)
			}
			return
		}
		// Four days from a day 25-28 of the month: a month's end (L, LW,
		// nL, 31W) and the next month's first days (1W, n#1) are in view.
		st := time.Unix(clampStart(start), 0).UTC()
		from := time.Date(st.Year(), st.Month(), 25+st.Day()%4, st.Hour(), 0, 0, 0, time.UTC).Unix()
		compareWithReference(t, s, from, from+4*86400)
	})
}
