package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// cluster is several engines (nodes) on one store and one virtual clock.
// Nothing runs in the background: tests move the clock and run passes.
type cluster struct {
	t     *testing.T
	ctx   context.Context
	clk   *clock.Virtual
	st    *sqlite.Store
	nodes map[string]*Engine
	live  []string // nodes that run passes in tick, in order
}

const clusterShards = 16

func newCluster(t *testing.T) *cluster {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sched.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return &cluster{t: t, ctx: t.Context(), clk: clock.NewVirtual(utc("2026-03-01T09:00:00Z")), st: st, nodes: map[string]*Engine{}}
}

// join starts a node (it runs passes from the next tick on).
func (c *cluster) join(id string, mut func(*Config)) *Engine {
	c.t.Helper()
	cfg := Config{Store: c.st, Clock: c.clk, Shards: clusterShards, NodeID: id}
	if mut != nil {
		mut(&cfg)
	}
	e, err := New(c.ctx, cfg)
	if err != nil {
		c.t.Fatalf("new engine %s: %v", id, err)
	}
	c.nodes[id] = e
	c.live = append(c.live, id)
	return e
}

// pause stops running passes of a node without telling anyone (a dead or
// frozen process).
func (c *cluster) pause(id string) {
	for i, n := range c.live {
		if n == id {
			c.live = append(c.live[:i], c.live[i+1:]...)
		}
	}
}

// tick moves the clock by d and runs one pass of every live node.
func (c *cluster) tick(d time.Duration) {
	c.t.Helper()
	c.clk.Advance(d)
	for _, id := range c.live {
		if _, err := c.nodes[id].PlanOnce(c.ctx); err != nil {
			c.t.Fatalf("%s: pass at %s: %v", id, c.clk.Now().Format(time.RFC3339), err)
		}
	}
}

// run ticks every second for d.
func (c *cluster) run(d time.Duration) {
	c.t.Helper()
	for s := time.Duration(0); s < d; s += time.Second {
		c.tick(time.Second)
	}
}

// held is what a node holds: shard -> epoch.
func held(e *Engine) map[int]int64 {
	m := map[int]int64{}
	for s, h := range e.member.held {
		m[s] = h.lease.Epoch
	}
	return m
}

// owners reads the store: shard -> lease, live ones only, and checks that
// no shard is held by two nodes' planners at once.
func (c *cluster) owners() map[int]store.ShardLease {
	c.t.Helper()
	ls, err := c.st.ListShardLeases(c.ctx)
	if err != nil {
		c.t.Fatalf("list shard leases: %v", err)
	}
	m := map[int]store.ShardLease{}
	for _, l := range ls {
		if l.ExpiresAt.After(c.clk.Now()) {
			m[l.Shard] = l
		}
	}
	seen := map[int]string{}
	for id, e := range c.nodes {
		for s := range e.member.held {
			if other, dup := seen[s]; dup {
				c.t.Fatalf("shard %d held by both %s and %s", s, other, id)
			}
			seen[s] = id
		}
	}
	return m
}

func (c *cluster) counts() map[string]int {
	m := map[string]int{}
	for id, e := range c.nodes {
		m[id] = len(e.member.held)
	}
	return m
}

// TestClusterJoinRebalances: a node that joins gets its share within a
// lease period, every moved shard under a higher epoch, and a third node
// gets a third.
func TestClusterJoinRebalances(t *testing.T) {
	c := newCluster(t)
	a := c.join("node-a", nil)
	c.tick(0)
	if n := len(held(a)); n != clusterShards {
		t.Fatalf("a alone holds %d shards, want %d", n, clusterShards)
	}
	before := held(a)

	b := c.join("node-b", nil)
	c.run(DefaultShardLease)
	if got := c.counts(); got["node-a"] != 8 || got["node-b"] != 8 {
		t.Fatalf("after a lease period with two nodes: %v, want 8 each", got)
	}
	for s, ep := range held(b) {
		if ep <= before[s] {
			t.Errorf("shard %d moved to b at epoch %d, not above a's %d", s, ep, before[s])
		}
	}
	for s, ep := range held(a) {
		if ep != before[s] {
			t.Errorf("shard %d stayed with a but its epoch went %d -> %d", s, before[s], ep)
		}
	}
	if len(c.owners()) != clusterShards {
		t.Errorf("live leases: %d, want all %d", len(c.owners()), clusterShards)
	}

	c.join("node-c", nil)
	c.run(DefaultShardLease)
	got := c.counts()
	total := 0
	for id, n := range got {
		total += n
		if n > 6 || n < 4 {
			t.Errorf("%s holds %d shards of %d on 3 nodes; want 4 to 6 (ceil 16/3 = 6)", id, n, clusterShards)
		}
	}
	if total != clusterShards || len(c.owners()) != clusterShards {
		t.Errorf("three nodes hold %d shards (%v), %d live leases; want %d", total, got, len(c.owners()), clusterShards)
	}
	nodes, err := a.Cluster.Nodes(c.ctx)
	if err != nil || len(nodes) != 3 {
		t.Errorf("registry: %v, %v; want 3 nodes", nodes, err)
	}
}

