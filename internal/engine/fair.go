package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// Fair claims across tenants: a shared worker pool claims a queue's work
// of every tenant (ClaimRequest.AllTenants), and the queue serves the
// tenants that have work by deficit round robin, each in proportion to its
// weight while it has work waiting, none past its running quota, and each
// one's strict lane before its other lanes.
//
// Deficit round robin: the tenants with work are visited in a fixed
// circular order; a visit credits the tenant a quantum (its weight times
// the claim's share per unit of weight) and the tenant is served up to its
// credit (its deficit), which each occurrence claimed spends by one. A
// tenant whose work runs out (or whose running quota is reached) leaves the
// circle and loses its credit, so an idle tenant never hoards a share; one
// cut short because the batch is full keeps its place and its credit for
// the next claim. The circle and the deficits are kept per node and per
// queue across claims, so that small batches are fair too.

// quotaRecheck is how often a waiting claim held back by something other
// than an empty queue (a running quota, a schedule another claim is
// deciding) looks again: an ack frees a running slot without waking the
// waiting claims.
const quotaRecheck = 100 * time.Millisecond

// poolTenant is what a pool claim knows of a tenant: its weight and its
// running quota (0: unlimited).
type poolTenant struct {
	ID         string
	Weight     int64
	MaxRunning int64
}

// fairState is a node's pool-claim state: each queue's round.
type fairState struct {
	mu     sync.Mutex
	rounds map[string]*drrRound
}

// drrRound is one queue's deficit round robin on this node. Its mutex is
// held for the whole of a pool claim of the queue, store transaction
// included, so that the deficits spent are the ones the claim read:
// pool claims of one queue on one node take turns (SQLite has one writer
// anyway; on PostgreSQL other nodes claim beside them, SKIP LOCKED keeping
// their sets apart).
type drrRound struct {
	mu sync.Mutex
	drrState
}

// drrState is a round's circle and credits.
type drrState struct {
	order    []string // the circle: tenants with work, in the order they came
	pos      int      // the tenant being served
	credited bool     // order[pos] has had its quantum this visit
	deficit  map[string]int64
}

// snapshot is a copy of r, restored when a claim's transaction fails.
func (r *drrState) snapshot() drrState {
	return drrState{order: slices.Clone(r.order), pos: r.pos, credited: r.credited, deficit: maps.Clone(r.deficit)}
}

// sync makes the circle the tenants with work: those without leave it
// (their credit dropped), new ones join at its end.
func (r *drrState) sync(with map[string]poolTenant) {
	if r.deficit == nil {
		r.deficit = map[string]int64{}
	}
	for i := 0; i < len(r.order); {
		if _, ok := with[r.order[i]]; ok {
			i++
			continue
		}
		r.drop(i)
	}
	ids := slices.Sorted(maps.Keys(with)) // a stable order for newcomers
	for _, id := range ids {
		if !slices.Contains(r.order, id) {
			r.order = append(r.order, id)
		}
	}
	if r.pos >= len(r.order) {
		r.pos, r.credited = 0, false
	}
}

// drop takes order[i] out of the circle and forgets its credit.
func (r *drrState) drop(i int) {
	delete(r.deficit, r.order[i])
	r.order = slices.Delete(r.order, i, i+1)
	switch {
	case i < r.pos:
		r.pos--
	case i == r.pos:
		r.credited = false
	}
	if r.pos >= len(r.order) {
		r.pos = 0
	}
}

// serve claims up to p.Limit occurrences in tx by deficit round robin over
// the circle (claimTx for each tenant's turn, its lanes strict first, its
// running quota applied). with gives each tenant's weight and quota.
func (r *drrState) serve(ctx context.Context, tx store.QueueTx, p store.ClaimParams, with map[string]poolTenant, hold func(string) bool, book *runBook) ([]store.Claimed, int, error) {
	var weights int64
	for _, id := range r.order {
		weights += with[id].Weight
	}
	if weights == 0 {
		return nil, 0, nil
	}
	// A claim's share per unit of weight: every tenant with work gets a
	// quantum within one batch, so a batch is shared by weight.
	unit := max(1, (int64(p.Limit)+weights-1)/weights)
	var (
		out     []store.Claimed
		skipped int
	)
	for len(out) < p.Limit && len(r.order) > 0 {
		t := with[r.order[r.pos]]
		if !r.credited {
			r.deficit[t.ID] += t.Weight * unit
			r.credited = true
		}
		ask := int(min(r.deficit[t.ID], int64(p.Limit-len(out))))
		tp := p
		tp.TenantID, tp.Limit, tp.MaxRunning, tp.Skipped = t.ID, ask, t.MaxRunning, nil
		got, sk, err := claimTenantTx(ctx, tx, tp, hold, true, book)
		if err != nil {
			return nil, 0, fmt.Errorf("tenant %s: %w", t.ID, err)
		}
		skipped += sk
		out = append(out, got...)
		r.deficit[t.ID] -= int64(len(got))
		switch {
		case len(got) < ask:
			// Out of work that this claim may take (or at its running
			// quota): out of the circle until a claim finds it has work.
			r.drop(r.pos)
		case r.deficit[t.ID] <= 0:
			r.deficit[t.ID] = 0
			r.pos, r.credited = (r.pos+1)%len(r.order), false
		}
		// Otherwise the batch is full: the tenant keeps its turn and its
		// credit for the next claim.
	}
	return out, skipped, nil
}

