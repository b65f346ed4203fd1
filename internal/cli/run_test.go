package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

var bg = context.Background()

// jsonCase runs one command's run function with -o json against a stub
// holding fully populated records.
type jsonCase struct {
	name string
	run  func(f *Factory, s *stubAPI) error
	// keys are the JSON field names, pinned: top-level keys of an object,
	// or of an array's first element; nested "a.b" for objects inside.
	keys []string
	// list is "" except for objects holding a list (unused today: the
	// lists print bare arrays).
	list string
}

var (
	scheduleKeys = []string{"anchor", "created_at", "dst_gap", "dst_repeat", "expression", "flexible_window", "kind",
		"max_attempts", "max_lateness", "misfire_policy", "missed_count", "name", "next_fire_at", "next_run_at", "overlap_policy", "payload",
		"preview", "queue", "retry_base", "retry_cap", "retry_deadline", "schedule_id", "state", "time_zone", "updated_at", "version"}
	occurrenceKeys = []string{"attempt_count", "available_at", "claim_lag", "dead_reason", "delivery_lag", "due", "enqueued_at",
		"finished_at", "first_claimed_at", "lane", "last_error", "manual", "occurrence_id", "queue", "schedule_id", "schedule_lag",
		"schedule_version", "scheduled_for", "state", "waiting"}
	changeKeys = []string{"canceled", "in_flight", "schedule"}
	planKeys   = []string{"action", "changes", "name", "schedule_id", "version"}
)

func seeded() *stubAPI {
	s := newStub()
	sc := sampleSchedule()
	s.schedules[sc.Name] = &sc
	s.order = []string{sc.Name}
	s.occurrences = []api.Occurrence{sampleOccurrence()}
	s.attempts = []api.Attempt{{Attempt: 1, WorkerID: "w1", ClaimedAt: fixedNow, LeaseExpiresAt: fixedNow, FinishedAt: tp(fixedNow), Result: "FAILED_RETRYABLE", Error: "boom"}}
	s.claimed = []api.Claimed{sampleClaimed()}
	s.heartbeat = api.HeartbeatResult{LeaseExpiresAt: fixedNow, Superseded: true}
	st := sampleStatus()
	s.status = &st
	return s
}

