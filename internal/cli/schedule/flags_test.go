package schedule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// Flag parsing, gh style: each command runs with its real flags, and runF
// captures the options it would run with (or the error, before any call).

func TestCreateFlags(t *testing.T) {
	payloadFile := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(payloadFile, []byte(`{"from":"file"}`), 0o600)
	cases := []struct {
		name string
		args []string
		want api.ScheduleRequest
		err  string
	}{
		{"cron", []string{"--name", "n", "--queue", "q", "--cron", "0 2 * * *", "--tz", "Europe/Berlin"},
			api.ScheduleRequest{Name: "n", Queue: "q", Cron: "0 2 * * *", TimeZone: "Europe/Berlin"}, ""},
		{"every with everything", []string{"--name", "n", "--queue", "q", "--every", "15m", "--anchor", "2027-01-01T00:00:00Z",
			"--payload", `{"a":[1,2]}`, "--misfire", "catch_up:3", "--max-lateness", "5m", "--overlap", "queue_one",
			"--flex-window", "1m", "--max-attempts", "4", "--idempotency-key", "k1"},
			api.ScheduleRequest{Name: "n", Queue: "q", Every: "15m", Anchor: "2027-01-01T00:00:00Z", Payload: json.RawMessage(`{"a":[1,2]}`),
				MisfirePolicy: "catch_up:3", MaxLateness: "5m", OverlapPolicy: "queue_one", FlexibleWindow: "1m", MaxAttempts: 4, IdempotencyKey: "k1"}, ""},
		{"at", []string{"--name", "n", "--queue", "q", "--at", "2027-03-14T09:00:00-04:00", "--flex-window", "0s"},
			api.ScheduleRequest{Name: "n", Queue: "q", At: "2027-03-14T09:00:00-04:00", FlexibleWindow: "0s"}, ""},
		{"cron dst policy", []string{"--name", "n", "--queue", "q", "--cron", "30 2 * * *", "--tz", "America/New_York", "--dst-gap", "shift", "--dst-repeat", "all"},
			api.ScheduleRequest{Name: "n", Queue: "q", Cron: "30 2 * * *", TimeZone: "America/New_York", DSTGap: "shift", DSTRepeat: "all"}, ""},
		{"payload from file", []string{"--name", "n", "--queue", "q", "--every", "1h", "--payload", "@" + payloadFile},
			api.ScheduleRequest{Name: "n", Queue: "q", Every: "1h", Payload: json.RawMessage(`{"from":"file"}`)}, ""},

		{"no name", []string{"--queue", "q", "--every", "1h"}, api.ScheduleRequest{}, "--name is required"},
		{"no queue", []string{"--name", "n", "--every", "1h"}, api.ScheduleRequest{}, "--queue is required"},
		{"queue and target", []string{"--name", "n", "--queue", "q", "--target", "t", "--every", "1h"}, api.ScheduleRequest{}, "give --queue or --target, not both"},
		{"target", []string{"--name", "n", "--target", "orders", "--every", "1h"}, api.ScheduleRequest{Name: "n", Target: "orders", Every: "1h"}, ""},
		{"no kind", []string{"--name", "n", "--queue", "q"}, api.ScheduleRequest{}, "exactly one of --cron, --at or --every"},
		{"two kinds", []string{"--name", "n", "--queue", "q", "--every", "1h", "--at", "2027-01-01T00:00:00Z"}, api.ScheduleRequest{}, "only one of --cron, --at or --every, not --at and --every"},
		{"bad payload", []string{"--name", "n", "--queue", "q", "--every", "1h", "--payload", "{nope"}, api.ScheduleRequest{}, "--payload: not valid JSON"},
		{"missing payload file", []string{"--name", "n", "--queue", "q", "--every", "1h", "--payload", "@/nonexistent/p.json"}, api.ScheduleRequest{}, "--payload: open /nonexistent/p.json"},
		{"cron without tz", []string{"--name", "n", "--queue", "q", "--cron", "0 2 * * *"}, api.ScheduleRequest{}, "--tz: a cron schedule needs a time zone"},
		{"bad cron", []string{"--name", "n", "--queue", "q", "--cron", "0 24 * * *", "--tz", "UTC"}, api.ScheduleRequest{}, `--cron: hour field "24": out of range 0-23`},
		{"never fires", []string{"--name", "n", "--queue", "q", "--cron", "0 0 31 2 *", "--tz", "UTC"}, api.ScheduleRequest{}, "can never fire"},
		{"bad zone", []string{"--name", "n", "--queue", "q", "--cron", "0 0 * * *", "--tz", "Mars/Olympus"}, api.ScheduleRequest{}, `--tz: time zone "Mars/Olympus": unknown IANA zone`},
		{"bad misfire", []string{"--name", "n", "--queue", "q", "--every", "1h", "--misfire", "later"}, api.ScheduleRequest{}, `--misfire: "later": want skip, fire_once or catch_up:K`},
		{"catch_up K too big", []string{"--name", "n", "--queue", "q", "--every", "1h", "--misfire", "catch_up:1001"}, api.ScheduleRequest{}, "K must be a whole number from 1 to 1000"},
		{"bad lateness", []string{"--name", "n", "--queue", "q", "--every", "1h", "--max-lateness", "soon"}, api.ScheduleRequest{}, `--max-lateness: "soon": not a duration`},
		{"bad overlap", []string{"--name", "n", "--queue", "q", "--every", "1h", "--overlap", "never"}, api.ScheduleRequest{}, "--overlap: \"never\""},
		{"flex too wide", []string{"--name", "n", "--queue", "q", "--every", "1h", "--flex-window", "25h"}, api.ScheduleRequest{}, "--flex-window: 25h0m0s: must be whole seconds from 0 to 24h"},
		{"zero lateness", []string{"--name", "n", "--queue", "q", "--every", "1h", "--max-lateness", "0s"}, api.ScheduleRequest{}, `--max-lateness: "0s": must be positive (leave it out for the default)`},
		{"attempts", []string{"--name", "n", "--queue", "q", "--every", "1h", "--max-attempts", "-1"}, api.ScheduleRequest{}, "--max-attempts: -1 must be at least 1 (0 or absent: the default)"},
		{"dst with every", []string{"--name", "n", "--queue", "q", "--every", "1h", "--dst-gap", "shift"}, api.ScheduleRequest{}, "--dst-gap: DST options only apply to a cron schedule"},
		{"anchor with cron", []string{"--name", "n", "--queue", "q", "--cron", "@daily", "--tz", "UTC", "--anchor", "2027-01-01T00:00:00Z"}, api.ScheduleRequest{}, "--anchor: an anchor only applies"},
		{"bad queue name", []string{"--name", "n", "--queue", "a queue", "--every", "1h"}, api.ScheduleRequest{}, "--queue: \"a queue\": use only letters"},
		{"positional", []string{"extra", "--name", "n", "--queue", "q", "--every", "1h"}, api.ScheduleRequest{}, "unknown command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := clitest.NewFactory(false)
			var got *CreateOptions
			err := clitest.Exec(t, NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil }), tc.args...)
			if tc.err != "" {
				if tc.name == "positional" {
					if err == nil {
						t.Fatal("no error")
					}
					return
				}
				clitest.WantErr(t, err, tc.err, cmdutil.ExitInvalid)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Request, tc.want) {
				t.Errorf("request\n got %+v\nwant %+v", got.Request, tc.want)
			}
		})
	}
}

func TestUpdateFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var got *UpdateOptions
	cmd := NewCmdUpdate(f, func(o *UpdateOptions) error { got = o; return nil })
	if err := clitest.Exec(t, cmd, "nightly", "--cron", "30 2 * * *", "--max-attempts", "3"); err != nil {
		t.Fatal(err)
	}
	if got.Ref != "nightly" || !got.Patch.Changed["cron"] || !got.Patch.Changed["max-attempts"] || len(got.Patch.Changed) != 2 {
		t.Errorf("options %+v", got.Patch)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nightly"}, "nothing to update"},
		{[]string{"nightly", "--every", "1h", "--cron", "@daily"}, "only one of --cron, --at or --every"},
		{[]string{"nightly", "--payload", "[1,"}, "--payload: not valid JSON"},
	} {
		f, _, _ := clitest.NewFactory(false)
		err := clitest.Exec(t, NewCmdUpdate(f, func(*UpdateOptions) error { return nil }), tc.args...)
		clitest.WantErr(t, err, tc.want, cmdutil.ExitInvalid)
	}
	if err := clitest.Exec(t, NewCmdUpdate(f, func(*UpdateOptions) error { return nil })); err == nil {
		t.Error("update without an ID accepted")
	}
}

// changeCmds are pause, resume and cancel by verb.
var changeCmds = map[string]func(*cmdutil.Factory, func(*ChangeOptions) error) *cobra.Command{
	"pause": NewCmdPause, "resume": NewCmdResume, "cancel": NewCmdCancel,
}

func TestSimpleCommandFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var get *GetOptions
	if err := clitest.Exec(t, NewCmdGet(f, func(o *GetOptions) error { get = o; return nil }), "team/nightly"); err != nil || get.Ref != "team/nightly" {
		t.Errorf("get: %v %+v", err, get)
	}
	var ch *ChangeOptions
	for _, verb := range []string{"pause", "resume", "cancel"} {
		if err := clitest.Exec(t, changeCmds[verb](f, func(o *ChangeOptions) error { ch = o; return nil }), "sch_1"); err != nil || ch.Verb != verb || ch.Ref != "sch_1" {
			t.Errorf("%s: %v %+v", verb, err, ch)
		}
		if err := clitest.Exec(t, changeCmds[verb](f, func(*ChangeOptions) error { return nil })); err == nil {
			t.Errorf("%s without an ID accepted", verb)
		}
	}
	var list *ListOptions
	if err := clitest.Exec(t, NewCmdList(f, func(o *ListOptions) error { list = o; return nil }), "--state", "paused"); err != nil || list.State != "PAUSED" {
		t.Errorf("list: %v %+v", err, list)
	}
	clitest.WantErr(t, clitest.Exec(t, NewCmdList(f, func(*ListOptions) error { return nil }), "--state", "sleeping"), `--state "sleeping": want one of ACTIVE, PAUSED, CANCELED, COMPLETED`, cmdutil.ExitInvalid)

	for _, name := range []string{"apply", "diff", "validate"} {
		var ap *ApplyOptions
		runF := func(o *ApplyOptions) error { ap = o; return nil }
		build := map[string]func(*cmdutil.Factory, func(*ApplyOptions) error) *cobra.Command{"apply": NewCmdApply, "diff": NewCmdDiff, "validate": NewCmdValidate}[name]
		if err := clitest.Exec(t, build(f, runF), "-f", "s.yaml"); err != nil || ap.File != "s.yaml" {
			t.Errorf("%s: %v %+v", name, err, ap)
		}
		clitest.WantErr(t, clitest.Exec(t, build(f, runF)), "-f FILE is required", cmdutil.ExitInvalid)
	}
}

func TestPagingFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var ls *ListOptions
	if err := clitest.Exec(t, NewCmdList(f, func(o *ListOptions) error { ls = o; return nil }), "--all", "--limit", "1000"); err != nil ||
		ls.Paging != (cmdutil.PageFlags{All: true, Limit: 1000}) {
		t.Errorf("list: %v %+v", err, ls)
	}
	clitest.WantErr(t, clitest.Exec(t, NewCmdList(f, func(*ListOptions) error { return nil }), "--limit", "1001"), "--limit 1001: must be from 1 to 1000", cmdutil.ExitInvalid)
}
