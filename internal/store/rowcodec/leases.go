package rowcodec

import (
	"fmt"

	"github.com/sched-dev/sched/internal/store"
)

// The rows of the shard_leases table (columns shard, owner, epoch,
// expires_at) and of the nodes table.

// ScanShardLease reads a row of shard lease columns.
func ScanShardLease(row Scanner) (*store.ShardLease, error) {
	var (
		l       store.ShardLease
		expires int64
	)
	if err := row.Scan(&l.Shard, &l.Owner, &l.Epoch, &expires); err != nil {
		return nil, err
	}
	l.ExpiresAt = FromMS(expires)
	return &l, nil
}

// LockedLease reads the answer of store.PlannerTx.LockShardLease's
// statement: the shard's lease, or ok false when the shard has no row.
func (c Codec) LockedLease(row Scanner, shard int) (l store.ShardLease, ok bool, err error) {
	got, err := ScanShardLease(row)
	if ok, err = c.Found(err); !ok || err != nil {
		if err != nil {
			err = fmt.Errorf("read lease of shard %d: %w", shard, err)
		}
		return store.ShardLease{}, false, err
	}
	return *got, true, nil
}

// WrittenLease reads the answer of a conditional write of a shard's lease
// (store.PlannerTx's InsertShardLease and WriteShardLease): the lease as
// stored, or store.ErrConflict when the condition kept the write from
// happening; why says what the condition was.
func (c Codec) WrittenLease(row Scanner, shard int, why string) (store.ShardLease, error) {
	got, err := ScanShardLease(row)
	ok, err := c.Found(err)
	switch {
	case err != nil:
		return store.ShardLease{}, fmt.Errorf("write lease of shard %d: %w", shard, err)
	case !ok:
		return store.ShardLease{}, fmt.Errorf("write lease of shard %d: %w: %s", shard, store.ErrConflict, why)
	}
	return *got, nil
}

// ScanNode reads a row of the nodes table's columns (node_id, address,
// started_at, last_heartbeat, expires_at, clock_offset_ms).
func ScanNode(row Scanner) (*store.Node, error) {
	var (
		n                          store.Node
		started, last, exp, offset int64
	)
	if err := row.Scan(&n.NodeID, &n.Address, &started, &last, &exp, &offset); err != nil {
		return nil, err
	}
	n.StartedAt, n.LastHeartbeat, n.ExpiresAt, n.ClockOffset = FromMS(started), FromMS(last), FromMS(exp), FromDurMS(offset)
	return &n, nil
}

// HeartbeatArgs checks a node's heartbeat and returns the values the
// nodes upsert binds: node id, address, last heartbeat (and start, on the
// first), expiry, clock offset.
func HeartbeatArgs(p store.NodeHeartbeat) ([]any, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	return []any{p.NodeID, p.Address, MS(p.Now), MS(p.Now.Add(p.TTL)), DurMS(p.ClockOffset)}, nil
}

// LeaseArgs is the values of the shard lease columns for l.
func LeaseArgs(l store.ShardLease) []any {
	return []any{l.Shard, l.Owner, l.Epoch, MS(l.ExpiresAt)}
}

// WriteLeaseArgs is the values a conditional write of a shard's lease
// binds: l's columns, then prev's owner, epoch and expiry, the lease the
// write expects to find.
func WriteLeaseArgs(l, prev store.ShardLease) []any {
	return append(LeaseArgs(l), prev.Owner, prev.Epoch, MS(prev.ExpiresAt))
}

// RemoveDeadNodesArgs checks p and returns the values the removal of dead
// nodes binds: node id (empty: any), heartbeat bound, now.
func RemoveDeadNodesArgs(p store.RemoveDeadNodesParams) ([]any, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	return []any{p.NodeID, MS(p.HeartbeatBefore), MS(p.Now)}, nil
}

// ScanNodeID reads a row of one column, a node id.
func ScanNodeID(row Scanner) (*string, error) {
	var id string
	if err := row.Scan(&id); err != nil {
		return nil, err
	}
	return &id, nil
}
