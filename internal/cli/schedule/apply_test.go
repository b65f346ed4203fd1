package schedule

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// stubFailing is a stub on which every call fails with err.
func stubFailing(err error) *clitest.Stub {
	s := clitest.NewStub()
	s.Err = err
	return s
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "schedules.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func apply(t *testing.T, s *clitest.Stub, file string) string {
	t.Helper()
	f, out, _ := clitest.NewFactory(false)
	if err := applyRun(&ApplyOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, File: file}); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	return out.String()
}

func diff(t *testing.T, s *clitest.Stub, file string) (string, error) {
	t.Helper()
	f, out, _ := clitest.NewFactory(false)
	err := diffRun(&ApplyOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, File: file})
	return out.String(), err
}

const threeSchedules = `schedules:
  - name: nightly-report
    queue: reports
    cron: "0 2 * * *"
    time_zone: Europe/Berlin
    payload:
      format: pdf
      pages: [1, 2]
  - name: launch
    queue: mail
    at: 2027-03-14T09:00:00-04:00
  - name: sync
    queue: sync
    every: 15m
    overlap_policy: skip_if_running
`

// TestApplyIsIdempotent: the same file twice changes nothing; changing one
// field of one schedule updates only that schedule, once.
func TestApplyIsIdempotent(t *testing.T) {
	s := clitest.NewStub()
	file := writeFile(t, threeSchedules)
	out := apply(t, s, file)
	if !strings.Contains(out, "3 created, 0 updated, 0 unchanged") {
		t.Fatalf("first apply:\n%s", out)
	}
	if d, err := diff(t, s, file); err != nil || !strings.Contains(d, "No changes: 3 schedules") {
		t.Fatalf("diff after apply: %v\n%s", err, d)
	}
	out = apply(t, s, file)
	if !strings.Contains(out, "0 created, 0 updated, 3 unchanged") {
		t.Fatalf("second apply:\n%s", out)
	}
	f, jout, _ := clitest.NewFactory(false)
	if err := applyRun(&ApplyOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, File: file, JSON: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range clitest.MustJSON(t, jout.Bytes()).([]any) {
		if ch, ok := p.(map[string]any)["changes"].([]any); !ok || len(ch) != 0 || p.(map[string]any)["action"] != "unchanged" {
			t.Errorf("unchanged entry %v: changes must be []", p)
		}
	}
	for _, n := range []string{"nightly-report", "launch", "sync"} {
		if v := s.Schedules[n].Version; v != 1 {
			t.Errorf("%s at version %d after two applies", n, v)
		}
	}

	changed := writeFile(t, strings.Replace(threeSchedules, "every: 15m", "every: 15m\n    max_lateness: 5m", 1))
	d, err := diff(t, s, changed)
	if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), "1 schedule would change") {
		t.Errorf("diff with a change: %v", err)
	}
	if !strings.Contains(d, "~ update sync (sch_03, version 1)\n    max_lateness: 1m0s -> 5m0s\n") || strings.Contains(d, "nightly") {
		t.Errorf("diff:\n%s", d)
	}
	out = apply(t, s, changed)
	if !strings.Contains(out, "updated sync (sch_03, version 2): max_lateness") || !strings.Contains(out, "0 created, 1 updated, 2 unchanged") {
		t.Errorf("apply with a change:\n%s", out)
	}
	if s.Schedules["sync"].Version != 2 || s.Schedules["nightly-report"].Version != 1 || s.Schedules["launch"].Version != 1 {
		t.Errorf("versions: sync %d, nightly %d, launch %d", s.Schedules["sync"].Version, s.Schedules["nightly-report"].Version, s.Schedules["launch"].Version)
	}
	apply(t, s, changed)
	if s.Schedules["sync"].Version != 2 {
		t.Errorf("re-applying the change bumped the version again")
	}
}

// TestApplyLeavesOthersAlone: schedules not in the file are not touched.
func TestApplyLeavesOthersAlone(t *testing.T) {
	s := clitest.Seeded() // holds "nightly"
	apply(t, s, writeFile(t, threeSchedules))
	for _, c := range s.Calls() {
		if strings.HasSuffix(c, " nightly") || strings.HasSuffix(c, " sch_01") {
			t.Errorf("touched a schedule outside the file: %s", c)
		}
	}
}

