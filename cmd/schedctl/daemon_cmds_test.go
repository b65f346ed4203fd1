package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The commands that talk to schedd, through the real binary with no daemon
// at all: what can be judged offline exits 2 before any connection, and
// the rest fails with exit 1 and how to start schedd.

// noDaemon points the default socket at an empty private directory.
func noDaemon(t *testing.T) []string {
	return []string{"XDG_RUNTIME_DIR=" + t.TempDir(), "SCHED_ADDR=", "SCHED_TOKEN="}
}

func oneLine(t *testing.T, r result) {
	t.Helper()
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "schedctl: ") {
		t.Errorf("stderr is not one schedctl: line: %q", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout not empty: %q", r.stdout)
	}
}

func TestOfflineInvalidInputExitsTwo(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"create no kind", []string{"create", "--name", "n", "--queue", "q"}, "give exactly one of --cron, --at or --every"},
		{"create two kinds", []string{"create", "--name", "n", "--queue", "q", "--every", "1h", "--cron", "@daily", "--tz", "UTC"}, "only one of --cron, --at or --every"},
		{"create bad payload", []string{"create", "--name", "n", "--queue", "q", "--every", "1h", "--payload", "{oops}"}, "--payload: not valid JSON"},
		{"create bad cron", []string{"create", "--name", "n", "--queue", "q", "--cron", "61 * * * *", "--tz", "UTC"}, `--cron: minute field "61"`},
		{"create never fires", []string{"create", "--name", "n", "--queue", "q", "--cron", "0 0 31 2 *", "--tz", "UTC"}, "can never fire"},
		{"create bad zone", []string{"create", "--name", "n", "--queue", "q", "--cron", "@daily", "--tz", "Mars/Olympus"}, "unknown IANA zone"},
		{"create bad misfire", []string{"create", "--name", "n", "--queue", "q", "--every", "1h", "--misfire", "catch_up:0"}, "--misfire"},
		{"create no name", []string{"create", "--queue", "q", "--every", "1h"}, "--name is required"},
		{"update nothing", []string{"update", "nightly"}, "nothing to update"},
		{"get no id", []string{"get"}, "accepts 1 arg(s)"},
		{"pause two ids", []string{"pause", "a", "b"}, "accepts 1 arg(s)"},
		{"list bad state", []string{"list", "--state", "asleep"}, `--state "asleep"`},
		{"occurrences bad state", []string{"occurrences", "--state", "done"}, `--state "done"`},
		{"claim no queue", []string{"claim"}, "--queue is required"},
		{"claim long wait", []string{"claim", "--queue", "q", "--wait", "1h"}, "--wait 1h0m0s"},
		{"ack no attempt", []string{"ack", "occ_1"}, "--attempt is required"},
		{"heartbeat bad attempt", []string{"heartbeat", "occ_1", "--attempt", "x"}, `invalid argument "x" for "--attempt"`},
		{"nack bad class", []string{"nack", "occ_1", "--attempt", "1", "--class", "maybe"}, `--class "maybe"`},
		{"worker no command", []string{"worker", "--queue", "q"}, "give the command to run after --"},
		{"worker missing command", []string{"worker", "--queue", "q", "--", "/nonexistent/job"}, `command "/nonexistent/job"`},
		{"worker bad codes", []string{"worker", "--queue", "q", "--permanent-exit-codes", "300", "--", "true"}, "300 is not an exit status"},
		{"dlq unknown", []string{"dlq", "flush"}, `unknown command "flush"`},
		{"dlq replay no id", []string{"dlq", "replay"}, "give the occurrence id to replay, or --all"},
		{"dlq replay id and all", []string{"dlq", "replay", "occ_1", "--all"}, "not both"},
		{"dlq purge off a terminal", []string{"dlq", "purge", "--queue", "q"}, "pass --yes to purge without asking"},
		{"trigger no name", []string{"trigger"}, "accepts 1 arg(s)"},
		{"list limit", []string{"list", "--limit", "5000"}, "--limit 5000: must be from 1 to 1000"},
		{"list reverse", []string{"list", "--reverse"}, "unknown flag: --reverse"},
		{"interval without watch", []string{"status", "--interval", "5s"}, "--interval goes with --watch"},
		{"watch too fast", []string{"occurrences", "-w", "--interval", "10ms"}, "--interval 10ms: must be at least 1s"},
		{"apply no file", []string{"apply"}, "-f FILE is required"},
		{"apply bad file", []string{"apply", "-f", "testdata/schedules/bad-cron.yaml"}, `schedule "nightly-report" (#2), field cron`},
		{"diff bad file", []string{"diff", "-f", "testdata/schedules/bad-unknown-field.yaml"}, `unknown field "max_latenes"`},
		{"bad address", []string{"list", "--addr", "localhost:7070"}, `invalid address "localhost:7070"`},
		{"bad address env", []string{"status"}, `invalid address "http://x:1"`},
		{"completion shell", []string{"completion", "tcsh"}, `invalid argument "tcsh"`},
		{"get dot-dot", []string{"get", ".."}, `reference "..": a name or id cannot be only dots`},
		{"pause dot", []string{"pause", "."}, `reference ".": a name or id cannot be only dots`},
		{"get empty", []string{"get", ""}, "the schedule or occurrence reference is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := noDaemon(t)
			if tc.name == "bad address env" {
				env = append(env, "SCHED_ADDR=http://x:1")
			}
			r := run(t, env, tc.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			oneLine(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "cannot connect") {
				t.Errorf("tried to connect before judging the input: %q", r.stderr)
			}
		})
	}
}

