package schedule

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

var bg = context.Background()

var (
	scheduleKeys = []string{"anchor", "created_at", "dst_gap", "dst_repeat", "expression", "flexible_window", "kind",
		"max_attempts", "max_lateness", "misfire_policy", "missed_count", "name", "next_fire_at", "next_run_at", "overlap_policy", "payload",
		"preview", "queue", "retry_base", "retry_cap", "retry_deadline", "schedule_id", "state", "time_zone", "updated_at", "version"}
	changeKeys = []string{"canceled", "in_flight", "schedule"}
	planKeys   = []string{"action", "changes", "name", "schedule_id", "version"}
)

const sampleFile = `schedules:
  - name: nightly-report
    queue: reports
    cron: "0 2 * * *"
    time_zone: Europe/Berlin
    payload: {format: pdf}
  - name: sync
    queue: sync
    every: 15m
`

// TestJSONFields pins the JSON field names of every schedule command,
// nested objects included: scripts depend on them (gh's jsonfieldstest). A
// failure here means a breaking change to the JSON contract.
func TestJSONFields(t *testing.T) {
	clitest.CheckJSONFields(t, clitest.Seeded, []clitest.JSONCase{
		{Name: "create", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return createRun(&CreateOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true,
				Request: api.ScheduleRequest{Name: "new", Queue: "q", Every: "1h", Anchor: "2027-01-01T00:00:00Z", Payload: []byte(`{"a":1}`)}})
		}, Keys: append([]string{"created"}, scheduleKeys...)},
		{Name: "get", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return getRun(&GetOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Ref: "nightly"})
		}, Keys: scheduleKeys},
		{Name: "list", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return listRun(&ListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true})
		}, Keys: scheduleKeys},
		{Name: "update", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return updateRun(&UpdateOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Ref: "nightly",
				Patch: &schedulePatch{Values: scheduleFlags{MaxAttempts: 3}, Changed: map[string]bool{"max-attempts": true}}})
		}, Keys: changeKeys},
		{Name: "pause", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return changeRun(&ChangeOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Verb: "pause", Ref: "nightly"})
		}, Keys: changeKeys},
		{Name: "resume", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return changeRun(&ChangeOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Verb: "resume", Ref: "nightly"})
		}, Keys: changeKeys},
		{Name: "cancel", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return changeRun(&ChangeOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Verb: "cancel", Ref: "nightly"})
		}, Keys: changeKeys},
		{Name: "trigger", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return triggerRun(&TriggerOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Ref: "nightly"})
		}, Keys: []string{"created", "occurrence"}},
		{Name: "validate", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			f.In = strings.NewReader(sampleFile)
			return validateRun(&ApplyOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, File: "-"})
		}, Keys: []string{"file", "schedules", "valid"}},
		{Name: "diff", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			f.In = strings.NewReader(sampleFile)
			err := diffRun(&ApplyOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, File: "-"})
			if err != nil && strings.Contains(err.Error(), "would change") {
				return nil
			}
			return err
		}, Keys: planKeys},
		{Name: "apply", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			f.In = strings.NewReader(sampleFile)
			return applyRun(&ApplyOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, File: "-"})
		}, Keys: planKeys},
	})
	// Nested objects of the contract.
	f, out, _ := clitest.NewFactory(false)
	s := clitest.Seeded()
	changeRun(&ChangeOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Verb: "pause", Ref: "nightly"})
	if sc := clitest.MustJSON(t, out.Bytes()).(map[string]any)["schedule"].(map[string]any); len(sc) != len(scheduleKeys) {
		t.Errorf("change.schedule has %d fields, want %d", len(sc), len(scheduleKeys))
	}
	f, out, _ = clitest.NewFactory(false)
	f.In = strings.NewReader(sampleFile)
	diffRun(&ApplyOptions{IO: f, API: clitest.APIOf(clitest.NewStub()), Ctx: bg, JSON: true, File: "-"})
	ch := clitest.MustJSON(t, out.Bytes()).([]any)[0].(map[string]any)["changes"].([]any)[0].(map[string]any)
	if len(ch) != 3 || ch["field"] == nil || ch["from"] == nil || ch["to"] == nil {
		t.Errorf("diff change fields %v, want field, from, to", ch)
	}
}

// TestEmptyListsAreArrays: JSON for nothing is [], never null (list).
func TestEmptyListsAreArrays(t *testing.T) {
	for name, run := range map[string]func(*cmdutil.Factory, *clitest.Stub) error{
		"list": func(f *cmdutil.Factory, s *clitest.Stub) error {
			return listRun(&ListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true})
		},
	} {
		f, out, _ := clitest.NewFactory(false)
		if err := run(f, clitest.NewStub()); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out.String()) != "[]" {
			t.Errorf("%s: %q, want []", name, out)
		}
	}
}