// poolTenants returns the ACTIVE tenants with their weights and running
// quotas, by id (the order the round keeps is its own), from the
// Tenants' copy (at most tenantCacheTTL old).
func (q *Queue) poolTenants(ctx context.Context) ([]poolTenant, error) {
	if q.tenants == nil {
		return nil, nil
	}
	all, err := q.tenants.limits(ctx)
	if err != nil {
		return nil, err
	}
	list := make([]poolTenant, 0, len(all))
	for id, l := range all {
		if l.State != record.TenantActive {
			continue // a disabled tenant's work is not delivered
		}
		list = append(list, poolTenant{ID: id, Weight: int64(l.Weight), MaxRunning: l.Quotas.Running})
	}
	slices.SortFunc(list, func(a, b poolTenant) int { return strings.Compare(a.ID, b.ID) })
	return list, nil
}

// round returns the queue's round on this node.
func (q *Queue) round(queue string) *drrRound {
	q.fair.mu.Lock()
	defer q.fair.mu.Unlock()
	if q.fair.rounds == nil {
		q.fair.rounds = map[string]*drrRound{}
	}
	r := q.fair.rounds[queue]
	if r == nil {
		r = &drrRound{}
		q.fair.rounds[queue] = r
	}
	return r
}

// claimPool is a pool claim (req.AllTenants) at now, with the finishes
// acks applied first in the same transaction. It finds the tenants with
// work in the queue by one probe each (Store.NextAvailable: three index
// seeks), then serves them by deficit round robin. next is the earliest
// available_at the probes saw (zero: none): when the claim got nothing,
// when to look again.
func (q *Queue) claimPool(ctx context.Context, req ClaimRequest, acks []store.FinishParams, now time.Time, hold func(string) bool) (rs []store.FinishResult, got []store.Claimed, skipped int, next time.Time, err error) {
	tenants, err := q.poolTenants(ctx)
	if err != nil {
		return nil, nil, 0, time.Time{}, err
	}
	with := map[string]poolTenant{}
	for _, t := range tenants {
		n, err := q.store.NextAvailable(ctx, t.ID, req.Queue)
		if err != nil {
			return nil, nil, 0, time.Time{}, fmt.Errorf("tenant %s: %w", t.ID, err)
		}
		if n.IsZero() {
			continue
		}
		if next.IsZero() || n.Before(next) {
			next = n
		}
		if !n.After(now) {
			with[t.ID] = t
		}
	}
	if len(with) == 0 && len(acks) == 0 {
		return nil, nil, 0, next, nil
	}
	r := q.round(req.Queue)
	r.mu.Lock()
	defer r.mu.Unlock()
	saved := r.snapshot()
	r.sync(with)
	p := store.ClaimParams{Queue: req.Queue, WorkerID: req.WorkerID, Limit: req.Limit, Lease: req.Lease, Now: now}
	err = store.InTx(ctx, q.store, func(tx store.Tx) (err error) {
		if len(acks) > 0 {
			if rs, err = finishTx(ctx, tx, acks, q.book); err != nil {
				return fmt.Errorf("finish attempts: %w", err)
			}
		}
		got, skipped, err = r.serve(ctx, tx, p, with, hold, q.book)
		return err
	})
	if err != nil {
		r.drrState = saved
		return nil, nil, 0, time.Time{}, fmt.Errorf("claim %s for every tenant: %w", req.Queue, err)
	}
	return rs, got, skipped, next, nil
}

// runningQuota is the tenant's running quota for a claim (0: unlimited).
func (q *Queue) runningQuota(ctx context.Context, tenantID string) (int64, error) {
	if q.tenants == nil {
		return 0, nil
	}
	_, quotas, err := q.tenants.Limits(ctx, tenantID)
	if err != nil {
		return 0, err
	}
	return quotas.Running, nil
}