// TestDiffNormalizesDefaults: a field left out of the file equals the
// default schedd reports, however it spells it.
func TestDiffNormalizesDefaults(t *testing.T) {
	live := api.Schedule{
		Name: "n", Queue: "q", Kind: "cron", Expression: "0  2 * * *", TimeZone: "UTC", DSTGap: "skip", DSTRepeat: "first",
		Payload: json.RawMessage(`{ "b": 2, "a": [1, {"c": null}] }`), MisfirePolicy: "fire_once", MaxLateness: "1m0s",
		OverlapPolicy: "allow", FlexibleWindow: "0s", MaxAttempts: 10, RetryBase: "1s", RetryCap: "5m0s", RetryDeadline: "24h0m0s",
	}
	want, err := checkRequest(api.ScheduleRequest{Name: "n", Queue: "q", Cron: "0 2 * * *", TimeZone: "UTC", Payload: json.RawMessage(`{"a":[1,{"c":null}],"b":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffSchedules(fromLive(live), want); len(d) != 0 {
		t.Errorf("defaults differ: %+v", d)
	}
	// Empty strings from schedd are the defaults too.
	live2 := live
	live2.MaxLateness, live2.FlexibleWindow, live2.OverlapPolicy, live2.MaxAttempts, live2.RetryCap = "", "", "", 0, ""
	if d := diffSchedules(fromLive(live2), want); len(d) != 0 {
		t.Errorf("empty defaults differ: %+v", d)
	}
	// The same cron in other words is not a change; another time is.
	for expr, same := range map[string]bool{"0 2 * * *": true, "0 2 * * * ": true, "0 0 2 * * *": true, "0 3 * * *": false} {
		w, err := checkRequest(api.ScheduleRequest{Name: "n", Queue: "q", Cron: expr, TimeZone: "UTC", Payload: live.Payload})
		if err != nil {
			t.Fatal(err)
		}
		if d := diffSchedules(fromLive(live), w); (len(d) == 0) != same {
			t.Errorf("%q: changes %+v, want same=%v", expr, d, same)
		}
	}
	// An at instant in another offset is the same instant.
	liveAt := api.Schedule{Name: "n", Queue: "q", Kind: "at", Expression: "2027-03-14T13:00:00Z", TimeZone: "UTC", DSTGap: "skip", DSTRepeat: "first"}
	w, _ := checkRequest(api.ScheduleRequest{Name: "n", Queue: "q", At: "2027-03-14T09:00:00-04:00"})
	if d := diffSchedules(fromLive(liveAt), w); len(d) != 0 {
		t.Errorf("at: %+v", d)
	}
	// Every: 60m is 1h; no anchor is the epoch.
	liveEvery := api.Schedule{Name: "n", Queue: "q", Kind: "every", Expression: "1h0m0s", TimeZone: "UTC", Anchor: "1970-01-01T00:00:00Z", DSTGap: "skip", DSTRepeat: "first"}
	w, _ = checkRequest(api.ScheduleRequest{Name: "n", Queue: "q", Every: "60m"})
	if d := diffSchedules(fromLive(liveEvery), w); len(d) != 0 {
		t.Errorf("every: %+v", d)
	}
	// A change of kind shows the old expression under its kind.
	w, _ = checkRequest(api.ScheduleRequest{Name: "n", Queue: "q", Every: "2h"})
	d := diffSchedules(fromLive(live), w)
	if len(d) < 2 || d[0] != (change{Field: "kind", From: "cron", To: "every"}) || d[1] != (change{Field: "every", From: "cron 0 2 * * *", To: "2h0m0s"}) {
		t.Errorf("kind change: %+v", d)
	}
}

// TestValidateFile: a good file passes; the first bad schedule is named
// with its field and line; exit status 2.
func TestValidateFile(t *testing.T) {
	f, out, _ := clitest.NewFactory(false)
	if err := validateRun(&ApplyOptions{IO: f, File: writeFile(t, threeSchedules)}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), ": 3 schedules, valid\n") {
		t.Errorf("got %q", out)
	}
	cases := []struct {
		name, body, want string
	}{
		{"bad cron", "schedules:\n  - name: a\n    queue: q\n    every: 1h\n  - name: nightly\n    queue: q\n    cron: '61 * * * *'\n    time_zone: UTC\n",
			`:7: schedule "nightly" (#2), field cron: minute field "61": out of range 0-59`},
		{"unknown field", "schedules:\n  - name: a\n    queue: q\n    every: 1h\n    max_latenes: 5m\n",
			`:5: schedule "a" (#1), field max_latenes: unknown field "max_latenes"; did you mean max_lateness?`},
		{"a field spelled as elsewhere", "schedules:\n  - name: a\n    queue: q\n    cron: 0 9 * * *\n    timezone: UTC\n",
			`field timezone: unknown field "timezone"; did you mean time_zone?`},
		{"wrong type", "schedules:\n  - name: a\n    queue: q\n    every: 1h\n    max_attempts: many\n",
			`:5: schedule "a" (#1), field max_attempts: cannot unmarshal`},
		{"no name", "schedules:\n  - queue: q\n    every: 1h\n", `:2: schedule #1, field name: must not be empty`},
		{"duplicate", "schedules:\n  - name: a\n    queue: q\n    every: 1h\n  - name: a\n    queue: q\n    every: 2h\n",
			`:5: schedule "a" (#2), field name: also the name of schedule #1`},
		{"payload inf", "schedules:\n  - name: a\n    queue: q\n    every: 1h\n    payload: {x: .inf}\n", `field payload: +Inf has no JSON form`},
		{"no time zone", "schedules:\n  - name: a\n    queue: q\n    cron: '@daily'\n", `schedule "a" (#1), field time_zone: a cron schedule needs a time zone`},
		{"two kinds", "schedules:\n  - name: a\n    queue: q\n    cron: '@daily'\n    every: 1h\n    time_zone: UTC\n", `field cron: give exactly one of cron, at or every`},
		{"idempotency key is not a file field", "schedules:\n  - name: a\n    queue: q\n    every: 1h\n    idempotency_key: k\n", `unknown field "idempotency_key"`},
		{"not yaml", "schedules: [\n", "did not find expected"},
		{"empty", "# nothing\n", "the file is empty"},
		{"top-level typo", "schedule:\n  - name: a\n", `:1: field schedule: unknown field "schedule"; did you mean schedules?`},
		{"two documents", "schedules: []\n---\nschedules: []\n", "more than one YAML document"},
		{"a list at the top", "- name: a\n", "cannot unmarshal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, out, _ := clitest.NewFactory(false)
			err := validateRun(&ApplyOptions{IO: f, File: writeFile(t, tc.body)})
			clitest.WantErr(t, err, tc.want, cmdutil.ExitInvalid)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("%T is not a FileError", err)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q", out)
			}
		})
	}
}

// TestYAMLPayloadToJSON: any YAML value becomes the JSON the worker gets.
func TestYAMLPayloadToJSON(t *testing.T) {
	body := `schedules:
  - name: a
    queue: q
    every: 1h
    payload:
      format: pdf
      pages: [1, 2.5, -3]
      when: 2027-03-14T09:00:00Z
      flag: yes
      on: true
      none: null
      7: seven
      nested: {list: [{k: v}]}
  - name: b
    queue: q
    every: 1h
    payload: just text
  - name: c
    queue: q
    every: 1h
    payload: null
`
	entries, err := parseScheduleFile("f.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"7":"seven","flag":"yes","format":"pdf","nested":{"list":[{"k":"v"}]},"none":null,"on":true,"pages":[1,2.5,-3],"when":"2027-03-14T09:00:00Z"}`
	if got := string(entries[0].Request.Payload); got != want {
		t.Errorf("payload\n got %s\nwant %s", got, want)
	}
	if got := string(entries[1].Request.Payload); got != `"just text"` {
		t.Errorf("text payload %s", got)
	}
	if entries[2].Request.Payload != nil {
		t.Errorf("null payload %s", entries[2].Request.Payload)
	}
}

// TestDiffExitStatus: like diff(1) and kubectl diff, 0 for no changes, 1
// for changes (silent: the plan is the output), 2 for invalid input, 3 for
// any other error, so that 1 always means "differences".
func TestDiffExitStatus(t *testing.T) {
	file := writeFile(t, threeSchedules)
	synced := clitest.NewStub()
	apply(t, synced, file)
	for _, tc := range []struct {
		name   string
		stub   *clitest.Stub
		file   string
		status int
		silent bool
		msg    string
	}{
		{"in sync", synced, file, cmdutil.ExitOK, false, ""},
		{"differences", clitest.NewStub(), file, cmdutil.ExitFailure, true, "3 schedules would change"},
		{"invalid file", clitest.NewStub(), writeFile(t, "schedules:\n  - name: x\n    queue: q\n    every: soon\n"), cmdutil.ExitInvalid, false, "every"},
		{"schedd refuses the input", stubFailing(&client.Error{Status: 400, Code: api.CodeInvalidArgument, Message: "bad name"}),
			file, cmdutil.ExitInvalid, false, "bad name"},
		{"schedd fails", stubFailing(&client.Error{Status: 500, Code: api.CodeInternal, Message: "disk on fire"}),
			file, cmdutil.ExitTrouble, false, "disk on fire"},
		{"schedd unreachable", stubFailing(&client.DialError{Addr: "unix:/x", Err: errors.New("no socket")}),
			file, cmdutil.ExitTrouble, false, "cannot connect to schedd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := diff(t, tc.stub, tc.file)
			if c := cmdutil.ExitCode(err); c != tc.status {
				t.Fatalf("exit %d, want %d (%v)", c, tc.status, err)
			}
			if err == nil {
				return
			}
			var se *cmdutil.StatusError
			if !errors.As(err, &se) || se.Silent != tc.silent || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %#v %q, want silent %v and %q", se, err, tc.silent, tc.msg)
			}
		})
	}
}