func jsonCases() []jsonCase {
	return []jsonCase{
		{"create", func(f *Factory, s *stubAPI) error {
			return createRun(&CreateOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true,
				Request: api.ScheduleRequest{Name: "new", Queue: "q", Every: "1h", Anchor: "2027-01-01T00:00:00Z", Payload: []byte(`{"a":1}`)}})
		}, append([]string{"created"}, scheduleKeys...), ""},
		{"get", func(f *Factory, s *stubAPI) error {
			return getRun(&GetOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Ref: "nightly"})
		}, scheduleKeys, ""},
		{"list", func(f *Factory, s *stubAPI) error {
			return listRun(&ListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true})
		}, scheduleKeys, ""},
		{"update", func(f *Factory, s *stubAPI) error {
			return updateRun(&UpdateOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Ref: "nightly",
				Patch: &schedulePatch{Values: scheduleFlags{MaxAttempts: 3}, Changed: map[string]bool{"max-attempts": true}}})
		}, changeKeys, ""},
		{"pause", func(f *Factory, s *stubAPI) error {
			return changeRun(&ChangeOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Verb: "pause", Ref: "nightly"})
		}, changeKeys, ""},
		{"resume", func(f *Factory, s *stubAPI) error {
			return changeRun(&ChangeOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Verb: "resume", Ref: "nightly"})
		}, changeKeys, ""},
		{"cancel", func(f *Factory, s *stubAPI) error {
			return changeRun(&ChangeOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Verb: "cancel", Ref: "nightly"})
		}, changeKeys, ""},
		{"occurrences", func(f *Factory, s *stubAPI) error {
			return occurrencesRun(&OccurrencesOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true})
		}, occurrenceKeys, ""},
		{"attempts", func(f *Factory, s *stubAPI) error {
			return attemptsRun(&AttemptsOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, ID: "occ_01"})
		}, []string{"attempt", "claimed_at", "error", "finished_at", "lease_expires_at", "result", "worker_id"}, ""},
		{"trigger", func(f *Factory, s *stubAPI) error {
			return triggerRun(&TriggerOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Ref: "nightly"})
		}, []string{"created", "occurrence"}, ""},
		{"claim", func(f *Factory, s *stubAPI) error {
			return claimRun(&ClaimOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Request: api.ClaimRequest{Queue: "reports"}})
		}, []string{"attempt", "lease_expires_at", "occurrence_id", "payload", "queue", "schedule_id", "schedule_version", "scheduled_for"}, ""},
		{"heartbeat", func(f *Factory, s *stubAPI) error {
			return heartbeatRun(&HeartbeatOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, ID: "occ_01", Request: api.HeartbeatRequest{Attempt: 2}})
		}, []string{"canceled", "lease_expires_at", "superseded"}, ""},
		{"ack", func(f *Factory, s *stubAPI) error {
			return ackRun(&AckOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, ID: "occ_01", Request: api.AckRequest{Attempt: 2}})
		}, occurrenceKeys, ""},
		{"nack", func(f *Factory, s *stubAPI) error {
			return nackRun(&NackOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, ID: "occ_01", Request: api.NackRequest{Attempt: 2, Class: "permanent"}})
		}, occurrenceKeys, ""},
		{"dlq list", func(f *Factory, s *stubAPI) error {
			return dlqListRun(&DLQListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true})
		}, occurrenceKeys, ""},
		{"dlq replay", func(f *Factory, s *stubAPI) error {
			return replayRun(&ReplayOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, ID: "occ_01"})
		}, occurrenceKeys, ""},
		{"dlq replay --all", func(f *Factory, s *stubAPI) error {
			return replayRun(&ReplayOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, All: true})
		}, []string{"count", "occurrence_ids"}, ""},
		{"dlq purge", func(f *Factory, s *stubAPI) error {
			return purgeRun(&PurgeOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Yes: true})
		}, []string{"count"}, ""},
		{"cluster", func(f *Factory, s *stubAPI) error {
			return clusterRun(&ClusterOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true})
		}, []string{"node_id", "nodes", "now", "shards"}, ""},
		{"validate", func(f *Factory, s *stubAPI) error {
			f.In = strings.NewReader(sampleFile)
			return validateRun(&ApplyOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, File: "-"})
		}, []string{"file", "schedules", "valid"}, ""},
		{"diff", func(f *Factory, s *stubAPI) error {
			f.In = strings.NewReader(sampleFile)
			err := diffRun(&ApplyOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, File: "-"})
			if err != nil && strings.Contains(err.Error(), "would change") {
				return nil
			}
			return err
		}, planKeys, ""},
		{"apply", func(f *Factory, s *stubAPI) error {
			f.In = strings.NewReader(sampleFile)
			return applyRun(&ApplyOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, File: "-"})
		}, planKeys, ""},
	}
}

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

// TestJSONFields pins the JSON field names of every command: scripts
// depend on them (gh's jsonfieldstest). A failure here means a breaking
// change to the JSON contract.
func TestJSONFields(t *testing.T) {
	for _, tc := range jsonCases() {
		t.Run(tc.name, func(t *testing.T) {
			f, out, _ := testFactory(false)
			s := seeded()
			if err := tc.run(f, s); err != nil {
				t.Fatal(err)
			}
			v := mustJSON(t, out.Bytes())
			if tc.list != "" {
				page, ok := v.(map[string]any)
				if !ok || len(page) != 1 {
					t.Fatalf("not a page object with %q alone: %s", tc.list, out)
				}
				v = page[tc.list]
			}
			if a, ok := v.([]any); ok {
				if len(a) == 0 {
					t.Fatalf("empty array: %s", out)
				}
				v = a[0]
			}
			obj, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("not an object: %s", out)
			}
			var got []string
			for k := range obj {
				got = append(got, k)
			}
			sort.Strings(got)
			want := append([]string(nil), tc.keys...)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("JSON fields\n got %v\nwant %v", got, want)
			}
		})
	}
	// Nested objects of the contract.
	f, out, _ := testFactory(false)
	s := seeded()
	changeRun(&ChangeOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Verb: "pause", Ref: "nightly"})
	if sc := mustJSON(t, out.Bytes()).(map[string]any)["schedule"].(map[string]any); len(sc) != len(scheduleKeys) {
		t.Errorf("change.schedule has %d fields, want %d", len(sc), len(scheduleKeys))
	}
	f, out, _ = testFactory(false)
	if err := clusterRun(&ClusterOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true}); err != nil {
		t.Fatal(err)
	}
	cl := mustJSON(t, out.Bytes()).(map[string]any)
	for part, want := range map[string][]string{
		"nodes":  {"address", "clock_offset", "expires_at", "last_heartbeat", "live", "node_id", "shards_owned", "started_at"},
		"shards": {"epoch", "expires_at", "live", "owner", "shard"},
	} {
		var got []string
		for k := range cl[part].([]any)[0].(map[string]any) {
			got = append(got, k)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("cluster.%s fields\n got %v\nwant %v", part, got, want)
		}
	}
	f, out, _ = testFactory(false)
	f.In = strings.NewReader(sampleFile)
	diffRun(&ApplyOptions{IO: f, API: apiOf(newStub()), Ctx: bg, JSON: true, File: "-"})
	ch := mustJSON(t, out.Bytes()).([]any)[0].(map[string]any)["changes"].([]any)[0].(map[string]any)
	if len(ch) != 3 || ch["field"] == nil || ch["from"] == nil || ch["to"] == nil {
		t.Errorf("diff change fields %v, want field, from, to", ch)
	}
}

