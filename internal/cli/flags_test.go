package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
)

// Flag parsing, gh style: each command runs with its real flags, and runF
// captures the options it would run with (or the error, before any call).

func execCmd(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	if args == nil {
		args = []string{} // not the test binary's own arguments
	}
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.Execute()
}

func wantErr(t *testing.T, err error, want string, code int) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want %q", err, want)
	}
	if c := ExitCode(err); c != code {
		t.Errorf("exit status %d, want %d (%v)", c, code, err)
	}
}

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
		{"no kind", []string{"--name", "n", "--queue", "q"}, api.ScheduleRequest{}, "exactly one of --cron, --at or --every"},
		{"two kinds", []string{"--name", "n", "--queue", "q", "--every", "1h", "--at", "2027-01-01T00:00:00Z"}, api.ScheduleRequest{}, "only one of --cron, --at or --every, not --at and --every"},
		{"bad payload", []string{"--name", "n", "--queue", "q", "--every", "1h", "--payload", "{nope"}, api.ScheduleRequest{}, "--payload: not valid JSON"},
		{"missing payload file", []string{"--name", "n", "--queue", "q", "--every", "1h", "--payload", "@/nonexistent/p.json"}, api.ScheduleRequest{}, "--payload: open /nonexistent/p.json"},
		{"cron without tz", []string{"--name", "n", "--queue", "q", "--cron", "0 2 * * *"}, api.ScheduleRequest{}, "--tz: a cron schedule needs a time zone"},
		{"bad cron", []string{"--name", "n", "--queue", "q", "--cron", "0 24 * * *", "--tz", "UTC"}, api.ScheduleRequest{}, `--cron: hour field "24": out of range 0-23`},
		{"never fires", []string{"--name", "n", "--queue", "q", "--cron", "0 0 31 2 *", "--tz", "UTC"}, api.ScheduleRequest{}, "can never fire"},
		{"bad zone", []string{"--name", "n", "--queue", "q", "--cron", "0 0 * * *", "--tz", "Mars/Olympus"}, api.ScheduleRequest{}, `--tz: time zone "Mars/Olympus": unknown IANA zone`},
		{"bad misfire", []string{"--name", "n", "--queue", "q", "--every", "1h", "--misfire", "later"}, api.ScheduleRequest{}, `--misfire: "later": want skip, fire_once or catch_up:K`},
		{"catch_up K too big", []string{"--name", "n", "--queue", "q", "--every", "1h", "--misfire", "catch_up:1001"}, api.ScheduleRequest{}, "K must be a number from 1 to 1000"},
		{"bad lateness", []string{"--name", "n", "--queue", "q", "--every", "1h", "--max-lateness", "soon"}, api.ScheduleRequest{}, `--max-lateness: "soon": not a duration`},
		{"bad overlap", []string{"--name", "n", "--queue", "q", "--every", "1h", "--overlap", "never"}, api.ScheduleRequest{}, "--overlap: \"never\""},
		{"flex too wide", []string{"--name", "n", "--queue", "q", "--every", "1h", "--flex-window", "25h"}, api.ScheduleRequest{}, "--flex-window: 25h0m0s: must be from 0s to 24h0m0s"},
		{"zero lateness", []string{"--name", "n", "--queue", "q", "--every", "1h", "--max-lateness", "0s"}, api.ScheduleRequest{}, `--max-lateness: "0s": must be positive (leave it out for the default)`},
		{"attempts", []string{"--name", "n", "--queue", "q", "--every", "1h", "--max-attempts", "-1"}, api.ScheduleRequest{}, "--max-attempts: -1: must be 1 to 1000"},
		{"dst with every", []string{"--name", "n", "--queue", "q", "--every", "1h", "--dst-gap", "shift"}, api.ScheduleRequest{}, "--dst-gap: DST options only apply to a cron schedule"},
		{"anchor with cron", []string{"--name", "n", "--queue", "q", "--cron", "@daily", "--tz", "UTC", "--anchor", "2027-01-01T00:00:00Z"}, api.ScheduleRequest{}, "--anchor: an anchor only applies"},
		{"bad queue name", []string{"--name", "n", "--queue", "a queue", "--every", "1h"}, api.ScheduleRequest{}, "--queue: \"a queue\": use only letters"},
		{"positional", []string{"extra", "--name", "n", "--queue", "q", "--every", "1h"}, api.ScheduleRequest{}, "unknown command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := testFactory(false)
			var got *CreateOptions
			err := execCmd(t, NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil }), tc.args...)
			if tc.err != "" {
				if tc.name == "positional" {
					if err == nil {
						t.Fatal("no error")
					}
					return
				}
				wantErr(t, err, tc.err, ExitInvalid)
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
	f, _, _ := testFactory(false)
	var got *UpdateOptions
	cmd := NewCmdUpdate(f, func(o *UpdateOptions) error { got = o; return nil })
	if err := execCmd(t, cmd, "nightly", "--cron", "30 2 * * *", "--max-attempts", "3"); err != nil {
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
		f, _, _ := testFactory(false)
		err := execCmd(t, NewCmdUpdate(f, func(*UpdateOptions) error { return nil }), tc.args...)
		wantErr(t, err, tc.want, ExitInvalid)
	}
	if err := execCmd(t, NewCmdUpdate(f, func(*UpdateOptions) error { return nil })); err == nil {
		t.Error("update without an ID accepted")
	}
}