// TestClusterStopHandsOverAtOnce: a node that stops cleanly releases its
// shards and leaves the registry; the other takes them at its next pass,
// without waiting for a lease to run out.
func TestClusterStopHandsOverAtOnce(t *testing.T) {
	c := newCluster(t)
	a := c.join("node-a", nil)
	b := c.join("node-b", nil)
	c.run(DefaultShardLease)
	if got := c.counts(); got["node-a"] != 8 || got["node-b"] != 8 {
		t.Fatalf("two nodes: %v, want 8 each", got)
	}
	fromA := held(a)
	c.pause("node-a")
	a.Stop()
	a.Stop() // twice is fine
	if n := len(held(a)); n != 0 {
		t.Errorf("a holds %d shards after Stop", n)
	}
	c.tick(time.Millisecond)
	if n := len(held(b)); n != clusterShards {
		t.Fatalf("b holds %d shards one pass after a stopped, want %d", n, clusterShards)
	}
	for s, ep := range fromA {
		if got := held(b)[s]; got <= ep {
			t.Errorf("shard %d: epoch %d at b, not above a's %d", s, got, ep)
		}
	}
	nodes, err := b.Cluster.Nodes(c.ctx)
	if err != nil || len(nodes) != 1 || nodes[0].NodeID != "node-b" {
		t.Errorf("registry after a stopped: %+v, %v; want node-b alone", nodes, err)
	}
}

// TestClusterDeadNodeShardsMoveAfterLease: a node that dies keeps its
// shards until its leases run out (never earlier), then the survivor takes
// them at a higher epoch.
func TestClusterDeadNodeShardsMoveAfterLease(t *testing.T) {
	c := newCluster(t)
	a := c.join("node-a", nil)
	b := c.join("node-b", nil)
	c.run(DefaultShardLease)
	fromA := held(a)
	if len(fromA) != 8 {
		t.Fatalf("a holds %d shards, want 8", len(fromA))
	}
	var lastRenewal time.Time
	for _, l := range c.owners() {
		if l.Owner == "node-a" && (lastRenewal.IsZero() || l.ExpiresAt.Before(lastRenewal)) {
			lastRenewal = l.ExpiresAt
		}
	}
	c.pause("node-a") // SIGKILL: no release, no goodbye
	for c.clk.Now().Before(lastRenewal.Add(-time.Second)) {
		c.tick(time.Second)
		for s := range held(b) {
			if _, fromDead := fromA[s]; fromDead {
				t.Fatalf("b took shard %d at %s, before a's lease ran out at %s", s, c.clk.Now().Format(time.RFC3339), lastRenewal.Format(time.RFC3339))
			}
		}
	}
	c.run(DefaultShardLease + time.Second)
	if n := len(held(b)); n != clusterShards {
		t.Fatalf("b holds %d shards a lease after a died, want %d", n, clusterShards)
	}
	for s, ep := range fromA {
		if got := held(b)[s]; got <= ep {
			t.Errorf("shard %d: epoch %d at b, not above a's %d", s, got, ep)
		}
	}
}

// skewedClock is a node's clock off the true time by skew.
type skewedClock struct {
	*clock.Virtual
	skew time.Duration
}

func (c skewedClock) Now() time.Time { return c.Virtual.Now().Add(c.skew) }

// clockedStore is the SQLite store with a clock of its own: the true
// (virtual) time, measured against a node's skewed clock.
type clockedStore struct {
	*sqlite.Store
	offset time.Duration
}

func (s clockedStore) ClockOffset(context.Context) (time.Duration, error) { return s.offset, nil }

