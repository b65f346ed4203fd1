package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
)

// TestDueWait: a not-yet-due occurrence reads "in ...", a due one nobody
// claimed "waiting ...", a due retry "due", the rest "-".
func TestDueWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    api.Occurrence
		want string
	}{
		{"not yet due", api.Occurrence{State: "ENQUEUED", AvailableAt: fixedNow.Add(12 * time.Second)}, "in 12s"},
		{"not yet due, minutes", api.Occurrence{State: "ENQUEUED", AvailableAt: fixedNow.Add(3*time.Minute + 400*time.Millisecond)}, "in 3m0s"},
		{"scheduled", api.Occurrence{State: "SCHEDULED", AvailableAt: fixedNow.Add(time.Hour)}, "in 1h0m"},
		{"waiting", api.Occurrence{State: "ENQUEUED", Due: true, AvailableAt: fixedNow.Add(-3 * time.Minute), Waiting: sp("3m0.2s")}, "waiting 3m0s"},
		{"due retry", api.Occurrence{State: "RETRY_WAIT", Due: true, AvailableAt: fixedNow.Add(-time.Second)}, "due"},
		{"retry later", api.Occurrence{State: "RETRY_WAIT", AvailableAt: fixedNow.Add(30 * time.Second)}, "in 30s"},
		{"our clock behind schedd's", api.Occurrence{State: "ENQUEUED", AvailableAt: fixedNow.Add(-time.Second)}, "due"},
		{"running", api.Occurrence{State: "RUNNING", Due: true}, "-"},
		{"done", api.Occurrence{State: "SUCCEEDED", Due: true}, "-"},
	} {
		if got := dueWait(tc.o, fixedNow); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestOccurrencesTable: the columns on a terminal, within 120 columns for
// real ids, with manual occurrences marked.
func TestOccurrencesTable(t *testing.T) {
	s := newStub()
	s.occurrences = []api.Occurrence{
		{OccurrenceID: "occ_14v0pdc0abcdefghijklmnop", ScheduledFor: fixedNow.Add(-2 * time.Minute), AvailableAt: fixedNow.Add(-2 * time.Minute),
			State: "SUCCEEDED", Queue: "reports", AttemptCount: 1, Due: true, ScheduleLag: sp("-59.9s"), DeliveryLag: sp("1.234s")},
		{OccurrenceID: "occ_14v0pdc1abcdefghijklmnop", ScheduledFor: fixedNow.Add(-time.Minute), AvailableAt: fixedNow.Add(-time.Minute),
			State: "ENQUEUED", Queue: "reports", Due: true, ScheduleLag: sp("84.001s"), Waiting: sp("1m0s")},
		{OccurrenceID: "occ_14v0pdc2abcdefghijklmnop", ScheduledFor: fixedNow.Add(12 * time.Second), AvailableAt: fixedNow.Add(12 * time.Second),
			State: "ENQUEUED", Queue: "reports", ScheduleLag: sp("-1m0s")},
		{OccurrenceID: "occ_zabcdefghijklmnopqrstuvwx", ScheduledFor: fixedNow, AvailableAt: fixedNow,
			State: "SKIPPED_OVERLAP", Queue: "reports", Due: true, ScheduleLag: sp("0s"), Manual: true},
	}
	f, out, _ := testFactory(true)
	if err := occurrencesRun(&OccurrencesOptions{IO: f, API: apiOf(s), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	golden(t, "occurrences-tty.golden", out.String())
	for _, line := range strings.Split(out.String(), "\n") {
		if len([]rune(line)) > 120 {
			t.Errorf("wider than 120 columns: %q", line)
		}
	}
	f, out, _ = testFactory(false)
	if err := occurrencesRun(&OccurrencesOptions{IO: f, API: apiOf(s), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	if want := "occ_zabcdefghijklmnopqrstuvwx\t2027-03-13T12:00:00Z\tSKIPPED_OVERLAP\t-\tmanual\t-\t0\treports\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("plain:\n%s\nwant last row %q", out, want)
	}
}

// TestDLQTable: each entry says why it died; the table cuts the last
// error, JSON keeps it whole.
func TestDLQTable(t *testing.T) {
	long := "dial tcp 10.0.0.7:5432: connect: connection refused after 3 tries\nstack: ..."
	s := newStub()
	s.dead = []api.Occurrence{
		{OccurrenceID: "occ_14v0pdc0abcdefghijklmnop", ScheduleID: "sch_01", State: "DEAD", Queue: "reports", DeadReason: "attempts_exhausted",
			LastError: long, FinishedAt: tp(fixedNow.Add(-time.Minute)), AttemptCount: 10},
		{OccurrenceID: "occ_14v0pdc1abcdefghijklmnop", ScheduleID: "sch_01", State: "DEAD", Queue: "mail", DeadReason: "permanent_failure",
			LastError: "bad payload", FinishedAt: tp(fixedNow)},
	}
	f, out, _ := testFactory(true)
	if err := dlqListRun(&DLQListOptions{IO: f, API: apiOf(s), Ctx: bg, Schedule: "sch_01"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "dlq-list-tty.golden", out.String())
	if s.lastDLQ.Schedule != "sch_01" || s.lastDLQ.Queue != "" {
		t.Errorf("filters sent %+v", s.lastDLQ)
	}
	f, out, _ = testFactory(false)
	if err := dlqListRun(&DLQListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true}); err != nil {
		t.Fatal(err)
	}
	e := mustJSON(t, out.Bytes()).([]any)[0].(map[string]any)
	if e["last_error"] != long || e["dead_reason"] != "attempts_exhausted" || e["finished_at"] != "2027-03-13T11:59:00Z" {
		t.Errorf("JSON entry %v", e)
	}
	f, out, _ = testFactory(true)
	if err := dlqListRun(&DLQListOptions{IO: f, API: apiOf(newStub()), Ctx: bg, Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The dead-letter queue is empty of queue q.\n" {
		t.Errorf("empty: %q", out)
	}
}

func deadStub() *stubAPI {
	s := newStub()
	for i, q := range []string{"reports", "reports", "mail"} {
		o := sampleOccurrence()
		o.OccurrenceID, o.State, o.Queue = "occ_0"+string(rune('1'+i)), "DEAD", q
		s.dead = append(s.dead, o)
	}
	return s
}

// TestReplayAll: one request replays every match, and prints their ids:
// after a count on a terminal, one a line elsewhere.
func TestReplayAll(t *testing.T) {
	s := deadStub()
	f, out, _ := testFactory(true)
	if err := replayRun(&ReplayOptions{IO: f, API: apiOf(s), Ctx: bg, All: true, Filter: api.DLQFilter{Queue: "reports"}}); err != nil {
		t.Fatal(err)
	}
	if want := "replayed 2 occurrences, each with its occurrence id:\n  occ_01\n  occ_02\n"; out.String() != want {
		t.Errorf("tty %q, want %q", out, want)
	}
	if s.lastFilter != (api.DLQFilter{Queue: "reports"}) {
		t.Errorf("filter %+v", s.lastFilter)
	}
	// Again: nothing left to replay, and that is no error.
	f, out, _ = testFactory(true)
	if err := replayRun(&ReplayOptions{IO: f, API: apiOf(s), Ctx: bg, All: true, Filter: api.DLQFilter{Queue: "reports"}}); err != nil {
		t.Fatal(err)
	}
	if want := "Nothing to replay: no DEAD occurrences of queue reports.\n"; out.String() != want {
		t.Errorf("again %q", out)
	}
	f, out, _ = testFactory(false)
	if err := replayRun(&ReplayOptions{IO: f, API: apiOf(s), Ctx: bg, All: true}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "occ_03\n" {
		t.Errorf("plain %q", out)
	}
	f, out, _ = testFactory(false)
	if err := replayRun(&ReplayOptions{IO: f, API: apiOf(s), Ctx: bg, All: true, JSON: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(strings.Fields(out.String()), " ") != `{ "count": 0, "occurrence_ids": [] }` {
		t.Errorf("JSON %q", out)
	}
}

func TestReplayFlags(t *testing.T) {
	f, _, _ := testFactory(false)
	var rp *ReplayOptions
	if err := execCmd(t, NewCmdReplay(f, func(o *ReplayOptions) error { rp = o; return nil }), "--all", "--schedule", "nightly", "--queue", "q"); err != nil ||
		!rp.All || rp.ID != "" || rp.Filter != (api.DLQFilter{Schedule: "nightly", Queue: "q"}) {
		t.Errorf("replay --all: %v %+v", err, rp)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the occurrence id to replay, or --all"},
		{[]string{"occ_1", "--all"}, "give an occurrence id or --all, not both"},
		{[]string{"occ_1", "--queue", "q"}, "--schedule and --queue go with --all"},
		{[]string{"a", "b"}, "accepts at most 1 arg"},
	} {
		cmd := NewCmdReplay(f, func(*ReplayOptions) error { t.Error("ran"); return nil })
		wrapArgs(cmd)
		wantErr(t, execCmd(t, cmd, tc.args...), tc.want, ExitInvalid)
	}
}

// purgeCmd is dlq purge with its real flags and checks, on stub s.
func purgeCmd(f *Factory, s *stubAPI) *cobra.Command {
	return NewCmdPurge(f, func(o *PurgeOptions) error {
		o.API = apiOf(s)
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
			f, out, errOut := testFactory(true)
			f.InTTY, f.In = true, strings.NewReader(tc.answer)
			err := execCmd(t, purgeCmd(f, s), "--queue", "reports")
			prompt := "Purge 2 DEAD occurrences of queue reports? They become CANCELED and cannot be replayed.\nType yes to purge: "
			if errOut.String() != prompt {
				t.Errorf("prompt %q", errOut)
			}
			if tc.purged {
				if err != nil || out.String() != "purged 2 occurrences from the dead-letter queue (now CANCELED)\n" || len(s.dead) != 1 {
					t.Errorf("%v %q, %d left", err, out, len(s.dead))
				}
				return
			}
			if !errors.Is(err, errNotConfirmed) || ExitCode(err) != ExitFailure || len(s.dead) != 3 {
				t.Errorf("%v (exit %d), %d left", err, ExitCode(err), len(s.dead))
			}
		})
	}

	// Nothing matches: nothing to ask.
	s := deadStub()
	f, out, errOut := testFactory(true)
	f.InTTY = true
	if err := execCmd(t, purgeCmd(f, s), "--queue", "none"); err != nil || errOut.Len() != 0 ||
		out.String() != "Nothing to purge: no DEAD occurrences of queue none.\n" {
		t.Errorf("%v %q %q", err, out, errOut)
	}

	// Off a terminal: --yes or exit 2, before any call.
	for _, tty := range []struct{ out, in bool }{{false, false}, {true, false}, {false, true}} {
		s := deadStub()
		f, _, _ := testFactory(tty.out)
		f.InTTY = tty.in
		err := execCmd(t, purgeCmd(f, s))
		wantErr(t, err, "not on a terminal to ask for confirmation; pass --yes", ExitInvalid)
		if len(s.Calls()) != 0 {
			t.Errorf("calls %v", s.Calls())
		}
	}
	s = deadStub()
	f, out, _ = testFactory(false)
	if err := purgeRun(&PurgeOptions{IO: f, API: apiOf(s), Ctx: bg, Yes: true, Filter: api.DLQFilter{Schedule: "sch_01"}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "purged 3 occurrences from the dead-letter queue (now CANCELED)\n" || len(s.dead) != 0 {
		t.Errorf("--yes: %q", out)
	}
	for _, c := range s.Calls() {
		if strings.HasPrefix(c, "dlq schedule") {
			t.Errorf("--yes listed first: %v", s.Calls())
		}
	}
	var po *PurgeOptions
	f, _, _ = testFactory(false)
	if err := execCmd(t, NewCmdPurge(f, func(o *PurgeOptions) error { po = o; return nil }), "-y", "--schedule", "s", "--queue", "q"); err != nil ||
		!po.Yes || po.Filter != (api.DLQFilter{Schedule: "s", Queue: "q"}) {
		t.Errorf("purge flags: %v %+v", err, po)
	}
}

// TestTrigger: a trigger prints its manual occurrence; the same key again
// is the same occurrence, said so, and no new one.
func TestTrigger(t *testing.T) {
	s := seeded()
	run := func(key string) string {
		t.Helper()
		f, out, _ := testFactory(false)
		if err := triggerRun(&TriggerOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "nightly", Request: api.TriggerRequest{IdempotencyKey: key}}); err != nil {
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
	if len(s.triggered) != 2 {
		t.Errorf("%d occurrences, want 2", len(s.triggered))
	}
	f, out, _ := testFactory(false)
	if err := triggerRun(&TriggerOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Ref: "nightly", Request: api.TriggerRequest{IdempotencyKey: "k1"}}); err != nil {
		t.Fatal(err)
	}
	v := mustJSON(t, out.Bytes()).(map[string]any)
	if v["created"] != false || v["occurrence"].(map[string]any)["manual"] != true {
		t.Errorf("JSON %s", out)
	}
	f, _, _ = testFactory(false)
	err := triggerRun(&TriggerOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "nope"})
	wantErr(t, err, `trigger nope: not found: schedule "nope" not found`, ExitFailure)

	var tr *TriggerOptions
	if err := execCmd(t, NewCmdTrigger(f, func(o *TriggerOptions) error { tr = o; return nil }), "team/nightly", "--idempotency-key", "k"); err != nil ||
		tr.Ref != "team/nightly" || tr.Request.IdempotencyKey != "k" {
		t.Errorf("trigger flags: %v %+v", err, tr)
	}
	cmd := NewCmdTrigger(f, func(*TriggerOptions) error { return nil })
	wrapArgs(cmd)
	wantErr(t, execCmd(t, cmd), "accepts 1 arg", ExitInvalid)
}