func TestListPagesThroughAll(t *testing.T) {
	s := clitest.NewStub()
	s.PageSize = 2
	for i := range 5 {
		s.CreateSchedule(bg, api.ScheduleRequest{Name: fmt.Sprintf("s%d", i), Queue: "q", Every: "1h"})
	}
	f, out, _ := clitest.NewFactory(false)
	if err := listRun(&ListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Paging: cmdutil.PageFlags{All: true}}); err != nil {
		t.Fatal(err)
	}
	if n := len(clitest.MustJSON(t, out.Bytes()).([]any)); n != 5 {
		t.Errorf("%d schedules, want 5", n)
	}
	if calls := s.Calls(); len(calls) != 5+3 {
		t.Errorf("calls %v, want 3 list pages", calls)
	}
}

// TestPaging: list shows one page and says more exist, follows tokens and
// --all.
func TestPaging(t *testing.T) {
	clitest.CheckPaging(t, clitest.NewStub, []clitest.PagedCase{
		{Name: "list", List: "schedules", IDKey: "name", Seed: func(s *clitest.Stub, n int) {
			for i := range n {
				s.CreateSchedule(bg, api.ScheduleRequest{Name: fmt.Sprintf("s%d", i), Queue: "q", Every: "1h"})
			}
		}, Run: func(f *cmdutil.Factory, s *clitest.Stub, json bool, p cmdutil.PageFlags) error {
			return listRun(&ListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: json, Paging: p})
		}},
	})
}

// TestTables: on a terminal, aligned columns under a header; elsewhere,
// tab-separated rows under a tab-separated header (--no-headers: the rows
// alone), and never escape codes.
func TestTables(t *testing.T) {
	for _, tty := range []bool{true, false} {
		t.Run(fmt.Sprintf("tty=%v", tty), func(t *testing.T) {
			f, out, _ := clitest.NewFactory(tty)
			if err := listRun(&ListOptions{IO: f, API: clitest.APIOf(clitest.Seeded()), Ctx: bg}); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if strings.Contains(got, "\x1b[") {
				t.Errorf("escape codes: %q", got)
			}
			if !strings.HasPrefix(got, "ID ") && !strings.HasPrefix(got, "ID\t") {
				t.Errorf("no header on tty=%v:\n%s", tty, got)
			}
			header := "ID\tNAME\tSTATE\tVERSION\tKIND\tEXPRESSION\tZONE\tNEXT FIRE\tQUEUE\n"
			row := "sch_01\tnightly\tACTIVE\t3\tevery\t1h\tEurope/Berlin\t2027-03-13T13:00:00Z\treports\n"
			if !tty && got != header+row {
				t.Errorf("got %q, want %q", got, header+row)
			}
			f, out, _ = clitest.NewFactory(tty)
			f.NoHeaders = true
			if err := listRun(&ListOptions{IO: f, API: clitest.APIOf(clitest.Seeded()), Ctx: bg}); err != nil {
				t.Fatal(err)
			}
			if bare := out.String(); strings.Contains(bare, "NAME") || (!tty && bare != row) {
				t.Errorf("--no-headers, tty=%v: %q", tty, bare)
			}
			if tty && !strings.Contains(got, "sch_01  nightly  ACTIVE") {
				t.Errorf("not aligned:\n%s", got)
			}
		})
	}
}

