package reconcile_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// TestTZWarning: a daemon whose shard was planned under test tz release
// 2026a, asked to reconcile once its process has 2026b loaded (in which
// Test/Shift's rules differ): schedctl reconcile exits 0, its JSON carries
// every documented field of the tz warning and the unverifiable findings,
// and on a terminal the warning comes first, naming the zone and both
// versions, with the unverifiable firings listed apart.
func TestTZWarning(t *testing.T) {
	tztest.Use(t, "2026a")
	begin := time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC)
	d := clidaemon.New(t, clidaemon.Config{Start: begin, Shards: 1, Horizon: 24 * time.Hour})
	if _, _, err := d.Engine.Control.Create(t.Context(), "default", "", schedule.Settings{Name: "shift", Queue: "q",
		Kind: timetable.KindCron, Expr: "0 9 * * *", TimeZone: "Test/Shift"}); err != nil {
		t.Fatal(err)
	}
	for range 48 {
		d.Clock.Advance(2 * time.Hour)
		if _, err := d.Engine.PlanOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		cs, err := d.Engine.Queue.Claim(t.Context(), engine.ClaimRequest{TenantID: "default", Queue: "q", WorkerID: "w", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if _, err := d.Engine.Queue.Ack(t.Context(), "default", c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil {
				t.Fatal(err)
			}
		}
	}
	tztest.Use(t, "2026b")
	args := []string{"--from", begin.Format(time.RFC3339), "--to", begin.Add(4 * 24 * time.Hour).Format(time.RFC3339)}

	w := &world{d: d}
	code, rep, out := w.report(t, args...)
	if code != 0 || rep.Problem {
		t.Fatalf("exit %d, problem %v; want 0 and none:\n%s", code, rep.Problem, out)
	}
	checkKeys(t, out, "unverifiable")
	if len(rep.TZWarnings) != 1 || rep.TZWarnings[0].Zone != "Test/Shift" || rep.TZVersion != "2026b" ||
		rep.TZWarnings[0].StoreTZVersion != "2026a" || rep.TZWarnings[0].Unverifiable != len(rep.Unverifiable) {
		t.Fatalf("tz_version %q, warnings %+v, %d unverifiable", rep.TZVersion, rep.TZWarnings, len(rep.Unverifiable))
	}

	code, out, errOut := d.Run(t, true, append([]string{"reconcile"}, args...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("tty: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("every firing and occurrence checked is explained; %d unverifiable", len(rep.Unverifiable)),
		"\n\nWarning: zone Test/Shift: the store's shard 0 was planned under tz database 2026a, this reconciler has 2026b loaded",
		fmt.Sprintf("\nunverifiable (%d):\n", len(rep.Unverifiable)),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tty output lacks %q:\n%s", want, out)
		}
	}
}