func TestSimpleCommandFlags(t *testing.T) {
	f, _, _ := testFactory(false)
	var get *GetOptions
	if err := execCmd(t, NewCmdGet(f, func(o *GetOptions) error { get = o; return nil }), "team/nightly"); err != nil || get.Ref != "team/nightly" {
		t.Errorf("get: %v %+v", err, get)
	}
	var ch *ChangeOptions
	for _, verb := range []string{"pause", "resume", "cancel"} {
		if err := execCmd(t, NewCmdChange(f, verb, func(o *ChangeOptions) error { ch = o; return nil }), "sch_1"); err != nil || ch.Verb != verb || ch.Ref != "sch_1" {
			t.Errorf("%s: %v %+v", verb, err, ch)
		}
		if err := execCmd(t, NewCmdChange(f, verb, func(*ChangeOptions) error { return nil })); err == nil {
			t.Errorf("%s without an ID accepted", verb)
		}
	}
	var list *ListOptions
	if err := execCmd(t, NewCmdList(f, func(o *ListOptions) error { list = o; return nil }), "--state", "paused"); err != nil || list.State != "PAUSED" {
		t.Errorf("list: %v %+v", err, list)
	}
	wantErr(t, execCmd(t, NewCmdList(f, func(*ListOptions) error { return nil }), "--state", "sleeping"), `--state "sleeping": want one of ACTIVE, PAUSED, CANCELED, COMPLETED`, ExitInvalid)

	var occ *OccurrencesOptions
	if err := execCmd(t, NewCmdOccurrences(f, func(o *OccurrencesOptions) error { occ = o; return nil }),
		"--schedule", "nightly", "--state", "dead", "--queue", "q", "--limit", "5"); err != nil ||
		occ.Schedule != "nightly" || occ.State != "DEAD" || occ.Queue != "q" || occ.Paging.Limit != 5 {
		t.Errorf("occurrences: %v %+v", err, occ)
	}
	wantErr(t, execCmd(t, NewCmdOccurrences(f, func(*OccurrencesOptions) error { return nil }), "--state", "done"), "--state \"done\"", ExitInvalid)
	wantErr(t, execCmd(t, NewCmdOccurrences(f, func(*OccurrencesOptions) error { return nil }), "--limit", "-3"), "--limit -3", ExitInvalid)

	var dl *DLQListOptions
	if err := execCmd(t, NewCmdDLQList(f, func(o *DLQListOptions) error { dl = o; return nil }), "--queue", "q", "--limit", "9"); err != nil || dl.Queue != "q" || dl.Paging.Limit != 9 {
		t.Errorf("dlq list: %v %+v", err, dl)
	}
	var rp *ReplayOptions
	if err := execCmd(t, NewCmdReplay(f, func(o *ReplayOptions) error { rp = o; return nil }), "occ_1"); err != nil || rp.ID != "occ_1" {
		t.Errorf("replay: %v %+v", err, rp)
	}
	var at *AttemptsOptions
	if err := execCmd(t, NewCmdAttempts(f, func(o *AttemptsOptions) error { at = o; return nil }), "occ_1"); err != nil || at.ID != "occ_1" {
		t.Errorf("attempts: %v %+v", err, at)
	}
	for _, name := range []string{"apply", "diff", "validate"} {
		var ap *ApplyOptions
		runF := func(o *ApplyOptions) error { ap = o; return nil }
		build := map[string]func(*Factory, func(*ApplyOptions) error) *cobra.Command{"apply": NewCmdApply, "diff": NewCmdDiff, "validate": NewCmdValidate}[name]
		if err := execCmd(t, build(f, runF), "-f", "s.yaml"); err != nil || ap.File != "s.yaml" {
			t.Errorf("%s: %v %+v", name, err, ap)
		}
		wantErr(t, execCmd(t, build(f, runF)), "-f FILE is required", ExitInvalid)
	}
}

