package engine

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// outagePolicies are the schedules of the outage tests: one per misfire
// policy, each firing every minute with the default max_lateness (60 s).
func outagePolicies() []schedule.Settings {
	var out []schedule.Settings
	for _, p := range []struct {
		name   string
		policy record.MisfirePolicy
		k      int
	}{{"skip", record.MisfireSkip, 0}, {"fire-once", record.MisfireFireOnce, 0}, {"catch-up-3", record.MisfireCatchUp, 3}} {
		s := every(p.name, "1m")
		s.MisfirePolicy, s.CatchUpK = p.policy, p.k
		out = append(out, s)
	}
	return out
}

// drain claims and acks every occurrence available now, and returns how
// many it took.
func (h *harness) drain() int {
	h.t.Helper()
	n := 0
	for {
		got := h.claim("q", 100)
		if len(got) == 0 {
			return n
		}
		for _, c := range got {
			if _, err := h.e.Queue.Ack(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil {
				h.t.Fatalf("ack %s: %v", c.Occurrence.OccurrenceID, err)
			}
		}
		n += len(got)
	}
}

// outcomes are every occurrence of the named schedules as lines of name,
// scheduled_for, state, lane, version and available_at, sorted. The
// available_at of the catch-up lane is left out: the tenant's pacing
// hands out its slots in the order the planner meets the schedules, which
// follows their (random) ids' shards, not the outage.
func (h *harness) outcomes(names []string) []string {
	h.t.Helper()
	var out []string
	for _, name := range names {
		sc := h.schedule(name)
		for _, o := range h.occurrences(sc.ScheduleID) {
			avail := o.AvailableAt.Format("15:04:05.000")
			if o.Lane == record.LaneCatchUp {
				avail = "paced"
			}
			out = append(out, fmt.Sprintf("%s %s %s %s v%d avail=%s", name, o.ScheduledFor.Format(time.RFC3339), o.State, o.Lane,
				o.ScheduleVersion, avail))
		}
	}
	sort.Strings(out)
	return out
}

// The acceptance test of simulated outages: the same schedules, one per
// misfire policy, on two stores driven through the same clock times. One
// gets a simulated 10-minute outage while its engine keeps running passes;
// the other's engine is stopped for the same 10 minutes and a new engine
// starts on its store. After both resume and their queues are drained,
// every occurrence has the same outcome on both, and the outage did make
// firings late (each policy left its mark).
func TestSimulatedOutageMatchesRealOutage(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T10:00:00Z")
		sim, real := open(t, start, nil), open(t, start, nil)
		var names []string
		for _, s := range outagePolicies() {
			sim.create(s)
			real.create(s)
			names = append(names, s.Name)
		}
		const step = 10 * time.Second
		both := func(f func(h *harness)) { f(sim); f(real) }
		both(func(h *harness) { h.plan(); h.drain() })
		for range 30 { // until 10:05:00, a worker draining the queue
			both(func(h *harness) { h.advance(step); h.drain() })
		}

		// The outage, 10:05:00 to 10:15:00.
		o, err := sim.e.Outages.Start(sim.ctx, 10*time.Minute, nil)
		if err != nil {
			t.Fatalf("start the outage: %v", err)
		}
		if !o.EndsAt.Equal(utc("2027-01-04T10:15:00Z")) || len(o.Shards) != 0 || o.CreatedBy != "test-node" {
			t.Fatalf("outage = %+v; want all shards until 10:15 by test-node", o)
		}
		real.e.Stop()
		for range 59 {
			st := sim.advance(step)
			if st.Enqueued != 0 || st.Missed != 0 || st.Paused != st.Shards || st.Shards == 0 {
				t.Fatalf("a pass during the outage at %s: %+v; want every held shard paused, nothing planned", sim.clk.Now().Format(time.TimeOnly), st)
			}
			if got := sim.claim("q", 100); len(got) != 0 {
				t.Fatalf("a claim during the outage at %s took %d occurrences", sim.clk.Now().Format(time.TimeOnly), len(got))
			}
			real.clk.Advance(step)
		}
		sim.advance(step) // 10:15:00: the outage is over
		real.clk.Advance(step)
		if !sim.clk.Now().Equal(real.clk.Now()) {
			t.Fatal("the two clocks drifted apart")
		}
		// The engine starts again (on the virtual clock, as open's are).
		real = harnessOn(t, real.st, real.path, real.clk, func(c *Config) { c.IgnoreStoreClock = true })
		real.plan()
		for range 30 { // until 10:20:00
			both(func(h *harness) { h.drain(); h.advance(step) })
		}
		both(func(h *harness) { h.drain() })

		got, want := sim.outcomes(names), real.outcomes(names)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("simulated outage: %d occurrences, real outage: %d\n%s", len(got), len(want), firstDiff(got, want))
		}
		// The firings of 10:07 to 10:13 were more than a minute late when
		// planning resumed at 10:15, and each policy settled them.
		count := func(prefix string) int {
			n := 0
			for _, l := range got {
				if len(l) >= len(prefix) && l[:len(prefix)] == prefix {
					n++
				}
			}
			return n
		}
		for _, c := range []struct {
			prefix string
			want   int
		}{
			{"skip 2027-01-04T10:07:00Z MISSED", 1},
			{"skip 2027-01-04T10:13:00Z MISSED", 1},
			{"fire-once 2027-01-04T10:13:00Z SUCCEEDED catchup", 1},
			{"fire-once 2027-01-04T10:12:00Z MISSED", 1},
			{"catch-up-3 2027-01-04T10:11:00Z SUCCEEDED catchup", 1},
			{"catch-up-3 2027-01-04T10:10:00Z MISSED", 1},
			{"skip 2027-01-04T10:14:00Z SUCCEEDED strict", 1},
		} {
			if n := count(c.prefix); n != c.want {
				t.Errorf("%d occurrences %q, want %d; all:\n%v", n, c.prefix, c.want, got)
			}
		}
	})
}

