package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// The quotas the engine enforces itself (the running quota is the
// queue's): active_schedules at create (activeRoom), and
// firings_per_second and catch_up_per_second at materialization (pacer).

// Quota names, as QuotaError and the API name them.
const (
	QuotaActiveSchedules  = "active_schedules"
	QuotaFiringsPerSecond = "firings_per_second"
	QuotaCatchUpPerSecond = "catch_up_per_second"
)

// activeRoom returns how many more live (ACTIVE or PAUSED) schedules
// the tenant may have under its active_schedules quota of limit (> 0). It
// runs in the create's transaction, after the tenant's quota lock, so the
// count and the inserts that follow are one step on every node: two
// creates racing for the last place, on two nodes, cannot both see it
// free.
func activeRoom(ctx context.Context, tx store.Tx, tenantID string, limit int64) (int64, error) {
	if err := tx.LockTenantQuota(ctx, tenantID); err != nil {
		return 0, err
	}
	n, err := tx.LiveSchedules(ctx, tenantID)
	if err != nil {
		return 0, err
	}
	return max(limit-n, 0), nil
}

// activeQuotaError is the refusal of a create past the tenant's
// active_schedules quota of limit.
func activeQuotaError(tenantID string, limit int64) *QuotaError {
	return &QuotaError{Tenant: tenantID, Quota: QuotaActiveSchedules, Limit: limit, Unit: "schedules"}
}

// pacer gives materialized firings their available_at under a tenant's
// firings_per_second and catch_up_per_second quotas. It lives in the
// planner and is used by one pass at a time.
//
// Across nodes each node paces the firings of the shards it holds at the
// share of the rate those shards are (rate * held / total): shards are
// where a tenant's schedules are spread (by id hash), so the shares add
// up to the tenant's rate without the nodes writing a shared bucket on
// every firing. When a node's share of shards changes, its buckets start
// again at the new rate.
type pacer struct {
	mu      sync.Mutex
	firings map[string]*slotCalendar // tenant -> firings_per_second bucket
	catchUp map[string]*catchUpPace  // tenant -> next catch-up slot
}

func newPacer() *pacer {
	return &pacer{firings: map[string]*slotCalendar{}, catchUp: map[string]*catchUpPace{}}
}

// share is the rate a node holding held of total shards paces a tenant's
// quota of perSecond at.
func share(perSecond int64, held, total int) float64 {
	if held <= 0 || total <= 0 {
		return float64(perSecond)
	}
	return float64(perSecond) * float64(held) / float64(total)
}

// maxPacedTenants bounds each of the pacer's maps: past it, the buckets
// of tenants with nothing pending (every slot in the past) are forgotten.
const maxPacedTenants = 100_000

