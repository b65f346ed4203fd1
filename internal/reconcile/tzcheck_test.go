package reconcile_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// firingsIn lists a cron expression's firings in zone over [from, to]
// under the tz rules loaded now.
func firingsIn(t *testing.T, expr, zone string, from, to time.Time) []time.Time {
	t.Helper()
	sp, err := timetable.Parse(timetable.Definition{Kind: timetable.KindCron, Expr: expr, TimeZone: zone})
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for f, ok := sp.Next(from.Add(-time.Nanosecond)); ok && !f.At.After(to); f, ok = sp.Next(f.At) {
		out = append(out, f.At)
	}
	return out
}

// TestTZMismatchUnverifiable: the engine plans and runs two cron
// schedules under one test tz release (its shard records it), and the
// reconciler then audits under the other, in which Test/Shift's rules
// differ and Test/Steady's do not; both ways round (a reconciler newer and
// older than the store), on both stores. The audit warns once, naming the
// zone, the shard and both versions; what it would have found absent (the
// firings only its own rules name) and unexpected (the rows at instants
// only the store's rules name) of the Test/Shift schedule is unverifiable,
// not a problem; the firings both rules agree on are still checked, and
// the Test/Steady schedule is audited as ever: a row deleted there is
// absent, a problem, and schedd reconcile exits 1 and prints the warning.
// The same holds between a release and a database rebuilt with other
// rules under its version line (2026a-local: 2026b's rules, version
// 2026a), either way round: the versions are equal, the rules are not.
func TestTZMismatchUnverifiable(t *testing.T) {
	for _, st := range []struct {
		name string
		make func(*testing.T, time.Time, func(*engine.Config)) *world
	}{{"sqlite", newSQLiteWorldWith}, {"postgres", newPGWorldWith}} {
		for _, dir := range []struct{ name, plannedDir, planned, auditDir, audit string }{
			{"reconciler newer", "2026a", "2026a", "2026b", "2026b"},
			{"reconciler older", "2026b", "2026b", "2026a", "2026a"},
			{"reconciler rebuilt under the store's version", "2026a", "2026a", "2026a-local", "2026a"},
			{"store rebuilt under the reconciler's version", "2026a-local", "2026a", "2026a", "2026a"},
		} {
			t.Run(st.name+"/"+dir.name, func(t *testing.T) {
				tztest.UseAs(t, dir.plannedDir, dir.planned)
				start := time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC) // the day before 2026b moves Test/Shift
				from, to := start, start.Add(4*24*time.Hour)
				w := st.make(t, start, func(c *engine.Config) { c.Horizon = 24 * time.Hour })
				shift := w.create("shift", "0 9 * * *", "Test/Shift", nil)
				steady := w.create("steady", "0 9 * * *", "Test/Steady", nil)
				w.run(4*24*time.Hour, 2*time.Hour)
				rep := w.report(from, to)
				w.mustBeClean(rep)
				if rep.TZVersion != dir.planned || len(rep.TZWarnings) != 0 || rep.Totals.Unverifiable != 0 {
					t.Fatalf("on the store's own release: tz_version %q, warnings %+v, totals %+v", rep.TZVersion, rep.TZWarnings, rep.Totals)
				}
				plannedAt := firingsIn(t, "0 9 * * *", "Test/Shift", from, to)

				tztest.UseAs(t, dir.auditDir, dir.audit) // the reconciler's process loads the other release; the store's shard stays
				auditAt := firingsIn(t, "0 9 * * *", "Test/Shift", from, to)
				var onlyAudit, onlyPlanned []time.Time
				for _, at := range auditAt {
					if !slices.ContainsFunc(plannedAt, at.Equal) {
						onlyAudit = append(onlyAudit, at)
					}
				}
				for _, at := range plannedAt {
					if !slices.ContainsFunc(auditAt, at.Equal) {
						onlyPlanned = append(onlyPlanned, at)
					}
				}
				if len(onlyAudit) == 0 || len(onlyPlanned) == 0 {
					t.Fatalf("the releases agree on Test/Shift's firings in the range: %v", plannedAt)
				}
				agreed := len(plannedAt) - len(onlyPlanned)

				rep = w.report(from, to)
				if rep.Problem || rep.Totals.Absent+rep.Totals.Unexpected != 0 {
					b, _ := json.MarshalIndent(rep, "", "  ")
					t.Fatalf("a tz difference reported as a problem:\n%s", b)
				}
				if rep.TZVersion != dir.audit {
					t.Errorf("tz_version %q, want the reconciler's %s", rep.TZVersion, dir.audit)
				}
				wantWarn := api.ReconcileTZWarning{Zone: "Test/Shift", StoreTZVersion: dir.planned, TZVersion: dir.audit,
					Shards: []int{shift.Shard}, Schedules: 1, Unverifiable: len(onlyAudit) + len(onlyPlanned)}
				if len(rep.TZWarnings) != 1 {
					t.Fatalf("tz warnings %+v, want one of Test/Shift", rep.TZWarnings)
				}
				got := rep.TZWarnings[0]
				msg := got.Message
				got.Message = ""
				if !equalWarning(got, wantWarn) {
					t.Errorf("tz warning %+v, want %+v", got, wantWarn)
				}
				for _, s := range []string{"Test/Shift", dir.planned, dir.audit, "unverifiable"} {
					if !strings.Contains(msg, s) {
						t.Errorf("warning message %q does not name %q", msg, s)
					}
				}
				if rep.Totals.Unverifiable != wantWarn.Unverifiable || len(rep.Unverifiable) != wantWarn.Unverifiable {
					t.Errorf("unverifiable: totals %d, listed %d; want %d", rep.Totals.Unverifiable, len(rep.Unverifiable), wantWarn.Unverifiable)
				}
				var rowless, rows []time.Time
				for _, f := range rep.Unverifiable {
					if f.ScheduleID != shift.ScheduleID {
						t.Errorf("unverifiable finding of another schedule: %+v", f)
					}
					if f.State == "" {
						rowless = append(rowless, f.ScheduledFor)
					} else {
						rows = append(rows, f.ScheduledFor)
					}
				}
				if !sameTimes(rowless, onlyAudit) || !sameTimes(rows, onlyPlanned) {
					t.Errorf("unverifiable: without a row %v, with one %v; want %v (only the reconciler's rules name them) and %v (only the store's)",
						rowless, rows, onlyAudit, onlyPlanned)
				}
				for _, s := range rep.Schedules {
					want := api.ReconcileCounts{Succeeded: agreed, Unverifiable: wantWarn.Unverifiable}
					if s.ScheduleID == steady.ScheduleID {
						want = api.ReconcileCounts{Succeeded: len(firingsIn(t, "0 9 * * *", "Test/Steady", from, to))}
					}
					if s.ReconcileCounts != want {
						t.Errorf("%s: %+v, want %+v", s.Name, s.ReconcileCounts, want)
					}
				}

				// A real loss in a zone the releases agree on is still found.
				victim := w.rowsOf(steady.ScheduleID)[1]
				w.tamper(del(victim.OccurrenceID))
				w.st.Close() // SQLite: schedd reconcile needs the file's lock
				code, out, errOut := w.schedd("--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "-o", "json")
				if code != 1 {
					t.Fatalf("schedd reconcile: exit %d, want 1; stderr %s", code, errOut)
				}
				var srep api.ReconcileReport
				dec := json.NewDecoder(strings.NewReader(out))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&srep); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				if len(srep.Absent) != 1 || srep.Absent[0].OccurrenceID != victim.OccurrenceID || len(srep.Unexpected) != 0 ||
					len(srep.TZWarnings) != 1 || srep.Totals.Unverifiable != wantWarn.Unverifiable {
					t.Fatalf("after deleting %s: absent %+v, unexpected %+v, warnings %+v, totals %+v",
						victim.OccurrenceID, srep.Absent, srep.Unexpected, srep.TZWarnings, srep.Totals)
				}
				code, out, _ = w.schedd("--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339))
				if code != 1 || !strings.Contains(out, "tz_warning\tTest/Shift\t"+dir.planned+"\t"+dir.audit+"\t") ||
					strings.Count(out, "\nunverifiable\t") != wantWarn.Unverifiable {
					t.Errorf("schedd reconcile text: exit %d\n%s", code, out)
				}
			})
		}
	}
}

