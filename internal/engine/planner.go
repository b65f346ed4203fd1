package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
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
	Paused     int // shards held but not planned: a simulated outage covers them
}

func (s *PlanStats) add(r store.PlanResult) {
	s.Schedules += r.Applied
	s.Stale += r.Stale
	s.Duplicates += r.Duplicates
}

// plannerConfig is what the planner reads of Config.
type plannerConfig struct {
	Shards        int
	Horizon       time.Duration
	ShardLease    time.Duration // a commit that hangs longer is abandoned
	Tick          time.Duration
	PlanBatch     int
	MaxFirings    int
	LateScan      int
	MaxMissedRows int
}

// planner turns the firings of the schedules of the shards this node holds
// into occurrences, a batch per transaction. Its membership of the cluster (member) tells it which
// shards it holds (and measures the clock it plans by); the sweeper ends
// lapsed claim leases at the end of each pass; notify wakes the claims
// waiting for what it enqueued.
type planner struct {
	cfg    plannerConfig
	store  store.Store
	clock  clock.Clock
	log    *slog.Logger
	obs    *observer
	member *member
	sweep  *sweeper
	notify *notifier
	outage *outageWatch // a simulated outage pauses planning (outage.go)
	// tenants gives each tenant's quotas; pace applies the rates among
	// them (quotas.go).
	tenants *Tenants
	pace    *pacer

	wakeC chan struct{}

	// specs keeps parsed definitions across passes: parsing a cron
	// expression for every due schedule on every pass was about a tenth of
	// the planner's CPU, and a fleet shares few distinct definitions. At
	// most maxParsedSpecs entries: memory does not grow with the number of
	// schedules (a full cache is emptied and refills).
	specsMu sync.Mutex
	specs   map[timetable.Definition]*timetable.Timetable

	// passMu is held by a pass and by a tz reload (tzreload.go), so that
	// no pass plans with rules a reload is replacing; tz is what the
	// planner knows of the shards' tz versions (under passMu).
	passMu sync.Mutex
	tz     tzState
	// rules is held for writing by a tz reload, and for reading by the
	// control plane while it computes and writes a cursor, so that no
	// cursor computed under the old rules is written after the reload
	// moved the others.
	rules sync.RWMutex
}

const maxParsedSpecs = 4096

func newPlanner(cfg plannerConfig, st store.Store, clk clock.Clock, log *slog.Logger, obs *observer, c *member, sw *sweeper, n *notifier) *planner {
	return &planner{cfg: cfg, store: st, clock: clk, log: log, obs: obs, member: c, sweep: sw, notify: n,
		wakeC: make(chan struct{}, 1), pace: newPacer(), specs: map[timetable.Definition]*timetable.Timetable{}}
}

