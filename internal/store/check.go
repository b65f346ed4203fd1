package store

import (
	"errors"
	"fmt"

	"github.com/sched-dev/sched/internal/record"
)

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

// Check refuses a removal of dead nodes without the times it is judged
// at, or with a heartbeat bound after Now (a live row could match).
func (p *RemoveDeadNodesParams) Check() error {
	if p.Now.IsZero() || p.HeartbeatBefore.IsZero() || p.HeartbeatBefore.After(p.Now) {
		return fmt.Errorf("remove dead nodes: bad request (heartbeat before %v, now %v)", p.HeartbeatBefore, p.Now)
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

// Check refuses a finish the engine should never send: a state a finish
// cannot end in, a RETRY_WAIT without its time, a CANCELED end of anything
// but a retryable failure, or a result a worker cannot report.
func (p *FinishParams) Check() error {
	switch p.State {
	case record.OccurrenceSucceeded, record.OccurrenceDead:
	case record.OccurrenceRetryWait:
		if p.RetryAt.IsZero() {
			return errors.New("RETRY_WAIT without a retry time")
		}
	case record.OccurrenceCanceled:
		if p.Result != record.ResultFailedRetryable {
			return fmt.Errorf("result %q: only a FAILED_RETRYABLE attempt ends CANCELED", p.Result)
		}
	default:
		return fmt.Errorf("state %q: a finish ends in SUCCEEDED, RETRY_WAIT, DEAD or CANCELED", p.State)
	}
	switch p.Result {
	case record.ResultSucceeded, record.ResultFailedRetryable, record.ResultFailedPermanent:
	default:
		return fmt.Errorf("result %q: a worker's attempt ends SUCCEEDED, FAILED_RETRYABLE or FAILED_PERMANENT", p.Result)
	}
	return nil
}

// IsItemOutcome tells the answer of one item of a batch (stale, not
// found: the item fails, the batch goes on) from an error of the store,
// which fails the whole batch.
func IsItemOutcome(err error) bool {
	return errors.Is(err, ErrStaleAttempt) || errors.Is(err, ErrNotFound)
}
