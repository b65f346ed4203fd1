package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/spec"
	"github.com/sched-dev/sched/internal/store"
)

// PlanStats counts what one planner pass did.
type PlanStats struct {
	Shards     int // shards held during the pass
	Schedules  int // schedules advanced
	Enqueued   int // occurrences put on the queue
	Missed     int // firings recorded MISSED, with a row or counted
	Stale      int // schedule writes refused because the schedule changed
	Duplicates int // occurrences that were already stored
	Expired    int // claim leases that lapsed
	Fenced     int // batches refused because a shard's epoch moved on
}

func (s *PlanStats) add(r store.PlanResult) {
	s.Schedules += r.Applied
	s.Stale += r.Stale
	s.Duplicates += r.Duplicates
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

type planner struct {
	e      *Engine
	held   map[int]*heldShard
	wakeC  chan struct{}
	joined bool                 // this node may have a row in the registry (Stop removes it)
	pacing map[string]time.Time // tenant -> next catch-up slot (pacing only; not durable)

	// specs keeps parsed definitions across passes: parsing a cron
	// expression for every due schedule on every pass was about a tenth of
	// the planner's CPU, and a fleet shares few distinct definitions. At
	// most maxParsedSpecs entries: memory does not grow with the number of
	// schedules (a full cache is emptied and refills).
	specsMu sync.Mutex
	specs   map[spec.Definition]*spec.Spec

	// leases is a copy of the leases held and trusted as of the last
	// pass, for readers outside the planner's goroutine (the metrics).
	leases atomic.Pointer[[]store.ShardLease]
}

// heldLeases returns the shard leases this node held and trusted at its
// last pass.
func (p *planner) heldLeases() []store.ShardLease {
	if l := p.leases.Load(); l != nil {
		return *l
	}
	return nil
}

const maxParsedSpecs = 4096

func newPlanner(e *Engine) *planner {
	return &planner{e: e, held: map[int]*heldShard{}, wakeC: make(chan struct{}, 1), pacing: map[string]time.Time{},
		specs: map[spec.Definition]*spec.Spec{}}
}

// parse returns d parsed, from the cache when it can. A *spec.Spec is
// immutable, so one may serve any number of schedules and passes.
func (p *planner) parse(d spec.Definition) (*spec.Spec, error) {
	p.specsMu.Lock()
	sp := p.specs[d]
	p.specsMu.Unlock()
	if sp != nil {
		return sp, nil
	}
	sp, err := spec.Parse(d)
	if err != nil {
		return nil, err
	}
	p.specsMu.Lock()
	if len(p.specs) >= maxParsedSpecs {
		clear(p.specs)
	}
	p.specs[d] = sp
	p.specsMu.Unlock()
	return sp, nil
}

// wake asks the background planner for a pass now (a new or changed
// schedule may be due within the horizon).
func (p *planner) wake() {
	select {
	case p.wakeC <- struct{}{}:
	default:
	}
}

func (p *planner) run(ctx context.Context) {
	log := p.e.log
	for {
		if _, err := p.pass(ctx); err != nil && ctx.Err() == nil {
			p.e.NoteStoreErr(err)
			if storeErrorKind(err) == "" {
				p.e.metrics.NoteStoreError(err, "other") // a pass fails on the store's answers alone
			}
			log.Warn("planner pass failed; retrying next tick", "err", err)
		}
		t := p.e.clock.NewTimer(p.e.cfg.Tick)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-p.wakeC:
			t.Stop()
		case <-t.C():
		}
	}
}

