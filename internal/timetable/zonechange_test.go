package timetable

import (
	"testing"
	"time"
)

// TestOffsetChangeCause: the rule on its own. The DST flag flipping with
// a change of at most two hours is daylight saving; the same flag on both
// sides, or a flip with a larger change, is a zone change.
func TestOffsetChangeCause(t *testing.T) {
	t.Parallel()
	const h = 3600
	cases := []struct {
		name           string
		from, to       int
		fromDST, toDST bool
		want           Cause
	}{
		{"spring forward", -5 * h, -4 * h, false, true, CauseDST},
		{"fall back", -4 * h, -5 * h, true, false, CauseDST},
		{"half hour (Lord Howe)", 10*h + 1800, 11 * h, false, true, CauseDST},
		{"two hours (Troll)", 0, 2 * h, false, true, CauseDST},
		{"negative DST (Dublin, winter flagged)", 1 * h, 0, false, true, CauseDST},
		{"standard offset up (Moscow 2011)", 3 * h, 4 * h, false, false, CauseZoneChange},
		{"standard offset down (Moscow 2014)", 4 * h, 3 * h, false, false, CauseZoneChange},
		{"a day, DST both sides (Samoa 2011)", -10 * h, 14 * h, true, true, CauseZoneChange},
		{"flip with three hours (Ust-Nera 1981)", 9 * h, 12 * h, false, true, CauseZoneChange},
	}
	for _, tc := range cases {
		c := OffsetChange{From: tc.from, To: tc.to, FromDST: tc.fromDST, ToDST: tc.toDST}
		if got := c.Cause(); got != tc.want {
			t.Errorf("%s: %+v is %v, want %v", tc.name, c, got, tc.want)
		}
	}
	if CauseDST.String() != "dst" || CauseZoneChange.String() != "zone_change" || CauseNone.String() != "" {
		t.Errorf("names: %q %q %q", CauseDST, CauseZoneChange, CauseNone)
	}
}

