package schedule_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestDryRunDaemon: create --dry-run and update --dry-run, through
// schedctl against a real daemon, show the schedule as it would be (JSON
// with dry_run, a table saying nothing changed), refuse what the write
// would refuse (a name taken: exit 1), and leave the daemon's schedules
// as they were.
func TestDryRunDaemon(t *testing.T) {
	d := clidaemon.New(t, clidaemon.Config{Start: clitest.FixedNow, Shards: 1})
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := d.Run(t, false, args...)
		if code != want {
			t.Fatalf("schedctl %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out, errOut
	}
	run(0, "create", "--name", "daily", "--queue", "q", "--cron", "0 9 * * *", "--tz", "UTC")

	out, _ := run(0, "create", "--name", "nightly", "--queue", "q", "--cron", "0 2 * * *", "--tz", "Europe/Berlin", "--dry-run", "-o", "json")
	var cr api.CreateResult
	if err := json.Unmarshal([]byte(out), &cr); err != nil || !cr.DryRun || !cr.Created || cr.Name != "nightly" || cr.NextFireAt == nil {
		t.Fatalf("create --dry-run -o json: %v %+v", err, cr)
	}
	out, _ = run(0, "create", "--name", "nightly", "--queue", "q", "--cron", "0 2 * * *", "--tz", "Europe/Berlin", "--dry-run")
	if !strings.Contains(out, "nightly") || !strings.HasSuffix(out, "Nothing was created (--dry-run); the id above is not kept.\n") {
		t.Errorf("create --dry-run table:\n%s", out)
	}
	_, errOut := run(1, "create", "--name", "daily", "--queue", "q", "--every", "1h", "--dry-run")
	if !strings.Contains(errOut, "daily") {
		t.Errorf("create --dry-run of a taken name: %q", errOut)
	}

	out, _ = run(0, "update", "daily", "--cron", "30 9 * * *", "--dry-run")
	if !strings.HasPrefix(out, "would update daily") || !strings.Contains(out, "30 9 * * *") || !strings.HasSuffix(out, "Nothing was changed (--dry-run).\n") {
		t.Errorf("update --dry-run:\n%s", out)
	}
	out, _ = run(0, "update", "daily", "--cron", "30 9 * * *", "--dry-run", "-o", "json")
	var ch api.ChangeResult
	if err := json.Unmarshal([]byte(out), &ch); err != nil || !ch.DryRun || ch.Schedule.Version != 2 || ch.Schedule.Expression != "30 9 * * *" {
		t.Fatalf("update --dry-run -o json: %v %+v", err, ch)
	}

	out, _ = run(0, "list", "-o", "json")
	var list []api.Schedule
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if len(list) != 1 || list[0].Name != "daily" || list[0].Version != 1 || list[0].Expression != "0 9 * * *" {
		t.Errorf("after the dry runs: %+v, want daily alone at version 1", list)
	}
}
