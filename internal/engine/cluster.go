package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/store"
)

// memberConfig is what a node's membership of the cluster reads of Config.
type memberConfig struct {
	NodeID      string
	NodeAddress string
	Shards      int
	ShardLease  time.Duration
}

// member is this node's place among the nodes of one store: its row in
// the node registry (heartbeat), the shard leases it holds and how long it
// trusts them, its clock offset to the store's clock, and the health the
// store's failures tell (a full store makes the node not ready). The
// planner asks it, every pass, which shards it may plan; the engine reads
// its clock (now) through it.
type member struct {
	cfg     memberConfig
	store   store.Store
	clock   clock.Clock
	log     *slog.Logger
	metrics *metrics.Metrics

	// clockSrc is the store's clock, nil when it has none (or the config
	// ignores it); offset is its last measured offset to clock, in
	// nanoseconds (the store's clock minus ours).
	clockSrc store.ClockSource
	offset   atomic.Int64

	// fullAt is when (unix ns, the engine's clock) a write last failed
	// with store.ErrStoreFull; 0: never. See noteStoreErr.
	fullAt atomic.Int64

	// held is the leases this node holds, by shard. Only the planner's
	// pass (one at a time) and Stop, after the planner stopped, use it.
	held   map[int]*heldShard
	joined bool // this node may have a row in the registry (leave removes it)

	// leases is a copy of the leases held and trusted as of the last
	// pass, for readers outside the planner's goroutine (the metrics).
	leases atomic.Pointer[[]store.ShardLease]
}

// heldShard is a lease this node holds and until when it trusts it: the
// time its last renewal started plus the lease, minus a margin for clock
// drift. Past trustedUntil the planner stops acting on the shard even if it
// cannot reach the store to find out (a node cut off fences itself before
// another can take over).
type heldShard struct {
	lease        store.ShardLease
	trustedUntil time.Time
	renewAfter   time.Time
}

