package simulate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// livePoll is how often the live run's worker polls for work, in virtual
// time. Every time a firing becomes claimable in the misfire runs (whole
// minutes, and the catch-up lane's slots, a tenth of a second apart at the
// engine's default pacing) falls on this grid, so the live worker claims
// each at the very instant the simulator's worker does, and the lags agree
// exactly. A worker polling less often would deliver up to one poll later.
const livePoll = 100 * time.Millisecond

// livePhase is when, within each second, the live engine's planner passes:
// it is started at From minus livePhase, as a daemon is started at any
// moment, and passes every tick from there. Off the whole second, its
// passes never coincide with the outage's start, where which of the two
// came first would be a race; the end of an outage wakes it (the planner's
// sleep is bounded by the outage's end), as a restarted daemon passes at
// once.
const livePhase = 500 * time.Millisecond

// TestLiveOutageMatchesSimulator holds the simulator against the live
// engine: for each misfire policy, the request of TestMisfirePolicies is
// simulated, and the same schedules run on a started engine (the
// daemon's defaults, its background planner and stats loop) on a real
// SQLite file and a virtual clock, with a live simulated outage started
// through Outages at the outage's start and a worker that claims
// everything available every livePoll and acks each after the worker
// duration, as the simulator's workers do. Both timelines are read from
// their stores by the same code (readFirings) and must agree firing by
// firing: scheduled time, outcome, lane, attempts, first claim, finish and
// lag. Only the DST note is the simulator's alone (it comes from the time
// engine, not the store); a UTC minutely cron has none.
func TestLiveOutageMatchesSimulator(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"skip", "fire_once", "catch_up:3"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			compareLive(t, policy, openLiveSQLite)
		})
	}
	t.Run("postgres/catch_up:3", func(t *testing.T) {
		t.Parallel()
		compareLive(t, "catch_up:3", openLivePostgres)
	})
}

// compareLive runs misfireRequest(policy) through the simulator and live
// on a store from open, and compares the timelines.
func compareLive(t *testing.T, policy string, open func(t *testing.T) store.Store) {
	req := misfireRequest(policy)
	sim, err := Simulate(t.Context(), req, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	o, err := FromRequest(req, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	live := runLive(t, o, open(t))
	want := sim.Schedules[0].Firings
	if len(live) != len(want) {
		t.Errorf("live: %d firings, simulated: %d", len(live), len(want))
	}
	for i := range min(len(live), len(want)) {
		if g, w := describe(live[i]), describe(want[i]); g != w {
			t.Errorf("firing %d:\n live:      %s\n simulated: %s", i, g, w)
		}
	}
	// The outage left its mark: the comparison is not of two quiet days.
	var missed, late int
	for _, f := range live {
		switch f.Outcome {
		case api.SimMissed:
			missed++
		case api.SimLate:
			late++
		}
	}
	if missed == 0 || late == 0 {
		t.Errorf("live run: %d MISSED, %d LATE; want the outage to show", missed, late)
	}
}

// describe is every field of a firing the two runs must agree on.
func describe(f api.SimFiring) string {
	ts := func(s *string) string {
		if s == nil {
			return "-"
		}
		return *s
	}
	ms := func(n *int64) string {
		if n == nil {
			return "-"
		}
		return fmt.Sprint(*n)
	}
	return fmt.Sprintf("%s %s lane=%s attempts=%d retries=%d claimed=%s finished=%s lag=%s late=%s dead=%q",
		f.ScheduledFor, f.Outcome, f.Lane, f.Attempts, f.Retries, ts(f.FirstClaimedAt), ts(f.FinishedAt),
		ms(f.LagMS), ms(f.LatenessMS), f.DeadReason)
}

// runLive runs o's schedules on a started engine over st and returns the
// first schedule's timeline. o must have one node, one outage and no
// failures (what the misfire runs ask).
func runLive(t *testing.T, o *Options, st store.Store) []api.SimFiring {
	t.Helper()
	if o.nodes != 1 || len(o.outages) != 1 || o.failRate != 0 || len(o.nodeDowns) != 0 {
		t.Fatalf("runLive plays one node, one outage, no failures: %+v", o)
	}
	ctx := t.Context()
	clk := clock.NewVirtual(o.from.Add(-livePhase))
	// schedd's defaults but one shard, as the simulator gives its one node
	// (the count changes which shard a schedule is on, nothing it does).
	eng, err := engine.New(ctx, engine.Config{Store: st, Clock: clk, NodeID: "live-node", Shards: 1, IgnoreStoreClock: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range o.schedules {
		sc, _, err := eng.Control.Create(ctx, tenant, "", e.settings)
		if err != nil {
			t.Fatalf("create %s: %v", e.name, err)
		}
		ids = append(ids, sc.ScheduleID)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	// The background loops that sleep on the clock: the planner, the
	// stats flush and retention. When all sleep, nothing of the engine's
	// runs.
	const sleepers = 3
	settle := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for clk.Pending() < sleepers {
			if time.Now().After(deadline) {
				t.Fatalf("the engine's loops did not go back to sleep at %s", fmtTime(clk.Now()))
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	settle()

	type attempt struct {
		item   engine.AckItem
		finish time.Time
	}
	var running []attempt
	out := o.outages[0]
	end := o.to.Add(o.drain())
	for now := o.from; !now.After(end); now = now.Add(livePoll) {
		clk.Set(now)
		settle()
		if now.Equal(out.start) {
			if _, err := eng.Outages.Start(ctx, out.end.Sub(out.start), nil); err != nil {
				t.Fatalf("start the outage: %v", err)
			}
		}
		// The worker reports what it finished, then polls.
		var acks []engine.AckItem
		keep := running[:0]
		for _, a := range running {
			if a.finish.After(now) {
				keep = append(keep, a)
				continue
			}
			acks = append(acks, a.item)
		}
		running = keep
		if len(acks) > 0 {
			rs, err := eng.Queue.AckBatch(ctx, tenant, acks)
			if err != nil {
				t.Fatalf("ack at %s: %v", fmtTime(now), err)
			}
			for _, r := range rs {
				if r.Err != nil {
					t.Fatalf("ack %s at %s: %v", r.Occurrence.OccurrenceID, fmtTime(now), r.Err)
				}
			}
		}
		for {
			got, err := eng.Queue.Claim(ctx, engine.ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: workerID,
				Limit: engine.MaxClaimBatch, Lease: o.workerDuration + engine.DefaultClaimLease})
			if err != nil {
				t.Fatalf("claim at %s: %v", fmtTime(now), err)
			}
			for _, c := range got {
				running = append(running, attempt{engine.AckItem{OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt},
					now.Add(o.workerDuration)})
			}
			if len(got) < engine.MaxClaimBatch {
				break
			}
		}
	}
	live, _, err := readFirings(ctx, st, tenant, ids[0], o.from, o.to, o.schedules[0].flexible, nil)
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// openLiveSQLite opens a store on a real SQLite file, as schedd does.
func openLiveSQLite(t *testing.T) store.Store {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sched.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openLivePostgres opens a store on a fresh schema of the real
// PostgreSQL named by SCHED_TEST_POSTGRES_DSN, dropped at the end; it
// skips without one.
func openLivePostgres(t *testing.T) store.Store {
	dsn := os.Getenv("SCHED_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("set SCHED_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run it")
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "sim_" + strings.ToLower(hex.EncodeToString(b[:]))
	t.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), dsn, schema); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	st, err := postgres.Open(t.Context(), dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
