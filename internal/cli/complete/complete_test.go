package complete_test

import (
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestCompletionAgainstTheDaemon runs schedctl's own __complete command,
// which the shells' completion scripts call, against a real daemon: names
// the daemon knows (schedules, targets, tenants, queues), the words of
// the flags that take one of a few, zones in any case; and nothing but
// the directive, with no error, when the daemon cannot be reached.
func TestCompletionAgainstTheDaemon(t *testing.T) {
	d := clidaemon.New(t, clidaemon.Config{Start: clitest.FixedNow, Shards: 1})
	run := func(args ...string) []string {
		t.Helper()
		code, out, errOut := d.Run(t, false, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %v: exit %d %s", args, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[:len(lines)-1] // the last is the directive (":4")
	}
	for _, args := range [][]string{
		{"create", "--name", "nightly-report", "--queue", "reports", "--cron", "0 2 * * *", "--tz", "UTC"},
		{"create", "--name", "nightly-backup", "--queue", "backups", "--every", "1h"},
		{"create", "--name", "hourly", "--queue", "reports", "--every", "1h"},
		{"tenant", "create", "acme"},
		{"target", "create", "hooks", "--webhook", "http://127.0.0.1:9/h"},
	} {
		if code, _, errOut := d.Run(t, false, args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
	}

	for _, tc := range []struct {
		args []string
		want string // the completions, space-separated
	}{
		{[]string{"get", "night"}, "nightly-backup nightly-report"},
		{[]string{"pause", "NIGHTLY-R"}, "nightly-report"},
		{[]string{"get", "hourly", ""}, ""}, // one name, given
		{[]string{"occurrences", "--schedule", "h"}, "hourly"},
		{[]string{"target", "get", ""}, "hooks"},
		{[]string{"tenant", "get", "a"}, "acme"},
		{[]string{"tenant", "disable", "a"}, "acme"},
		{[]string{"tenant", "token", "create", ""}, "acme default"},
		{[]string{"create", "--tz", "europe/berl"}, "Europe/Berlin"},
		{[]string{"create", "--overlap", ""}, "allow skip_if_running queue_one"},
		{[]string{"update", "hourly", "--misfire", "c"}, "catch_up:"},
		{[]string{"list", "--state", "p"}, "PAUSED"},
		{[]string{"occurrences", "--state", "DE"}, "DEAD"},
		{[]string{"list", "-o", ""}, "table json"},
		{[]string{"dlq", "list", "--queue", "rep"}, "reports"},
		{[]string{"occurrences", "--queue", ""}, "backups reports"},
	} {
		if got := strings.Join(run(tc.args...), " "); got != tc.want {
			t.Errorf("__complete %v: %q, want %q", tc.args, got, tc.want)
		}
	}

	// No daemon: no names, no error (cobra notes the directive on
	// stderr), and the shell offers no files.
	d.Addr = "unix:/nonexistent/sched.sock"
	code, out, errOut := d.Run(t, false, "__complete", "get", "")
	if code != 0 || strings.TrimSpace(out) != ":4" || strings.Contains(errOut, "rror") {
		t.Errorf("no daemon: exit %d %q %q", code, out, errOut)
	}
}
