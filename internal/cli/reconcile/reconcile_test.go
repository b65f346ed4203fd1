package reconcile_test

import (
	"database/sql"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // a connection of its own to the daemon's file, to delete a row behind its back

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

// start is the daemon's virtual clock when the schedules are created; the
// world runs six hours from there.
var start = time.Date(2027, 3, 13, 0, 0, 0, 0, time.UTC)

// world is a real daemon six hours into the life of two schedules:
// "hourly" on queue q, whose worker acked every firing and one manual
// trigger, and "halfhourly" on queue idle, which nobody works (its
// firings are pending).
type world struct {
	d                  *clidaemon.Daemon
	hourly, halfhourly *record.Schedule
	manual             *record.Occurrence
}

func newWorld(t *testing.T) *world {
	t.Helper()
	// Seeded ids: the same schedule ids every run, for the golden tables.
	d := clidaemon.New(t, clidaemon.Config{Start: start, Shards: 1, Horizon: time.Hour,
		Rand: rand.NewChaCha8([32]byte{'r', 'e', 'c', 'o', 'n', 'c', 'i', 'l', 'e'})})
	w := &world{d: d}
	create := func(name, queue, expr string) *record.Schedule {
		sc, _, err := d.Engine.Control.Create(t.Context(), "default", "", schedule.Settings{Name: name, Queue: queue,
			Kind: timetable.KindCron, Expr: expr, TimeZone: "UTC"})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return sc
	}
	w.hourly, w.halfhourly = create("hourly", "q", "0 * * * *"), create("halfhourly", "idle", "*/30 * * * *")
	for i := range 12 {
		d.Clock.Advance(30 * time.Minute)
		if _, err := d.Engine.PlanOnce(t.Context()); err != nil {
			t.Fatalf("plan: %v", err)
		}
		if i == 4 { // 02:30
			var err error
			if w.manual, _, err = d.Engine.Control.Trigger(t.Context(), "default", "hourly", "by-hand"); err != nil {
				t.Fatalf("trigger: %v", err)
			}
		}
		cs, err := d.Engine.Queue.Claim(t.Context(), engine.ClaimRequest{TenantID: "default", Queue: "q", WorkerID: "w", Limit: 100})
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		for _, c := range cs {
			if _, err := d.Engine.Queue.Ack(t.Context(), "default", c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil {
				t.Fatalf("ack: %v", err)
			}
		}
	}
	return w
}

// report runs schedctl reconcile -o json with args and decodes its report,
// refusing any field the API does not declare.
func (w *world) report(t *testing.T, args ...string) (int, api.ReconcileReport, string) {
	t.Helper()
	code, out, errOut := w.d.Run(t, false, append([]string{"reconcile", "-o", "json"}, args...)...)
	var rep api.ReconcileReport
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("reconcile %v: exit %d, not the report JSON: %v\n%s%s", args, code, err, out, errOut)
	}
	return code, rep, out
}

// names are the schedules a report summarizes, by name, sorted.
func names(rep api.ReconcileReport) string {
	var n []string
	for _, s := range rep.Schedules {
		n = append(n, s.Name)
	}
	slices.Sort(n)
	return strings.Join(n, " ")
}

// keys are the field names of the JSON object v, sorted.
func keys(t *testing.T, v any) string {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %v", v)
	}
	return strings.Join(slices.Sorted(maps.Keys(obj)), " ")
}

// Every field docs/api.md documents of a report, a count set, a schedule's
// summary and a finding: scripts depend on them.
const (
	reportKeys  = "absent from manual problem schedules to totals tz_version tz_warnings unexpected unverifiable"
	countKeys   = "absent canceled canceled_by_change dead manual missed missed_counted pending skipped_overlap succeeded unexpected unverifiable"
	summaryKeys = "absent canceled canceled_by_change dead manual missed missed_counted name pending schedule_id skipped_overlap succeeded tenant_id unexpected unverifiable versions"
	findingKeys = "name occurrence_id reason schedule_id scheduled_for state tenant_id version"
	// tzWarningKeys: a tz warning's fields (tz_warnings[]).
	tzWarningKeys = "message schedules shards store_tz_version tz_version unverifiable zone"
)

