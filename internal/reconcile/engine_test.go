package reconcile_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/daemon"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

// TestDependencies: the reconciler reads the store and asks the time
// engine; it must not link the planner it checks.
func TestDependencies(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/sched-dev/sched/internal/engine", "github.com/sched-dev/sched/internal/server"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("package reconcile links %s", dep)
			}
		}
	}
}

const tenant = "default"

// world is an engine on a real store and a virtual clock, and a worker
// that acks everything due.
type world struct {
	t   *testing.T
	ctx context.Context
	e   *engine.Engine
	clk *clock.Virtual
	st  store.Store
	// one of these names the store for schedd reconcile --store
	path      string // SQLite file
	dsn       string // PostgreSQL
	schema    string
	storeFlag string
	mut       func(*engine.Config) // changes the engine's configuration; nil: none
}

func newSQLiteWorld(t *testing.T, start time.Time) *world { return newSQLiteWorldWith(t, start, nil) }

func newSQLiteWorldWith(t *testing.T, start time.Time, mut func(*engine.Config)) *world {
	path := filepath.Join(t.TempDir(), "sched.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, path: path, storeFlag: "sqlite:" + path, mut: mut}
	t.Cleanup(func() { w.st.Close() })
	return w.start(st, start, false)
}

func pgDSN(t *testing.T) string {
	dsn := os.Getenv("SCHED_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("PostgreSQL tests skipped: set SCHED_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	}
	return dsn
}

func newPGWorld(t *testing.T, start time.Time) *world { return newPGWorldWith(t, start, nil) }

func newPGWorldWith(t *testing.T, start time.Time, mut func(*engine.Config)) *world {
	dsn := pgDSN(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "r_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), dsn, schema); err != nil {
			t.Errorf("DropSchema: %v", err)
		}
	})
	st, err := postgres.Open(t.Context(), dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	w := &world{t: t, dsn: dsn, schema: schema, storeFlag: dsn + sep + "schema=" + schema, mut: mut}
	t.Cleanup(func() { w.st.Close() })
	return w.start(st, start, true)
}

