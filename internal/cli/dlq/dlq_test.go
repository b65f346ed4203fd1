package dlq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

var bg = context.Background()

// TestJSONFields pins the JSON field names of dlq list, replay and purge:
// scripts depend on them.
func TestJSONFields(t *testing.T) {
	clitest.CheckJSONFields(t, clitest.Seeded, []clitest.JSONCase{
		{Name: "dlq list", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return dlqListRun(&DLQListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true})
		}, Keys: clitest.OccurrenceKeys},
		{Name: "dlq replay", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return replayRun(&ReplayOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, ID: "occ_01"})
		}, Keys: clitest.OccurrenceKeys},
		{Name: "dlq replay --all", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return replayRun(&ReplayOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, All: true, Yes: true})
		}, Keys: []string{"count", "occurrence_ids"}},
		{Name: "dlq purge", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return purgeRun(&PurgeOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Yes: true})
		}, Keys: []string{"count"}},
	})
}

// TestEmptyListsAreArrays: JSON for nothing is [], never null (dlq list).
func TestEmptyListsAreArrays(t *testing.T) {
	for name, run := range map[string]func(*cmdutil.Factory, *clitest.Stub) error{
		"dlq list": func(f *cmdutil.Factory, s *clitest.Stub) error {
			return dlqListRun(&DLQListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true})
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

// pagedCases is dlq list over a stub holding n entries, 2 a page.
func pagedCases() []clitest.PagedCase {
	return []clitest.PagedCase{
		{Name: "dlq list", List: "occurrences", IDKey: "occurrence_id", Seed: func(s *clitest.Stub, n int) {
			for i := range n {
				o := clitest.SampleOccurrence()
				o.OccurrenceID, o.State = fmt.Sprintf("occ_%02d", i), "DEAD"
				s.Dead = append(s.Dead, o)
			}
		}, Run: func(f *cmdutil.Factory, s *clitest.Stub, json bool, p cmdutil.PageFlags) error {
			return dlqListRun(&DLQListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: json, Paging: p})
		}},
	}
}

// TestPaging: dlq list shows one page and says more exist, follows tokens
// and --all.
func TestPaging(t *testing.T) { clitest.CheckPaging(t, clitest.NewStub, pagedCases()) }

// TestReverse: dlq list reads newest first with --reverse.
func TestReverse(t *testing.T) { clitest.CheckReverse(t, pagedCases()) }

func TestSimpleCommandFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var dl *DLQListOptions
	if err := clitest.Exec(t, NewCmdDLQList(f, func(o *DLQListOptions) error { dl = o; return nil }), "--queue", "q", "--limit", "9"); err != nil || dl.Queue != "q" || dl.Paging.Limit != 9 {
		t.Errorf("dlq list: %v %+v", err, dl)
	}
	var rp *ReplayOptions
	if err := clitest.Exec(t, NewCmdReplay(f, func(o *ReplayOptions) error { rp = o; return nil }), "occ_1"); err != nil || rp.ID != "occ_1" {
		t.Errorf("replay: %v %+v", err, rp)
	}
}

func TestPagingFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var dl *DLQListOptions
	if err := clitest.Exec(t, NewCmdDLQList(f, func(o *DLQListOptions) error { dl = o; return nil }),
		"--schedule", "nightly", "--queue", "q", "--reverse", "--all"); err != nil ||
		dl.Schedule != "nightly" || dl.Queue != "q" || dl.Paging != (cmdutil.PageFlags{All: true, Reverse: true}) {
		t.Errorf("dlq list: %v %+v", err, dl)
	}
}