// TestEmptyListsAreArrays: JSON for nothing is [], never null.
func TestEmptyListsAreArrays(t *testing.T) {
	for name, run := range map[string]func(*Factory, *stubAPI) error{
		"list": func(f *Factory, s *stubAPI) error {
			return listRun(&ListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true})
		},
		"occurrences": func(f *Factory, s *stubAPI) error {
			return occurrencesRun(&OccurrencesOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true})
		},
		"dlq list": func(f *Factory, s *stubAPI) error {
			return dlqListRun(&DLQListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true})
		},
		"attempts": func(f *Factory, s *stubAPI) error {
			return attemptsRun(&AttemptsOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, ID: "x"})
		},
	} {
		f, out, _ := testFactory(false)
		if err := run(f, newStub()); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out.String()) != "[]" {
			t.Errorf("%s: %q, want []", name, out)
		}
	}
}

func TestListPagesThroughAll(t *testing.T) {
	s := newStub()
	s.pageSize = 2
	for i := range 5 {
		s.CreateSchedule(bg, api.ScheduleRequest{Name: fmt.Sprintf("s%d", i), Queue: "q", Every: "1h"})
	}
	f, out, _ := testFactory(false)
	if err := listRun(&ListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Paging: pageFlags{All: true}}); err != nil {
		t.Fatal(err)
	}
	if n := len(mustJSON(t, out.Bytes()).([]any)); n != 5 {
		t.Errorf("%d schedules, want 5", n)
	}
	if calls := s.Calls(); len(calls) != 5+3 {
		t.Errorf("calls %v, want 3 list pages", calls)
	}
}

// TestTables: on a terminal, aligned columns under a header; elsewhere,
// tab-separated rows without one, and never escape codes.
func TestTables(t *testing.T) {
	for _, tty := range []bool{true, false} {
		t.Run(fmt.Sprintf("tty=%v", tty), func(t *testing.T) {
			f, out, _ := testFactory(tty)
			if err := listRun(&ListOptions{IO: f, API: apiOf(seeded()), Ctx: bg}); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if strings.Contains(got, "\x1b[") {
				t.Errorf("escape codes: %q", got)
			}
			hasHeader := strings.HasPrefix(got, "ID ")
			if hasHeader != tty {
				t.Errorf("header %v on tty=%v:\n%s", hasHeader, tty, got)
			}
			row := "sch_01\tnightly\tACTIVE\t3\tevery\t1h\tEurope/Berlin\t2027-03-13T13:00:00Z\treports\n"
			if !tty && got != row {
				t.Errorf("got %q, want %q", got, row)
			}
			if tty && !strings.Contains(got, "sch_01  nightly  ACTIVE") {
				t.Errorf("not aligned:\n%s", got)
			}
		})
	}
}