// checkKeys pins the field names of a report's JSON, with a finding in
// list (absent, unexpected, manual or unverifiable).
func checkKeys(t *testing.T, out, list string) {
	t.Helper()
	v := clitest.MustJSON(t, []byte(out)).(map[string]any)
	if got := keys(t, v); got != reportKeys {
		t.Errorf("report fields\n got %s\nwant %s", got, reportKeys)
	}
	if got := keys(t, v["totals"]); got != countKeys {
		t.Errorf("totals fields\n got %s\nwant %s", got, countKeys)
	}
	for _, s := range v["schedules"].([]any) {
		if got := keys(t, s); got != summaryKeys {
			t.Errorf("schedules[] fields\n got %s\nwant %s", got, summaryKeys)
		}
	}
	if a, ok := v["tz_warnings"].([]any); !ok {
		t.Errorf("tz_warnings is %v, want an array (empty rather than null)", v["tz_warnings"])
	} else {
		for _, x := range a {
			if got := keys(t, x); got != tzWarningKeys {
				t.Errorf("tz_warnings[] fields\n got %s\nwant %s", got, tzWarningKeys)
			}
		}
	}
	for _, l := range []string{"absent", "unexpected", "manual", "unverifiable"} {
		a, ok := v[l].([]any)
		if !ok {
			t.Errorf("%s is %v, want an array (empty rather than null)", l, v[l])
		}
		if l == list && len(a) == 0 {
			t.Errorf("%s is empty, want a finding", l)
		}
		for _, f := range a {
			if got := keys(t, f); got != findingKeys {
				t.Errorf("%s[] fields\n got %s\nwant %s", l, got, findingKeys)
			}
		}
	}
}

// TestCleanRange: over the last 24 hours (the default) every firing is
// explained: exit 0, the summaries as tables (golden, on a terminal and
// not) and as JSON with every documented field.
func TestCleanRange(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	now := start.Add(6 * time.Hour)

	code, rep, out := w.report(t)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	checkKeys(t, out, "manual")
	if !rep.From.Equal(now.Add(-24*time.Hour)) || !rep.To.Equal(now) || rep.Problem {
		t.Errorf("from %s to %s problem %v; want the 24 hours up to the daemon's %s, no problem", rep.From, rep.To, rep.Problem, now)
	}
	if names(rep) != "halfhourly hourly" || len(rep.Absent)+len(rep.Unexpected) != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, s := range rep.Schedules {
		want := api.ReconcileCounts{Succeeded: 6, Manual: 1} // 01:00 to 06:00, and the trigger
		if s.Name == "halfhourly" {
			want = api.ReconcileCounts{Pending: 12} // 00:30 to 06:00, never claimed
		}
		if s.ReconcileCounts != want || s.TenantID != "default" || s.Versions != 1 {
			t.Errorf("%s: %+v, want %+v in tenant default, 1 version", s.Name, s, want)
		}
	}
	if want := (api.ReconcileCounts{Succeeded: 6, Pending: 12, Manual: 1}); rep.Totals != want {
		t.Errorf("totals %+v, want %+v", rep.Totals, want)
	}
	if m := rep.Manual; len(m) != 1 || m[0].OccurrenceID != w.manual.OccurrenceID || m[0].ScheduleID != w.hourly.ScheduleID ||
		m[0].Name != "hourly" || m[0].State != "SUCCEEDED" || !m[0].ScheduledFor.Equal(start.Add(150*time.Minute)) {
		t.Errorf("manual %+v, want the 02:30 trigger %s, succeeded", m, w.manual.OccurrenceID)
	}

	code, out, errOut := w.d.Run(t, true, "reconcile")
	if code != 0 || errOut != "" {
		t.Errorf("tty: exit %d, stderr %q; want 0 and nothing", code, errOut)
	}
	clitest.Golden(t, "clean.tty", out)
	code, out, _ = w.d.Run(t, false, "reconcile")
	if code != 0 {
		t.Errorf("not a tty: exit %d", code)
	}
	clitest.Golden(t, "clean.tsv", out)
}

// TestDeletedRow: an acked occurrence deleted from the SQLite file behind
// the daemon's back is named absent, in the table and the JSON, and the
// exit status is 1 with no error line (the report says what).
func TestDeletedRow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	victim := record.OccurrenceID(w.hourly.ScheduleID, 1, start.Add(3*time.Hour))
	db, err := sql.Open("sqlite", w.d.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Exec(`DELETE FROM occurrences WHERE occurrence_id = ?`, victim)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("deleted %d rows (%v), want the one of 03:00", n, err)
	}

	code, rep, out := w.report(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	checkKeys(t, out, "absent")
	if a := rep.Absent; !rep.Problem || len(a) != 1 || a[0].OccurrenceID != victim || a[0].ScheduleID != w.hourly.ScheduleID ||
		a[0].Name != "hourly" || a[0].TenantID != "default" || a[0].Version != 1 || !a[0].ScheduledFor.Equal(start.Add(3*time.Hour)) ||
		a[0].State != "" || a[0].Reason == "" || len(rep.Unexpected) != 0 {
		t.Fatalf("absent %+v unexpected %+v, want %s alone, without a state, with a reason", a, rep.Unexpected, victim)
	}
	if want := (api.ReconcileCounts{Succeeded: 5, Absent: 1, Pending: 12, Manual: 1}); rep.Totals != want {
		t.Errorf("totals %+v, want %+v", rep.Totals, want)
	}

	code, out, errOut := w.d.Run(t, true, "reconcile")
	if code != 1 || errOut != "" {
		t.Errorf("tty: exit %d, stderr %q; want 1 and no error line", code, errOut)
	}
	clitest.Golden(t, "absent.tty", out)
	code, out, errOut = w.d.Run(t, false, "reconcile")
	if code != 1 || errOut != "" {
		t.Errorf("not a tty: exit %d, stderr %q; want 1 and no error line", code, errOut)
	}
	clitest.Golden(t, "absent.tsv", out)
	if !strings.Contains(out, "absent\t"+w.hourly.ScheduleID+"\thourly\t1\t2027-03-13T03:00:00Z\t"+victim+"\t") {
		t.Errorf("no absent line for %s:\n%s", victim, out)
	}
}

