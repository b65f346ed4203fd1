package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/store"
)

// AckAndClaim acknowledges acks (as AckBatch) and claims the next batch
// (as Claim) for req.TenantID in one store transaction: a worker draining
// a queue pays one commit per batch instead of two. Each ack has its own
// result, brief as AckBatch's. When nothing is available and req.Wait is
// positive, the acks are committed and the claim goes on waiting as Claim
// does.
func (q *Queue) AckAndClaim(ctx context.Context, req ClaimRequest, acks []AckItem) ([]store.FinishResult, []store.Claimed, error) {
	if err := q.checkClaim(&req); err != nil {
		return nil, nil, err
	}
	now := q.now().Truncate(time.Millisecond)
	all, hold, _, err := q.claimOutage(ctx, now)
	if err != nil {
		return nil, nil, fmt.Errorf("ack %d attempts and claim from %s: %w", len(acks), req.Queue, err)
	}
	if all {
		// A simulated outage of every shard: the acks are taken, no claim
		// is; a claim with a wait waits as Claim does.
		rs, err := q.AckBatch(ctx, req.TenantID, acks)
		if err != nil || req.Wait <= 0 {
			return rs, []store.Claimed{}, err
		}
		got, err := q.Claim(ctx, req)
		return rs, got, err
	}
	if err := q.sweeper.maybe(ctx, now); err != nil {
		return nil, nil, err
	}
	skipped := 0
	ps := ackParams(req.TenantID, acks, now)
	var (
		rs  []store.FinishResult
		got []store.Claimed
	)
	if req.AllTenants {
		rs, got, skipped, _, err = q.claimPool(ctx, req, ps, now, hold)
		if err == nil && rs == nil {
			rs = []store.FinishResult{} // no acks
		}
	} else {
		var maxRunning int64
		if maxRunning, err = q.runningQuota(ctx, req.TenantID); err != nil {
			return nil, nil, fmt.Errorf("ack %d attempts and claim from %s: %w", len(acks), req.Queue, err)
		}
		rs, got, err = finishAndClaim(ctx, q.store, ps, store.ClaimParams{
			TenantID: req.TenantID, Queue: req.Queue, WorkerID: req.WorkerID,
			Limit: req.Limit, Lease: req.Lease, Now: now, Skipped: &skipped, MaxRunning: maxRunning,
		}, hold, q.book)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ack %d attempts and claim from %s: %w", len(acks), req.Queue, interrupted(ctx, err))
	}
	q.obs.observeFinishes(ps, rs)
	q.obs.observeClaims(now, got, skipped)
	faultinject.Crash(faultinject.ClaimAfterCommit)
	if len(got) > 0 || req.Wait <= 0 {
		return rs, got, nil
	}
	got, err = q.Claim(ctx, req)
	if err != nil {
		return rs, nil, err
	}
	return rs, got, nil
}