// pass is one round of the planner. Only one runs at a time: the
// background loop is its only caller in production, and tests that call
// PlanOnce do not Start the engine.
//
// Two clocks: local (the engine's clock) bounds how long this node trusts
// its last renewal of a lease; now (local plus the measured offset to the
// store's clock) is what every store comparison is made with, so that all
// nodes compare lease expiry and availability on one clock.
func (p *planner) pass(ctx context.Context) (PlanStats, error) {
	start := p.e.clock.Now()
	var st PlanStats
	if err := p.e.measureOffset(ctx); err != nil && ctx.Err() == nil {
		// Keep the last offset: a clock does not jump because one query
		// failed, and the store is likely unreachable anyway.
		p.e.log.Warn("planner: keeping the last clock offset", "err", err)
	}
	local := p.e.clock.Now()
	now := local.Add(p.e.ClockOffset()).UTC()
	p.maintainLeases(ctx, local, now)
	var errs []error
	var latest time.Time // the latest firing the pass put on the queue
	held := []store.ShardLease{}
	for shard := 0; shard < p.e.cfg.Shards; shard++ {
		h := p.held[shard]
		if h == nil || !local.Before(h.trustedUntil) {
			continue
		}
		held = append(held, h.lease)
		st.Shards++
		if err := p.planShard(ctx, h, now, &st, &latest); err != nil {
			errs = append(errs, fmt.Errorf("shard %d: %w", shard, err))
		}
	}
	p.leases.Store(&held)
	n, err := p.e.expireLeases(ctx, now)
	if err != nil {
		errs = append(errs, err)
	}
	st.Expired = n
	p.e.observePass(now, p.e.clock.Now().Sub(start), st, latest)
	return st, errors.Join(errs...)
}