// TestClusterSkewedClockCannotStealLiveLease: a node whose clock runs 30 s
// ahead would think every lease expired; with the store's clock it acts on
// the true time, takes nothing live, and plans no firing early.
func TestClusterSkewedClockCannotStealLiveLease(t *testing.T) {
	const skew = 30 * time.Second
	c := newCluster(t)
	a := c.join("node-a", nil)
	c.tick(0)
	sc, _, err := a.Control.Create(c.ctx, tenant, "", every("tick", "1m"))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	c.tick(time.Second)

	fast := skewedClock{Virtual: c.clk, skew: skew}
	b := c.join("node-b", func(cfg *Config) {
		cfg.Clock = fast
		cfg.Store = clockedStore{Store: c.st, offset: -skew}
	})
	if got := b.Cluster.ClockOffset(); got != -skew {
		t.Fatalf("b's clock offset = %v, want %v", got, -skew)
	}
	if d := b.Cluster.Now().Sub(a.Cluster.Now()); d != 0 {
		t.Errorf("b's now is %v off a's, want 0", d)
	}
	// b registers and counts two nodes, but a's leases are live at the
	// store's time: b takes nothing until a hands some over.
	if _, err := b.PlanOnce(c.ctx); err != nil {
		t.Fatalf("b pass: %v", err)
	}
	if n := len(held(b)); n != 0 {
		t.Fatalf("b with a clock %v fast took %d live shards", skew, n)
	}
	nodes, err := b.Cluster.Nodes(c.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.NodeID == "node-b" && n.ClockOffset != -skew {
			t.Errorf("registry: node-b clock offset %v, want %v", n.ClockOffset, -skew)
		}
	}
	// Run to the firing: none is enqueued before its time, whoever plans.
	c.run(DefaultShardLease)
	for _, o := range c.occurrencesOf(a, sc.ScheduleID) {
		if o.EnqueuedAt.After(c.clk.Now()) || o.EnqueuedAt.Before(o.ScheduledFor.Add(-DefaultHorizon)) {
			t.Errorf("occurrence %s enqueued at %s (true time %s)", o.ScheduledFor, o.EnqueuedAt, c.clk.Now())
		}
	}
	got := c.counts()
	if got["node-a"]+got["node-b"] != clusterShards || got["node-b"] == 0 {
		t.Errorf("after a lease period: %v; want the shards shared", got)
	}

	// The control: the same skew without the store's clock steals every
	// live lease at once, which is what the offset prevents.
	thief := c.join("node-thief", func(cfg *Config) { cfg.Clock = fast })
	if _, err := thief.PlanOnce(c.ctx); err != nil {
		t.Fatalf("thief pass: %v", err)
	}
	if len(held(thief)) == 0 {
		t.Errorf("control: a node %v fast on its own clock took no live lease; the test proves nothing", skew)
	}
}

func (c *cluster) occurrencesOf(e *Engine, scheduleID string) []record.Occurrence {
	c.t.Helper()
	occs, err := e.Queue.Occurrences(c.ctx, store.ListOccurrencesParams{TenantID: tenant, ScheduleID: scheduleID, Limit: store.MaxListLimit})
	if err != nil {
		c.t.Fatalf("occurrences: %v", err)
	}
	if len(occs) == 0 {
		c.t.Fatalf("schedule %s has no occurrences", scheduleID)
	}
	return occs
}

// TestClusterFewShardsNoNodeStarves: 4 shards on 3 nodes must not settle
// at 2+2+0 (ceil(4/3) = 2 lets the first two nodes take everything): a node
// below floor(shards / nodes) makes the others give back down to the floor.
func TestClusterFewShardsNoNodeStarves(t *testing.T) {
	c := newCluster(t)
	four := func(cfg *Config) { cfg.Shards = 4 }
	c.join("node-a", four)
	c.join("node-b", four)
	c.run(3 * DefaultShardLease)
	c.join("node-c", four)
	c.run(3 * DefaultShardLease)
	counts := c.counts()
	total := 0
	for id, n := range counts {
		if n < 1 {
			t.Errorf("%s holds no shard: %v", id, counts)
		}
		total += n
	}
	if total != 4 || len(c.owners()) != 4 {
		t.Errorf("shards held %v (total %d), want all 4 covered", counts, total)
	}
}
