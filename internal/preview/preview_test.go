package preview

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/timetable"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGolden(t *testing.T) {
	// tz_version depends on the host; pin it so the files are stable.
	cases := []struct {
		name string
		req  Request
	}{
		{"ny_gap_skip", Request{Def: timetable.Definition{Kind: timetable.KindCron, Expr: "30 2 * * *", TimeZone: "America/New_York"},
			From: mustTime(t, "2027-03-13T00:00:00Z"), Count: 3}},
		{"ny_gap_shift_every15", Request{Def: timetable.Definition{Kind: timetable.KindCron, Expr: "*/15 * * * *", TimeZone: "America/New_York", DSTGap: timetable.GapShift},
			From: mustTime(t, "2027-03-14T06:30:00Z"), Count: 4}},
		{"ny_repeat_all", Request{Def: timetable.Definition{Kind: timetable.KindCron, Expr: "30 1 * * *", TimeZone: "America/New_York", DSTRepeat: timetable.RepeatAll},
			From: mustTime(t, "2027-11-06T12:00:00Z"), Count: 3}},
		{"every_24h_ny", Request{Def: timetable.Definition{Kind: timetable.KindEvery, Expr: "24h", TimeZone: "America/New_York",
			Anchor: mustTime(t, "2027-03-12T12:00:00-05:00")}, From: mustTime(t, "2027-03-12T00:00:00Z"), Count: 3}},
		// Not daylight saving: Samoa skipped 2011-12-30 crossing the date
		// line, Moscow's standard offset went from +04 back to +03 in 2014.
		{"apia_2011_skipped_day", Request{Def: timetable.Definition{Kind: timetable.KindCron, Expr: "0 12 * * *", TimeZone: "Pacific/Apia"},
			From: mustTime(t, "2011-12-28T00:00:00Z"), Count: 3}},
		{"apia_2011_shift", Request{Def: timetable.Definition{Kind: timetable.KindCron, Expr: "0 12 * * *", TimeZone: "Pacific/Apia", DSTGap: timetable.GapShift},
			From: mustTime(t, "2011-12-29T12:00:00Z"), Count: 2}},
		{"moscow_2014_repeat_all", Request{Def: timetable.Definition{Kind: timetable.KindCron, Expr: "30 1 * * *", TimeZone: "Europe/Moscow", DSTRepeat: timetable.RepeatAll},
			From: mustTime(t, "2014-10-25T12:00:00Z"), Count: 2}},
		{"at_past", Request{Def: timetable.Definition{Kind: timetable.KindAt, Expr: "2027-01-01T00:00:00Z", TimeZone: "UTC"},
			From: mustTime(t, "2027-06-01T00:00:00Z"), Count: 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			res.TZVersion = "test"
			var js, tbl bytes.Buffer
			if err := res.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if err := res.WriteTable(&tbl, PlainStyles()); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".json", js.Bytes())
			golden(t, tc.name+".txt", tbl.Bytes())
		})
	}
}

func TestCountLimits(t *testing.T) {
	def := timetable.Definition{Kind: timetable.KindCron, Expr: "* * * * *", TimeZone: "UTC"}
	for _, n := range []int{-1, MaxCount + 1} {
		if _, err := Compute(Request{Def: def, Count: n}); err == nil {
			t.Errorf("count %d accepted", n)
		}
	}
	res, err := Compute(Request{Def: def, From: time.Unix(0, 0), Count: MaxCount})
	if err != nil || len(res.Firings) != MaxCount {
		t.Fatalf("count %d: %v, %d firings", MaxCount, err, len(res.Firings))
	}
}