// newMember returns the membership of a node on st. With clockSrc (the
// store's clock) it measures the offset before returning: a node whose
// clock is skewed must not act on its own reading even once.
func newMember(ctx context.Context, cfg memberConfig, st store.Store, clk clock.Clock, log *slog.Logger, mx *metrics.Metrics, clockSrc store.ClockSource) (*member, error) {
	m := &member{cfg: cfg, store: st, clock: clk, log: log, metrics: mx, clockSrc: clockSrc, held: map[int]*heldShard{}}
	if err := m.measureOffset(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// now is the time the node acts on: its clock plus the measured offset to
// the store's clock, in UTC.
func (m *member) now() time.Time {
	return m.clock.Now().Add(m.clockOffset()).UTC()
}

// clockOffset is the last measured offset (the store's clock minus ours).
func (m *member) clockOffset() time.Duration { return time.Duration(m.offset.Load()) }

// maxOffsetStep bounds how far one measurement may move the offset without
// a log line: larger moves are a clock step on one side or the other.
const maxOffsetStep = time.Second

// measureOffset asks the store for its clock offset and keeps it.
func (m *member) measureOffset(ctx context.Context) error {
	if m.clockSrc == nil {
		return nil
	}
	off, err := m.clockSrc.ClockOffset(ctx)
	if err != nil {
		return fmt.Errorf("measure the store's clock: %w", err)
	}
	if old := time.Duration(m.offset.Swap(int64(off))); (off - old).Abs() > maxOffsetStep {
		m.log.Warn("clock offset to the store changed", "offset", off.String(), "was", old.String())
	}
	return nil
}

// noteStoreErr records a failed store operation (see Cluster.NoteStoreErr).
func (m *member) noteStoreErr(err error) {
	if err == nil {
		return
	}
	if errors.Is(err, store.ErrStoreFull) {
		m.fullAt.Store(m.clock.Now().UnixNano())
	}
	if kind := storeErrorKind(err); kind != "" {
		m.metrics.NoteStoreError(err, kind)
	}
}

// storeFullWithin reports whether a write failed with store.ErrStoreFull
// within the last d.
func (m *member) storeFullWithin(d time.Duration) bool {
	at := m.fullAt.Load()
	return at != 0 && m.clock.Now().Sub(time.Unix(0, at)) < d
}

// beat starts a planner pass: it measures the clock offset again,
// heartbeats the node and keeps its share of the shards. It returns the
// two clocks of the pass: local (the engine's clock) bounds how long the
// node trusts its last renewal of a lease; now (local plus the offset) is
// what every store comparison is made with, so that all nodes compare
// lease expiry and availability on one clock.
func (m *member) beat(ctx context.Context) (local, now time.Time) {
	if err := m.measureOffset(ctx); err != nil && ctx.Err() == nil {
		// Keep the last offset: a clock does not jump because one query
		// failed, and the store is likely unreachable anyway.
		m.log.Warn("planner: keeping the last clock offset", "err", err)
	}
	local = m.clock.Now()
	now = local.Add(m.clockOffset()).UTC()
	m.maintainLeases(ctx, local, now)
	return local, now
}

// trusted returns the leases held and trusted at local, in shard order,
// and publishes their list for heldLeases.
func (m *member) trusted(local time.Time) []*heldShard {
	var out []*heldShard
	leases := []store.ShardLease{}
	for shard := 0; shard < m.cfg.Shards; shard++ {
		h := m.held[shard]
		if h == nil || !local.Before(h.trustedUntil) {
			continue
		}
		out = append(out, h)
		leases = append(leases, h.lease)
	}
	m.leases.Store(&leases)
	return out
}

// drop stops acting on a shard whose lease the store refused (fenced).
func (m *member) drop(shard int) { delete(m.held, shard) }

// heldLeases returns the shard leases this node held and trusted at its
// last pass.
func (m *member) heldLeases() []store.ShardLease {
	if l := m.leases.Load(); l != nil {
		return *l
	}
	return nil
}

// targets heartbeats this node and returns its share of the shards,
// ceil(shards / live nodes), and the ids of the other live nodes.
func (m *member) targets(ctx context.Context, now time.Time) (target int, others []string, ok bool) {
	cfg := &m.cfg
	m.joined = true // set before the write: its answer may be lost after it committed
	if _, err := m.store.HeartbeatNode(ctx, store.NodeHeartbeat{
		NodeID: cfg.NodeID, Address: cfg.NodeAddress, TTL: cfg.ShardLease, Now: now, ClockOffset: m.clockOffset(),
	}); err != nil {
		m.noteStoreErr(err)
		m.log.Warn("node heartbeat", "err", err)
		return 0, nil, false
	}
	nodes, err := m.store.ListNodes(ctx)
	if err != nil {
		m.log.Warn("list nodes", "err", err)
		return 0, nil, false
	}
	m.removeDead(ctx, nodes, now)
	live, self := 0, false
	for _, n := range nodes {
		if n.ExpiresAt.After(now) {
			live++
			if n.NodeID == cfg.NodeID {
				self = true
			} else {
				others = append(others, n.NodeID)
			}
		}
	}
	if !self {
		live++ // our own row, just written, counts whatever the read says
	}
	return (cfg.Shards + live - 1) / live, others, true
}

// deadNodeAfter is how old a node's last heartbeat must be before this
// node removes its row from the registry (DeadNodeLeases).
func (m *member) deadNodeAfter() time.Duration { return DeadNodeLeases * m.cfg.ShardLease }

// removeDead removes from the registry the other nodes dead at now: their
// last heartbeat older than deadNodeAfter, their registration expired, and
// no shard lease of theirs live (the store checks the leases in the same
// statement, so a node that may still hold one stays). nodes is the
// registry as this pass read it: the store is written only when it shows
// a node that old, so a cluster without dead nodes pays nothing more.
func (m *member) removeDead(ctx context.Context, nodes []store.Node, now time.Time) {
	before := now.Add(-m.deadNodeAfter())
	last := map[string]time.Time{}
	for _, n := range nodes {
		if n.NodeID != m.cfg.NodeID && !n.ExpiresAt.After(now) && n.LastHeartbeat.Before(before) {
			last[n.NodeID] = n.LastHeartbeat
		}
	}
	if len(last) == 0 {
		return
	}
	removed, err := m.store.RemoveDeadNodes(ctx, store.RemoveDeadNodesParams{HeartbeatBefore: before, Now: now})
	if err != nil {
		m.noteStoreErr(err)
		m.log.Warn("remove dead nodes from the registry", "err", err)
		return
	}
	for _, id := range removed {
		m.log.Info("dead node removed from the registry", "node", id,
			"last_heartbeat", last[id].Format(time.RFC3339Nano), "dead_after", m.deadNodeAfter().String())
	}
}

// starvedTarget lowers target to floor(shards / live nodes) while another
// live node holds fewer than that: with ceil(shards / live) alone, 4
// shards on 3 nodes settle at 2+2+0 and the third node never gets one.
func (m *member) starvedTarget(ctx context.Context, now time.Time, target int, others []string) int {
	floor := m.cfg.Shards / (len(others) + 1)
	if floor == target || len(m.held) <= floor || len(others) == 0 {
		return target
	}
	leases, err := m.store.ListShardLeases(ctx)
	if err != nil {
		return target
	}
	held := map[string]int{}
	for _, l := range leases {
		if l.ExpiresAt.After(now) {
			held[l.Owner]++
		}
	}
	for _, id := range others {
		if held[id] < floor {
			return floor
		}
	}
	return target
}

// keep records l as held from local on: trusted for the lease less a
// tenth (for clock drift), and due for renewal after a third of it. h is
// what was held on the shard before, if anything; prev is the shard's
// lease as last read before l was granted (nil: not read), which names the
// previous owner in the log line of a takeover.
func (m *member) keep(l store.ShardLease, h *heldShard, local time.Time, prev *store.ShardLease) *heldShard {
	faultinject.Crash(faultinject.LeaseRenew)
	if h == nil || h.lease.Epoch != l.Epoch {
		m.logTaken(l, prev)
	}
	ttl := m.cfg.ShardLease
	k := &heldShard{lease: l, trustedUntil: local.Add(ttl - ttl/10), renewAfter: local.Add(RenewAfter(ttl))}
	m.held[l.Shard] = k
	return k
}

// logTaken logs, at info, a shard lease this node was granted at a new
// epoch (a takeover): the shard, the epoch, and the lease before it when
// known: its owner and epoch, and whether it was released (handed over)
// or expired (its owner stopped renewing it: dead, paused or cut off).
// A shard never leased has no previous owner.
func (m *member) logTaken(l store.ShardLease, prev *store.ShardLease) {
	attrs := []any{"shard", l.Shard, "epoch", l.Epoch}
	if prev != nil && prev.Owner != "" {
		how := "expired"
		if prev.ExpiresAt.Equal(releasedAt) {
			how = "released"
		}
		attrs = append(attrs, "previous_owner", prev.Owner, "previous_epoch", prev.Epoch, "previous_lease", how)
	}
	m.log.Info("shard lease taken", attrs...)
}

// renew renews the held lease h at local (now on the store's clock), or
// takes its shard again when the node's trust in it ran out (a pause, a
// cut), at a new epoch if it expired meanwhile. It returns what is now
// held, or nil when the store refused: the shard is dropped at once.
func (m *member) renew(ctx context.Context, h *heldShard, local, now time.Time) *heldShard {
	var (
		l   store.ShardLease
		err error
	)
	ttl := m.cfg.ShardLease
	if local.Before(h.trustedUntil) {
		l, err = RenewShard(ctx, m.store, h.lease, ttl, now)
	} else {
		l, err = AcquireShard(ctx, m.store, store.AcquireShardParams{Shard: h.lease.Shard, Owner: m.cfg.NodeID, TTL: ttl, Now: now})
	}
	if err != nil {
		m.log.Info("shard lease lost", "shard", h.lease.Shard, "epoch", h.lease.Epoch, "err", err)
		delete(m.held, h.lease.Shard)
		return nil
	}
	return m.keep(l, h, local, &h.lease)
}

// renewDue renews, in shard order, every held lease whose renewal is
// due at local (renew).
func (m *member) renewDue(ctx context.Context, local, now time.Time) {
	for shard := 0; shard < m.cfg.Shards; shard++ {
		if h := m.held[shard]; h != nil && !local.Before(h.renewAfter) {
			m.renew(ctx, h, local, now)
		}
	}
}

// renewWithin renews the held leases that are due before a batch of a
// planner pass commits, as the next pass's start would, so that a pass
// longer than a third of the lease (a large top of the hour on a loaded
// database, its shards planned one after another) keeps acting on its
// shards instead of dropping the batches it read and planned, and keeps
// the shards it has yet to plan. A shard whose trust ran out meanwhile
// is taken again (renew): the store, not the node's clock, then says
// whether it is still this node's, and the batch's writes are
// conditional on each schedule's cursor as read. It returns what is now
// held on h's shard: h, its renewal, or nil when the store refused (the
// shard is dropped).
func (m *member) renewWithin(ctx context.Context, h *heldShard) *heldShard {
	local := m.clock.Now()
	m.renewDue(ctx, local, local.Add(m.clockOffset()).UTC())
	return m.held[h.lease.Shard]
}

// maintainLeases keeps this node's share of the shards: it renews held
// leases that are due (a renewal is conditional on the exact epoch held;
// one refused is dropped at once), gives back the shards it holds beyond
// its target (so a joining node gets them within one pass of each node),
// and takes free or expired shards up to its target. Every lease write
// uses now, the store's clock; trust and renewal times are local.
func (m *member) maintainLeases(ctx context.Context, local, now time.Time) {
	ttl := m.cfg.ShardLease
	target, others, ok := m.targets(ctx, now)

	m.renewDue(ctx, local, now)
	if !ok {
		return
	}

	target = m.starvedTarget(ctx, now, target, others)

	// Give back the shards beyond the target, highest first.
	for shard := m.cfg.Shards - 1; shard >= 0 && len(m.held) > target; shard-- {
		h := m.held[shard]
		if h == nil {
			continue
		}
		delete(m.held, shard) // stop acting on it before the store hears of it
		if err := ReleaseShard(ctx, m.store, h.lease); err != nil {
			m.log.Warn("release shard lease", "shard", shard, "epoch", h.lease.Epoch, "err", err)
		} else {
			m.log.Info("shard lease released", "shard", shard, "epoch", h.lease.Epoch, "reason", "rebalance", "target", target)
		}
	}
	if len(m.held) >= target {
		return
	}

	// Take free or expired shards up to the target. The listing saves an
	// acquire (a write) per live lease of another node.
	leases, err := m.store.ListShardLeases(ctx)
	if err != nil {
		m.log.Warn("list shard leases", "err", err)
		return
	}
	taken := make(map[int]bool, len(leases))
	last := make(map[int]store.ShardLease, len(leases))
	for _, l := range leases {
		last[l.Shard] = l
		if l.ExpiresAt.After(now) {
			taken[l.Shard] = true
		}
	}
	n := m.cfg.Shards
	first := int(nodeHash(m.cfg.NodeID) % uint64(n)) // nodes start at different shards
	for i := 0; i < n && len(m.held) < target; i++ {
		shard := (first + i) % n
		if m.held[shard] != nil || taken[shard] {
			continue
		}
		l, err := AcquireShard(ctx, m.store, store.AcquireShardParams{Shard: shard, Owner: m.cfg.NodeID, TTL: ttl, Now: now})
		if err != nil {
			if !errors.Is(err, store.ErrConflict) {
				m.log.Warn("shard lease", "shard", shard, "err", err)
			}
			continue
		}
		var prev *store.ShardLease
		if p, ok := last[shard]; ok {
			prev = &p
		}
		m.keep(l, nil, local, prev)
	}
}

// RenewAfter is how long after a renewal a node renews a shard lease of
// the given length again: a third of it, so that two renewals may fail
// before the lease runs out. The what-if simulator passes each node that
// often, as a live node's planner would.
func RenewAfter(lease time.Duration) time.Duration { return lease / 3 }

// nodeHash is FNV-1a (64 bits) of a node id.
func nodeHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// leave gives every held shard back, so another node takes it without
// waiting for the lease to run out, and takes the node out of the
// registry, so that the others count one node fewer at their next pass.
// It does nothing for a node that never joined.
func (m *member) leave(ctx context.Context) {
	if !m.joined {
		return
	}
	for shard, h := range m.held {
		if err := ReleaseShard(ctx, m.store, h.lease); err != nil {
			m.log.Warn("release shard lease", "shard", shard, "epoch", h.lease.Epoch, "err", err)
		} else {
			m.log.Info("shard lease released", "shard", shard, "epoch", h.lease.Epoch, "reason", "stop")
		}
		delete(m.held, shard)
	}
	if err := m.store.RemoveNode(ctx, m.cfg.NodeID); err != nil {
		m.log.Warn("leave the node registry", "err", err)
	}
	m.joined = false
}
