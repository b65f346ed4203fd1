package engine

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
	"github.com/sched-dev/sched/internal/tcpproxy"
)

// Fault tests on a real PostgreSQL with a Go TCP proxy between a node and
// the database (network emulation is not at hand, so the proxy cuts the
// node off): an ambiguous commit, and a node cut off for longer than its
// shard lease.

// proxyInspect is a direct connection to the schema for the checks, which read
// what the store API does not show (insertion order, shard_epoch).
func proxyInspect(t *testing.T, dsn, schema string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = schema
	c, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("inspect connection: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// proxyOccRow is one stored occurrence as the checks read it.
type proxyOccRow struct {
	seq          int64
	scheduleID   string
	version      int64
	scheduledFor int64 // unix ms
	enqueuedAt   int64 // unix ms, 0 when NULL
	epoch        int64
	shard        int
	state        string
}

func proxyOccurrences(t *testing.T, c *pgx.Conn) []proxyOccRow {
	t.Helper()
	rows, err := c.Query(t.Context(), `
		SELECT o.seq, o.schedule_id, o.schedule_version, o.scheduled_for, COALESCE(o.enqueued_at, 0),
		       o.shard_epoch, s.shard, o.state
		FROM occurrences o JOIN schedules s ON s.schedule_id = o.schedule_id
		ORDER BY o.seq`)
	if err != nil {
		t.Fatalf("read occurrences: %v", err)
	}
	var out []proxyOccRow
	for rows.Next() {
		var r proxyOccRow
		if err := rows.Scan(&r.seq, &r.scheduleID, &r.version, &r.scheduledFor, &r.enqueuedAt, &r.epoch, &r.shard, &r.state); err != nil {
			t.Fatalf("scan occurrence: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read occurrences: %v", err)
	}
	return out
}

// proxyRecon checks RECON for `every 1s` schedules: between each schedule's
// first firing (just after its creation) and until (unix s), every whole
// second is stored exactly once per version, and nothing else before until.
func proxyRecon(t *testing.T, occs []proxyOccRow, created map[string]time.Time, until int64) {
	t.Helper()
	type key struct {
		id  string
		ver int64
		sec int64
	}
	n := map[key]int{}
	for _, o := range occs {
		if o.scheduledFor%1000 != 0 {
			t.Errorf("%s: scheduled_for %d is not a whole second", o.scheduleID, o.scheduledFor)
		}
		n[key{o.scheduleID, o.version, o.scheduledFor / 1000}]++
	}
	for k, c := range n {
		if c != 1 {
			t.Errorf("RECON: %s v%d at %d stored %d times, want once", k.id, k.ver, k.sec, c)
		}
		if cr, ok := created[k.id]; !ok {
			t.Errorf("RECON: phantom occurrence of unknown schedule %s", k.id)
		} else if k.sec <= cr.Unix()-1 {
			t.Errorf("RECON: phantom %s at %d, before the schedule was created at %s", k.id, k.sec, cr.Format(time.RFC3339Nano))
		}
	}
	for id, cr := range created {
		// every 1s anchored at the epoch: the first firing is the first
		// whole second after creation (allow for the creation instant
		// landing on a whole second).
		first := cr.Unix() + 1
		if _, ok := n[key{id, 1, cr.Unix()}]; ok && cr.UnixMilli()%1000 == 0 {
			first = cr.Unix()
		}
		var gaps []int64
		for s := first; s <= until; s++ {
			if n[key{id, 1, s}] == 0 {
				gaps = append(gaps, s)
			}
		}
		if len(gaps) > 0 {
			t.Errorf("RECON: schedule %s misses %d firings in [%d, %d]: %v", id, len(gaps), first, until, gaps)
		}
	}
}

// TestProxyBlackholeSelfFencesAndFailsOver: node A is cut
// from PostgreSQL (its proxy blackholes) for longer than its shard lease.
// A must not write under its old epochs past its lease, B must take A's
// shards at higher epochs within about a lease, and after the heal no
// stale write of A is accepted (per shard, epochs never go down in
// insertion order); every firing is stored exactly once.
func TestProxyBlackholeSelfFencesAndFailsOver(t *testing.T) {
	dsn := pgtest.DSN(t)
	if testing.Short() {
		t.Skip("real-time failover test: skipped with -short")
	}
	const (
		lease   = 2 * time.Second
		tick    = 100 * time.Millisecond
		shards  = 16
		nSched  = 12
		cutFor  = 2*lease + time.Second
		timeout = 15 * time.Second
	)
	schema := pgtest.Schema(t, dsn)
	dsnA, proxy := tcpproxy.ForDSN(t, dsn)
	stB := pgtest.Open(t, dsn, schema)
	stA := pgtest.Open(t, dsnA, schema)
	db := proxyInspect(t, dsn, schema)
	ctx := t.Context()

	var fencedA proxyLogCounter
	newNode := func(id string, st store.Store) *Engine {
		cfg := Config{Store: st, Clock: clock.Real{}, NodeID: id, Shards: shards,
			ShardLease: lease, Tick: tick, Horizon: time.Second}
		if id == "node-a" {
			fencedA.msg = "planner write fenced: shard lease lost"
			cfg.Logger = slog.New(&fencedA)
		}
		e, err := New(ctx, cfg)
		if err != nil {
			t.Fatalf("new engine %s: %v", id, err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	a := newNode("node-a", stA)
	b := newNode("node-b", stB)
	// Runs first: a blackholed node cannot stop cleanly.
	t.Cleanup(proxy.Heal)

	created := map[string]time.Time{}
	shardOf := map[string]int{}
	for i := 0; i < nSched; i++ {
		sc, _, err := b.Control.Create(ctx, tenant, "", every("s"+string(rune('a'+i)), "1s"))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		created[sc.ScheduleID] = sc.CreatedAt
		shardOf[sc.ScheduleID] = sc.Shard
	}
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}

	// live returns the live leases by shard, read through B.
	live := func() map[int]store.ShardLease {
		t.Helper()
		ls, err := b.Cluster.ShardLeases(ctx)
		if err != nil {
			t.Fatalf("shard leases: %v", err)
		}
		now := b.Cluster.Now()
		m := map[int]store.ShardLease{}
		for _, l := range ls {
			if l.ExpiresAt.After(now) {
				m[l.Shard] = l
			}
		}
		return m
	}
	count := func(m map[int]store.ShardLease, owner string) int {
		n := 0
		for _, l := range m {
			if l.Owner == owner {
				n++
			}
		}
		return n
	}
	waitFor := func(what string, d time.Duration, ok func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !ok() {
			if time.Since(start) > d {
				m := live()
				t.Fatalf("%s: not within %v; live leases: node-a %d, node-b %d; node-a's latest log records:\n%s",
					what, d, count(m, "node-a"), count(m, "node-b"), fencedA.recent())
			}
			time.Sleep(20 * time.Millisecond)
		}
		return time.Since(start)
	}

	waitFor("balanced at 8 shards each", timeout, func() bool {
		m := live()
		return count(m, "node-a") == shards/2 && count(m, "node-b") == shards/2
	})
	time.Sleep(2 * time.Second) // both plan under steady ownership

	// The cut. A's leases as the store knew them just before.
	atCut := map[int]store.ShardLease{}
	for s, l := range live() {
		if l.Owner == "node-a" {
			atCut[s] = l
		}
	}
	aSchedules := 0
	for _, s := range shardOf {
		if _, ok := atCut[s]; ok {
			aSchedules++
		}
	}
	if len(atCut) == 0 || aSchedules == 0 {
		t.Fatalf("before the cut a holds %d shards with %d schedules; the test proves nothing", len(atCut), aSchedules)
	}
	proxy.Blackhole()
	cutAt := time.Now()

	took := waitFor("b takes every shard", 2*lease+time.Second, func() bool {
		return count(live(), "node-b") == shards
	})
	t.Logf("b held all %d shards %v after the cut (lease %v, tick %v)", shards, took.Round(time.Millisecond), lease, tick)
	if max := lease + 5*tick + 300*time.Millisecond; took > max {
		t.Errorf("failover took %v, want within about a lease and a few ticks (%v)", took, max)
	}
	for s, l := range live() {
		if old, ok := atCut[s]; ok && l.Epoch <= old.Epoch {
			t.Errorf("shard %d: b took it at epoch %d, not above a's %d", s, l.Epoch, old.Epoch)
		}
	}

	time.Sleep(time.Until(cutAt.Add(cutFor)))
	var healSeq int64
	if err := db.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM occurrences`).Scan(&healSeq); err != nil {
		t.Fatal(err)
	}
	proxy.Heal()
	healAt := time.Now()

	// A comes back: it rejoins and the shards are shared again.
	waitFor("rebalanced after the heal", timeout, func() bool {
		m := live()
		return count(m, "node-a") == shards/2 && count(m, "node-b") == shards/2
	})
	t.Logf("rebalanced %v after the heal", time.Since(healAt).Round(time.Millisecond))
	time.Sleep(time.Second)
	until := time.Now().Add(-time.Second).Unix()
	a.Stop()
	b.Stop()

	occs := proxyOccurrences(t, db)
	// Self-fencing: nothing under an epoch A held at the cut, stamped at or
	// after that lease's end. And nothing under those epochs at all once the
	// shard moved on (written after the heal).
	for _, o := range occs {
		l, ok := atCut[o.shard]
		if !ok || o.epoch != l.Epoch {
			continue
		}
		if o.enqueuedAt >= l.ExpiresAt.UnixMilli() {
			t.Errorf("FENCE: %s at %d written under a's epoch %d of shard %d at %d, after that lease ended at %d",
				o.scheduleID, o.scheduledFor, o.epoch, o.shard, o.enqueuedAt, l.ExpiresAt.UnixMilli())
		}
		if o.seq > healSeq {
			t.Errorf("FENCE: stale write accepted after the heal: %s at %d under a's old epoch %d of shard %d",
				o.scheduleID, o.scheduledFor, o.epoch, o.shard)
		}
	}
	// Monotone epoch history: per shard, in insertion order, no planner row
	// carries an epoch lower than one already accepted.
	maxEpoch := map[int]int64{}
	for _, o := range occs {
		if o.epoch == 0 {
			continue
		}
		if o.epoch < maxEpoch[o.shard] {
			t.Errorf("FENCE: shard %d: seq %d (%s at %d) at epoch %d after epoch %d was accepted",
				o.shard, o.seq, o.scheduleID, o.scheduledFor, o.epoch, maxEpoch[o.shard])
		}
		maxEpoch[o.shard] = max(maxEpoch[o.shard], o.epoch)
	}
	proxyRecon(t, occs, created, until)
	t.Logf("%d occurrences checked up to %s; %d written after the heal; a's planner writes refused: %d",
		len(occs), time.Unix(until, 0).UTC().Format(time.RFC3339), proxyCountAfter(occs, healSeq), fencedA.n.Load())
}

// proxyLogCounter counts log records with one message.
type proxyLogCounter struct {
	msg string
	n   atomic.Int64

	mu   sync.Mutex
	last []string // the latest records, for a failure's message
}

func (h *proxyLogCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *proxyLogCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	line := r.Time.Format("15:04:05.000") + " " + r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	h.mu.Lock()
	h.last = append(h.last, line)
	if len(h.last) > 40 {
		h.last = h.last[len(h.last)-40:]
	}
	h.mu.Unlock()
	return nil
}

// recent returns the latest records handled, oldest first.
func (h *proxyLogCounter) recent() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.last, "\n")
}
func (h *proxyLogCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *proxyLogCounter) WithGroup(string) slog.Handler      { return h }

func proxyCountAfter(occs []proxyOccRow, seq int64) int {
	n := 0
	for _, o := range occs {
		if o.seq > seq {
			n++
		}
	}
	return n
}

// TestAmbiguousCommitPlanRetryIdempotent: the proxy forwards a planner transaction's COMMIT, then drops the connection
// before the reply, so the planner sees an error for a batch that did
// commit. The next pass must neither duplicate nor skip: one occurrence
// per (schedule, version, scheduled_for), each cursor advanced once.
func TestAmbiguousCommitPlanRetryIdempotent(t *testing.T) {
	dsn := pgtest.DSN(t)
	const (
		nSched  = 4
		horizon = 10 * time.Second
	)
	schema := pgtest.Schema(t, dsn)
	dsnP, proxy := tcpproxy.ForDSN(t, dsn)
	st := pgtest.Open(t, dsnP, schema)
	db := proxyInspect(t, dsn, schema)
	ctx := t.Context()

	clk := clock.NewVirtual(time.Now().Truncate(time.Second).Add(300 * time.Millisecond).UTC())
	// Shard leases long enough that no pass below renews one (a renewal
	// is due a third of a lease after the last): the first COMMIT of the
	// armed pass is then its plan's, not a lease's.
	e, err := New(ctx, Config{Store: st, Clock: clk, IgnoreStoreClock: true, NodeID: "node-p", Shards: 4, Horizon: horizon,
		ShardLease: time.Minute})
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	t.Cleanup(e.Stop)

	created := map[string]time.Time{}
	for i := 0; i < nSched; i++ {
		sc, _, err := e.Control.Create(ctx, tenant, "", every("s"+string(rune('a'+i)), "1s"))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		created[sc.ScheduleID] = sc.CreatedAt
	}
	if _, err := e.PlanOnce(ctx); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	before := len(proxyOccurrences(t, db))

	clk.Advance(5 * time.Second)
	proxy.ArmDropCommit()
	_, err = e.PlanOnce(ctx)
	if proxy.DroppedCommits() != 1 {
		t.Fatalf("the proxy dropped %d COMMIT replies, want 1 (pass error: %v)", proxy.DroppedCommits(), err)
	}
	if err == nil {
		t.Fatalf("the pass whose COMMIT reply was lost returned no error")
	}
	t.Logf("pass with the lost COMMIT reply: %v", err)
	afterLost := len(proxyOccurrences(t, db))
	if afterLost <= before {
		t.Fatalf("occurrences %d -> %d: the dropped COMMIT did not land; the test proves nothing", before, afterLost)
	}

	// The retry, and a later pass.
	if _, err := e.PlanOnce(ctx); err != nil {
		t.Fatalf("retry pass: %v", err)
	}
	clk.Advance(2 * time.Second)
	if _, err := e.PlanOnce(ctx); err != nil {
		t.Fatalf("later pass: %v", err)
	}

	occs := proxyOccurrences(t, db)
	until := clk.Now().Add(horizon).Unix() - 1
	proxyRecon(t, occs, created, until)
	last := map[string]int64{}
	for _, o := range occs {
		last[o.scheduleID] = max(last[o.scheduleID], o.scheduledFor/1000)
	}
	for id := range created {
		sc, err := e.Control.Get(ctx, tenant, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		// The cursor is the next firing not yet materialized: one second
		// past the last stored one, neither held back nor skipped ahead.
		if got, want := sc.NextRunAt.Unix(), last[id]+1; got != want {
			t.Errorf("schedule %s: cursor at %d, want %d (one past the last stored firing)", id, got, want)
		}
	}
	t.Logf("%d occurrences, %d before the lost commit, %d right after it", len(occs), before, afterLost)
}