// parse returns d parsed, from the cache when it can. A *timetable.Timetable is
// immutable, so one may serve any number of schedules and passes.
func (p *planner) parse(d timetable.Definition) (*timetable.Timetable, error) {
	p.specsMu.Lock()
	sp := p.specs[d]
	p.specsMu.Unlock()
	if sp != nil {
		return sp, nil
	}
	sp, err := timetable.Parse(d)
	if err != nil {
		return nil, err
	}
	p.noteZone(d.Kind, d.TimeZone)
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
	for {
		if _, err := p.pass(ctx); err != nil && ctx.Err() == nil {
			p.member.noteStoreErr(err)
			if storeErrorKind(err) == "" {
				p.obs.metrics.NoteStoreError(err, "other") // a pass fails on the store's answers alone
			}
			p.log.Warn("planner pass failed; retrying next tick", "err", err)
		}
		t := p.clock.NewTimer(p.sleep())
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

// sleep is how long the background planner waits for its next pass: a
// tick, or less when the simulated outage it last read ends sooner, so
// that planning resumes at the outage's very end, as a daemon started
// again then would pass at once (and as a waiting claim wakes then). A
// pass up to a tick later would judge the firings it finds late by that
// much more, and could turn one that was just within its max_lateness
// into a misfire that the real outage would not have made.
func (p *planner) sleep() time.Duration {
	d := p.cfg.Tick
	p.outage.mu.Lock()
	cur := p.outage.cur
	p.outage.mu.Unlock()
	if now := p.member.now(); outageOn(cur, now) {
		d = min(d, max(cur.EndsAt.Sub(now), time.Millisecond))
	}
	return d
}

// pass is one round of the planner. Only one runs at a time: the
// background loop is its only caller in production, and tests that call
// PlanOnce do not Start the engine.
//
// Two clocks (see member.beat): local bounds how long this node trusts
// its last renewal of a lease; now is what every store comparison is made
// with.
func (p *planner) pass(ctx context.Context) (PlanStats, error) {
	p.passMu.Lock()
	defer p.passMu.Unlock()
	start := p.clock.Now()
	var st PlanStats
	local, now := p.member.beat(ctx)
	var errs []error
	// A simulated outage keeps the leases (beat, above) but plans nothing
	// on the shards it covers; on a failed read the last one read holds.
	outage, err := p.outage.refresh(ctx, local, now)
	if err != nil {
		errs = append(errs, err)
	}
	var latest time.Time // the latest firing the pass put on the queue
	held := p.member.trusted(local)
	// Shards recorded under another tz version are rezoned before they
	// are planned (tzreload.go).
	if _, err := p.syncTZ(ctx, held, now, false); err != nil {
		errs = append(errs, err)
	}
	for _, h := range held {
		st.Shards++
		if outageCovers(outage, now, h.lease.Shard) {
			st.Paused++
			continue
		}
		if err := p.planShard(ctx, h, len(held), now, &st, &latest); err != nil {
			errs = append(errs, fmt.Errorf("shard %d: %w", h.lease.Shard, err))
		}
	}
	if !outageAll(outage, now) { // a down engine sweeps no claim lease
		n, err := p.sweep.expire(ctx, now)
		if err != nil {
			errs = append(errs, err)
		}
		st.Expired = n
		if _, err := p.sweep.fold(ctx, now); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.recordZones(ctx); err != nil {
		errs = append(errs, err)
	}
	p.obs.observePass(now, p.clock.Now().Sub(start), st, latest, p.member.clockOffset())
	return st, errors.Join(errs...)
}

// dueBatch is one page of a shard's due schedules, read ahead and
// planned: the items of those that could be planned, how many of their
// occurrences are ENQUEUED, and how many firings were missed.
type dueBatch struct {
	due         []record.Schedule
	items       []store.PlanItem
	enq, missed int
	throttled   map[string]int // tenant -> firings its firings_per_second quota delayed
	err         error
}

// planRun is what planning one page of due schedules reads and counts
// besides the schedules: the time, the shards this node holds (its share
// of the tenants' rates), the tenants' quotas and the firings throttled.
type planRun struct {
	ctx       context.Context
	now       time.Time
	held      int
	limits    map[string]record.Quotas
	throttled map[string]int
}

// readDue reads and plans a page of due schedules in the background: the
// planner reads and plans the next page while the store commits the
// previous one, so the read (and the scanning of its rows) and the time
// arithmetic run beside the commit, on the other core.
func (p *planner) readDue(ctx context.Context, params store.DueSchedulesParams, held int, now time.Time) <-chan dueBatch {
	ch := make(chan dueBatch, 1)
	go func() {
		due, err := p.store.DueSchedules(ctx, params)
		b := dueBatch{due: due, err: err, items: make([]store.PlanItem, 0, len(due))}
		run := &planRun{ctx: ctx, now: now, held: held, throttled: map[string]int{}}
		if err == nil {
			run.limits, b.err = p.tenantLimits(ctx, due)
			if b.err != nil {
				due = nil
			}
		}
		b.throttled = run.throttled
		for i := range due {
			item, err := p.planSchedule(&due[i], run)
			if err != nil {
				// A schedule that no longer parses (a tz database that
				// dropped its zone) must not stop the others.
				p.log.Error("cannot plan schedule", "schedule_id", due[i].ScheduleID, "err", err)
				continue
			}
			for _, o := range item.Occurrences {
				if o.State == record.OccurrenceEnqueued {
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
func (p *planner) planShard(ctx context.Context, h *heldShard, held int, now time.Time, st *PlanStats, latest *time.Time) error {
	params := store.DueSchedulesParams{Shard: h.lease.Shard, Until: now.Add(p.cfg.Horizon), Limit: max(1, p.cfg.PlanBatch/8)}
	next := p.readDue(ctx, params, held, now)
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
			params.Limit = min(2*params.Limit, p.cfg.PlanBatch)
			next = p.readDue(ctx, params, held, now)
		}
		enq, missed := b.enq, b.missed
		// A long pass renews the node's due leases between batches, as
		// the next pass would have (renewWithin).
		renewed := p.member.renewWithin(ctx, h)
		if renewed == nil {
			p.log.Warn("planner: shard lease lost; dropping the batch", "shard", h.lease.Shard, "epoch", h.lease.Epoch)
			return nil
		}
		h = renewed
		plan := store.Plan{Lease: h.lease, Now: now, Items: b.items}
		// Reading and computing the batch took time, and a store call may
		// have hung (a node cut off from its database): trust the lease only
		// by a fresh clock reading, and let the store check it against a
		// fresh now too, so a write never rides on a lease that lapsed while
		// this pass was stuck.
		if !p.clock.Now().Before(h.trustedUntil) {
			p.log.Warn("planner: shard lease no longer trusted; dropping the batch", "shard", h.lease.Shard, "epoch", h.lease.Epoch)
			return nil
		}
		plan.Now = p.member.now()
		faultinject.Crash(faultinject.PlanBeforeInsert)
		// A commit that hangs past a lease period is abandoned: by then
		// another node may own the shard.
		cctx, cancel := context.WithTimeout(ctx, p.cfg.ShardLease)
		res, err := p.store.CommitPlan(cctx, plan)
		cancel()
		if errors.Is(err, store.ErrStaleEpoch) {
			st.Fenced++
			p.obs.metrics.PlanFenced.Inc()
			p.member.drop(h.lease.Shard)
			p.log.Warn("planner write fenced: shard lease lost", "shard", h.lease.Shard, "epoch", h.lease.Epoch)
			return nil
		}
		if err != nil {
			return fmt.Errorf("commit plan: %w", err)
		}
		faultinject.Crash(faultinject.PlanAfterCommit)
		p.obs.observePlan(&plan, res, latest)
		p.obs.observeThrottled(b.throttled)
		st.add(res)
		if res.Stale == 0 {
			st.Enqueued += enq
			st.Missed += missed
		} else {
			st.Enqueued += res.Inserted // approximate split when some items were stale
		}
		if res.Inserted > 0 {
			p.notify.broadcast()
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
func (p *planner) planSchedule(sc *record.Schedule, run *planRun) (store.PlanItem, error) {
	now := run.now
	item := store.PlanItem{
		TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: sc.Version,
		Cursor: sc.NextRunAt, State: record.ScheduleActive,
	}
	sp, err := p.parse(sc.Definition())
	if err != nil {
		return item, err
	}
	cfg := &p.cfg
	until := now.Add(cfg.Horizon)
	lateBefore := now.Add(-sc.MaxLateness) // a firing before this misfired

	keep := 0 // late firings that still fire
	switch sc.MisfirePolicy {
	case record.MisfireFireOnce:
		keep = 1
	case record.MisfireCatchUp:
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
				if err := p.settleLate(sc, &item, late, lateCount, keep, run); err != nil {
					return item, err
				}
				late.reset()
				lateCount = 0
			}
			item.Occurrences = append(item.Occurrences, p.throttle(p.occurrence(sc, f, now), run))
			onTime++
		}
		var next timetable.Firing
		next, ok = sp.Next(f)
		f = next.At
	}
	if lateCount > 0 {
		if ok && f.Before(lateBefore) {
			// The scan stopped inside a long run of late firings: none of
			// these is the most recent, so all of them missed.
			keep = 0
		}
		if err := p.settleLate(sc, &item, late, lateCount, keep, run); err != nil {
			return item, err
		}
	}
	if ok {
		item.NextRunAt = f
	} else {
		item.State = record.ScheduleCompleted // an at schedule, or one past year 9999
	}
	return item, nil
}

// settleLate applies the misfire policy to a run of late firings, of which
// ring holds the most recent: the last keep fire (oldest first, in the
// catch-up lane, paced), up to MaxMissedRows more become MISSED rows, and
// the rest are counted.
func (p *planner) settleLate(sc *record.Schedule, item *store.PlanItem, ring *ring, count, keep int, run *planRun) error {
	now := run.now
	recent := ring.items() // oldest first, at most keep+MaxMissedRows
	if keep > len(recent) {
		keep = len(recent)
	}
	fire := recent[len(recent)-keep:]
	missed := recent[:len(recent)-keep]
	item.MissedCount += int64(count - len(recent))
	for _, f := range missed {
		id := record.OccurrenceID(sc.ScheduleID, sc.Version, f)
		item.Occurrences = append(item.Occurrences, record.Occurrence{
			OccurrenceID: id, TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
			ScheduledFor: f, AvailableAt: f, State: record.OccurrenceMissed, Lane: record.LaneCatchUp,
			Queue: sc.Queue, FinishedAt: now, OverlapPolicy: sc.OverlapPolicy, RetryFrom: f,
		})
	}
	for _, f := range fire {
		o := p.occurrence(sc, f, now)
		o.Lane = record.LaneCatchUp
		slot, err := p.pace.catchUpSlot(run.ctx, sc.TenantID, run.limits[sc.TenantID].CatchUpPerSecond, run.held, p.cfg.Shards,
			now, p.store.LatestCatchUpSlot)
		if err != nil {
			return err
		}
		o.AvailableAt = slot
		item.Occurrences = append(item.Occurrences, o)
	}
	return nil
}

// throttle delays an on-time occurrence to its slot under its tenant's
// firings_per_second quota, when it has one: its scheduled_for and id
// stay, only available_at moves. It is materialized now all the same,
// so the misfire policy never sees it late.
func (p *planner) throttle(o record.Occurrence, run *planRun) record.Occurrence {
	rate := run.limits[o.TenantID].FiringsPerSecond
	if rate <= 0 {
		return o
	}
	at, delayed := p.pace.firingSlot(o.TenantID, rate, run.held, p.cfg.Shards, o.ScheduledFor, run.now)
	if delayed && at.After(o.AvailableAt) { // a flexible firing may be later already
		run.throttled[o.TenantID]++
		o.AvailableAt = at
	}
	return o
}

// occurrence is the on-time occurrence of sc at f, on the queue.
func (p *planner) occurrence(sc *record.Schedule, f, now time.Time) record.Occurrence {
	id := record.OccurrenceID(sc.ScheduleID, sc.Version, f)
	o := record.Occurrence{
		OccurrenceID: id, TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
		ScheduledFor: f, AvailableAt: f, EnqueuedAt: now.Truncate(time.Millisecond), State: record.OccurrenceEnqueued,
		Lane: record.LaneStrict, Queue: sc.Queue, OverlapPolicy: sc.OverlapPolicy, RetryFrom: f,
	}
	if sc.FlexibleWindow > 0 {
		o.Lane = record.LaneFlexible
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
