package reconcile

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

var at = time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)

// fixed answers every reconcile with its report and keeps what it was
// asked.
type fixed struct {
	rep   api.ReconcileReport
	asked []client.ReconcileOptions
}

func (f *fixed) Reconcile(_ context.Context, o client.ReconcileOptions) (*api.ReconcileReport, error) {
	f.asked = append(f.asked, o)
	r := f.rep
	return &r, nil
}

func report(problem bool) *fixed {
	rep := api.ReconcileReport{From: at.Add(-24 * time.Hour), To: at,
		Schedules: []api.ReconcileSchedule{{TenantID: "default", ScheduleID: "sch_1", Name: "nightly", Versions: 2,
			ReconcileCounts: api.ReconcileCounts{Succeeded: 5, CanceledByChange: 1}}},
		Absent: []api.ReconcileFinding{}, Unexpected: []api.ReconcileFinding{}, Manual: []api.ReconcileFinding{}}
	rep.Totals = rep.Schedules[0].ReconcileCounts
	if problem {
		rep.Problem = true
		rep.Totals.Absent, rep.Schedules[0].Absent = 1, 1
		rep.Absent = append(rep.Absent, api.ReconcileFinding{TenantID: "default", ScheduleID: "sch_1", Name: "nightly", Version: 2,
			ScheduledFor: at.Add(-time.Hour), OccurrenceID: "occ_x", Reason: "no occurrence"})
	}
	return &fixed{rep: rep}
}

func run(t *testing.T, tty, json bool, f *fixed, args ...string) (string, error) {
	t.Helper()
	fac, out, _ := clitest.NewFactory(tty)
	cmd := NewCmdReconcile(fac, func(o *ReconcileOptions) error {
		o.API = func() (API, error) { return f, nil }
		o.JSON = json
		return reconcileRun(o)
	})
	err := clitest.Exec(t, cmd, args...)
	return out.String(), err
}

// TestFlagsReachTheDaemon: the range, schedule and tenant are sent as
// given; a malformed time is invalid input, sent nowhere.
func TestFlagsReachTheDaemon(t *testing.T) {
	f := report(false)
	if _, err := run(t, false, false, f, "--from", "2027-03-12T00:00:00Z", "--to", "2027-03-13T00:00:00+01:00",
		"--schedule", "nightly", "--tenant", "default"); err != nil {
		t.Fatal(err)
	}
	want := client.ReconcileOptions{From: time.Date(2027, 3, 12, 0, 0, 0, 0, time.UTC),
		To: time.Date(2027, 3, 12, 23, 0, 0, 0, time.UTC), Schedule: "nightly", Tenant: "default"}
	if len(f.asked) != 1 || !f.asked[0].From.Equal(want.From) || !f.asked[0].To.Equal(want.To) ||
		f.asked[0].Schedule != want.Schedule || f.asked[0].Tenant != want.Tenant {
		t.Fatalf("asked %+v, want %+v", f.asked, want)
	}
	_, err := run(t, false, false, f, "--from", "yesterday")
	clitest.WantErr(t, err, `--from "yesterday"`, cmdutil.ExitInvalid)
	if len(f.asked) != 1 {
		t.Errorf("a bad flag reached the daemon")
	}
}

// TestExitStatus: 1 when something is absent or unexpected (the report
// says what, no error line), 0 when all is explained.
func TestExitStatus(t *testing.T) {
	if _, err := run(t, false, false, report(false)); cmdutil.ExitCode(err) != 0 {
		t.Errorf("clean: %v", err)
	}
	_, err := run(t, false, true, report(true))
	var se *cmdutil.StatusError
	if cmdutil.ExitCode(err) != 1 || !errors.As(err, &se) || !se.Silent {
		t.Errorf("a problem: %v (exit %d), want a silent status 1", err, cmdutil.ExitCode(err))
	}
}

// TestJSONFields pins the report's field names: scripts depend on them.
func TestJSONFields(t *testing.T) {
	out, _ := run(t, false, true, report(true))
	v := clitest.MustJSON(t, []byte(out)).(map[string]any)
	for part, want := range map[string]string{
		"":          "absent from manual problem schedules to totals unexpected",
		"totals":    "absent canceled canceled_by_change dead manual missed missed_counted pending skipped_overlap succeeded unexpected",
		"schedules": "absent canceled canceled_by_change dead manual missed missed_counted name pending schedule_id skipped_overlap succeeded tenant_id unexpected versions",
		"absent":    "name occurrence_id reason schedule_id scheduled_for state tenant_id version",
	} {
		obj := v
		switch x := v[part].(type) {
		case map[string]any:
			obj = x
		case []any:
			obj = x[0].(map[string]any)
		}
		var got []string
		for k := range obj {
			got = append(got, k)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%q fields\n got %s\nwant %s", part, strings.Join(got, " "), want)
		}
	}
}

// TestTables: a summary per schedule and a total, then the absent
// firings; headers on a terminal, tagged tab-separated lines otherwise.
func TestTables(t *testing.T) {
	out, _ := run(t, true, false, report(true))
	want := `Reconciled 2027-03-12T12:00:00Z to 2027-03-13T12:00:00Z: 1 firing absent, 0 occurrences unexpected.

SCHEDULE  NAME     TENANT   VERSIONS  SUCCEEDED  DEAD  CANCELED  MISSED  COUNTED  SKIPPED  PENDING  ABSENT  BY CHANGE  MANUAL  UNEXPECTED
sch_1     nightly  default  2         5          0     0         0       0        0        0        1       1          0       0
total     -        -        -         5          0     0         0       0        0        0        1       1          0       0

absent (1):
SCHEDULE  NAME     VERSION  SCHEDULED FOR         OCCURRENCE  STATE  REASON
sch_1     nightly  2        2027-03-13T11:00:00Z  occ_x       -      no occurrence
`
	if out != want {
		t.Errorf("tty:\n%s\nwant:\n%s", out, want)
	}
	out, _ = run(t, false, false, report(true))
	want = "schedule\tsch_1\tnightly\tdefault\t2\t5\t0\t0\t0\t0\t0\t0\t1\t1\t0\t0\n" +
		"total\ttotal\t-\t-\t-\t5\t0\t0\t0\t0\t0\t0\t1\t1\t0\t0\n" +
		"absent\tsch_1\tnightly\t2\t2027-03-13T11:00:00Z\tocc_x\t-\tno occurrence\n"
	if out != want {
		t.Errorf("not a tty:\n%q\nwant:\n%q", out, want)
	}
}
