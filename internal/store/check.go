package store

import "fmt"

// The checks below refuse requests the engine should never send. They are
// the same for every driver, so they live here rather than in each one.

// Check refuses an acquire with no owner, a non-positive TTL or a negative
// shard.
func (p *AcquireShardParams) Check() error {
	if p.TTL <= 0 || p.Owner == "" || p.Shard < 0 {
		return fmt.Errorf("acquire shard %d: bad request (owner %q, ttl %v)", p.Shard, p.Owner, p.TTL)
	}
	return nil
}

// Check refuses a claim with a non-positive limit or lease.
func (p *ClaimParams) Check() error {
	if p.Limit <= 0 || p.Lease <= 0 {
		return fmt.Errorf("claim %s: bad request (limit %d, lease %v)", p.Queue, p.Limit, p.Lease)
	}
	return nil
}

// Check refuses a heartbeat with no node id or a non-positive TTL.
func (p *NodeHeartbeat) Check() error {
	if p.NodeID == "" || p.TTL <= 0 {
		return fmt.Errorf("heartbeat node: bad request (node %q, ttl %v)", p.NodeID, p.TTL)
	}
	return nil
}

// ListLimit is the number of rows a list returns for a requested limit n:
// DefaultListLimit for n <= 0, at most MaxListLimit.
func ListLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultListLimit
	case n > MaxListLimit:
		return MaxListLimit
	}
	return n
}
