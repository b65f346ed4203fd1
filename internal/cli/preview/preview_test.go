package preview_test

import (
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/timetable"
)

// runPreview runs schedctl preview through the real root command (its
// global -o flag included) on a Factory whose output is a terminal or not,
// and returns what it printed.
func runPreview(t *testing.T, tty bool, args ...string) string {
	t.Helper()
	f, out, _ := clitest.NewFactory(tty)
	if err := clitest.Exec(t, cli.NewCmdRoot(f), append([]string{"preview"}, args...)...); err != nil {
		t.Fatalf("preview %v: %v", args, err)
	}
	return out.String()
}

// TestPreviewRelativeColumn: on a terminal the table says how far each
// firing is from now (the pinned clock), whatever --from, as
// systemd-analyze calendar does; piped output and -o json do not, so
// scripts and captured files stay the same from day to day.
func TestPreviewRelativeColumn(t *testing.T) {
	// The clock is clitest.FixedNow, 2027-03-13T12:00:00Z; New York springs
	// forward the next night.
	tty := runPreview(t, true, "--cron", "30 2 * * *", "--tz", "America/New_York", "--count", "3")
	// The tz database's version depends on the host: pinned for the file.
	clitest.Golden(t, "preview-tty.golden", strings.Replace(tty, "tz database "+timetable.TZVersion(), "tz database test", 1))
	for _, want := range []string{"RELATIVE", "in 1 d 18 h", "in 2 d 18 h"} {
		if !strings.Contains(tty, want) {
			t.Errorf("terminal table lacks %q:\n%s", want, tty)
		}
	}
	// The column counts from now, whatever --from: the firing at 06:30Z
	// on the 15th is 1 d 18 h away; one of the 10th is in the past.
	from := runPreview(t, true, "--cron", "30 2 * * *", "--tz", "America/New_York", "--count", "1", "--from", "2027-03-15T06:00:00Z")
	if !strings.Contains(from, "in 1 d 18 h") || strings.Contains(from, "in 30 min") {
		t.Errorf("relative to now, not --from: want in 1 d 18 h:\n%s", from)
	}
	past := runPreview(t, true, "--cron", "30 2 * * *", "--tz", "America/New_York", "--count", "1", "--from", "2027-03-10T00:00:00Z")
	if !strings.Contains(past, "3 d 4 h ago") {
		t.Errorf("a firing before now: want 3 d 4 h ago:\n%s", past)
	}

	piped := runPreview(t, false, "--cron", "30 2 * * *", "--tz", "America/New_York", "--count", "3")
	if strings.Contains(piped, "RELATIVE") || strings.Contains(piped, "in 1 d") {
		t.Errorf("piped table has the relative column:\n%s", piped)
	}
	if !strings.Contains(piped, "does not exist (DST gap)") {
		t.Errorf("piped table lacks the skipped row:\n%s", piped)
	}
	js := runPreview(t, true, "-o", "json", "--cron", "30 2 * * *", "--tz", "America/New_York", "--count", "3")
	if strings.Contains(js, "in 1 d") || strings.Contains(strings.ToLower(js), "relative") {
		t.Errorf("JSON on a terminal has the relative time:\n%s", js)
	}
	clitest.MustJSON(t, []byte(js))
}
