package engine

import (
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/testio"
)

// joinOn starts another node on h's store and clock, with the harness's
// shards (4) and on the virtual clock even on PostgreSQL, as newPGHarness
// does; no background work: the test runs its passes. mut changes its
// config.
func joinOn(h *harness, id string, mut func(*Config)) *Engine {
	h.t.Helper()
	cfg := Config{Store: h.st, Clock: h.clk, Shards: 4, NodeID: id, IgnoreStoreClock: true}
	if mut != nil {
		mut(&cfg)
	}
	e, err := New(h.ctx, cfg)
	if err != nil {
		h.t.Fatalf("new engine %s: %v", id, err)
	}
	return e
}

// registered returns the ids in the store's node registry, in order.
func registered(h *harness) []string {
	h.t.Helper()
	ns, err := h.st.ListNodes(h.ctx)
	if err != nil {
		h.t.Fatalf("list nodes: %v", err)
	}
	var ids []string
	for _, n := range ns {
		ids = append(ids, n.NodeID)
	}
	return ids
}

// liveOwners returns shard -> owner of the leases live at the clock's now.
func liveOwners(h *harness) map[int]string {
	h.t.Helper()
	ls, err := h.st.ListShardLeases(h.ctx)
	if err != nil {
		h.t.Fatalf("list shard leases: %v", err)
	}
	m := map[int]string{}
	for _, l := range ls {
		if l.ExpiresAt.After(h.clk.Now()) {
			m[l.Shard] = l.Owner
		}
	}
	return m
}

// TestClusterDeadNodeRemovedAfterBound: a node that stops heartbeating
// (kill -9) stays in the registry, not live, until its last heartbeat is
// DeadNodeLeases leases old; the live node's next pass then removes it,
// never earlier, and holds every shard.
func TestClusterDeadNodeRemovedAfterBound(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		h := open(t, utc("2026-03-01T09:00:00Z"), func(c *Config) { c.NodeID = "node-a" })
		b := joinOn(h, "node-b", nil)
		both := func() {
			t.Helper()
			h.advance(time.Second)
			if _, err := b.PlanOnce(h.ctx); err != nil {
				t.Fatalf("node-b pass: %v", err)
			}
		}
		for range 2 * int(DefaultShardLease/time.Second) {
			both()
		}
		if got := len(held(b)); got != 2 {
			t.Fatalf("node-b holds %d shards of 4 before it dies, want 2", got)
		}
		lastBeat := h.clk.Now() // node-b's last pass: SIGKILL after it
		bound := DeadNodeLeases * DefaultShardLease
		for h.clk.Now().Sub(lastBeat) < bound+5*time.Second {
			h.advance(time.Second)
			age := h.clk.Now().Sub(lastBeat)
			got := registered(h)
			if wantB := age <= bound; slices.Contains(got, "node-b") != wantB {
				t.Fatalf("%v after node-b's last heartbeat (bound %v): registry %v; want node-b there: %v", age, bound, got, wantB)
			}
		}
		if got := registered(h); !slices.Equal(got, []string{"node-a"}) {
			t.Errorf("registry %v, want node-a alone", got)
		}
		if got := liveOwners(h); len(got) != 4 || got[0] != "node-a" || got[1] != "node-a" || got[2] != "node-a" || got[3] != "node-a" {
			t.Errorf("live leases %v; want all four node-a's", got)
		}
	})
}

// TestClusterDeadNodeKeptWhileItHoldsALease: a node whose heartbeat is
// long past the bound but which still owns a live shard lease (its
// heartbeats failed while its renewals went through, or it runs with a
// longer lease) stays in the registry until that lease expires.
func TestClusterDeadNodeKeptWhileItHoldsALease(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		start := utc("2026-03-01T09:00:00Z")
		h := open(t, start, func(c *Config) { c.NodeID = "node-a" })
		if _, err := h.st.HeartbeatNode(h.ctx, store.NodeHeartbeat{NodeID: "ghost", TTL: DefaultShardLease, Now: start.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := AcquireShard(h.ctx, h.st, store.AcquireShardParams{Shard: 3, Owner: "ghost", TTL: 2 * time.Minute, Now: start}); err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			at    time.Duration // after start
			ghost bool          // still registered after node-a's pass
		}{
			{0, true},
			{time.Minute, true},
			{2*time.Minute - time.Second, true},
			{2 * time.Minute, false}, // the lease ends: node-a removes it and takes shard 3
		} {
			h.clk.Set(start.Add(step.at))
			h.plan()
			if got := slices.Contains(registered(h), "ghost"); got != step.ghost {
				t.Fatalf("at +%v: ghost registered: %v, want %v", step.at, got, step.ghost)
			}
		}
		if got := liveOwners(h)[3]; got != "node-a" {
			t.Errorf("shard 3's live owner %q, want node-a", got)
		}
	})
}