// TestFlagsReachTheDaemon: --from, --to, --schedule (by name or id) and
// --tenant narrow the report schedd makes; a malformed time is bad input,
// sent nowhere; a schedule schedd does not know is a failure naming it.
func TestFlagsReachTheDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	// 01:00 to 03:00 UTC, the end given in another offset.
	code, rep, _ := w.report(t, "--from", "2027-03-13T01:00:00Z", "--to", "2027-03-13T04:00:00+01:00")
	if code != 0 || !rep.From.Equal(start.Add(time.Hour)) || !rep.To.Equal(start.Add(3*time.Hour)) {
		t.Errorf("range: exit %d, from %s to %s; want 01:00 to 03:00 UTC", code, rep.From, rep.To)
	}
	if want := (api.ReconcileCounts{Succeeded: 3, Pending: 5, Manual: 1}); rep.Totals != want || names(rep) != "halfhourly hourly" {
		t.Errorf("range: %s %+v, want both, %+v (01:00, 02:00, 03:00; 01:00 to 03:00 every half hour; the 02:30 trigger)",
			names(rep), rep.Totals, want)
	}

	code, rep, _ = w.report(t, "--schedule", "hourly")
	if code != 0 || names(rep) != "hourly" || rep.Schedules[0].ScheduleID != w.hourly.ScheduleID || rep.Totals.Pending != 0 {
		t.Errorf("--schedule hourly: exit %d, %+v", code, rep.Schedules)
	}
	code, rep, _ = w.report(t, "--schedule", w.halfhourly.ScheduleID, "--tenant", "default")
	if code != 0 || names(rep) != "halfhourly" || rep.Totals.Pending != 12 || len(rep.Manual) != 0 {
		t.Errorf("--schedule <halfhourly's id>: exit %d, %+v", code, rep.Schedules)
	}
	code, rep, _ = w.report(t, "--tenant", "default")
	if code != 0 || names(rep) != "halfhourly hourly" {
		t.Errorf("--tenant default: exit %d, %s", code, names(rep))
	}
	code, rep, _ = w.report(t, "--tenant", "another")
	if code != 0 || len(rep.Schedules) != 0 || rep.Totals != (api.ReconcileCounts{}) || rep.Problem {
		t.Errorf("--tenant another: exit %d, %+v; want nothing", code, rep)
	}

	// Bad input: exit 2 naming the flag, and not a request sent.
	sent := w.d.Requests()
	for _, args := range [][]string{{"--from", "yesterday"}, {"--to", "2027-03-13"}} {
		code, out, errOut := w.d.Run(t, false, append([]string{"reconcile"}, args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, args[0]+` "`+args[1]+`"`) || !strings.Contains(errOut, "RFC 3339") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 naming the flag", args, code, out, errOut)
		}
	}
	if n := w.d.Requests(); n != sent {
		t.Errorf("a bad flag reached the daemon: %d requests", n-sent)
	}
	// schedd judges the range itself: from after to is its invalid_argument.
	code, out, errOut := w.d.Run(t, false, "reconcile", "--from", "2027-03-13T05:00:00Z", "--to", "2027-03-13T01:00:00Z")
	if code != 2 || out != "" || !strings.Contains(errOut, "from: the range's start 2027-03-13T05:00:00Z is not before its end") {
		t.Errorf("--from after --to: exit %d, stdout %q, stderr %q; want 2 naming from", code, out, errOut)
	}
	// A schedule schedd does not have is bad input (exit 2), not a
	// finding: exit 1 is kept for "something is absent or unexpected".
	code, out, errOut = w.d.Run(t, false, "reconcile", "--schedule", "nope")
	if code != 2 || out != "" || !strings.Contains(errOut, `"nope"`) || !strings.Contains(errOut, "schedule") {
		t.Errorf("--schedule nope: exit %d, stdout %q, stderr %q; want 2 naming it", code, out, errOut)
	}
}