// TestDLQTable: each entry says why it died; the table cuts the last
// error, JSON keeps it whole.
func TestDLQTable(t *testing.T) {
	long := "dial tcp 10.0.0.7:5432: connect: connection refused after 3 tries\nstack: ..."
	s := clitest.NewStub()
	s.Dead = []api.Occurrence{
		{OccurrenceID: "occ_14v0pdc0abcdefghijklmnop", ScheduleID: "sch_01", State: "DEAD", Queue: "reports", DeadReason: "attempts_exhausted",
			LastError: long, FinishedAt: clitest.TP(clitest.FixedNow.Add(-time.Minute)), AttemptCount: 10},
		{OccurrenceID: "occ_14v0pdc1abcdefghijklmnop", ScheduleID: "sch_01", State: "DEAD", Queue: "mail", DeadReason: "permanent_failure",
			LastError: "bad payload", FinishedAt: clitest.TP(clitest.FixedNow)},
	}
	f, out, _ := clitest.NewFactory(true)
	if err := dlqListRun(&DLQListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Schedule: "sch_01"}); err != nil {
		t.Fatal(err)
	}
	clitest.Golden(t, "dlq-list-tty.golden", out.String())
	if s.LastDLQ.Schedule != "sch_01" || s.LastDLQ.Queue != "" {
		t.Errorf("filters sent %+v", s.LastDLQ)
	}
	f, out, _ = clitest.NewFactory(false)
	if err := dlqListRun(&DLQListOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true}); err != nil {
		t.Fatal(err)
	}
	e := clitest.MustJSON(t, out.Bytes()).([]any)[0].(map[string]any)
	if e["last_error"] != long || e["dead_reason"] != "attempts_exhausted" || e["finished_at"] != "2027-03-13T11:59:00Z" {
		t.Errorf("JSON entry %v", e)
	}
	f, out, _ = clitest.NewFactory(true)
	if err := dlqListRun(&DLQListOptions{IO: f, API: clitest.APIOf(clitest.NewStub()), Ctx: bg, Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The dead-letter queue is empty of queue q.\n" {
		t.Errorf("empty: %q", out)
	}
}

func deadStub() *clitest.Stub {
	s := clitest.NewStub()
	for i, q := range []string{"reports", "reports", "mail"} {
		o := clitest.SampleOccurrence()
		o.OccurrenceID, o.State, o.Queue = "occ_0"+string(rune('1'+i)), "DEAD", q
		s.Dead = append(s.Dead, o)
	}
	return s
}

// TestReplayAll: one request replays every match, and prints their ids:
// after a count on a terminal, one a line elsewhere.
func TestReplayAll(t *testing.T) {
	s := deadStub()
	f, out, _ := clitest.NewFactory(true)
	if err := replayRun(&ReplayOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, All: true, Yes: true, Filter: api.DLQFilter{Queue: "reports"}}); err != nil {
		t.Fatal(err)
	}
	if want := "replayed 2 occurrences, each with its occurrence id:\n  occ_01\n  occ_02\n"; out.String() != want {
		t.Errorf("tty %q, want %q", out, want)
	}
	if s.LastFilter != (api.DLQFilter{Queue: "reports"}) {
		t.Errorf("filter %+v", s.LastFilter)
	}
	// Again: nothing left to replay, and that is no error.
	f, out, _ = clitest.NewFactory(true)
	if err := replayRun(&ReplayOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, All: true, Yes: true, Filter: api.DLQFilter{Queue: "reports"}}); err != nil {
		t.Fatal(err)
	}
	if want := "Nothing to replay: no DEAD occurrences of queue reports.\n"; out.String() != want {
		t.Errorf("again %q", out)
	}
	f, out, _ = clitest.NewFactory(false)
	f.NoHeaders = true
	if err := replayRun(&ReplayOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, All: true, Yes: true}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "occ_03\n" {
		t.Errorf("plain, --no-headers %q; want the id alone", out)
	}
	f, out, _ = clitest.NewFactory(false)
	if err := replayRun(&ReplayOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, All: true, Yes: true, JSON: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(strings.Fields(out.String()), " ") != `{ "count": 0, "occurrence_ids": [] }` {
		t.Errorf("JSON %q", out)
	}
}

func TestReplayFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var rp *ReplayOptions
	if err := clitest.Exec(t, NewCmdReplay(f, func(o *ReplayOptions) error { rp = o; return nil }), "--all", "--yes", "--schedule", "nightly", "--queue", "q"); err != nil ||
		!rp.All || !rp.Yes || rp.ID != "" || rp.Filter != (api.DLQFilter{Schedule: "nightly", Queue: "q"}) {
		t.Errorf("replay --all: %v %+v", err, rp)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the occurrence id to replay, or --all"},
		{[]string{"occ_1", "--all"}, "give an occurrence id or --all, not both"},
		{[]string{"occ_1", "--queue", "q"}, "--schedule, --queue, --yes and --dry-run go with --all"},
		{[]string{"occ_1", "--dry-run"}, "--schedule, --queue, --yes and --dry-run go with --all"},
		{[]string{"--all"}, "not on a terminal to ask for confirmation; pass --yes to replay without asking, or --dry-run"},
		{[]string{"a", "b"}, "accepts at most 1 arg"},
	} {
		cmd := NewCmdReplay(f, func(*ReplayOptions) error { t.Error("ran"); return nil })
		cmdutil.WrapArgs(cmd)
		clitest.WantErr(t, clitest.Exec(t, cmd, tc.args...), tc.want, cmdutil.ExitInvalid)
	}
}

// purgeCmd is dlq purge with its real flags and checks, on stub s.
func purgeCmd(f *cmdutil.Factory, s *clitest.Stub) *cobra.Command {
	return NewCmdPurge(f, func(o *PurgeOptions) error {
		o.API = clitest.APIOf(s)
		return purgeRun(o)
	})
}

// TestPurgeConfirmation: on a terminal purge says how many and purges
// only on "yes"; off a terminal it refuses without --yes (exit 2) before
// asking schedd anything.
func TestPurgeConfirmation(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		purged       bool
	}{
		{"yes", "yes\n", true},
		{"YES with spaces", "  YES \n", true},
		{"no", "no\n", false},
		{"y is not yes", "y\n", false},
		{"end of input", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := deadStub()
			f, out, errOut := clitest.NewFactory(true)
			f.InTTY, f.In = true, strings.NewReader(tc.answer)
			err := clitest.Exec(t, purgeCmd(f, s), "--queue", "reports")
			prompt := "Purge 2 DEAD occurrences of queue reports? They become CANCELED and cannot be replayed.\nType yes to purge: "
			if errOut.String() != prompt {
				t.Errorf("prompt %q", errOut)
			}
			if tc.purged {
				if err != nil || out.String() != "purged 2 occurrences from the dead-letter queue (now CANCELED)\n" || len(s.Dead) != 1 {
					t.Errorf("%v %q, %d left", err, out, len(s.Dead))
				}
				return
			}
			if !errors.Is(err, errNotConfirmed) || cmdutil.ExitCode(err) != cmdutil.ExitFailure || len(s.Dead) != 3 {
				t.Errorf("%v (exit %d), %d left", err, cmdutil.ExitCode(err), len(s.Dead))
			}
		})
	}

	// Nothing matches: nothing to ask.
	s := deadStub()
	f, out, errOut := clitest.NewFactory(true)
	f.InTTY = true
	if err := clitest.Exec(t, purgeCmd(f, s), "--queue", "none"); err != nil || errOut.Len() != 0 ||
		out.String() != "Nothing to purge: no DEAD occurrences of queue none.\n" {
		t.Errorf("%v %q %q", err, out, errOut)
	}

	// Off a terminal: --yes or exit 2, before any call.
	for _, tty := range []struct{ out, in bool }{{false, false}, {true, false}, {false, true}} {
		s := deadStub()
		f, _, _ := clitest.NewFactory(tty.out)
		f.InTTY = tty.in
		err := clitest.Exec(t, purgeCmd(f, s))
		clitest.WantErr(t, err, "not on a terminal to ask for confirmation; pass --yes", cmdutil.ExitInvalid)
		if len(s.Calls()) != 0 {
			t.Errorf("calls %v", s.Calls())
		}
	}
	s = deadStub()
	f, out, _ = clitest.NewFactory(false)
	if err := purgeRun(&PurgeOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, Yes: true, Filter: api.DLQFilter{Schedule: "sch_01"}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "purged 3 occurrences from the dead-letter queue (now CANCELED)\n" || len(s.Dead) != 0 {
		t.Errorf("--yes: %q", out)
	}
	for _, c := range s.Calls() {
		if strings.HasPrefix(c, "dlq schedule") {
			t.Errorf("--yes listed first: %v", s.Calls())
		}
	}
	var po *PurgeOptions
	f, _, _ = clitest.NewFactory(false)
	if err := clitest.Exec(t, NewCmdPurge(f, func(o *PurgeOptions) error { po = o; return nil }), "-y", "--schedule", "s", "--queue", "q"); err != nil ||
		!po.Yes || po.Filter != (api.DLQFilter{Schedule: "s", Queue: "q"}) {
		t.Errorf("purge flags: %v %+v", err, po)
	}
}

