package reconcile_test

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

// The adversary's tests: the real engine runs schedules on a virtual
// clock over a real store, then rows are deleted, copied or rewritten by
// raw SQL behind its back, as a bug in the planner, a careless operator or
// a faulty restore would leave them. The reconciler must name exactly the
// firings and rows tampered with, and nothing else.

// stmt is one raw SQL statement; want is the rows it must change.
type stmt struct {
	q    string
	args []any
	want int64
}

func del(id string) stmt {
	return stmt{q: `DELETE FROM occurrences WHERE occurrence_id = ?`, args: []any{id}, want: 1}
}

func setState(id string, from, to record.OccurrenceState) stmt {
	return stmt{q: `UPDATE occurrences SET state = ? WHERE occurrence_id = ? AND state = ?`, args: []any{string(to), id, string(from)}, want: 1}
}

func raiseMissed(scheduleID string, by int) stmt {
	return stmt{q: `UPDATE schedules SET missed_count = missed_count + ? WHERE schedule_id = ?`, args: []any{by, scheduleID}, want: 1}
}

// tamper runs stmts on the world's store behind the engine's back. SQLite
// is held by its store's lock: the store is closed first, and opened again
// (with a new engine on the same clock) after.
func (w *world) tamper(stmts ...stmt) {
	w.t.Helper()
	check := func(s stmt, n int64, err error) {
		w.t.Helper()
		if err != nil || n != s.want {
			w.t.Fatalf("%s %v: %d rows, %v; want %d", s.q, s.args, n, err, s.want)
		}
	}
	if w.path == "" {
		conn, err := pgx.Connect(w.ctx, w.dsn)
		if err != nil {
			w.t.Fatal(err)
		}
		defer conn.Close(w.ctx)
		if _, err := conn.Exec(w.ctx, `SET search_path TO `+pgx.Identifier{w.schema}.Sanitize()); err != nil {
			w.t.Fatal(err)
		}
		for _, s := range stmts {
			tag, err := conn.Exec(w.ctx, dollars(s.q), s.args...)
			check(s, tag.RowsAffected(), err)
		}
		return
	}
	w.st.Close()
	db, err := sql.Open("sqlite", w.path)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, s := range stmts {
		r, err := db.Exec(s.q, s.args...)
		var n int64
		if err == nil {
			n, err = r.RowsAffected()
		}
		check(s, n, err)
	}
	db.Close()
	st, err := sqlite.Open(w.ctx, w.path)
	if err != nil {
		w.t.Fatal(err)
	}
	w.start(st, time.Time{}, false)
}

// dollars numbers a statement's ? placeholders for PostgreSQL.
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// copyRow inserts a copy of the row src as version ver at at, in state s:
// a row no planner wrote.
func (w *world) copyRow(src string, ver int64, at time.Time, s record.OccurrenceState) (string, stmt) {
	var sid string
	if o, err := w.st.GetOccurrence(w.ctx, tenant, src); err != nil {
		w.t.Fatalf("copy %s: %v", src, err)
	} else {
		sid = o.ScheduleID
	}
	id := record.OccurrenceID(sid, ver, at)
	cols, vals := "", ""
	if w.path != "" {
		cols, vals = ", schedule_row, open", ", schedule_row, 0"
	}
	return id, stmt{q: `INSERT INTO occurrences (occurrence_id, schedule_version, scheduled_for, available_at, retry_from, state,
    tenant_id, schedule_id, enqueued_at, finished_at, lane, queue, overlap_policy` + cols + `)
SELECT ?, ?, ?, ?, ?, ?, tenant_id, schedule_id, enqueued_at, COALESCE(finished_at, enqueued_at), lane, queue, overlap_policy` + vals + `
FROM occurrences WHERE occurrence_id = ?`,
		args: []any{id, ver, at.UnixMilli(), at.UnixMilli(), at.UnixMilli(), string(s), src}, want: 1}
}

