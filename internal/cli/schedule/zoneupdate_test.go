package schedule

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestMergeUpdateZonePrefix: update merges its flags into the schedule read
// back. A new --cron whose CRON_TZ=/TZ= prefix names a zone takes that zone
// when --tz is not given, whatever zone the schedule was stored in; with a
// --tz naming the same zone it is accepted, with another zone it is the
// conflict error naming --cron and both zones, before any request. Without
// a prefix the stored zone stays.
func TestMergeUpdateZonePrefix(t *testing.T) {
	t.Parallel()
	cronUTC := api.Schedule{ScheduleID: "sch_1", Name: "daily", Queue: "q", Kind: "cron", Expression: "0 9 * * *",
		TimeZone: "UTC", DSTGap: "skip", DSTRepeat: "first", MisfirePolicy: "fire_once", MaxLateness: "1m0s",
		OverlapPolicy: "allow", FlexibleWindow: "0s", MaxAttempts: 10, RetryBase: "1s", RetryCap: "5m0s", RetryDeadline: "24h0m0s",
		Payload: json.RawMessage("null")}
	everyUTC := cronUTC
	everyUTC.Kind, everyUTC.Expression, everyUTC.DSTGap, everyUTC.DSTRepeat = "every", "1h", "", ""
	tests := []struct {
		name             string
		stored           api.Schedule
		args             []string
		wantCron, wantTZ string // what is sent
		normTZ           string // the zone schedd will store
		err              string
	}{
		{name: "prefix replaces the stored zone", stored: cronUTC, args: []string{"--cron", "CRON_TZ=Europe/Berlin 0 9 * * *"},
			wantCron: "CRON_TZ=Europe/Berlin 0 9 * * *", normTZ: "Europe/Berlin"},
		{name: "robfig TZ= prefix", stored: cronUTC, args: []string{"--cron", "TZ=America/New_York 30 2 * * *"},
			wantCron: "TZ=America/New_York 30 2 * * *", normTZ: "America/New_York"},
		{name: "prefix on an every schedule", stored: everyUTC, args: []string{"--cron", "CRON_TZ=Asia/Tokyo 0 9 * * *"},
			wantCron: "CRON_TZ=Asia/Tokyo 0 9 * * *", normTZ: "Asia/Tokyo"},
		{name: "prefix and the same --tz", stored: cronUTC, args: []string{"--cron", "CRON_TZ=Europe/Berlin 0 9 * * *", "--tz", "Europe/Berlin"},
			wantCron: "CRON_TZ=Europe/Berlin 0 9 * * *", wantTZ: "Europe/Berlin", normTZ: "Europe/Berlin"},
		{name: "prefix and another --tz", stored: cronUTC, args: []string{"--cron", "CRON_TZ=Europe/Berlin 0 9 * * *", "--tz", "UTC"},
			err: `--cron: time zone "UTC" differs from "Europe/Berlin" in the cron expression's CRON_TZ= prefix`},
		{name: "unknown zone in the prefix", stored: cronUTC, args: []string{"--cron", "CRON_TZ=Mars/Olympus 0 9 * * *"},
			err: `--tz: cron expression's CRON_TZ= prefix: time zone "Mars/Olympus": unknown IANA zone`},
		{name: "no prefix keeps the stored zone", stored: cronUTC, args: []string{"--cron", "30 2 * * *"},
			wantCron: "30 2 * * *", wantTZ: "UTC", normTZ: "UTC"},
		{name: "--tz alone", stored: cronUTC, args: []string{"--tz", "Europe/Berlin"},
			wantCron: "0 9 * * *", wantTZ: "Europe/Berlin", normTZ: "Europe/Berlin"},
		{name: "another setting keeps the zone", stored: cronUTC, args: []string{"--max-attempts", "3"},
			wantCron: "0 9 * * *", wantTZ: "UTC", normTZ: "UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _, _ := clitest.NewFactory(false)
			var opts *UpdateOptions
			if err := clitest.Exec(t, NewCmdUpdate(f, func(o *UpdateOptions) error { opts = o; return nil }), append([]string{"daily"}, tt.args...)...); err != nil {
				t.Fatalf("flags: %v", err)
			}
			r, err := mergeUpdate(tt.stored, opts.Patch)
			if tt.err != "" {
				clitest.WantErr(t, err, tt.err, cmdutil.ExitInvalid)
				return
			}
			if err != nil {
				t.Fatalf("merge: %v", err)
			}
			if r.Cron != tt.wantCron || r.TimeZone != tt.wantTZ {
				t.Errorf("sends cron %q in %q; want %q in %q", r.Cron, r.TimeZone, tt.wantCron, tt.wantTZ)
			}
			norm, err := checkRequest(r)
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			if norm.TimeZone != tt.normTZ {
				t.Errorf("normalizes to zone %q, want %q", norm.TimeZone, tt.normTZ)
			}
			// Nothing else of the schedule moved.
			want := requestFromSchedule(tt.stored)
			r.Cron, r.TimeZone, r.Every, r.MaxAttempts, r.DSTGap, r.DSTRepeat = want.Cron, want.TimeZone, want.Every, want.MaxAttempts, want.DSTGap, want.DSTRepeat
			if !reflect.DeepEqual(r, want) {
				t.Errorf("other settings changed:\n got %+v\nwant %+v", r, want)
			}
		})
	}
}
