package timetable

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestZonePrefix: a cron expression's CRON_TZ=/TZ= prefix (Kubernetes
// CronJob, robfig/cron) becomes the definition's zone; the expression is
// kept without it. A zone also given in TimeZone must be the same, and a
// bad prefix gets an error naming it.
func TestZonePrefix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		expr, zone string // the definition as given
		wantExpr   string // the definition Parse keeps
		wantZone   string
		field, msg string // the error, when msg != ""
		msgPrefix  bool   // msg is the start of the message (the parser's own words follow)
	}{
		{name: "cron_tz", expr: "CRON_TZ=Europe/Berlin 0 9 * * *", wantExpr: "0 9 * * *", wantZone: "Europe/Berlin"},
		{name: "tz", expr: "TZ=Asia/Tokyo 0 9 * * *", wantExpr: "0 9 * * *", wantZone: "Asia/Tokyo"},
		{name: "same zone in both", expr: "CRON_TZ=Asia/Tokyo 0 9 * * *", zone: "Asia/Tokyo", wantExpr: "0 9 * * *", wantZone: "Asia/Tokyo"},
		{name: "six fields and spaces", expr: "  CRON_TZ=UTC \t */20 * * * * * ", wantExpr: "*/20 * * * * *", wantZone: "UTC"},
		{name: "macro", expr: "CRON_TZ=America/New_York @daily", wantExpr: "@daily", wantZone: "America/New_York"},
		{name: "tab after the zone", expr: "TZ=Europe/London\t30 2 * * *", wantExpr: "30 2 * * *", wantZone: "Europe/London"},
		{name: "no prefix", expr: "0 9 * * *", zone: "Europe/Berlin", wantExpr: "0 9 * * *", wantZone: "Europe/Berlin"},

		{name: "zones differ", expr: "CRON_TZ=Asia/Tokyo 0 9 * * *", zone: "Europe/Berlin", field: "cron",
			msg: `time zone "Europe/Berlin" differs from "Asia/Tokyo" in the cron expression's CRON_TZ= prefix: give the zone once, or the same zone in both`},
		{name: "alias is another name", expr: "TZ=Asia/Calcutta 0 9 * * *", zone: "Asia/Kolkata", field: "cron",
			msg: `time zone "Asia/Kolkata" differs from "Asia/Calcutta" in the cron expression's TZ= prefix: give the zone once, or the same zone in both`},
		{name: "unknown zone", expr: "CRON_TZ=Mars/Olympus 0 9 * * *", field: "time_zone",
			msg: `cron expression's CRON_TZ= prefix: time zone "Mars/Olympus": unknown IANA zone`},
		{name: "zone Local", expr: "TZ=Local 0 9 * * *", zone: "UTC", field: "time_zone",
			msg: `cron expression's TZ= prefix: time zone "Local": not allowed, it depends on the host; give an IANA name`},
		{name: "empty zone", expr: "CRON_TZ= 0 9 * * *", field: "cron",
			msg: `cron expression: the CRON_TZ= prefix names no time zone (write e.g. CRON_TZ=Europe/Berlin 0 9 * * *)`},
		{name: "nothing after the prefix", expr: "CRON_TZ=Europe/Berlin", field: "cron",
			msg: `cron expression: nothing after the CRON_TZ=Europe/Berlin prefix; want the fields, e.g. CRON_TZ=Europe/Berlin 0 9 * * *`},
		{name: "bad field after the prefix", expr: "CRON_TZ=Europe/Berlin 61 9 * * *", field: "minute field",
			msg: `minute field "61": out of range 0-59`, msgPrefix: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(Definition{Kind: KindCron, Expr: tc.expr, TimeZone: tc.zone})
			if tc.msg != "" {
				var ie *InvalidError
				if !errors.As(err, &ie) || ie.Field != tc.field || ie.Msg != tc.msg && !(tc.msgPrefix && strings.HasPrefix(ie.Msg, tc.msg)) {
					t.Fatalf("Parse(%q, zone %q) = %v; want *InvalidError field %q: %s", tc.expr, tc.zone, err, tc.field, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q, zone %q): %v", tc.expr, tc.zone, err)
			}
			d := s.Definition()
			if d.Expr != tc.wantExpr || d.TimeZone != tc.wantZone || s.Location().String() != tc.wantZone {
				t.Errorf("Parse(%q, zone %q) kept expr %q zone %q (location %s); want %q in %s",
					tc.expr, tc.zone, d.Expr, d.TimeZone, s.Location(), tc.wantExpr, tc.wantZone)
			}
			if z, ok := ZonePrefix(tc.expr); ok != strings.Contains(tc.expr, "TZ=") || ok && z != tc.wantZone {
				t.Errorf("ZonePrefix(%q) = %q, %v", tc.expr, z, ok)
			}
		})
	}
}

// TestZonePrefixFires: the prefix's zone is the one the wall time is read
// in: 09:00 in Tokyo is 00:00Z, the same as with the zone given apart.
func TestZonePrefixFires(t *testing.T) {
	t.Parallel()
	from := time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)
	withPrefix, err := Parse(Definition{Kind: KindCron, Expr: "CRON_TZ=Asia/Tokyo 0 9 * * *"})
	if err != nil {
		t.Fatal(err)
	}
	apart, err := Parse(Definition{Kind: KindCron, Expr: "0 9 * * *", TimeZone: "Asia/Tokyo"})
	if err != nil {
		t.Fatal(err)
	}
	f1, ok1 := withPrefix.Next(from)
	f2, ok2 := apart.Next(from)
	want := time.Date(2027, 1, 11, 0, 0, 0, 0, time.UTC)
	if !ok1 || !ok2 || !f1.At.Equal(want) || !f2.At.Equal(want) {
		t.Errorf("next firing with the prefix %v (%v), with the zone apart %v (%v); want %v", f1.At, ok1, f2.At, ok2, want)
	}
}

// TestZonePrefixOnlyCron: the other kinds do not read a prefix; their
// expressions are refused as they always were.
func TestZonePrefixOnlyCron(t *testing.T) {
	t.Parallel()
	_, err := Parse(Definition{Kind: KindEvery, Expr: "TZ=UTC 1h", TimeZone: "UTC"})
	var ie *InvalidError
	if !errors.As(err, &ie) || ie.Field != "every" {
		t.Fatalf("every with a TZ= prefix: %v; want the every field refused", err)
	}
}