func TestGetTable(t *testing.T) {
	f, out, _ := clitest.NewFactory(false)
	if err := getRun(&GetOptions{IO: f, API: clitest.APIOf(clitest.Seeded()), Ctx: bg, Ref: "nightly"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"schedule_id\tsch_01\n", "state\tACTIVE\n", "version\t3\n", "every\t1h\n", "next_fire_at\t2027-03-13T13:00:00Z\n",
		"planner_cursor\t2027-03-13T14:00:00Z (next_run_at: firings before it are already queued)\n",
		"payload\t{\"format\":\"pdf\"}\n", "misfire\tfire_once, max lateness 1m0s\n",
		"next\t2027-03-13T13:00:00Z  2027-03-13T14:00:00+01:00  a note\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

func TestChangeOutputCounts(t *testing.T) {
	f, out, _ := clitest.NewFactory(true)
	if err := changeRun(&ChangeOptions{IO: f, API: clitest.APIOf(clitest.Seeded()), Ctx: bg, Verb: "pause", Ref: "nightly"}); err != nil {
		t.Fatal(err)
	}
	if want := "paused nightly (sch_01): PAUSED, version 4; 3 occurrences canceled, 1 still in flight\n"; out.String() != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestTableCellsAreSafe: a name with a newline or an escape sequence
// cannot break a row or reach the terminal raw.
func TestTableCellsAreSafe(t *testing.T) {
	s := clitest.Seeded()
	s.Schedules["nightly"].Name = "evil\n\x1b[31mred\tname"
	f, out, _ := clitest.NewFactory(false)
	listRun(&ListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg})
	if strings.Count(out.String(), "\n") != 2 || strings.Contains(out.String(), "\x1b") {
		t.Errorf("unsafe row %q; want the header and one row", out)
	}
}

// TestUpdateMergesFlags: update sends the whole schedule: the current
// settings with the flags given applied, by id.
func TestUpdateMergesFlags(t *testing.T) {
	s := clitest.NewStub()
	s.CreateSchedule(bg, api.ScheduleRequest{Name: "n", Queue: "q", Cron: "0 2 * * *", TimeZone: "Europe/Berlin", DSTGap: "shift",
		Payload: []byte(`{"keep":true}`), MaxLateness: "5m", MaxAttempts: 4})
	f, _, _ := clitest.NewFactory(false)
	err := updateRun(&UpdateOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Cron: "30 3 * * *"}, Changed: map[string]bool{"cron": true}}})
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Schedules["n"]
	if sc.Expression != "30 3 * * *" || sc.DSTGap != "shift" || string(sc.Payload) != `{"keep":true}` ||
		sc.MaxLateness != "5m0s" || sc.MaxAttempts != 4 || sc.Version != 2 {
		t.Errorf("after update %+v", sc)
	}
	if c := s.Calls(); c[len(c)-1] != "update sch_01" {
		t.Errorf("calls %v", c)
	}
	// A new kind drops what applied only to the old one.
	err = updateRun(&UpdateOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Every: "1h", Anchor: "2027-01-01T00:00:00Z"}, Changed: map[string]bool{"every": true, "anchor": true}}})
	if err != nil || s.Schedules["n"].Kind != "every" || s.Schedules["n"].Anchor == "" || s.Schedules["n"].DSTGap != "skip" {
		t.Fatalf("to every: %v %+v", err, s.Schedules["n"])
	}
	// And back to cron: the every anchor goes, the zone stays.
	err = updateRun(&UpdateOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Cron: "@daily"}, Changed: map[string]bool{"cron": true}}})
	if err != nil || s.Schedules["n"].Kind != "cron" || s.Schedules["n"].TimeZone != "Europe/Berlin" || s.Schedules["n"].Anchor != "" {
		t.Fatalf("to cron: %v %+v", err, s.Schedules["n"])
	}
	err = updateRun(&UpdateOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Every: "1h"}, Changed: map[string]bool{"every": true}}})
	if err != nil {
		t.Fatal(err)
	}
	// An invalid result is invalid input, before any PUT.
	n := len(s.Calls())
	err = updateRun(&UpdateOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{DSTGap: "shift"}, Changed: map[string]bool{"dst-gap": true}}})
	clitest.WantErr(t, err, "--dst-gap: DST options only apply to a cron schedule", cmdutil.ExitInvalid)
	if len(s.Calls()) != n+1 {
		t.Errorf("calls after the refusal: %v", s.Calls()[n:])
	}
}

// TestExitCodesOfAnswers: schedd's 400s are invalid input (2); 404, 409
// and the rest are failures (1). (A stale attempt: worker's
// TestStaleAttemptExitsOne.)
func TestExitCodesOfAnswers(t *testing.T) {
	cases := []struct {
		err  *client.Error
		code int
	}{
		{&client.Error{Status: 400, Code: api.CodeInvalidArgument}, cmdutil.ExitInvalid},
		{&client.Error{Status: 400, Code: api.CodeCronNeverFires}, cmdutil.ExitInvalid},
		{&client.Error{Status: 400, Code: api.CodeInvalidTimeZone}, cmdutil.ExitInvalid},
		{&client.Error{Status: 400, Code: api.CodeBadRequest}, cmdutil.ExitInvalid},
		{&client.Error{Status: 404, Code: api.CodeNotFound}, cmdutil.ExitFailure},
		{&client.Error{Status: 409, Code: api.CodeConflict}, cmdutil.ExitFailure},
		{&client.Error{Status: 409, Code: api.CodeStaleAttempt}, cmdutil.ExitFailure},
		{&client.Error{Status: 401, Code: api.CodeUnauthorized}, cmdutil.ExitFailure},
		{&client.Error{Status: 500, Code: api.CodeInternal}, cmdutil.ExitFailure},
	}
	for _, tc := range cases {
		s := clitest.Seeded()
		s.Err = tc.err
		f, out, _ := clitest.NewFactory(false)
		err := getRun(&GetOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "x"})
		if c := cmdutil.ExitCode(err); c != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.err.Code, c, tc.code)
		}
		if out.Len() != 0 {
			t.Errorf("%s: stdout %q", tc.err.Code, out)
		}
	}
}

