package engine

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// Cluster is this node's view of the cluster and of its own health: the
// time it acts on, its clock offset to the store, the node registry and
// the shard leases, and whether the store is refusing its writes. It reads
// them from the node's membership (member, cluster.go), which the planner
// keeps up to date every pass, and from the store. The API server answers
// /cluster and /readyz from it and stamps its answers with its Now.
type Cluster struct {
	nodeID string
	store  store.Store
	member *member
}

// Now is the time the engine acts on: its clock plus the measured offset
// to the store's clock (see ClockOffset), in UTC.
func (c *Cluster) Now() time.Time { return c.member.now() }

// ClockOffset is the last measured offset between the store's clock and
// this node's (the store's minus ours); 0 on a store without a clock of
// its own (SQLite). The planner measures it again every pass, and every
// comparison the store makes with "now" (shard leases, plan commits,
// claims, claim leases) uses the engine's clock plus this offset, so that
// a node with a skewed clock can neither fire early nor steal a live
// lease.
func (c *Cluster) ClockOffset() time.Duration { return c.member.clockOffset() }

// NoteStoreErr records a failed store operation: the planner notes its
// own writes' failures, the API server those of the requests. It counts
// the store's own failures (busy, full, corrupt, stale epoch) in the
// metrics, and remembers when a write last failed with store.ErrStoreFull
// (readiness). Other errors (nil, a refused request) are ignored.
func (c *Cluster) NoteStoreErr(err error) { c.member.noteStoreErr(err) }

// StoreFullWithin reports whether a write failed with store.ErrStoreFull
// within the last d: /readyz answers 503 while it does. There is no
// "space is back" signal: readiness returns d after the last failed
// write, and the planner writes every pass, so a store still full keeps
// failing and keeps the node not ready.
func (c *Cluster) StoreFullWithin(d time.Duration) bool { return c.member.storeFullWithin(d) }

// Nodes returns the store's node registry, live or expired (see
// store.NodeStore); a node is live while ExpiresAt is after Now().
func (c *Cluster) Nodes(ctx context.Context) ([]store.Node, error) {
	return c.store.ListNodes(ctx)
}

// ShardLeases returns every shard lease, live or expired, by shard.
func (c *Cluster) ShardLeases(ctx context.Context) ([]store.ShardLease, error) {
	return c.store.ListShardLeases(ctx)
}

// NodeID is this node's name in the registry and on its shard leases.
func (c *Cluster) NodeID() string { return c.nodeID }

// maxNodeIDLen is the longest node id a reference may name (schedd's
// --node-id takes up to as many bytes).
const maxNodeIDLen = 200

// ForgetNode removes the node nodeID from the registry at once, for an
// operator who knows it is gone for good, rather than waiting for the live
// nodes to remove it DeadNodeLeases leases after its last heartbeat. Only
// a node that cannot still be running is removed: one whose registration
// is live at Now, or that owns a shard lease live at Now, is refused with
// store.ErrConflict and a message naming it and the time to wait for (the
// store checks both again as it deletes, so a heartbeat or a lease taken
// meanwhile keeps the node too). An unknown node is store.ErrNotFound. It
// returns the node's row as it was; the removal is logged with who asked.
func (c *Cluster) ForgetNode(ctx context.Context, nodeID string) (store.Node, error) {
	switch {
	case nodeID == "":
		return store.Node{}, schedule.Invalid("node", "must not be empty")
	case len(nodeID) > maxNodeIDLen:
		return store.Node{}, schedule.Invalid("node", "%d bytes is over the limit of %d", len(nodeID), maxNodeIDLen)
	case !utf8.ValidString(nodeID):
		return store.Node{}, schedule.Invalid("node", "is not valid UTF-8")
	}
	now := c.member.now()
	nodes, err := c.store.ListNodes(ctx)
	if err != nil {
		return store.Node{}, fmt.Errorf("forget node %q: %w", nodeID, err)
	}
	i := slices.IndexFunc(nodes, func(n store.Node) bool { return n.NodeID == nodeID })
	if i < 0 {
		return store.Node{}, fmt.Errorf("forget node %q: %w", nodeID, store.ErrNotFound)
	}
	n := nodes[i]
	if n.ExpiresAt.After(now) {
		return n, fmt.Errorf("cannot forget node %q: it is live (last heartbeat %s, registered until %s); stop it, or wait until its registration expires: %w",
			nodeID, stamp(n.LastHeartbeat), stamp(n.ExpiresAt), store.ErrConflict)
	}
	leases, err := c.store.ListShardLeases(ctx)
	if err != nil {
		return n, fmt.Errorf("forget node %q: %w", nodeID, err)
	}
	for _, l := range leases {
		if l.Owner == nodeID && l.ExpiresAt.After(now) {
			return n, fmt.Errorf("cannot forget node %q: it still holds the lease of shard %d (epoch %d) until %s; wait until then: %w",
				nodeID, l.Shard, l.Epoch, stamp(l.ExpiresAt), store.ErrConflict)
		}
	}
	removed, err := c.store.RemoveDeadNodes(ctx, store.RemoveDeadNodesParams{NodeID: nodeID, HeartbeatBefore: now, Now: now})
	if err != nil {
		return n, fmt.Errorf("forget node %q: %w", nodeID, err)
	}
	if len(removed) == 0 {
		return n, fmt.Errorf("cannot forget node %q: it heartbeated, took a shard lease or left while it was being forgotten; look at schedctl cluster again: %w",
			nodeID, store.ErrConflict)
	}
	a := ActorOf(ctx)
	attrs := []any{"node", nodeID, "last_heartbeat", stamp(n.LastHeartbeat), "tenant", a.TenantID}
	if a.Token != "" {
		attrs = append(attrs, "token", a.Token)
	}
	c.member.log.Info("node forgotten: removed from the registry", attrs...)
	return n, nil
}

// stamp is t as a message shows it: RFC 3339 in UTC, to the millisecond
// at most.
func stamp(t time.Time) string { return t.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano) }
