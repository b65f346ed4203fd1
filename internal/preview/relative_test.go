package preview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/timetable"
)

// TestRelative: the largest unit and the next one when not zero, the rest
// dropped, as systemd-analyze calendar writes it.
func TestRelative(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "now"},
		{500 * time.Millisecond, "in 0 s"},
		{time.Second, "in 1 s"},
		{45 * time.Second, "in 45 s"},
		{time.Minute, "in 1 min"},
		{12*time.Minute + 5*time.Second, "in 12 min 5 s"},
		{time.Hour, "in 1 h"},
		{time.Hour + 30*time.Second, "in 1 h"}, // the seconds are the third unit: dropped
		{3*time.Hour + 12*time.Minute + 40*time.Second, "in 3 h 12 min"},
		{day, "in 1 d"},
		{2*day + 4*time.Hour + 59*time.Minute, "in 2 d 4 h"},
		{364*day + 23*time.Hour, "in 364 d 23 h"},
		{365 * day, "in 1 y"},
		{7*365*day + 120*day + 5*time.Hour, "in 7 y 120 d"},
		{-90 * time.Minute, "1 h 30 min ago"},
	}
	for _, tc := range cases {
		if got := Relative(tc.d); got != tc.want {
			t.Errorf("Relative(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestTableRelative: with Relative the table has the column, measured from
// the preview's From (not the clock); without it the table is as before.
func TestTableRelative(t *testing.T) {
	t.Parallel()
	res, err := Compute(Request{Def: timetable.Definition{Kind: timetable.KindCron, Expr: "30 2 * * *", TimeZone: "America/New_York"},
		From: mustTime(t, "2027-03-13T00:00:00Z"), Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	res.TZVersion = "test"
	var with, without bytes.Buffer
	if err := res.WriteTableWith(&with, TableOptions{Styles: PlainStyles(), Relative: true}); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteTableWith(&without, TableOptions{Styles: PlainStyles()}); err != nil {
		t.Fatal(err)
	}
	golden(t, "ny_gap_skip_relative.txt", with.Bytes())
	if strings.Contains(without.String(), "RELATIVE") || strings.Contains(without.String(), "in 7 h") {
		t.Errorf("relative column without Relative:\n%s", without.String())
	}
	var plain bytes.Buffer
	if err := res.WriteTable(&plain, PlainStyles()); err != nil {
		t.Fatal(err)
	}
	if plain.String() != without.String() {
		t.Errorf("WriteTable differs from WriteTableWith without options:\n%s\n%s", plain.String(), without.String())
	}
}