func TestGetTable(t *testing.T) {
	f, out, _ := testFactory(false)
	if err := getRun(&GetOptions{IO: f, API: apiOf(seeded()), Ctx: bg, Ref: "nightly"}); err != nil {
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
	f, out, _ := testFactory(true)
	if err := changeRun(&ChangeOptions{IO: f, API: apiOf(seeded()), Ctx: bg, Verb: "pause", Ref: "nightly"}); err != nil {
		t.Fatal(err)
	}
	if want := "paused nightly (sch_01): PAUSED, version 4; 3 occurrences canceled, 1 still in flight\n"; out.String() != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestTableCellsAreSafe: a name with a newline or an escape sequence
// cannot break a row or reach the terminal raw.
func TestTableCellsAreSafe(t *testing.T) {
	s := seeded()
	s.schedules["nightly"].Name = "evil\n\x1b[31mred\tname"
	f, out, _ := testFactory(false)
	listRun(&ListOptions{IO: f, API: apiOf(s), Ctx: bg})
	if strings.Count(out.String(), "\n") != 1 || strings.Contains(out.String(), "\x1b") {
		t.Errorf("unsafe row %q", out)
	}
}

// TestUpdateMergesFlags: update sends the whole schedule: the current
// settings with the flags given applied, by id.
func TestUpdateMergesFlags(t *testing.T) {
	s := newStub()
	s.CreateSchedule(bg, api.ScheduleRequest{Name: "n", Queue: "q", Cron: "0 2 * * *", TimeZone: "Europe/Berlin", DSTGap: "shift",
		Payload: []byte(`{"keep":true}`), MaxLateness: "5m", MaxAttempts: 4})
	f, _, _ := testFactory(false)
	err := updateRun(&UpdateOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Cron: "30 3 * * *"}, Changed: map[string]bool{"cron": true}}})
	if err != nil {
		t.Fatal(err)
	}
	sc := s.schedules["n"]
	if sc.Expression != "30 3 * * *" || sc.DSTGap != "shift" || string(sc.Payload) != `{"keep":true}` ||
		sc.MaxLateness != "5m0s" || sc.MaxAttempts != 4 || sc.Version != 2 {
		t.Errorf("after update %+v", sc)
	}
	if c := s.Calls(); c[len(c)-1] != "update sch_01" {
		t.Errorf("calls %v", c)
	}
	// A new kind drops what applied only to the old one.
	err = updateRun(&UpdateOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Every: "1h", Anchor: "2027-01-01T00:00:00Z"}, Changed: map[string]bool{"every": true, "anchor": true}}})
	if err != nil || s.schedules["n"].Kind != "every" || s.schedules["n"].Anchor == "" || s.schedules["n"].DSTGap != "skip" {
		t.Fatalf("to every: %v %+v", err, s.schedules["n"])
	}
	// And back to cron: the every anchor goes, the zone stays.
	err = updateRun(&UpdateOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Cron: "@daily"}, Changed: map[string]bool{"cron": true}}})
	if err != nil || s.schedules["n"].Kind != "cron" || s.schedules["n"].TimeZone != "Europe/Berlin" || s.schedules["n"].Anchor != "" {
		t.Fatalf("to cron: %v %+v", err, s.schedules["n"])
	}
	err = updateRun(&UpdateOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{Every: "1h"}, Changed: map[string]bool{"every": true}}})
	if err != nil {
		t.Fatal(err)
	}
	// An invalid result is invalid input, before any PUT.
	n := len(s.Calls())
	err = updateRun(&UpdateOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "n",
		Patch: &schedulePatch{Values: scheduleFlags{DSTGap: "shift"}, Changed: map[string]bool{"dst-gap": true}}})
	wantErr(t, err, "--dst-gap: DST options only apply to a cron schedule", ExitInvalid)
	if len(s.Calls()) != n+1 {
		t.Errorf("calls after the refusal: %v", s.Calls()[n:])
	}
}