func (w *world) update(name string, mut func(*schedule.Settings)) {
	w.t.Helper()
	s := schedule.Settings{Name: name, Queue: "q", Kind: timetable.KindCron, TimeZone: "UTC"}
	mut(&s)
	if _, err := w.e.Control.Update(w.ctx, tenant, name, s); err != nil {
		w.t.Fatalf("update %s: %v", name, err)
	}
}

// rowsOf lists a schedule's rows in scheduled order.
func (w *world) rowsOf(scheduleID string) []record.Occurrence {
	w.t.Helper()
	out, err := w.st.ListOccurrences(w.ctx, store.ListOccurrencesParams{TenantID: tenant, ScheduleID: scheduleID, Limit: store.MaxListLimit})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// lateRun returns a schedule's catch-up rows, oldest first: MISSED rows,
// then the fired ones.
func (w *world) lateRun(scheduleID string) []record.Occurrence {
	var out []record.Occurrence
	for _, o := range w.rowsOf(scheduleID) {
		if o.Lane == record.LaneCatchUp {
			out = append(out, o)
		}
	}
	return out
}

// outage runs the engine through a simulated outage of d: nothing is
// planned or claimed meanwhile, so the firings it passes over are late
// when it ends.
func (w *world) outage(d time.Duration) {
	w.t.Helper()
	if _, err := w.e.Outages.Start(w.ctx, d, nil); err != nil {
		w.t.Fatal(err)
	}
	w.run(d, 5*time.Minute)
}

// verdict is what a reconcile must find: exactly these absent firings and
// unexpected rows (by occurrence id), each reason among the findings'.
type verdict struct {
	from, to   time.Time
	absent     []string
	unexpected []string
	reasons    []string
	check      func(*api.ReconcileReport) error // more to check; nil: nothing
}

func (v verdict) judge(t *testing.T, rep *api.ReconcileReport) {
	t.Helper()
	ids := func(fs []api.ReconcileFinding) []string {
		out := []string{}
		for _, f := range fs {
			out = append(out, f.OccurrenceID)
		}
		slices.Sort(out)
		return out
	}
	want := func(s []string) []string {
		out := append([]string{}, s...)
		slices.Sort(out)
		return out
	}
	dump := func() string { b, _ := json.MarshalIndent(rep, "", "  "); return string(b) }
	if !slices.Equal(ids(rep.Absent), want(v.absent)) || !slices.Equal(ids(rep.Unexpected), want(v.unexpected)) {
		t.Fatalf("absent %v, unexpected %v; want %v and %v\n%s", ids(rep.Absent), ids(rep.Unexpected), want(v.absent), want(v.unexpected), dump())
	}
	if rep.Problem != (len(v.absent)+len(v.unexpected) > 0) {
		t.Errorf("problem %v", rep.Problem)
	}
	for _, r := range v.reasons {
		found := false
		for _, f := range slices.Concat(rep.Absent, rep.Unexpected) {
			found = found || strings.Contains(f.Reason, r)
		}
		if !found {
			t.Errorf("no finding says %q\n%s", r, dump())
		}
	}
	if v.check != nil {
		if err := v.check(rep); err != nil {
			t.Errorf("%v\n%s", err, dump())
		}
	}
}

var advStart = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return advStart.Add(d) }

func lateOnce(s *schedule.Settings) {
	s.MisfirePolicy, s.MaxLateness = record.MisfireFireOnce, time.Minute
}

