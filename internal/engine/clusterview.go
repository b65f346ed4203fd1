package engine

import (
	"context"
	"time"

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