// During an outage claims take nothing, a long poll waits and returns
// empty, while the heartbeat and the ack of an attempt claimed before it
// still work and its claim lease does not lapse; a cancel ends it early.
func TestOutageWithholdsClaimsNotAcks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	h.create(every("minutely", "1m"))
	h.create(every("minutely-too", "1m"))
	h.plan()
	h.advance(time.Minute) // the firings of 10:01 are due
	claimed := h.claim("q", 1)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d before the outage, want 1", len(claimed))
	}
	c := claimed[0]
	if _, err := h.e.Outages.Start(h.ctx, 10*time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Outages.Start(h.ctx, time.Minute, nil); !errors.Is(err, ErrConflict) {
		t.Errorf("a second outage: %v; want ErrConflict", err)
	}
	if got := h.claim("q", 10); len(got) != 0 {
		t.Fatalf("claim during the outage took %d", len(got))
	}
	// A long poll waits out its wait and answers empty.
	type res struct {
		got []store.Claimed
		err error
	}
	done := make(chan res, 1)
	go func() {
		got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w2", Wait: 5 * time.Second})
		done <- res{got, err}
	}()
	var r res
	deadline := time.Now().Add(10 * time.Second)
wait:
	for {
		select {
		case r = <-done:
			break wait
		case <-time.After(5 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the long poll did not return")
			}
			h.clk.Advance(100 * time.Millisecond)
		}
	}
	if r.err != nil || len(r.got) != 0 {
		t.Fatalf("long poll during the outage = %d, %v; want empty, no error", len(r.got), r.err)
	}
	// The claim lease (2 s) runs out during the outage, but nothing
	// sweeps it: the worker's heartbeat and ack still take.
	h.advance(30 * time.Second)
	if o, _ := h.e.Queue.Occurrence(h.ctx, tenant, c.Occurrence.OccurrenceID); o.State != record.OccurrenceRunning {
		t.Errorf("the claimed occurrence is %s during the outage, want RUNNING (no sweep)", o.State)
	}
	if _, err := h.e.Queue.Heartbeat(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt, time.Minute); err != nil {
		t.Errorf("heartbeat during the outage: %v", err)
	}
	if o, err := h.e.Queue.Ack(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil || o.State != record.OccurrenceSucceeded {
		t.Errorf("ack during the outage: %v, %v; want SUCCEEDED", o, err)
	}
	// AckAndClaim takes the acks and claims nothing.
	if rs, got, err := h.e.Queue.AckAndClaim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w1", Limit: 5}, nil); err != nil || len(got) != 0 || len(rs) != 0 {
		t.Errorf("ack and claim during the outage = %v, %d claimed, %v; want nothing", rs, len(got), err)
	}
	cur, err := h.e.Outages.Current(h.ctx)
	if err != nil || cur == nil {
		t.Fatalf("Current = %v, %v; want the outage", cur, err)
	}
	canceled, err := h.e.Outages.Cancel(h.ctx)
	if err != nil || canceled == nil || canceled.ID != cur.ID || canceled.CanceledAt.IsZero() {
		t.Fatalf("Cancel = %+v, %v; want outage %d canceled", canceled, err, cur.ID)
	}
	if cur, err := h.e.Outages.Current(h.ctx); err != nil || cur != nil {
		t.Errorf("Current after cancel = %+v, %v; want none", cur, err)
	}
	if again, err := h.e.Outages.Cancel(h.ctx); err != nil || again != nil {
		t.Errorf("Cancel with none in progress = %+v, %v; want nil, nil", again, err)
	}
	if got := h.claim("q", 10); len(got) == 0 {
		t.Error("a claim after the cancel took nothing")
	}
	if st := h.advance(time.Minute); st.Paused != 0 || st.Enqueued == 0 {
		t.Errorf("the pass after the cancel: %+v; want planning again", st)
	}
}