// adversaries are the tamperings, each played on a fresh store: the
// engine runs, the rows are tampered with, the engine may run on, and the
// reconcile must say what was done.
var adversaries = []struct {
	name string
	mut  func(*engine.Config)
	play func(w *world) verdict
}{
	{"deleted ENQUEUED row ahead of now", nil, func(w *world) verdict {
		sc := w.create("ten", "*/10 * * * *", "UTC", nil)
		w.run(6*time.Hour, 5*time.Minute) // planned ahead: 06:10 and 06:20 ENQUEUED
		victim := record.OccurrenceID(sc.ScheduleID, 1, at(6*time.Hour+10*time.Minute))
		w.tamper(del(victim))
		return verdict{from: advStart, to: at(7 * time.Hour), absent: []string{victim}}
	}},
	{"a copy under a version the history lacks", nil, func(w *world) verdict {
		sc := w.create("hourly", "0 * * * *", "UTC", nil)
		w.run(6*time.Hour, 5*time.Minute)
		id, s := w.copyRow(record.OccurrenceID(sc.ScheduleID, 1, at(3*time.Hour)), 2, at(3*time.Hour), record.OccurrenceSucceeded)
		w.tamper(s)
		return verdict{from: advStart, to: w.clk.Now(), unexpected: []string{id}, reasons: []string{"has no version 2"}}
	}},
	{"a copy under the next version, before it starts", nil, func(w *world) verdict {
		sc := w.create("hourly", "0 * * * *", "UTC", nil)
		w.run(6*time.Hour+5*time.Minute, 5*time.Minute)
		w.update("hourly", func(s *schedule.Settings) { s.Expr = "30 * * * *" })
		w.run(time.Hour, 5*time.Minute)
		id, s := w.copyRow(record.OccurrenceID(sc.ScheduleID, 1, at(3*time.Hour)), 2, at(3*time.Hour), record.OccurrenceSucceeded)
		w.tamper(s)
		return verdict{from: advStart, to: w.clk.Now(), unexpected: []string{id}, reasons: []string{"version 2 fires only after"}}
	}},
	{"a row at a time the timetable never fires", nil, func(w *world) verdict {
		sc := w.create("hourly", "0 * * * *", "UTC", nil)
		w.run(6*time.Hour, 5*time.Minute)
		id, s := w.copyRow(record.OccurrenceID(sc.ScheduleID, 1, at(3*time.Hour)), 1, at(3*time.Hour+30*time.Minute), record.OccurrenceSucceeded)
		w.tamper(s)
		return verdict{from: advStart, to: w.clk.Now(), unexpected: []string{id}, reasons: []string{"does not fire at this time"}}
	}},
	{"a firing a change canceled, rewritten SUCCEEDED", nil, func(w *world) verdict {
		sc := w.create("ten", "*/10 * * * *", "UTC", nil)
		w.run(6*time.Hour, 5*time.Minute)
		w.update("ten", func(s *schedule.Settings) { s.Expr = "5-59/10 * * * *" })
		w.run(time.Hour, 5*time.Minute)
		victim := record.OccurrenceID(sc.ScheduleID, 1, at(6*time.Hour+20*time.Minute))
		w.tamper(setState(victim, record.OccurrenceCanceled, record.OccurrenceSucceeded))
		return verdict{from: advStart, to: w.clk.Now(), unexpected: []string{victim}, reasons: []string{"yet not CANCELED"}}
	}},
	{"the last row of a version deleted just before an update", nil, func(w *world) verdict {
		sc := w.create("hourly", "0 * * * *", "UTC", nil)
		w.run(6*time.Hour+5*time.Minute, 5*time.Minute) // 06:00 is the last row; the cursor is at 07:00
		victim := record.OccurrenceID(sc.ScheduleID, 1, at(6*time.Hour))
		w.tamper(del(victim))
		// The update keeps 05:00 as version 1's last firing: the deleted
		// one is after it, yet the planner had planned it.
		w.update("hourly", func(s *schedule.Settings) { s.Expr = "30 * * * *" })
		w.run(time.Hour, 5*time.Minute)
		return verdict{from: advStart, to: w.clk.Now(), absent: []string{victim}, reasons: []string{"the planner had planned it"},
			check: func(rep *api.ReconcileReport) error {
				if rep.Totals.Succeeded != 5+1 || rep.Totals.CanceledByChange != 0 {
					return fmt.Errorf("totals %+v, want 6 succeeded (01:00-05:00, 06:30)", rep.Totals)
				}
				return nil
			}}
	}},
	{"a row planned ahead deleted just before an update", nil, func(w *world) verdict {
		sc := w.create("ten", "*/10 * * * *", "UTC", nil)
		w.run(6*time.Hour, 5*time.Minute) // 06:10 and 06:20 planned ahead; the cursor is at 06:30
		victim := record.OccurrenceID(sc.ScheduleID, 1, at(6*time.Hour+20*time.Minute))
		w.tamper(del(victim))
		w.update("ten", func(s *schedule.Settings) { s.Expr = "5-59/10 * * * *" })
		w.run(time.Hour, 5*time.Minute)
		return verdict{from: advStart, to: w.clk.Now(), absent: []string{victim}, reasons: []string{"the planner had planned it"},
			check: func(rep *api.ReconcileReport) error {
				if rep.Totals.CanceledByChange != 1 { // 06:10
					return fmt.Errorf("totals %+v, want the 06:10 firing canceled by the change", rep.Totals)
				}
				return nil
			}}
	}},
	{"fire_once fired twice after an outage", func(c *engine.Config) { c.MaxMissedRows = 2 }, func(w *world) verdict {
		sc := w.create("five", "*/5 * * * *", "UTC", lateOnce)
		w.run(time.Hour, 5*time.Minute)
		w.outage(3 * time.Hour)
		w.run(time.Hour, 5*time.Minute)
		run := w.lateRun(sc.ScheduleID) // MISSED, MISSED, fired
		if len(run) != 3 || run[1].State != record.OccurrenceMissed {
			w.t.Fatalf("late run %+v", run)
		}
		w.tamper(setState(run[1].OccurrenceID, record.OccurrenceMissed, record.OccurrenceSucceeded),
			stmt{q: `UPDATE occurrences SET enqueued_at = finished_at WHERE occurrence_id = ?`, args: []any{run[1].OccurrenceID}, want: 1})
		return verdict{from: advStart, to: w.clk.Now(), unexpected: []string{run[2].OccurrenceID},
			reasons: []string{"late run fired 2 firings; misfire policy fire_once keeps 1"}}
	}},
	{"a MISSED row deleted between MISSED rows, the missed count raised", func(c *engine.Config) { c.MaxMissedRows = 3 }, func(w *world) verdict {
		sc := w.create("five", "*/5 * * * *", "UTC", lateOnce)
		w.run(time.Hour, 5*time.Minute)
		w.outage(3 * time.Hour)
		w.run(time.Hour, 5*time.Minute)
		run := w.lateRun(sc.ScheduleID) // MISSED x3, fired
		if len(run) != 4 {
			w.t.Fatalf("late run %+v", run)
		}
		w.tamper(del(run[1].OccurrenceID), raiseMissed(sc.ScheduleID, 10))
		return verdict{from: advStart, to: w.clk.Now(), absent: []string{run[1].OccurrenceID}}
	}},
	{"the oldest MISSED row deleted, the missed count exact", func(c *engine.Config) { c.MaxMissedRows = 3 }, func(w *world) verdict {
		sc := w.create("five", "*/5 * * * *", "UTC", lateOnce)
		w.run(time.Hour, 5*time.Minute)
		w.outage(3 * time.Hour)
		w.run(time.Hour, 5*time.Minute)
		run := w.lateRun(sc.ScheduleID)
		w.tamper(del(run[0].OccurrenceID))
		return verdict{from: advStart, to: w.clk.Now(), absent: []string{run[0].OccurrenceID}, reasons: []string{"missed count"}}
	}},
	{"on-time rows deleted, the missed count raised", func(c *engine.Config) { c.MaxMissedRows = 2 }, func(w *world) verdict {
		sc := w.create("five", "*/5 * * * *", "UTC", lateOnce)
		w.run(time.Hour, 5*time.Minute)
		w.outage(3 * time.Hour)
		w.run(time.Hour, 5*time.Minute)
		a := record.OccurrenceID(sc.ScheduleID, 1, at(30*time.Minute))
		b := record.OccurrenceID(sc.ScheduleID, 1, w.clk.Now().Add(-30*time.Minute))
		w.tamper(del(a), del(b), raiseMissed(sc.ScheduleID, 1000))
		return verdict{from: advStart, to: w.clk.Now(), absent: []string{a, b}}
	}},
	{"an at schedule, its row deleted", nil, func(w *world) verdict {
		sc := w.create("once", at(2*time.Hour).Format(time.RFC3339), "UTC", func(s *schedule.Settings) {
			s.Kind, s.DSTRepeat = timetable.KindAt, ""
		})
		w.run(3*time.Hour, 5*time.Minute)
		if got, _ := w.st.GetSchedule(w.ctx, tenant, sc.ScheduleID); got.State != record.ScheduleCompleted || got.Version != 1 {
			w.t.Fatalf("at schedule %s version %d, want COMPLETED at version 1", got.State, got.Version)
		}
		if rep := w.report(advStart, w.clk.Now()); rep.Problem || rep.Totals.Succeeded != 1 || rep.Totals.Pending != 0 {
			w.t.Fatalf("before: %+v", rep.Totals)
		}
		victim := record.OccurrenceID(sc.ScheduleID, 1, at(2*time.Hour))
		w.tamper(del(victim))
		return verdict{from: advStart, to: w.clk.Now().Add(time.Hour), absent: []string{victim}}
	}},
	{"an every schedule with an anchor, a row deleted", nil, func(w *world) verdict {
		sc := w.create("seven", "7m", "UTC", func(s *schedule.Settings) {
			s.Kind, s.DSTRepeat, s.Anchor = timetable.KindEvery, "", at(-3*time.Minute)
		})
		w.run(2*time.Hour, 5*time.Minute)
		victim := record.OccurrenceID(sc.ScheduleID, 1, at(60*time.Minute)) // -3m + 9*7m
		w.tamper(del(victim))
		return verdict{from: advStart, to: w.clk.Now(), absent: []string{victim}, check: func(rep *api.ReconcileReport) error {
			if rep.Totals.Succeeded != 16 { // 04, 11, ..., 1:55, less 1:00
				return fmt.Errorf("succeeded %d, want 16", rep.Totals.Succeeded)
			}
			return nil
		}}
	}},
	{"a flexible window schedule, a row deleted", nil, func(w *world) verdict {
		sc := w.create("flex", "*/15 * * * *", "UTC", func(s *schedule.Settings) { s.FlexibleWindow = 10 * time.Minute })
		w.run(2*time.Hour, 5*time.Minute)
		victim := record.OccurrenceID(sc.ScheduleID, 1, at(45*time.Minute))
		w.tamper(del(victim))
		return verdict{from: advStart, to: w.clk.Now(), absent: []string{victim}}
	}},
	{"a canceled schedule, a row of its canceled version planted", nil, func(w *world) verdict {
		sc := w.create("hourly", "0 * * * *", "UTC", nil)
		w.run(3*time.Hour+5*time.Minute, 5*time.Minute)
		if _, err := w.e.Control.Cancel(w.ctx, tenant, "hourly"); err != nil {
			w.t.Fatal(err)
		}
		w.run(2*time.Hour, 5*time.Minute)
		if rep := w.report(advStart, w.clk.Now()); rep.Problem || rep.Totals.Succeeded != 3 {
			w.t.Fatalf("before: %+v", rep.Totals)
		}
		id, s := w.copyRow(record.OccurrenceID(sc.ScheduleID, 1, at(3*time.Hour)), 2, at(4*time.Hour), record.OccurrenceSucceeded)
		w.tamper(s)
		return verdict{from: advStart, to: w.clk.Now(), unexpected: []string{id}, reasons: []string{"version 2 fires nothing"}}
	}},
	{"paused during an outage, resumed", nil, func(w *world) verdict {
		w.create("five", "*/5 * * * *", "UTC", lateOnce)
		w.run(time.Hour, 5*time.Minute)
		if _, err := w.e.Outages.Start(w.ctx, 2*time.Hour, nil); err != nil {
			w.t.Fatal(err)
		}
		w.run(30*time.Minute, 5*time.Minute)
		if _, err := w.e.Control.Pause(w.ctx, tenant, "five"); err != nil {
			w.t.Fatal(err)
		}
		w.run(time.Hour, 5*time.Minute)
		if _, err := w.e.Control.Resume(w.ctx, tenant, "five"); err != nil {
			w.t.Fatal(err)
		}
		w.run(90*time.Minute, 5*time.Minute)
		return verdict{from: advStart, to: w.clk.Now()}
	}},
	{"a manual trigger, listed apart", nil, func(w *world) verdict {
		w.create("hourly", "0 * * * *", "UTC", nil)
		w.run(2*time.Hour+10*time.Minute, 5*time.Minute)
		if _, _, err := w.e.Control.Trigger(w.ctx, tenant, "hourly", ""); err != nil {
			w.t.Fatal(err)
		}
		w.run(time.Hour, 5*time.Minute)
		return verdict{from: advStart, to: w.clk.Now(), check: func(rep *api.ReconcileReport) error {
			if len(rep.Manual) != 1 || rep.Totals.Manual != 1 || rep.Totals.Succeeded != 3 {
				return fmt.Errorf("manual %+v, totals %+v; want the trigger alone apart, 3 succeeded", rep.Manual, rep.Totals)
			}
			return nil
		}}
	}},
}