// targets heartbeats this node and returns its share of the shards,
// ceil(shards / live nodes), and the ids of the other live nodes.
func (p *planner) targets(ctx context.Context, now time.Time) (target int, others []string, ok bool) {
	cfg := &p.e.cfg
	p.joined = true // set before the write: its answer may be lost after it committed
	if _, err := p.e.store.HeartbeatNode(ctx, store.NodeHeartbeat{
		NodeID: cfg.NodeID, Address: cfg.NodeAddress, TTL: cfg.ShardLease, Now: now, ClockOffset: p.e.ClockOffset(),
	}); err != nil {
		p.e.NoteStoreErr(err)
		p.e.log.Warn("node heartbeat", "err", err)
		return 0, nil, false
	}
	nodes, err := p.e.store.ListNodes(ctx)
	if err != nil {
		p.e.log.Warn("list nodes", "err", err)
		return 0, nil, false
	}
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

// starvedTarget lowers target to floor(shards / live nodes) while another
// live node holds fewer than that: with ceil(shards / live) alone, 4
// shards on 3 nodes settle at 2+2+0 and the third node never gets one.
func (p *planner) starvedTarget(ctx context.Context, now time.Time, target int, others []string) int {
	floor := p.e.cfg.Shards / (len(others) + 1)
	if floor == target || len(p.held) <= floor || len(others) == 0 {
		return target
	}
	leases, err := p.e.store.ListShardLeases(ctx)
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

// maintainLeases keeps this node's share of the shards: it renews held
// leases that are due (a renewal is conditional on the exact epoch held;
// one refused is dropped at once), gives back the shards it holds beyond
// its target (so a joining node gets them within one pass of each node),
// and takes free or expired shards up to its target. Every lease write
// uses now, the store's clock; trust and renewal times are local.
func (p *planner) maintainLeases(ctx context.Context, local, now time.Time) {
	ttl := p.e.cfg.ShardLease
	margin := ttl / 10
	target, others, ok := p.targets(ctx, now)
	keep := func(shard int, l store.ShardLease, h *heldShard) {
		faultinject.Crash(faultinject.LeaseRenew)
		if h == nil || h.lease.Epoch != l.Epoch {
			p.e.log.Debug("shard lease taken", "shard", shard, "epoch", l.Epoch)
		}
		p.held[shard] = &heldShard{lease: l, trustedUntil: local.Add(ttl - margin), renewAfter: local.Add(ttl / 3)}
	}

	// Renew what is due, in shard order.
	for shard := 0; shard < p.e.cfg.Shards; shard++ {
		h := p.held[shard]
		if h == nil || local.Before(h.renewAfter) {
			continue
		}
		var (
			l   store.ShardLease
			err error
		)
		if local.Before(h.trustedUntil) {
			l, err = p.e.store.RenewShard(ctx, h.lease, ttl, now)
		} else {
			// Trust ran out (a pause, a cut): take it again, at a new
			// epoch if it expired meanwhile.
			l, err = p.e.store.AcquireShard(ctx, store.AcquireShardParams{Shard: shard, Owner: p.e.cfg.NodeID, TTL: ttl, Now: now})
		}
		if err != nil {
			p.e.log.Info("shard lease lost", "shard", shard, "epoch", h.lease.Epoch, "err", err)
			delete(p.held, shard)
			continue
		}
		keep(shard, l, h)
	}
	if !ok {
		return
	}

	target = p.starvedTarget(ctx, now, target, others)

	// Give back the shards beyond the target, highest first.
	for shard := p.e.cfg.Shards - 1; shard >= 0 && len(p.held) > target; shard-- {
		h := p.held[shard]
		if h == nil {
			continue
		}
		delete(p.held, shard) // stop acting on it before the store hears of it
		if err := p.e.store.ReleaseShard(ctx, h.lease); err != nil {
			p.e.log.Warn("release shard lease", "shard", shard, "err", err)
		} else {
			p.e.log.Info("shard lease handed over", "shard", shard, "epoch", h.lease.Epoch, "target", target)
		}
	}
	if len(p.held) >= target {
		return
	}

	// Take free or expired shards up to the target. The listing saves an
	// acquire (a write) per live lease of another node.
	leases, err := p.e.store.ListShardLeases(ctx)
	if err != nil {
		p.e.log.Warn("list shard leases", "err", err)
		return
	}
	taken := make(map[int]bool, len(leases))
	for _, l := range leases {
		if l.ExpiresAt.After(now) {
			taken[l.Shard] = true
		}
	}
	n := p.e.cfg.Shards
	first := int(nodeHash(p.e.cfg.NodeID) % uint64(n)) // nodes start at different shards
	for i := 0; i < n && len(p.held) < target; i++ {
		shard := (first + i) % n
		if p.held[shard] != nil || taken[shard] {
			continue
		}
		l, err := p.e.store.AcquireShard(ctx, store.AcquireShardParams{Shard: shard, Owner: p.e.cfg.NodeID, TTL: ttl, Now: now})
		if err != nil {
			if !errors.Is(err, store.ErrConflict) {
				p.e.log.Warn("shard lease", "shard", shard, "err", err)
			}
			continue
		}
		keep(shard, l, nil)
	}
}

// nodeHash is FNV-1a of a node id.
func nodeHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// releaseAll gives every held shard back, so another node takes it without
// waiting for the lease to run out.
func (p *planner) releaseAll(ctx context.Context) {
	for shard, h := range p.held {
		if err := p.e.store.ReleaseShard(ctx, h.lease); err != nil {
			p.e.log.Warn("release shard lease", "shard", shard, "err", err)
		}
		delete(p.held, shard)
	}
}

// dueBatch is one page of a shard's due schedules, read ahead and
// planned: the items of those that could be planned, how many of their
// occurrences are ENQUEUED, and how many firings were missed.
type dueBatch struct {
	due         []store.Schedule
	items       []store.PlanItem
	enq, missed int
	err         error
}

// readDue reads and plans a page of due schedules in the background: the
// planner reads and plans the next page while the store commits the
// previous one, so the read (and the scanning of its rows) and the time
// arithmetic run beside the commit, on the other core.
func (p *planner) readDue(ctx context.Context, params store.DueSchedulesParams, now time.Time) <-chan dueBatch {
	ch := make(chan dueBatch, 1)
	go func() {
		due, err := p.e.store.DueSchedules(ctx, params)
		b := dueBatch{due: due, err: err, items: make([]store.PlanItem, 0, len(due))}
		for i := range due {
			item, err := p.planSchedule(&due[i], now)
			if err != nil {
				// A schedule that no longer parses (a tz database that
				// dropped its zone) must not stop the others.
				p.e.log.Error("cannot plan schedule", "schedule_id", due[i].ScheduleID, "err", err)
				continue
			}
			for _, o := range item.Occurrences {
				if o.State == store.OccurrenceEnqueued {
					b.enq++
				} else {
					b.missed++
				}
			}
			b.missed += int(item.MissedCount)
			b.items = append(b.items, item)
		}
		ch <- b
	}()
	return ch
}

// planShard materializes one shard's due schedules, a batch per
// transaction, until none is due within the horizon. It pages through them
// in cursor order, reading and planning each page while the one before it
// commits. Pages start at an eighth of PlanBatch and double up to it:
// nothing commits while the first page is read, so a small first page
// shortens that wait, and a page of twice the rows still reads faster than
// the previous one commits.
func (p *planner) planShard(ctx context.Context, h *heldShard, now time.Time, st *PlanStats, latest *time.Time) error {
	params := store.DueSchedulesParams{Shard: h.lease.Shard, Until: now.Add(p.e.cfg.Horizon), Limit: max(1, p.e.cfg.PlanBatch/8)}
	next := p.readDue(ctx, params, now)
	defer func() {
		if next != nil {
			<-next // no read outlives the pass
		}
	}()
	for round := 0; round < 1000; round++ {
		b := <-next
		next = nil
		if b.err != nil {
			return fmt.Errorf("due schedules: %w", b.err)
		}
		due := b.due
		if len(due) == 0 {
			return nil
		}
		if len(due) == params.Limit {
			last := &due[len(due)-1]
			params.AfterRunAt, params.AfterID = last.NextRunAt, last.ScheduleID
			params.Limit = min(2*params.Limit, p.e.cfg.PlanBatch)
			next = p.readDue(ctx, params, now)
		}
		plan := store.Plan{Lease: h.lease, Now: now, Items: b.items}
		enq, missed := b.enq, b.missed
		// Reading and computing the batch took time, and a store call may
		// have hung (a node cut off from its database): trust the lease only
		// by a fresh clock reading, and let the store check it against a
		// fresh now too, so a write never rides on a lease that lapsed while
		// this pass was stuck.
		if !p.e.clock.Now().Before(h.trustedUntil) {
			p.e.log.Warn("planner: shard lease no longer trusted; dropping the batch", "shard", h.lease.Shard, "epoch", h.lease.Epoch)
			return nil
		}
		plan.Now = p.e.now()
		faultinject.Crash(faultinject.PlanBeforeInsert)
		// A commit that hangs past a lease period is abandoned: by then
		// another node may own the shard.
		cctx, cancel := context.WithTimeout(ctx, p.e.cfg.ShardLease)
		res, err := p.e.store.CommitPlan(cctx, plan)
		cancel()
		if errors.Is(err, store.ErrStaleEpoch) {
			st.Fenced++
			p.e.metrics.PlanFenced.Inc()
			delete(p.held, h.lease.Shard)
			p.e.log.Warn("planner write fenced: shard lease lost", "shard", h.lease.Shard, "epoch", h.lease.Epoch)
			return nil
		}
		if err != nil {
			return fmt.Errorf("commit plan: %w", err)
		}
		faultinject.Crash(faultinject.PlanAfterCommit)
		p.e.observePlan(&plan, res, latest)
		st.add(res)
		if res.Stale == 0 {
			st.Enqueued += enq
			st.Missed += missed
		} else {
			st.Enqueued += res.Inserted // approximate split when some items were stale
		}
		if res.Inserted > 0 {
			p.e.notify.broadcast()
		}
		faultinject.Crash(faultinject.PlanAfterEnqueue)
		if next == nil {
			return nil // that was the last page
		}
	}
	return nil
}

// planSchedule computes one schedule's next step from its durable cursor:
// the firings from next_run_at up to now + horizon, with late ones given
// the misfire policy, and the new cursor.
func (p *planner) planSchedule(sc *store.Schedule, now time.Time) (store.PlanItem, error) {
	item := store.PlanItem{
		TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: sc.Version,
		Cursor: sc.NextRunAt, State: store.ScheduleActive,
	}
	sp, err := p.parse(sc.Definition())
	if err != nil {
		return item, err
	}
	cfg := &p.e.cfg
	until := now.Add(cfg.Horizon)
	lateBefore := now.Add(-sc.MaxLateness) // a firing before this misfired

	keep := 0 // late firings that still fire
	switch sc.MisfirePolicy {
	case store.MisfireFireOnce:
		keep = 1
	case store.MisfireCatchUp:
		keep = sc.CatchUpK
	}
	late := newRing(keep + cfg.MaxMissedRows)
	lateCount := 0

	f, ok := sc.NextRunAt, true
	onTime := 0
	for ok && !f.After(until) && onTime < cfg.MaxFirings && lateCount < cfg.LateScan {
		if f.Before(lateBefore) {
			late.push(f)
			lateCount++
		} else {
			if lateCount > 0 {
				p.settleLate(sc, &item, late, lateCount, keep, now)
				late.reset()
				lateCount = 0
			}
			item.Occurrences = append(item.Occurrences, p.occurrence(sc, f, now))
			onTime++
		}
		var next spec.Firing
		next, ok = sp.Next(f)
		f = next.At
	}
	if lateCount > 0 {
		if ok && f.Before(lateBefore) {
			// The scan stopped inside a long run of late firings: none of
			// these is the most recent, so all of them missed.
			keep = 0
		}
		p.settleLate(sc, &item, late, lateCount, keep, now)
	}
	if ok {
		item.NextRunAt = f
	} else {
		item.State = store.ScheduleCompleted // an at schedule, or one past year 9999
	}
	return item, nil
}

// settleLate applies the misfire policy to a run of late firings, of which
// ring holds the most recent: the last keep fire (oldest first, in the
// catch-up lane, paced), up to MaxMissedRows more become MISSED rows, and
// the rest are counted.
func (p *planner) settleLate(sc *store.Schedule, item *store.PlanItem, ring *ring, count, keep int, now time.Time) {
	recent := ring.items() // oldest first, at most keep+MaxMissedRows
	if keep > len(recent) {
		keep = len(recent)
	}
	fire := recent[len(recent)-keep:]
	missed := recent[:len(recent)-keep]
	item.MissedCount += int64(count - len(recent))
	for _, f := range missed {
		id := store.OccurrenceID(sc.ScheduleID, sc.Version, f)
		item.Occurrences = append(item.Occurrences, store.Occurrence{
			OccurrenceID: id, TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
			ScheduledFor: f, AvailableAt: f, State: store.OccurrenceMissed, Lane: store.LaneCatchUp,
			Queue: sc.Queue, FinishedAt: now, OverlapPolicy: sc.OverlapPolicy, RetryFrom: f,
		})
	}
	for _, f := range fire {
		o := p.occurrence(sc, f, now)
		o.Lane = store.LaneCatchUp
		o.AvailableAt = p.catchUpSlot(sc.TenantID, now)
		item.Occurrences = append(item.Occurrences, o)
	}
}

// catchUpSlot paces a tenant's catch-up firings at CatchUpRate per second.
func (p *planner) catchUpSlot(tenant string, now time.Time) time.Time {
	slot := p.pacing[tenant]
	if slot.Before(now) {
		slot = now
	}
	p.pacing[tenant] = slot.Add(time.Duration(float64(time.Second) / p.e.cfg.CatchUpRate))
	if len(p.pacing) > 100_000 { // bounded by tenants, not schedules; forget idle ones
		for t, s := range p.pacing {
			if s.Before(now) {
				delete(p.pacing, t)
			}
		}
	}
	return slot.Truncate(time.Millisecond)
}

// occurrence is the on-time occurrence of sc at f, on the queue.
func (p *planner) occurrence(sc *store.Schedule, f, now time.Time) store.Occurrence {
	id := store.OccurrenceID(sc.ScheduleID, sc.Version, f)
	o := store.Occurrence{
		OccurrenceID: id, TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
		ScheduledFor: f, AvailableAt: f, EnqueuedAt: now.Truncate(time.Millisecond), State: store.OccurrenceEnqueued,
		Lane: store.LaneStrict, Queue: sc.Queue, OverlapPolicy: sc.OverlapPolicy, RetryFrom: f,
	}
	if sc.FlexibleWindow > 0 {
		o.Lane = store.LaneFlexible
		o.AvailableAt = f.Add(flexOffset(id, sc.FlexibleWindow))
	}
	return o
}

// ring keeps the last n times pushed. Its buffer grows as times are pushed,
// up to n: most schedules are planned with nothing late, and a buffer of n
// (keep + MaxMissedRows) for every schedule of every pass was the planner's
// largest allocation.
type ring struct {
	buf  []time.Time
	n    int
	next int // where the next push goes once the buffer is full
	full bool
}

func newRing(n int) *ring { return &ring{n: n} }

func (r *ring) push(t time.Time) {
	if r.n == 0 {
		return
	}
	if !r.full {
		r.buf = append(r.buf, t)
		r.full = len(r.buf) == r.n
		return
	}
	r.buf[r.next] = t
	r.next = (r.next + 1) % r.n
}

func (r *ring) reset() { r.buf, r.next, r.full = r.buf[:0], 0, false }

// items returns the kept times, oldest first.
func (r *ring) items() []time.Time {
	return append(append([]time.Time(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}