// TestExitCodesOfAnswers: schedd's 400s are invalid input (2); 404, 409
// and the rest are failures (1); a stale attempt says so.
func TestExitCodesOfAnswers(t *testing.T) {
	cases := []struct {
		err  *client.Error
		code int
	}{
		{&client.Error{Status: 400, Code: api.CodeInvalidArgument}, ExitInvalid},
		{&client.Error{Status: 400, Code: api.CodeCronNeverFires}, ExitInvalid},
		{&client.Error{Status: 400, Code: api.CodeInvalidTimeZone}, ExitInvalid},
		{&client.Error{Status: 400, Code: api.CodeBadRequest}, ExitInvalid},
		{&client.Error{Status: 404, Code: api.CodeNotFound}, ExitFailure},
		{&client.Error{Status: 409, Code: api.CodeConflict}, ExitFailure},
		{&client.Error{Status: 409, Code: api.CodeStaleAttempt}, ExitFailure},
		{&client.Error{Status: 401, Code: api.CodeUnauthorized}, ExitFailure},
		{&client.Error{Status: 500, Code: api.CodeInternal}, ExitFailure},
	}
	for _, tc := range cases {
		s := seeded()
		s.err = tc.err
		f, out, _ := testFactory(false)
		err := getRun(&GetOptions{IO: f, API: apiOf(s), Ctx: bg, Ref: "x"})
		if c := ExitCode(err); c != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.err.Code, c, tc.code)
		}
		if out.Len() != 0 {
			t.Errorf("%s: stdout %q", tc.err.Code, out)
		}
	}
	s := seeded()
	s.err = &client.Error{Status: 409, Code: api.CodeStaleAttempt, Message: "attempt 2 is not current (3)"}
	f, _, _ := testFactory(false)
	err := ackRun(&AckOptions{IO: f, API: apiOf(s), Ctx: bg, ID: "occ_01", Request: api.AckRequest{Attempt: 2}})
	wantErr(t, err, "ack occ_01 attempt 2: stale attempt: attempt 2 is not current (3)", ExitFailure)
}

func TestClaimNothing(t *testing.T) {
	s := newStub()
	f, out, _ := testFactory(false)
	err := claimRun(&ClaimOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true, Request: api.ClaimRequest{Queue: "q"}})
	if !errors.Is(err, errNothingToClaim) || ExitCode(err) != ExitFailure || out.Len() != 0 {
		t.Fatalf("%v %q", err, out)
	}
}

func TestHeartbeatSaysStop(t *testing.T) {
	f, out, _ := testFactory(false)
	if err := heartbeatRun(&HeartbeatOptions{IO: f, API: apiOf(seeded()), Ctx: bg, ID: "occ_01", Request: api.HeartbeatRequest{Attempt: 2}}); err != nil {
		t.Fatal(err)
	}
	if want := "lease until 2027-03-13T12:00:00Z; the schedule has a newer version: stop\n"; out.String() != want {
		t.Errorf("got %q", out)
	}
}

// TestClusterTable: two tables with headers on a terminal; tagged
// tab-separated rows otherwise.
func TestClusterTable(t *testing.T) {
	f, out, _ := testFactory(true)
	if err := clusterRun(&ClusterOptions{IO: f, API: apiOf(seeded()), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	want := `NODE  ADDRESS             LAST HEARTBEAT        SHARDS  CLOCK OFFSET  LIVE
n1    unix:/run/a.sock    2027-03-13T12:00:00Z  1       -1.5ms        yes
n2    tcp:127.0.0.1:7070  2027-03-13T12:00:00Z  1       0s            yes

SHARD  OWNER  EPOCH  EXPIRES AT            LIVE
0      n1     3      2027-03-13T12:00:08Z  yes
1      n2     1      2027-03-13T12:00:08Z  yes
2      -      0      -                     no
`
	if out.String() != want {
		t.Errorf("tty:\n%s\nwant:\n%s", out, want)
	}
	f, out, _ = testFactory(false)
	if err := clusterRun(&ClusterOptions{IO: f, API: apiOf(seeded()), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	want = "node\tn1\tunix:/run/a.sock\t2027-03-13T12:00:00Z\t1\t-1.5ms\tyes\n" +
		"node\tn2\ttcp:127.0.0.1:7070\t2027-03-13T12:00:00Z\t1\t0s\tyes\n" +
		"shard\t0\tn1\t3\t2027-03-13T12:00:08Z\tyes\n" +
		"shard\t1\tn2\t1\t2027-03-13T12:00:08Z\tyes\n" +
		"shard\t2\t-\t0\t-\tno\n"
	if out.String() != want {
		t.Errorf("not a tty:\n%q\nwant:\n%q", out, want)
	}
}