func TestQueueFlags(t *testing.T) {
	f, _, _ := testFactory(false)
	var cl *ClaimOptions
	if err := execCmd(t, NewCmdClaim(f, func(o *ClaimOptions) error { cl = o; return nil }), "--queue", "q", "--lease", "2m", "--wait", "30s", "--worker-id", "w9"); err != nil {
		t.Fatal(err)
	}
	if want := (api.ClaimRequest{Queue: "q", WorkerID: "w9", Limit: 1, Lease: "2m0s", Wait: "30s"}); !reflect.DeepEqual(cl.Request, want) {
		t.Errorf("claim %+v, want %+v", cl.Request, want)
	}
	if err := execCmd(t, NewCmdClaim(f, func(o *ClaimOptions) error { cl = o; return nil }), "--queue", "q"); err != nil ||
		cl.Request.Lease != "" || cl.Request.Wait != "" || cl.Request.WorkerID == "" {
		t.Errorf("claim defaults: %v %+v", err, cl.Request)
	}
	for _, tc := range []struct {
		cmd  *cobra.Command
		args []string
		want string
	}{
		{NewCmdClaim(f, func(*ClaimOptions) error { return nil }), nil, "--queue is required"},
		{NewCmdClaim(f, func(*ClaimOptions) error { return nil }), []string{"--queue", "q", "--wait", "6m"}, "--wait 6m0s: must be from 0 to 5m0s"},
		{NewCmdClaim(f, func(*ClaimOptions) error { return nil }), []string{"--queue", "q", "--lease", "10ms"}, "--lease 10ms: must be from 1s to 12h0m0s"},
		{NewCmdHeartbeat(f, func(*HeartbeatOptions) error { return nil }), []string{"occ_1"}, "--attempt is required"},
		{NewCmdAck(f, func(*AckOptions) error { return nil }), []string{"occ_1"}, "--attempt is required"},
		{NewCmdAck(f, func(*AckOptions) error { return nil }), []string{"occ_1", "--attempt", "0"}, "--attempt 0: must be at least 1"},
		{NewCmdNack(f, func(*NackOptions) error { return nil }), []string{"occ_1", "--attempt", "2"}, "--class is required"},
		{NewCmdNack(f, func(*NackOptions) error { return nil }), []string{"occ_1", "--attempt", "2", "--class", "fatal"}, `--class "fatal": want retryable or permanent`},
	} {
		wantErr(t, execCmd(t, tc.cmd, tc.args...), tc.want, ExitInvalid)
	}
	var hb *HeartbeatOptions
	if err := execCmd(t, NewCmdHeartbeat(f, func(o *HeartbeatOptions) error { hb = o; return nil }), "occ_1", "--attempt", "3", "--lease", "1m"); err != nil ||
		hb.ID != "occ_1" || hb.Request != (api.HeartbeatRequest{Attempt: 3, Lease: "1m0s"}) {
		t.Errorf("heartbeat %v %+v", err, hb)
	}
	var nk *NackOptions
	if err := execCmd(t, NewCmdNack(f, func(o *NackOptions) error { nk = o; return nil }), "occ_1", "--attempt", "3", "--class", "permanent", "--error", "bad data"); err != nil ||
		nk.Request != (api.NackRequest{Attempt: 3, Class: "permanent", Error: "bad data"}) {
		t.Errorf("nack %v %+v", err, nk)
	}
}

