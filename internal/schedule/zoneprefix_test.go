package schedule

import (
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/timetable"
)

// TestNormalizeZonePrefix: a cron expression's CRON_TZ=/TZ= prefix is read
// by Normalize (through timetable.Parse) into the schedule's zone, so the
// schedule is stored without it; a time_zone that names another zone, or
// an unknown zone in the prefix, is the API's validation error.
func TestNormalizeZonePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		cron, zone       string
		wantCron, wantTZ string
		field, msg       string // msg "" = valid
	}{
		{name: "prefix alone", cron: "CRON_TZ=Europe/Berlin 0 9 * * *", wantCron: "0 9 * * *", wantTZ: "Europe/Berlin"},
		{name: "robfig TZ=", cron: "TZ=America/New_York 30 2 * * *", wantCron: "30 2 * * *", wantTZ: "America/New_York"},
		{name: "same zone twice", cron: "CRON_TZ=Asia/Tokyo 0 9 * * *", zone: "Asia/Tokyo", wantCron: "0 9 * * *", wantTZ: "Asia/Tokyo"},
		{name: "zones differ", cron: "CRON_TZ=Asia/Tokyo 0 9 * * *", zone: "Europe/Berlin", field: "cron",
			msg: `time zone "Europe/Berlin" differs from "Asia/Tokyo" in the cron expression's CRON_TZ= prefix: give the zone once, or the same zone in both`},
		{name: "unknown zone in the prefix", cron: "CRON_TZ=Mars/Olympus 0 9 * * *", field: "time_zone",
			msg: `cron expression's CRON_TZ= prefix: time zone "Mars/Olympus": unknown IANA zone`},
		{name: "no zone anywhere", cron: "0 9 * * *", field: "time_zone",
			msg: "time_zone: a cron schedule needs a time zone (an IANA name such as Europe/Berlin, or UTC, or a CRON_TZ= prefix on the expression)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set, err := FromRequest(&api.ScheduleRequest{Name: "n", Queue: "q", Cron: tt.cron, TimeZone: tt.zone})
			if err != nil {
				t.Fatalf("FromRequest: %v", err)
			}
			sp, err := set.Normalize()
			checkErr(t, err, tt.field, tt.msg)
			if tt.msg != "" {
				return
			}
			if set.Kind != timetable.KindCron || set.Expr != tt.wantCron || set.TimeZone != tt.wantTZ {
				t.Errorf("normalized to %s %q in %q; want cron %q in %q", set.Kind, set.Expr, set.TimeZone, tt.wantCron, tt.wantTZ)
			}
			if d := sp.Definition(); d.Expr != tt.wantCron || d.TimeZone != tt.wantTZ {
				t.Errorf("parsed timing %q in %q; want %q in %q", d.Expr, d.TimeZone, tt.wantCron, tt.wantTZ)
			}
			// Normalizing the stored form again changes nothing.
			again := set
			if _, err := again.Normalize(); err != nil || again.Expr != set.Expr || again.TimeZone != set.TimeZone {
				t.Errorf("normalizing again: %v, %q in %q", err, again.Expr, again.TimeZone)
			}
		})
	}
}