func equalWarning(a, b api.ReconcileTZWarning) bool {
	return a.Zone == b.Zone && a.StoreTZVersion == b.StoreTZVersion && a.TZVersion == b.TZVersion &&
		slices.Equal(a.Shards, b.Shards) && a.Schedules == b.Schedules && a.Unverifiable == b.Unverifiable && a.Message == b.Message
}

func sameTimes(a, b []time.Time) bool {
	return slices.EqualFunc(a, b, time.Time.Equal)
}

// TestTZRulesUnrecorded: when the store recorded no rules of a zone for
// the tz version its shard was planned under, the audit on another
// version cannot compare them: it warns of the zone, saying so, even
// though its firings agree (Test/Steady never changes), and still checks
// and counts them; on both stores.
func TestTZRulesUnrecorded(t *testing.T) {
	for _, st := range []struct {
		name string
		make func(*testing.T, time.Time, func(*engine.Config)) *world
	}{{"sqlite", newSQLiteWorldWith}, {"postgres", newPGWorldWith}} {
		t.Run(st.name, func(t *testing.T) {
			tztest.Use(t, "2026a")
			start := time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC)
			from, to := start, start.Add(2*24*time.Hour)
			w := st.make(t, start, func(c *engine.Config) { c.Horizon = 24 * time.Hour })
			steady := w.create("steady", "0 9 * * *", "Test/Steady", nil)
			w.run(2*24*time.Hour, 2*time.Hour)
			w.tamper(stmt{q: `DELETE FROM zone_rules WHERE zone = ?`, args: []any{"Test/Steady"}, want: 1})

			tztest.Use(t, "2026b")
			rep := w.report(from, to)
			w.mustBeClean(rep)
			if len(rep.TZWarnings) != 1 || rep.TZWarnings[0].Zone != "Test/Steady" || rep.TZWarnings[0].StoreTZVersion != "2026a" ||
				rep.TZWarnings[0].Unverifiable != 0 || !slices.Equal(rep.TZWarnings[0].Shards, []int{steady.Shard}) ||
				!strings.Contains(rep.TZWarnings[0].Message, "the store recorded no rules of the zone for 2026a") {
				t.Fatalf("tz warnings %+v, want one of Test/Steady saying its 2026a rules are not recorded", rep.TZWarnings)
			}
			if want := len(firingsIn(t, "0 9 * * *", "Test/Steady", from, to)); rep.Totals.Succeeded != want || rep.Totals.Unverifiable != 0 {
				t.Errorf("totals %+v, want its %d firings succeeded and none unverifiable", rep.Totals, want)
			}
		})
	}
}