// TestAdversary plays each tampering on a real SQLite file and on the real
// PostgreSQL.
func TestAdversary(t *testing.T) {
	for _, a := range adversaries {
		for _, kind := range []string{"sqlite", "postgres"} {
			t.Run(kind+"/"+a.name, func(t *testing.T) {
				var w *world
				if kind == "sqlite" {
					w = newSQLiteWorldWith(t, advStart, a.mut)
				} else {
					w = newPGWorldWith(t, advStart, a.mut)
				}
				v := a.play(w)
				v.judge(t, w.report(v.from, v.to))
			})
		}
	}
}

// TestRangeEdges: ranges that cut through a late run, lie in the future,
// or name one schedule.
func TestRangeEdges(t *testing.T) {
	w := newSQLiteWorldWith(t, advStart, func(c *engine.Config) { c.MaxMissedRows = 2 })
	five := w.create("five", "*/5 * * * *", "UTC", lateOnce)
	w.create("hourly", "0 * * * *", "UTC", nil)
	w.run(time.Hour, 5*time.Minute)
	w.outage(3 * time.Hour)
	w.run(time.Hour, 5*time.Minute)
	now := w.clk.Now()
	opt := func(from, to time.Time, sched string) reconcile.Options {
		return reconcile.Options{From: from, To: to, Schedule: sched, NameTenant: tenant}
	}
	for _, tc := range []struct {
		name  string
		opt   reconcile.Options
		check func(*api.ReconcileReport) error
	}{
		{"from and to inside the late run", opt(at(2*time.Hour), at(3*time.Hour), ""), func(rep *api.ReconcileReport) error {
			for _, s := range rep.Schedules {
				if s.Name == "five" && s.MissedCounted != 13 {
					return fmt.Errorf("five: %+v, want its 13 firings counted", s.ReconcileCounts)
				}
			}
			return nil
		}},
		{"to cuts the late run's rows", opt(advStart, w.lateRun(five.ScheduleID)[1].ScheduledFor, ""), nil},
		{"from cuts the late run's rows", opt(w.lateRun(five.ScheduleID)[1].ScheduledFor, now, ""), nil},
		{"all in the future", opt(now.Add(time.Hour), now.Add(3*time.Hour), ""), func(rep *api.ReconcileReport) error {
			if rep.Totals != (api.ReconcileCounts{Pending: 25 + 3}) {
				return fmt.Errorf("totals %+v, want 28 pending (both ends count)", rep.Totals)
			}
			return nil
		}},
		{"one schedule by name", opt(advStart, now, "hourly"), func(rep *api.ReconcileReport) error {
			if len(rep.Schedules) != 1 || rep.Schedules[0].Name != "hourly" || rep.Totals.Succeeded+rep.Totals.Missed != 5 {
				return fmt.Errorf("schedules %+v", rep.Schedules)
			}
			return nil
		}},
		{"one schedule by id", opt(advStart, now, five.ScheduleID), func(rep *api.ReconcileReport) error {
			if len(rep.Schedules) != 1 || rep.Schedules[0].ScheduleID != five.ScheduleID {
				return fmt.Errorf("schedules %+v", rep.Schedules)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := reconcile.Report(w.ctx, w.st, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			verdict{check: tc.check}.judge(t, rep)
		})
	}
	// A schedule that is not there is bad input naming --schedule, by name
	// or by a well-formed id.
	unknown, err := record.NewScheduleID(now, crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"nope", unknown} {
		_, err := reconcile.Report(w.ctx, w.st, opt(advStart, now, ref))
		var in *reconcile.InputError
		if !errors.As(err, &in) || in.Field != "schedule" {
			t.Errorf("schedule %q: %v, want an input error on schedule", ref, err)
		}
	}
}

// TestCanceledWalkStops: a walk over firings with no row to read (a
// schedule firing every second, a range of MaxSpan ahead of its cursor)
// stops when its context ends, rather than running on after the request
// that asked for it is gone.
func TestCanceledWalkStops(t *testing.T) {
	w := newSQLiteWorld(t, advStart)
	w.create("secondly", "1s", "UTC", func(s *schedule.Settings) { s.Kind, s.DSTRepeat = timetable.KindEvery, "" })
	ctx, cancel := context.WithTimeout(w.ctx, 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := reconcile.Report(ctx, w.st, reconcile.Options{From: advStart, To: advStart.Add(reconcile.MaxSpan),
		MaxFirings: 1 << 40}) // no bound but the deadline
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("reconcile of %s of a secondly schedule under a 50ms deadline: %v, want the deadline", reconcile.MaxSpan, err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("it stopped only after %s", d)
	}
}

// TestScheddBadInput: schedd reconcile's bad ranges and a schedule that
// is not there exit 2, naming the flag.
func TestScheddBadInput(t *testing.T) {
	w := newSQLiteWorld(t, advStart)
	w.create("hourly", "0 * * * *", "UTC", nil)
	w.run(2*time.Hour, 5*time.Minute)
	w.st.Close() // schedd reconcile takes the file's lock
	unknown, err := record.NewScheduleID(advStart, crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	to := advStart.Add(2 * time.Hour).Format(time.RFC3339)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--from", "2026-06-01", "--to", to}, "--from"},
		{[]string{"--to", "tomorrow"}, "--to"},
		{[]string{"--from", to, "--to", advStart.Format(time.RFC3339)}, "--from"},
		{[]string{"--from", "2000-01-01T00:00:00Z", "--to", to}, "--from"},
		{[]string{"--from", advStart.Format(time.RFC3339), "--to", to, "--schedule", "nope"}, "--schedule"},
		{[]string{"--from", advStart.Format(time.RFC3339), "--to", to, "--schedule", unknown}, "--schedule"},
	} {
		code, out, errOut := w.schedd(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.flag) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 naming %s", tc.args, code, errOut, out, tc.flag)
		}
	}
	if code, _, errOut := w.schedd("--from", advStart.Format(time.RFC3339), "--to", to, "--schedule", "hourly"); code != 0 {
		t.Errorf("--schedule hourly: exit %d, %s", code, errOut)
	}
}
