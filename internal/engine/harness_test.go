package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

const tenant = "tenant-a"

// harness is an engine on a real SQLite file and a virtual clock. Tests
// move the clock and call plan; nothing runs in the background.
type harness struct {
	t    *testing.T
	ctx  context.Context
	e    *Engine
	clk  *clock.Virtual
	st   store.Store
	path string // the SQLite file; empty on PostgreSQL
}

// harnessMaker makes a harness at start, its config changed by mut.
type harnessMaker func(t *testing.T, start time.Time, mut func(*Config)) *harness

// onEveryStore runs f as one subtest per store, with a maker of harnesses
// on it: a SQLite file (newHarness) and a schema of its own in the real
// PostgreSQL (newPGHarness, skipped without SCHED_TEST_POSTGRES_DSN). The
// queue's rules live in the engine once; these tests show that every
// store's statements give them the same facts and write the same
// decisions.
func onEveryStore(t *testing.T, f func(t *testing.T, open harnessMaker)) {
	t.Run("sqlite", func(t *testing.T) { f(t, newHarness) })
	t.Run("postgres", func(t *testing.T) { f(t, newPGHarness) })
}

// newPGHarness is newHarness on a fresh PostgreSQL schema, with the
// engine on its own (virtual) clock rather than the server's.
func newPGHarness(t *testing.T, start time.Time, mut func(*Config)) *harness {
	t.Helper()
	dsn := pgtest.DSN(t)
	st := pgtest.Open(t, dsn, pgtest.Schema(t, dsn))
	return harnessOn(t, st, "", clock.NewVirtual(start), func(c *Config) {
		c.IgnoreStoreClock = true
		if mut != nil {
			mut(c)
		}
	})
}

func newHarness(t *testing.T, start time.Time, mut func(*Config)) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sched.db")
	return openHarness(t, path, clock.NewVirtual(start), mut)
}

func openHarness(t *testing.T, path string, clk *clock.Virtual, mut func(*Config)) *harness {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return harnessOn(t, st, path, clk, mut)
}

// harnessOn makes an engine on st and clk.
func harnessOn(t *testing.T, st store.Store, path string, clk *clock.Virtual, mut func(*Config)) *harness {
	t.Helper()
	ctx := t.Context()
	cfg := Config{Store: st, Clock: clk, Shards: 4, Horizon: time.Minute, NodeID: "test-node"}
	if mut != nil {
		mut(&cfg)
	}
	e, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	return &harness{t: t, ctx: ctx, e: e, clk: clk, st: st, path: path}
}

// plan runs one planner pass and fails the test on error.
func (h *harness) plan() PlanStats {
	h.t.Helper()
	st, err := h.e.PlanOnce(h.ctx)
	if err != nil {
		h.t.Fatalf("plan at %s: %v", h.clk.Now().UTC().Format(time.RFC3339), err)
	}
	return st
}

// advance moves the clock and runs a planner pass.
func (h *harness) advance(d time.Duration) PlanStats {
	h.t.Helper()
	h.clk.Advance(d)
	return h.plan()
}

func (h *harness) create(req schedule.Settings) *record.Schedule {
	h.t.Helper()
	sc, _, err := h.e.Control.Create(h.ctx, tenant, "", req)
	if err != nil {
		h.t.Fatalf("create %q: %v", req.Name, err)
	}
	return sc
}

func (h *harness) occurrences(scheduleID string) []record.Occurrence {
	h.t.Helper()
	occs, err := h.e.Queue.Occurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, ScheduleID: scheduleID, Limit: store.MaxListLimit})
	if err != nil {
		h.t.Fatalf("list occurrences: %v", err)
	}
	return occs
}

func (h *harness) claim(queue string, limit int) []store.Claimed {
	h.t.Helper()
	got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: queue, WorkerID: "w1", Limit: limit, Lease: 2 * time.Second})
	if err != nil {
		h.t.Fatalf("claim: %v", err)
	}
	return got
}

func (h *harness) schedule(id string) *record.Schedule {
	h.t.Helper()
	sc, err := h.e.Control.Get(h.ctx, tenant, id)
	if err != nil {
		h.t.Fatalf("get %s: %v", id, err)
	}
	return sc
}

func every(name, interval string) schedule.Settings {
	return schedule.Settings{Name: name, Queue: "q", Kind: timetable.KindEvery, Expr: interval}
}

func cronIn(name, expr, zone string) schedule.Settings {
	return schedule.Settings{Name: name, Queue: "q", Kind: timetable.KindCron, Expr: expr, TimeZone: zone}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// byState groups scheduled_for times (RFC 3339, UTC) by state.
func byState(occs []record.Occurrence) map[record.OccurrenceState][]string {
	m := map[record.OccurrenceState][]string{}
	for _, o := range occs {
		m[o.State] = append(m[o.State], o.ScheduledFor.Format(time.RFC3339))
	}
	return m
}