func TestWorkerFlags(t *testing.T) {
	f, _, _ := testFactory(false)
	var w *WorkerOptions
	err := execCmd(t, NewCmdWorker(f, func(o *WorkerOptions) error { w = o; return nil }),
		"--queue", "q", "--concurrency", "4", "--lease", "1m", "--permanent-exit-codes", "65,78", "--", "sh", "-c", "exit 0", "--not-a-worker-flag")
	if err != nil {
		t.Fatal(err)
	}
	if w.Queue != "q" || w.Concurrency != 4 || w.Lease != time.Minute || w.Wait != 30*time.Second ||
		!reflect.DeepEqual(w.PermanentCodes, map[int]bool{65: true, 78: true}) ||
		!reflect.DeepEqual(w.Argv, []string{"sh", "-c", "exit 0", "--not-a-worker-flag"}) || w.WorkerID == "" {
		t.Errorf("options %+v", w)
	}
	// Without --, everything from CMD on is CMD's.
	if err := execCmd(t, NewCmdWorker(f, func(o *WorkerOptions) error { w = o; return nil }), "--queue", "q", "ls", "-l"); err != nil ||
		!reflect.DeepEqual(w.Argv, []string{"ls", "-l"}) || !w.PermanentCodes[65] || len(w.PermanentCodes) != 1 {
		t.Errorf("%v %+v", err, w)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "true"}, "--queue is required"},
		{[]string{"--queue", "q", "--concurrency", "0", "--", "true"}, "--concurrency 0"},
		{[]string{"--queue", "q", "--permanent-exit-codes", "0", "--", "true"}, "0 is not an exit status from 1 to 255"},
		{[]string{"--queue", "q", "--permanent-exit-codes", "x", "--", "true"}, "invalid argument"},
		{[]string{"--queue", "q", "--", "/nonexistent/job.sh"}, `command "/nonexistent/job.sh"`},
		{[]string{"--queue", "q", "--wait", "10m", "--", "true"}, "--wait 10m0s"},
	} {
		err := execCmd(t, NewCmdWorker(f, func(*WorkerOptions) error { return nil }), tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if err := execCmd(t, NewCmdWorker(f, func(*WorkerOptions) error { return nil }), "--queue", "q"); err == nil || !strings.Contains(err.Error(), "give the command to run after --") {
		t.Errorf("no command: %v", err)
	}
}

// TestGlobalAddressAndToken: --addr and --token win over SCHED_ADDR and
// SCHED_TOKEN, which win over the default socket; a bad address is
// invalid input.
func TestGlobalAddressAndToken(t *testing.T) {
	env := map[string]string{"SCHED_ADDR": "tcp:127.0.0.1:7070", "SCHED_TOKEN": "from-env", "XDG_RUNTIME_DIR": "/run/user/9"}
	f, _, _ := testFactory(false)
	f.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := f.Client()
	if err != nil || c.Addr() != "tcp:127.0.0.1:7070" {
		t.Fatalf("env address: %v %v", c, err)
	}
	f.addr = "unix:/tmp/x.sock"
	if c, _ := f.Client(); c.Addr() != "unix:/tmp/x.sock" {
		t.Errorf("flag address %s", c.Addr())
	}
	delete(env, "SCHED_ADDR")
	f.addr = ""
	if c, _ := f.Client(); c.Addr() != "unix:/run/user/9/sched/schedd.sock" {
		t.Errorf("default address %s", c.Addr())
	}
	f.addr = "localhost:80"
	_, err = f.Client()
	wantErr(t, err, `invalid address "localhost:80"`, ExitInvalid)
}

// TestEveryCommandHasHelpAndExample: --help text and an example on every
// command, completion included.
func TestEveryCommandHasHelpAndExample(t *testing.T) {
	f, _, _ := testFactory(false)
	root := NewRootCmd(f)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		if c.Short == "" || c.Example == "" {
			t.Errorf("%s: Short %q, Example %q", c.CommandPath(), c.Short, c.Example)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 25 {
		t.Errorf("only %d commands", n)
	}
}