func (w *world) start(st store.Store, start time.Time, ignoreStoreClock bool) *world {
	w.ctx, w.st = w.t.Context(), st
	if w.clk == nil { // a reopened store keeps the world's clock
		w.clk = clock.NewVirtual(start)
	}
	// One shard: the audit does not see shards, and every pass of the
	// virtual clock takes each shard's lease again, which made most of
	// these tests' time with four.
	cfg := engine.Config{Store: st, Clock: w.clk, Shards: 1, Horizon: 20 * time.Minute,
		NodeID: "reconcile-test", IgnoreStoreClock: ignoreStoreClock}
	if w.mut != nil {
		w.mut(&cfg)
	}
	e, err := engine.New(w.ctx, cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.e = e
	return w
}

func (w *world) create(name, expr, zone string, mut func(*schedule.Settings)) *record.Schedule {
	w.t.Helper()
	s := schedule.Settings{Name: name, Queue: "q", Kind: timetable.KindCron, Expr: expr, TimeZone: zone,
		DSTRepeat: timetable.RepeatAll}
	if mut != nil {
		mut(&s)
	}
	sc, _, err := w.e.Control.Create(w.ctx, tenant, "", s)
	if err != nil {
		w.t.Fatalf("create %s: %v", name, err)
	}
	return sc
}

// run advances the clock by step until d has passed, planning and
// working off the queue at every step.
func (w *world) run(d, step time.Duration) {
	w.t.Helper()
	for end := w.clk.Now().Add(d); w.clk.Now().Before(end); {
		w.clk.Advance(step)
		if _, err := w.e.PlanOnce(w.ctx); err != nil {
			w.t.Fatalf("plan: %v", err)
		}
		w.work()
	}
}

func (w *world) work() {
	w.t.Helper()
	for {
		cs, err := w.e.Queue.Claim(w.ctx, engine.ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w", Limit: 100})
		if err != nil {
			w.t.Fatalf("claim: %v", err)
		}
		if len(cs) == 0 {
			return
		}
		for _, c := range cs {
			if _, err := w.e.Queue.Ack(w.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil {
				w.t.Fatalf("ack: %v", err)
			}
		}
	}
}

func (w *world) report(from, to time.Time) *api.ReconcileReport {
	w.t.Helper()
	rep, err := reconcile.Report(w.ctx, w.st, reconcile.Options{From: from, To: to})
	if err != nil {
		w.t.Fatalf("reconcile: %v", err)
	}
	return rep
}

func (w *world) mustBeClean(rep *api.ReconcileReport) {
	w.t.Helper()
	if rep.Problem || rep.Totals.Absent+rep.Totals.Unexpected > 0 {
		b, _ := json.MarshalIndent(rep, "", "  ")
		w.t.Fatalf("reconcile found problems:\n%s", b)
	}
}

// schedd runs schedd reconcile through daemon.Main on the world's store
// and returns its exit status, stdout and stderr.
func (w *world) schedd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := daemon.Main("test", append([]string{"reconcile", "--store", w.storeFlag}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestDeletedRowIsAbsent: an occurrence row deleted behind the engine's
// back is named absent, and schedd reconcile exits 1, on both stores.
func TestDeletedRowIsAbsent(t *testing.T) {
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		open func(*testing.T, time.Time) *world
	}{{"sqlite", newSQLiteWorld}, {"postgres", newPGWorld}} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.open(t, start)
			sc := w.create("hourly", "0 * * * *", "UTC", nil)
			w.run(6*time.Hour, 5*time.Minute)
			from, to := start, start.Add(6*time.Hour)
			w.mustBeClean(w.report(from, to))

			victim := record.OccurrenceID(sc.ScheduleID, 1, start.Add(3*time.Hour))
			w.st.Close() // the engine's store lets go of the file (SQLite's lock)
			if w.path != "" {
				db, err := sql.Open("sqlite", w.path)
				if err != nil {
					t.Fatal(err)
				}
				mustDelete(t, func() (int64, error) {
					r, err := db.Exec(`DELETE FROM occurrences WHERE occurrence_id = ?`, victim)
					if err != nil {
						return 0, err
					}
					return r.RowsAffected()
				})
				db.Close()
			} else {
				conn, err := pgx.Connect(t.Context(), w.dsn)
				if err != nil {
					t.Fatal(err)
				}
				mustDelete(t, func() (int64, error) {
					tag, err := conn.Exec(t.Context(), `DELETE FROM `+pgx.Identifier{w.schema, "occurrences"}.Sanitize()+` WHERE occurrence_id = $1`, victim)
					return tag.RowsAffected(), err
				})
				conn.Close(t.Context())
			}

			code, out, errOut := w.schedd("--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "-o", "json")
			if code != 1 {
				t.Fatalf("schedd reconcile: exit %d, want 1; stderr %s", code, errOut)
			}
			var rep api.ReconcileReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(rep.Absent) != 1 || rep.Absent[0].OccurrenceID != victim || rep.Absent[0].ScheduleID != sc.ScheduleID ||
				!rep.Absent[0].ScheduledFor.Equal(start.Add(3*time.Hour)) || len(rep.Unexpected) != 0 || !rep.Problem {
				t.Fatalf("absent %+v unexpected %+v, want %s alone", rep.Absent, rep.Unexpected, victim)
			}
			if rep.Totals.Succeeded != 5 || rep.Totals.Absent != 1 {
				t.Errorf("totals %+v, want 5 succeeded (1h to 6h, the 3h one gone) and 1 absent", rep.Totals)
			}
			// The table names it too.
			code, out, _ = w.schedd("--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339))
			if code != 1 || !strings.Contains(out, "absent\t"+sc.ScheduleID+"\thourly\t1\t"+start.Add(3*time.Hour).Format(time.RFC3339)+"\t"+victim) {
				t.Errorf("table (exit %d):\n%s", code, out)
			}
			// Outside the hole the range is clean: exit 0.
			if code, out, errOut := w.schedd("--from", start.Add(4*time.Hour).Format(time.RFC3339), "--to", to.Format(time.RFC3339)); code != 0 {
				t.Errorf("a clean range: exit %d\n%s%s", code, out, errOut)
			}
			// Bad input is 2.
			if code, _, errOut := w.schedd("--from", "yesterday"); code != 2 || !strings.Contains(errOut, "from") {
				t.Errorf("--from yesterday: exit %d, %s", code, errOut)
			}
		})
	}
}

func mustDelete(t *testing.T, del func() (int64, error)) {
	t.Helper()
	n, err := del()
	if err != nil || n != 1 {
		t.Fatalf("delete: %d rows, %v", n, err)
	}
}

// TestCleanAfterChanges: a schedule updated twice and paused (and
// resumed) within the range, with firings of the old versions canceled by
// the changes, reconciles with every row explained.
func TestCleanAfterChanges(t *testing.T) {
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	w := newSQLiteWorld(t, start)
	w.create("changing", "*/10 * * * *", "UTC", nil)
	steady := w.create("steady", "0 * * * *", "Europe/Berlin", nil)
	_ = steady
	w.run(2*time.Hour, 3*time.Minute)
	upd := func(expr string) {
		t.Helper()
		s := schedule.Settings{Name: "changing", Queue: "q", Kind: timetable.KindCron, Expr: expr, TimeZone: "UTC"}
		if _, err := w.e.Control.Update(w.ctx, tenant, "changing", s); err != nil {
			t.Fatal(err)
		}
	}
	upd("*/15 * * * *")
	w.run(90*time.Minute, 3*time.Minute)
	if _, err := w.e.Control.Pause(w.ctx, tenant, "changing"); err != nil {
		t.Fatal(err)
	}
	w.run(time.Hour, 3*time.Minute)
	if _, err := w.e.Control.Resume(w.ctx, tenant, "changing"); err != nil {
		t.Fatal(err)
	}
	w.run(time.Hour, 3*time.Minute)
	upd("5,35 * * * *")
	w.run(2*time.Hour, 3*time.Minute)

	rep := w.report(start, w.clk.Now())
	w.mustBeClean(rep)
	var ch api.ReconcileSchedule
	for _, s := range rep.Schedules {
		if s.Name == "changing" {
			ch = s
		}
	}
	// Version 1 fired 13 times, then 6 and 4 of versions 2 and 4 (the
	// 15-minute ones), then version 5's; planned ahead within the horizon,
	// some of each older version's were canceled by the next change.
	if ch.Versions != 5 || ch.Succeeded < 20 || ch.CanceledByChange == 0 {
		t.Errorf("changing: %+v, want 5 versions, its firings succeeded and some canceled by the changes", ch)
	}
	if rep.Totals.Pending > 2 {
		t.Errorf("totals %+v: only the last minutes' firings may be pending", rep.Totals)
	}
}

// TestDSTWeek: a week containing both autumn transitions, in New York and
// Berlin, with firings in the repeated hours and every hour, reconciles
// clean after the engine planned it on a virtual clock. The planner looks
// two hours ahead and the clock moves an hour a pass: every firing is
// still planned before it is due, in a sixth of the passes ten-minute
// steps took.
func TestDSTWeek(t *testing.T) {
	start := time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC) // Berlin turns back on Oct 25, New York on Nov 1
	w := newSQLiteWorldWith(t, start, func(c *engine.Config) { c.Horizon = 2 * time.Hour })
	for _, z := range []string{"America/New_York", "Europe/Berlin"} {
		w.create("repeat-all "+z, "30 1,2 * * *", z, nil)
		w.create("hourly "+z, "0 * * * *", z, func(s *schedule.Settings) { s.DSTRepeat = timetable.RepeatFirst })
		w.create("repeat-last "+z, "15 1,2 * * *", z, func(s *schedule.Settings) { s.DSTRepeat = timetable.RepeatLast })
	}
	w.run(9*24*time.Hour, time.Hour)
	rep := w.report(start, start.Add(9*24*time.Hour))
	w.mustBeClean(rep)
	if rep.Totals.Missed+rep.Totals.MissedCounted != 0 {
		t.Fatalf("totals %+v: a firing was planned late", rep.Totals)
	}
	if len(rep.Schedules) != 6 || rep.Totals.Succeeded < 6*9*2 {
		t.Fatalf("schedules %d, totals %+v", len(rep.Schedules), rep.Totals)
	}
	for _, s := range rep.Schedules {
		// Two a day (in Berlin the first day's 01:30 is before the
		// start), and the repeated hour's extra firing where the policy
		// fires both.
		want := map[string]int{"repeat-all America/New_York": 19, "repeat-all Europe/Berlin": 18,
			"repeat-last America/New_York": 18, "repeat-last Europe/Berlin": 17}[s.Name]
		if want != 0 && s.Succeeded != want {
			t.Errorf("%s: %d succeeded, want %d", s.Name, s.Succeeded, want)
		}
	}
}

// TestCleanAfterOutage: the planner's misfire rule, as the real planner
// applies it after a long outage (rows for the most recent late firings
// only, the older ones counted), reconciles clean under every policy.
func TestCleanAfterOutage(t *testing.T) {
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	w := newSQLiteWorldWith(t, start, func(c *engine.Config) { c.MaxMissedRows = 2 })
	for _, p := range []struct {
		name   string
		policy record.MisfirePolicy
		k      int
	}{{"skip", record.MisfireSkip, 0}, {"fire-once", record.MisfireFireOnce, 0}, {"catch-up", record.MisfireCatchUp, 3}} {
		w.create(p.name, "*/5 * * * *", "UTC", func(s *schedule.Settings) {
			s.MisfirePolicy, s.CatchUpK, s.MaxLateness = p.policy, p.k, time.Minute
		})
	}
	w.run(time.Hour, 5*time.Minute)
	w.clk.Advance(5 * time.Hour) // down: nothing planned
	w.run(time.Hour, 5*time.Minute)
	rep := w.report(start, w.clk.Now().Add(-30*time.Minute))
	w.mustBeClean(rep)
	late := -1
	for _, s := range rep.Schedules {
		fired := map[string]int{"skip": 0, "fire-once": 1, "catch-up": 3}[s.Name]
		// Every policy saw the same late run (about 5 hours of firings
		// every 5 minutes): 2 MISSED rows, the policy's fired ones, and
		// the rest counted without a row.
		n := s.MissedCounted + s.Missed + fired
		if late == -1 {
			late = n
		}
		if s.Missed != 2 || n != late || n < 50 {
			t.Errorf("%s: %+v, a late run of %d", s.Name, s.ReconcileCounts, n)
		}
	}
}