// An outage of shard 0 stops the planning of shard 0's schedules and the
// claims of their occurrences; the other shards go on.
func TestOutageOfSomeShards(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	var on0, other *record.Schedule
	for i := 0; on0 == nil || other == nil; i++ {
		if i > 100 {
			t.Fatal("no schedule on shard 0 and another elsewhere in 100 tries")
		}
		sc := h.create(every(fmt.Sprintf("s%d", i), "1m"))
		if sc.Shard == 0 && on0 == nil {
			on0 = sc
		} else if sc.Shard != 0 && other == nil {
			other = sc
		}
	}
	h.plan()
	if _, err := h.e.Outages.Start(h.ctx, 5*time.Minute, []int{0}); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Minute)
	st := h.advance(time.Minute) // 10:02
	if st.Paused != 1 || st.Shards != 4 {
		t.Errorf("pass: %+v; want 1 of 4 shards paused", st)
	}
	count := func(sc *record.Schedule) int { return len(h.occurrences(sc.ScheduleID)) }
	if n := count(on0); n != 1 {
		t.Errorf("shard 0's schedule has %d occurrences, want the one planned before the outage", n)
	}
	if n := count(other); n != 3 {
		t.Errorf("the other shard's schedule has %d occurrences, want planning to go on", n)
	}
	for _, c := range h.claim("q", 100) {
		if c.Occurrence.ScheduleID == on0.ScheduleID {
			t.Errorf("claimed %s of shard 0 during its outage", c.Occurrence.OccurrenceID)
		}
	}
	if st := h.advance(4 * time.Minute); st.Paused != 0 { // 10:06: past its end
		t.Errorf("pass after the end: %+v; want nothing paused", st)
	}
	// Shard 0's backlog, held since 10:01, is due before anything else.
	// (Schedules other than on0 may be on shard 0 too: ids are random.)
	got := h.claim("q", 100)
	if len(got) == 0 || record.ShardOf(got[0].Occurrence.ScheduleID, 4) != 0 {
		t.Errorf("after the outage the first claim took %d, want shard 0's backlog first", len(got))
	}
	if !slices.ContainsFunc(got, func(c store.Claimed) bool { return c.Occurrence.ScheduleID == on0.ScheduleID }) {
		t.Errorf("after the outage the claim did not take %s's held occurrence", on0.ScheduleID)
	}
	if _, err := h.e.Outages.Start(h.ctx, time.Minute, []int{4}); err == nil {
		t.Error("an outage of shard 4 of 4: no error")
	}
	if _, err := h.e.Outages.Start(h.ctx, 0, nil); err == nil {
		t.Error("an outage of 0s: no error")
	}
}

// A node that starts ends the outage in progress, so that after a restart
// nothing stays paused.
func TestRestartEndsOutage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	sc := h.create(every("minutely", "1m"))
	if _, err := h.e.Outages.Start(h.ctx, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if st := h.advance(time.Minute); st.Enqueued != 0 {
		t.Fatalf("pass during the outage enqueued %d", st.Enqueued)
	}
	h.e.Stop()
	h2 := harnessOn(t, h.st, h.path, h.clk, nil)
	if cur, err := h2.e.Outages.Current(h2.ctx); err != nil || cur != nil {
		t.Fatalf("after a restart Current = %+v, %v; want none", cur, err)
	}
	if st := h2.plan(); st.Enqueued == 0 {
		t.Errorf("the restarted node planned nothing: %+v", st)
	}
	if n := len(h2.occurrences(sc.ScheduleID)); n == 0 {
		t.Error("no occurrences after the restart")
	}
}