// TestClusterForgetNode: an operator removes a dead node at once; a node
// that may still run (its registration live, or a lease of its live) is
// refused with a message that names it, an unknown one is not found.
func TestClusterForgetNode(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		start := utc("2026-03-01T09:00:00Z")
		h := open(t, start, func(c *Config) { c.NodeID = "node-a" })
		beat := func(id string, ago time.Duration) {
			t.Helper()
			if _, err := h.st.HeartbeatNode(h.ctx, store.NodeHeartbeat{NodeID: id, TTL: DefaultShardLease, Now: start.Add(-ago)}); err != nil {
				t.Fatal(err)
			}
		}
		beat("live", time.Second)
		beat("leaseholder", time.Minute)
		if _, err := AcquireShard(h.ctx, h.st, store.AcquireShardParams{Shard: 2, Owner: "leaseholder", TTL: DefaultShardLease, Now: start.Add(-time.Second)}); err != nil {
			t.Fatal(err)
		}
		beat("dead-lately", DefaultShardLease+time.Second) // expired, well within DeadNodeLeases
		for _, tc := range []struct {
			node string
			want error    // nil: removed
			msg  []string // the error names these
		}{
			{"live", store.ErrConflict, []string{`"live"`, "is live", "2026-03-01T09:00:09Z"}},
			{"leaseholder", store.ErrConflict, []string{`"leaseholder"`, "shard 2", "2026-03-01T09:00:09Z"}},
			{"no-such-node", store.ErrNotFound, []string{`"no-such-node"`}},
			{"dead-lately", nil, nil},
			{"dead-lately", store.ErrNotFound, nil}, // once only
		} {
			n, err := h.e.Cluster.ForgetNode(h.ctx, tc.node)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("ForgetNode(%s) = %v; want %v", tc.node, err, tc.want)
				continue
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("ForgetNode(%s) = %q; want it to say %s", tc.node, err, m)
				}
			}
			if tc.want == nil && (n.NodeID != tc.node || !n.LastHeartbeat.Equal(start.Add(-DefaultShardLease-time.Second))) {
				t.Errorf("ForgetNode(%s) returned %+v; want its row as it was", tc.node, n)
			}
		}
		if got, want := registered(h), []string{"leaseholder", "live"}; !slices.Equal(got, want) {
			t.Errorf("registry %v, want %v", got, want)
		}
		var ve *schedule.ValidationError
		if _, err := h.e.Cluster.ForgetNode(h.ctx, ""); !errors.As(err, &ve) || ve.Field != "node" {
			t.Errorf("ForgetNode of no node = %v; want a validation error of node", err)
		}
	})
}

// TestClusterLeaseChangesLoggedAtInfo: shard takeovers and releases are
// info lines naming the shard, the epoch and, for a takeover, the previous
// owner and whether it released the lease or let it expire.
func TestClusterLeaseChangesLoggedAtInfo(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		var logA, logB testio.SyncBuffer
		info := func(w *testio.SyncBuffer) *slog.Logger {
			return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
		}
		h := open(t, utc("2026-03-01T09:00:00Z"), func(c *Config) { c.NodeID, c.Logger = "node-a", info(&logA) })
		h.plan() // node-a takes the four free shards
		b := joinOn(h, "node-b", func(c *Config) { c.Logger = info(&logB) })
		for range 3 {
			h.advance(time.Second)
			if _, err := b.PlanOnce(h.ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(held(b)); got != 2 {
			t.Fatalf("node-b holds %d shards, want 2", got)
		}
		fromB := held(b)
		taken := regexp.MustCompile(`level=INFO msg="shard lease taken" shard=(\d) epoch=(\d+)(.*)`)
		lines := func(log string, re *regexp.Regexp) [][]string { return re.FindAllStringSubmatch(log, -1) }
		if got := lines(logA.String(), taken); len(got) != 4 || strings.TrimSpace(got[0][3]) != "" {
			t.Errorf("node-a's takeovers of free shards: %q; want 4 lines without a previous owner\nlog:\n%s", got, logA.String())
		}
		released := regexp.MustCompile(`level=INFO msg="shard lease released" shard=(\d) epoch=1 reason=rebalance`)
		if got := lines(logA.String(), released); len(got) != 2 {
			t.Errorf("node-a's hand-overs: %q; want 2 info lines\nlog:\n%s", got, logA.String())
		}
		if got := lines(logB.String(), taken); len(got) != 2 || got[0][2] != "2" || strings.TrimSpace(got[0][3]) != "previous_owner=node-a previous_epoch=1 previous_lease=released" {
			t.Errorf("node-b's takeovers: %q; want 2 at epoch 2 from node-a, released\nlog:\n%s", got, logB.String())
		}

		// node-b dies; node-a takes its shards when their leases expire.
		mark := len(logA.String())
		for range int(DefaultShardLease/time.Second) + 1 {
			h.advance(time.Second)
		}
		got := lines(logA.String()[mark:], taken)
		if len(got) != 2 {
			t.Fatalf("node-a's takeovers from a dead node-b: %q; want 2\nlog:\n%s", got, logA.String()[mark:])
		}
		for _, m := range got {
			if want := " previous_owner=node-b previous_epoch=2 previous_lease=expired"; m[2] != "3" || m[3] != want {
				t.Errorf("takeover line %q; want epoch 3 and%s", m[0], want)
			}
			if _, fromDead := fromB[int(m[1][0]-'0')]; !fromDead {
				t.Errorf("node-a took shard %s, which node-b did not hold", m[1])
			}
		}
	})
}