// TestChangeOfRealZones: the cause and offsets a firing's note and a
// skipped wall time carry, from the host's tz database, for changes that
// are daylight saving and changes that are not.
func TestChangeOfRealZones(t *testing.T) {
	t.Parallel()
	const h = 3600
	cases := []struct {
		name   string
		zone   string
		cron   string
		gap    GapPolicy
		repeat RepeatPolicy
		from   string
		skip   bool     // the first event is a skipped wall time, else a noted firing
		note   NoteKind // for a firing
		at     string   // the change's instant
		off    [2]int   // from, to
		want   Cause
	}{
		{"New York spring forward", "America/New_York", "30 2 * * *", GapSkip, "", "2027-03-13T12:00:00Z", true, 0, "2027-03-14T07:00:00Z", [2]int{-5 * h, -4 * h}, CauseDST},
		{"New York fall back, first", "America/New_York", "30 1 * * *", "", RepeatFirst, "2027-11-06T12:00:00Z", false, NoteRepeatFirst, "2027-11-07T06:00:00Z", [2]int{-4 * h, -5 * h}, CauseDST},
		{"Sao Paulo 2018 midnight", "America/Sao_Paulo", "0 0 * * *", GapSkip, "", "2018-11-03T12:00:00Z", true, 0, "2018-11-04T03:00:00Z", [2]int{-3 * h, -2 * h}, CauseDST},
		{"Dublin negative DST", "Europe/Dublin", "30 1 * * *", GapShift, "", "2027-03-27T12:00:00Z", false, NoteGapShifted, "2027-03-28T01:00:00Z", [2]int{0, 1 * h}, CauseDST},
		{"Apia skipped day", "Pacific/Apia", "0 12 * * *", GapSkip, "", "2011-12-29T23:00:00Z", true, 0, "2011-12-30T10:00:00Z", [2]int{-10 * h, 14 * h}, CauseZoneChange},
		{"Apia skipped day, shift", "Pacific/Apia", "0 12 * * *", GapShift, "", "2011-12-29T23:00:00Z", false, NoteGapShifted, "2011-12-30T10:00:00Z", [2]int{-10 * h, 14 * h}, CauseZoneChange},
		{"Moscow 2011", "Europe/Moscow", "30 2 * * *", GapSkip, "", "2011-03-26T12:00:00Z", true, 0, "2011-03-26T23:00:00Z", [2]int{3 * h, 4 * h}, CauseZoneChange},
		{"Moscow 2014, last", "Europe/Moscow", "30 1 * * *", "", RepeatLast, "2014-10-25T12:00:00Z", false, NoteRepeatLast, "2014-10-25T22:00:00Z", [2]int{4 * h, 3 * h}, CauseZoneChange},
		{"Moscow 2014, all", "Europe/Moscow", "30 1 * * *", "", RepeatAll, "2014-10-25T12:00:00Z", false, NoteRepeatAll1, "2014-10-25T22:00:00Z", [2]int{4 * h, 3 * h}, CauseZoneChange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(Definition{Kind: KindCron, Expr: tc.cron, TimeZone: tc.zone, DSTGap: tc.gap, DSTRepeat: tc.repeat})
			if err != nil {
				t.Fatal(err)
			}
			from, _ := time.Parse(time.RFC3339, tc.from)
			var skipped []SkippedWall
			f, ok := s.NextObserved(from, func(w SkippedWall) { skipped = append(skipped, w) })
			if !ok {
				t.Fatal("no firing")
			}
			var ch OffsetChange
			var cause Cause
			if tc.skip {
				if len(skipped) != 1 {
					t.Fatalf("skipped %+v, want one", skipped)
				}
				ch, cause = s.SkippedChange(skipped[0]), skipped[0].Cause
			} else {
				if f.Note != tc.note {
					t.Fatalf("firing %+v, want note %v", f, tc.note)
				}
				if ch, ok = s.ChangeOf(f); !ok {
					t.Fatalf("ChangeOf(%+v): no change", f)
				}
				cause = f.Cause
			}
			if got := ch.At.Format(time.RFC3339); got != tc.at || ch.From != tc.off[0] || ch.To != tc.off[1] {
				t.Errorf("change at %s from %d to %d; want %s from %d to %d", got, ch.From, ch.To, tc.at, tc.off[0], tc.off[1])
			}
			if cause != tc.want || ch.Cause() != tc.want {
				t.Errorf("cause %v (change says %v), want %v", cause, ch.Cause(), tc.want)
			}
			if tc.note == NoteRepeatAll1 {
				// The second of the two firings is the same change.
				f2, _ := s.Next(f.At)
				ch2, ok := s.ChangeOf(f2)
				if f2.Note != NoteRepeatAll2 || !ok || ch2 != ch || f2.Cause != tc.want {
					t.Errorf("second firing %+v change %+v, want repeat_all on %+v", f2, ch2, ch)
				}
			}
		})
	}
	// A firing without a gap or repeat note has no change.
	s, _ := Parse(Definition{Kind: KindCron, Expr: "0 9 * * *", TimeZone: "UTC"})
	f, _ := s.Next(time.Unix(0, 0))
	if _, ok := s.ChangeOf(f); ok || f.Cause != CauseNone {
		t.Errorf("plain firing %+v has a change", f)
	}
}

// TestPeriodsEndWhereTheOffsetChanges: an offset period starts and ends
// where the offset changes, also where the tz data reports a bound without
// one (Go's slim zoneinfo.zip gives Africa/Cairo a bound at each new year
// after its last listed transition; read as two periods, a wall time in
// both looked like a repeat). The CI runs this package on that data too.
func TestPeriodsEndWhereTheOffsetChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		zone string
		at   string
	}{
		{"Africa/Cairo", "2028-12-29T22:16:00Z"},
		{"Africa/Cairo", "2029-01-02T00:00:00Z"},
		{"America/New_York", "2040-12-31T12:00:00Z"},
		{"Europe/Berlin", "2099-12-31T23:30:00Z"},
		{"Pacific/Apia", "9999-06-01T00:00:00Z"},
		{"Pacific/Apia", "2011-12-30T09:00:00Z"},
	} {
		t.Run(tc.zone+" "+tc.at, func(t *testing.T) {
			loc, err := time.LoadLocation(tc.zone)
			if err != nil {
				t.Fatal(err)
			}
			at, _ := time.Parse(time.RFC3339, tc.at)
			u := at.Unix()
			p := periodAt(loc, u)
			if p.start > u || p.end <= u {
				t.Fatalf("period [%d, %d) does not hold %d", p.start, p.end, u)
			}
			if p.start > openStart && offsetAt(loc, p.start-1) == p.off {
				t.Errorf("period starts at %s, where the offset %d does not change", time.Unix(p.start, 0).UTC(), p.off)
			}
			if p.end < openEnd && offsetAt(loc, p.end) == p.off {
				t.Errorf("period ends at %s, where the offset %d does not change", time.Unix(p.end, 0).UTC(), p.off)
			}
		})
	}
}