// Two nodes on one store: an outage asked of one stops both, and a cancel
// on the other ends it for both.
func TestOutageAcrossCluster(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		a := open(t, utc("2027-01-04T10:00:00Z"), func(c *Config) { c.NodeID = "node-a" })
		b := harnessOn(t, a.st, a.path, a.clk, func(c *Config) {
			c.NodeID = "node-b"
			c.IgnoreStoreClock = true
		})
		for i := range 8 {
			a.create(every(fmt.Sprintf("s%d", i), "1m"))
		}
		passes := func() []PlanStats { return []PlanStats{a.plan(), b.plan()} }
		for range 3 { // a gives shards back to b
			passes()
			a.clk.Advance(time.Second)
		}
		if _, err := a.e.Outages.Start(a.ctx, 10*time.Minute, nil); err != nil {
			t.Fatal(err)
		}
		for range 12 {
			a.clk.Advance(5 * time.Second)
			passes()
		}
		for _, h := range []*harness{a, b} {
			st := h.plan()
			if st.Shards == 0 || st.Paused != st.Shards || st.Enqueued != 0 {
				t.Errorf("%s during the outage: %+v; want its %d shards paused", h.e.Cluster.NodeID(), st, st.Shards)
			}
			if got := h.claim("q", 100); len(got) != 0 {
				t.Errorf("%s claimed %d during the outage", h.e.Cluster.NodeID(), len(got))
			}
		}
		if c, err := b.e.Outages.Cancel(b.ctx); err != nil || c == nil || c.CreatedBy != "node-a" {
			t.Fatalf("cancel on node-b = %+v, %v; want node-a's outage", c, err)
		}
		enq := 0
		for _, h := range []*harness{a, b} {
			st := h.plan()
			if st.Paused != 0 {
				t.Errorf("%s after the cancel: %+v; want nothing paused", h.e.Cluster.NodeID(), st)
			}
			enq += st.Enqueued + st.Missed
		}
		if enq == 0 {
			t.Error("neither node planned after the cancel")
		}
	})
}

// timerLog is the engine's clock, counting the timers it is asked for.
type timerLog struct {
	*clock.Virtual
	n atomic.Int64
}

func (l *timerLog) NewTimer(d time.Duration) clock.Timer {
	l.n.Add(1)
	return l.Virtual.NewTimer(d)
}

// A long poll during an outage of the shard of the only due occurrence
// sleeps until the outage is read again, rather than waking every
// millisecond for the occurrence it holds back.
func TestHeldClaimDoesNotSpin(t *testing.T) {
	t.Parallel()
	var log *timerLog
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), func(c *Config) {
		log = &timerLog{Virtual: c.Clock.(*clock.Virtual)}
		c.Clock = log
	})
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatal("no schedule on shard 0 in 100 tries")
		}
		if sc := h.create(every(fmt.Sprintf("s%d", i), "1m")); sc.Shard == 0 {
			break
		}
		if _, err := h.e.Control.Cancel(h.ctx, tenant, fmt.Sprintf("s%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	h.plan()
	h.advance(time.Minute) // shard 0's firing of 10:01 is due
	if _, err := h.e.Outages.Start(h.ctx, 5*time.Minute, []int{0}); err != nil {
		t.Fatal(err)
	}
	before := log.n.Load()
	done := make(chan error, 1)
	go func() {
		got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w", Wait: 3 * time.Second})
		if err == nil && len(got) != 0 {
			err = fmt.Errorf("claimed %d during the outage", len(got))
		}
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			// A wake for each outageRefresh of the 3 s wait, not one per
			// 100 ms the clock moved.
			if n := log.n.Load() - before; n > 5 {
				t.Errorf("the long poll set %d timers in 3 s", n)
			}
			return
		case <-time.After(5 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the long poll did not return")
			}
			log.Advance(100 * time.Millisecond)
		}
	}
}