// replayCmd is dlq replay with its real flags and checks, on stub s.
func replayCmd(f *cmdutil.Factory, s *clitest.Stub) *cobra.Command {
	return NewCmdReplay(f, func(o *ReplayOptions) error {
		o.API = clitest.APIOf(s)
		return replayRun(o)
	})
}

// TestReplayAllConfirmation: replay --all asks as purge does: how many,
// then "yes" replays and anything else replays nothing (exit 1); off a
// terminal it needs --yes (TestReplayFlags).
func TestReplayAllConfirmation(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		replayed     bool
	}{
		{"yes", "yes\n", true},
		{"no", "no\n", false},
		{"end of input", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := deadStub()
			f, out, errOut := clitest.NewFactory(true)
			f.InTTY, f.In = true, strings.NewReader(tc.answer)
			err := clitest.Exec(t, replayCmd(f, s), "--all", "--queue", "reports")
			prompt := "Replay 2 DEAD occurrences of queue reports? They go back on their queues under their ids, with fresh retries.\nType yes to replay: "
			if errOut.String() != prompt {
				t.Errorf("prompt %q", errOut)
			}
			if tc.replayed {
				if err != nil || !strings.HasPrefix(out.String(), "replayed 2 occurrences") || len(s.Dead) != 1 {
					t.Errorf("%v %q, %d left", err, out, len(s.Dead))
				}
				return
			}
			if !errors.Is(err, errNotConfirmed) || cmdutil.ExitCode(err) != cmdutil.ExitFailure || len(s.Dead) != 3 ||
				!strings.Contains(err.Error(), "nothing was replayed") {
				t.Errorf("%v (exit %d), %d left", err, cmdutil.ExitCode(err), len(s.Dead))
			}
		})
	}
}

// TestReplayDryRun: --dry-run lists what replay --all would replay, as
// dlq list does, on a terminal or not and without asking; replays none.
func TestReplayDryRun(t *testing.T) {
	s := deadStub()
	f, out, errOut := clitest.NewFactory(false)
	if err := clitest.Exec(t, replayCmd(f, s), "--all", "--queue", "reports", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	if len(s.Dead) != 3 || errOut.Len() != 0 {
		t.Errorf("a dry run replayed or asked: %d left, stderr %q", len(s.Dead), errOut)
	}
	got := out.String()
	for _, want := range []string{"occ_01\treports\t", "occ_02\treports\t", "Would replay 2 DEAD occurrences of queue reports; nothing was replayed (--dry-run).\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("dry run lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "occ_03") {
		t.Errorf("dry run lists another queue's entry:\n%s", got)
	}
	f, out, _ = clitest.NewFactory(false)
	if err := replayRun(&ReplayOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, All: true, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(strings.Fields(out.String()), " "); g != `{ "dry_run": true, "count": 3, "more": false, "occurrence_ids": [ "occ_01", "occ_02", "occ_03" ] }` {
		t.Errorf("JSON %s", g)
	}
}