func TestNoDaemonSaysHowToStartIt(t *testing.T) {
	for _, args := range [][]string{
		{"list"}, {"get", "nightly"}, {"status"}, {"create", "--name", "n", "--queue", "q", "--every", "1h"},
		{"ack", "occ_1", "--attempt", "1"}, {"apply", "-f", "testdata/schedules/good.yaml"},
	} {
		r := run(t, noDaemon(t), args...)
		if r.code != 1 {
			t.Errorf("%v: exit %d, want 1; %q", args, r.code, r.stderr)
			continue
		}
		oneLine(t, r)
		if !strings.Contains(r.stderr, "is schedd running? start it with: schedd") {
			t.Errorf("%v: %q", args, r.stderr)
		}
	}
}

// TestValidateFiles: schedctl validate -f on good and bad files, offline.
func TestValidateFiles(t *testing.T) {
	r := run(t, noDaemon(t), "validate", "-f", "testdata/schedules/good.yaml")
	if r.code != 0 || r.stdout != "testdata/schedules/good.yaml: 4 schedules, valid\n" || r.stderr != "" {
		t.Fatalf("good file: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, noDaemon(t), "validate", "-f", "testdata/schedules/good.yaml", "-o", "json")
	var v struct {
		File      string   `json:"file"`
		Valid     bool     `json:"valid"`
		Schedules []string `json:"schedules"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil || !v.Valid || len(v.Schedules) != 4 || v.Schedules[0] != "nightly-report" {
		t.Fatalf("good file, JSON: %d %q", r.code, r.stdout)
	}
	bad := []struct{ file, want string }{
		{"bad-cron.yaml", `bad-cron.yaml:7: schedule "nightly-report" (#2), field cron: hour field "24": out of range 0-23`},
		{"bad-unknown-field.yaml", `bad-unknown-field.yaml:5: schedule "inventory-sync" (#1), field max_latenes: unknown field "max_latenes"`},
		{"bad-never-fires.yaml", `bad-never-fires.yaml:4: schedule "feb-31" (#1), field cron: `},
		{"bad-zone.yaml", `bad-zone.yaml:5: schedule "mars" (#1), field time_zone: time zone "Mars/Olympus": unknown IANA zone`},
		{"bad-misfire.yaml", `bad-misfire.yaml:5: schedule "catchy" (#1), field misfire_policy: "catch_up": say how many to catch up, catch_up:K with K from 1 to 1000`},
		{"bad-duplicate.yaml", `bad-duplicate.yaml:5: schedule "twice" (#2), field name: also the name of schedule #1`},
		{"bad-two-kinds.yaml", `bad-two-kinds.yaml:2: schedule "both" (#1), field cron: give exactly one of cron, at or every`},
		{"bad-syntax.yaml", `bad-syntax.yaml:`},
	}
	for _, tc := range bad {
		t.Run(tc.file, func(t *testing.T) {
			r := run(t, noDaemon(t), "validate", "-f", "testdata/schedules/"+tc.file)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; %q", r.code, r.stderr)
			}
			oneLine(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.want)
			}
		})
	}
	if r := run(t, noDaemon(t), "validate", "-f", "testdata/schedules/missing.yaml"); r.code != 2 {
		t.Errorf("missing file: exit %d", r.code)
	}
}

func TestCompletionAndHelp(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := run(t, nil, "completion", sh)
		if r.code != 0 || !strings.Contains(r.stdout, "schedctl") {
			t.Errorf("completion %s: %d %q", sh, r.code, r.stderr)
		}
	}
	for _, cmd := range [][]string{
		{"create"}, {"update"}, {"get"}, {"list"}, {"pause"}, {"resume"}, {"cancel"}, {"occurrences"}, {"attempts"},
		{"worker"}, {"claim"}, {"heartbeat"}, {"ack"}, {"nack"}, {"dlq"}, {"dlq", "list"}, {"dlq", "replay"}, {"dlq", "purge"}, {"trigger"}, {"top"},
		{"apply"}, {"diff"}, {"validate"}, {"completion"}, {"status"}, {"preview"}, {"version"},
	} {
		r := run(t, nil, append(cmd, "--help")...)
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") || !strings.Contains(r.stdout, "schedctl "+strings.Join(cmd, " ")) {
			t.Errorf("%v --help: %d, no example:\n%s", cmd, r.code, r.stdout)
		}
	}
}