// TestTrigger: a trigger prints its manual occurrence; the same key again
// is the same occurrence, said so, and no new one.
func TestTrigger(t *testing.T) {
	s := clitest.Seeded()
	run := func(key string) string {
		t.Helper()
		f, out, _ := clitest.NewFactory(false)
		if err := triggerRun(&TriggerOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "nightly", Request: api.TriggerRequest{IdempotencyKey: key}}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got, want := run("k1"), "triggered nightly: occurrence occ_z01, scheduled for 2027-03-13T12:00:00Z, manual, ENQUEUED\n"; got != want {
		t.Errorf("first: %q, want %q", got, want)
	}
	if got, want := run("k1"), "nightly already triggered with this key: occurrence occ_z01, scheduled for 2027-03-13T12:00:00Z, manual, ENQUEUED\n"; got != want {
		t.Errorf("again: %q, want %q", got, want)
	}
	if got := run(""); !strings.Contains(got, "occurrence occ_z02") {
		t.Errorf("no key: %q", got)
	}
	if len(s.Triggered) != 2 {
		t.Errorf("%d occurrences, want 2", len(s.Triggered))
	}
	f, out, _ := clitest.NewFactory(false)
	if err := triggerRun(&TriggerOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Ref: "nightly", Request: api.TriggerRequest{IdempotencyKey: "k1"}}); err != nil {
		t.Fatal(err)
	}
	v := clitest.MustJSON(t, out.Bytes()).(map[string]any)
	if v["created"] != false || v["occurrence"].(map[string]any)["manual"] != true {
		t.Errorf("JSON %s", out)
	}
	f, _, _ = clitest.NewFactory(false)
	err := triggerRun(&TriggerOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Ref: "nope"})
	clitest.WantErr(t, err, `trigger nope: not found: schedule "nope" not found`, cmdutil.ExitFailure)

	var tr *TriggerOptions
	if err := clitest.Exec(t, NewCmdTrigger(f, func(o *TriggerOptions) error { tr = o; return nil }), "team/nightly", "--idempotency-key", "k"); err != nil ||
		tr.Ref != "team/nightly" || tr.Request.IdempotencyKey != "k" {
		t.Errorf("trigger flags: %v %+v", err, tr)
	}
	cmd := NewCmdTrigger(f, func(*TriggerOptions) error { return nil })
	cmdutil.WrapArgs(cmd)
	clitest.WantErr(t, clitest.Exec(t, cmd), "accepts 1 arg", cmdutil.ExitInvalid)
}

// TestWatchRedrawsOnATerminal: on a terminal each change clears the
// screen and redraws under a title; an unchanged frame draws nothing.
func TestWatchRedrawsOnATerminal(t *testing.T) {
	sc1, sc2 := clitest.SampleSchedule(), clitest.SampleSchedule()
	sc2.State = "PAUSED"
	s := &clitest.SeqAPI{Stub: clitest.NewStub(), Seq: []any{sc1, sc1, sc2, sc2}}
	f, out, _ := clitest.NewFactory(true)
	w := clitest.StartWatch(t, func(ctx context.Context, wf cmdutil.WatchFlags) error {
		return getRun(&GetOptions{IO: f, API: func() (cmdutil.API, error) { return s, nil }, Ctx: ctx, Ref: "nightly", Watch: wf})
	})
	w.Ticks(3)
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	frames := strings.Split(out.String(), cmdutil.ClearScreen)
	if len(frames) != 3 || frames[0] != "" {
		t.Fatalf("%d redraws, want 2:\n%q", len(frames)-1, out)
	}
	for i, want := range []string{"ACTIVE", "PAUSED"} {
		title := "Every 2s: schedctl get nightly (last change 12:00:00Z; Ctrl-C to stop)\n\n"
		if !strings.HasPrefix(frames[i+1], title) || !regexp.MustCompile(`(?m)^state +`+want+`$`).MatchString(frames[i+1]) {
			t.Errorf("frame %d:\n%s", i+1, frames[i+1])
		}
	}
}

func TestWatchFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var g *GetOptions
	if err := clitest.Exec(t, NewCmdGet(f, func(o *GetOptions) error { g = o; return nil }), "n", "--watch", "--interval", "5s"); err != nil ||
		!g.Watch.Watch || g.Watch.Interval != 5*time.Second {
		t.Errorf("get --watch --interval 5s: %v %+v", err, g)
	}
}