// firingSlot returns when a firing of tenant due at f may be claimed
// under its firings_per_second quota (perSecond > 0), at this node's
// share of held of total shards, and whether that is later than f (the
// firing is throttled). now is the planner's time.
func (p *pacer) firingSlot(tenant string, perSecond int64, held, total int, f, now time.Time) (time.Time, bool) {
	rate := share(perSecond, held, total)
	interval := time.Duration(float64(time.Second) / rate)
	if interval <= 0 {
		interval = 1
	}
	burst := max(int64(rate), 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.firings[tenant]
	if c == nil || c.interval != interval || c.burst != burst {
		if len(p.firings) >= maxPacedTenants {
			for t, old := range p.firings {
				if old.idle(now) {
					delete(p.firings, t)
				}
			}
		}
		c = &slotCalendar{interval: interval, burst: burst}
		p.firings[tenant] = c
	}
	if !c.swept.Equal(now) { // once per pass: a pass's own slots all count
		c.forget(now)
		c.swept = now
	}
	at := c.take(f)
	return at, at.After(f)
}

// slotCalendar is a token bucket over scheduled time, in slots of
// interval: each slot admits one firing, and a firing due at f may take
// any free slot from burst-1 slots before f's own onwards, at the
// earliest; it becomes available at the later of f and its slot. So
// burst firings due at one instant go at once, and the rest follow one
// per interval. The planner materializes firings a horizon ahead and
// shard after shard, not in time order: a calendar of taken slots (runs
// of them) lets a firing planned later but due earlier take an earlier
// slot, as a bucket with one position could not.
type slotCalendar struct {
	interval time.Duration
	burst    int64
	taken    []slotRun // sorted, disjoint, not adjacent
	swept    time.Time // the pass that last forgot old runs
}

// slotRun is the slots lo to hi-1, taken.
type slotRun struct{ lo, hi int64 }

// take takes the earliest free slot f may have and returns when the
// firing due at f becomes available: at the slot or at f, whichever is
// later, rounded up to the store's millisecond.
func (c *slotCalendar) take(f time.Time) time.Time {
	iv := int64(c.interval)
	ns := f.UnixNano()
	own := ns / iv // the slot f falls in
	if own*iv < ns {
		own++ // the first slot at or after f
	}
	k := own - (c.burst - 1)
	// The first run ending after k: k is free unless that run covers it.
	i := sort.Search(len(c.taken), func(i int) bool { return c.taken[i].hi > k })
	if i < len(c.taken) && c.taken[i].lo <= k {
		k = c.taken[i].hi
	}
	c.mark(k)
	at := time.Unix(0, k*iv)
	if at.Before(f) {
		at = f
	}
	if t := at.Truncate(time.Millisecond); t.Before(at) {
		at = t.Add(time.Millisecond)
	}
	return at
}

// mark records slot k, free before, as taken.
func (c *slotCalendar) mark(k int64) {
	i := sort.Search(len(c.taken), func(i int) bool { return c.taken[i].hi >= k })
	switch {
	case i < len(c.taken) && c.taken[i].hi == k: // extends run i upwards
		c.taken[i].hi++
		if i+1 < len(c.taken) && c.taken[i+1].lo == k+1 {
			c.taken[i].hi = c.taken[i+1].hi
			c.taken = append(c.taken[:i+1], c.taken[i+2:]...)
		}
	case i < len(c.taken) && c.taken[i].lo == k+1: // extends run i downwards
		c.taken[i].lo = k
	default:
		c.taken = append(c.taken, slotRun{})
		copy(c.taken[i+1:], c.taken[i:])
		c.taken[i] = slotRun{lo: k, hi: k + 1}
	}
}

// calendarMemory is how far back a calendar keeps its taken slots: the
// default max_lateness, before which the firings the planner still
// materializes on time are rarely due (one that is finds its slots
// free).
const calendarMemory = time.Minute

// forget drops the runs that ended more than calendarMemory before now.
func (c *slotCalendar) forget(now time.Time) {
	edge := now.Add(-calendarMemory).UnixNano() / int64(c.interval)
	n := 0
	for n < len(c.taken) && c.taken[n].hi <= edge {
		n++
	}
	if n > 0 {
		c.taken = append(c.taken[:0], c.taken[n:]...)
	}
}

// idle reports whether every slot taken is in the past.
func (c *slotCalendar) idle(now time.Time) bool {
	return len(c.taken) == 0 || time.Unix(0, c.taken[len(c.taken)-1].hi*int64(c.interval)).Before(now)
}

// catchUpPace is the next slot of one tenant's catch-up firings.
type catchUpPace struct {
	next time.Time
}

// catchUpSlot returns the slot of a tenant's next catch-up firing under
// its catch_up_per_second quota, at this node's share of held of total
// shards: one per interval, never before now. The first time a node
// paces a tenant (after a start, or after forgetting it) it goes on from
// the latest slot the store holds of the tenant's catch-up firings still
// waiting (read calls the store), so a restart does not start the pacing
// over.
func (p *pacer) catchUpSlot(ctx context.Context, tenant string, perSecond int64, held, total int, now time.Time,
	read func(context.Context, string) (time.Time, error)) (time.Time, error) {
	if perSecond <= 0 {
		perSecond = DefaultCatchUpPerSecond
	}
	interval := time.Duration(float64(time.Second) / share(perSecond, held, total))
	p.mu.Lock()
	c := p.catchUp[tenant]
	p.mu.Unlock()
	if c == nil {
		last, err := read(ctx, tenant)
		if err != nil {
			return time.Time{}, fmt.Errorf("catch-up pacing of %s: %w", tenant, err)
		}
		c = &catchUpPace{}
		if !last.IsZero() {
			c.next = last.Add(interval)
		}
		p.mu.Lock()
		if len(p.catchUp) >= maxPacedTenants {
			for t, old := range p.catchUp {
				if old.next.Before(now) {
					delete(p.catchUp, t)
				}
			}
		}
		p.catchUp[tenant] = c
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	slot := c.next
	if slot.Before(now) {
		slot = now
	}
	slot = slot.Truncate(time.Millisecond)
	c.next = slot.Add(interval)
	return slot, nil
}

// tenantLimits returns the quotas of each tenant among due, with the
// daemon's defaults filled in (Tenants.Limits, cached).
func (p *planner) tenantLimits(ctx context.Context, due []record.Schedule) (map[string]record.Quotas, error) {
	out := map[string]record.Quotas{}
	for i := range due {
		id := due[i].TenantID
		if _, ok := out[id]; ok {
			continue
		}
		_, q, err := p.tenants.Limits(ctx, id)
		if err != nil {
			return nil, err
		}
		out[id] = q
	}
	return out, nil
}

// observeThrottled counts firings the firings_per_second quota delayed,
// per tenant.
func (ob *observer) observeThrottled(throttled map[string]int) {
	for t, n := range throttled {
		ob.metrics.TenantThrottledFirings.WithLabelValues(ob.metrics.Tenant(t)).Add(float64(n))
	}
}
