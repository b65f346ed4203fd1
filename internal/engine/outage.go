package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// A simulated outage lets an operator rehearse what the schedules do after
// the engine was down: for a while every node (or only the planning of
// some shards) behaves, as the schedules see it, as if it were not
// running, and then resumes from the durable cursors, so that the firings
// it passed over are late and get their misfire policy exactly as after a
// real outage.
//
// What stops while one is in progress, on every node:
//   - the planner materializes nothing for the shards it covers (all of
//     them by default); it still heartbeats the node and renews its shard
//     leases, so no shard moves and the pass after the end plans from the
//     cursors where they were;
//   - claims answer nothing (not an error): a claim with a wait waits, as
//     it would for an empty queue; with shards named, only occurrences of
//     schedules on those shards are withheld;
//   - for an outage of every shard, claim leases do not lapse: nothing
//     sweeps them, as nothing would while the engine is down, and the
//     first sweep after the end expires what ran out meanwhile. (The
//     sweep covers every shard at once, so an outage of some shards does
//     not pause it; what it expires there is withheld from claims.)
//
// What goes on: acks, nacks and heartbeats of attempts already claimed
// (a worker finishing its work is not the engine's outage), the control
// plane, the API and its reads, the node registry and the shard leases.
//
// The outage is a row in the store (store.OutageStore), so a request to
// any node reaches all of them: each reads the current one at every
// planner pass and, for claims, at most every outageRefresh. A node that
// starts ends any outage in progress (New cancels it and logs it): a
// restart is the way out of an outage nobody remembers, and after one no
// node is left silently paused.

// MaxOutage bounds how long a simulated outage may last.
const MaxOutage = 24 * time.Hour

// outageRefresh is how long a claim trusts the outage it last read: a
// claim reads the store at most this often for it (the planner reads it
// at every pass).
const outageRefresh = time.Second

// Outages is the part that starts, ends and reports simulated outages
// (see above). It is safe for concurrent use.
type Outages struct {
	nodeID  string
	shards  int
	store   store.Store
	log     *slog.Logger
	member  *member // the node's clock (now)
	watch   *outageWatch
	notify  *notifier // a cancel wakes waiting claims at once
	planner *planner  // and the planner
}

// Start begins a simulated outage of d (1s to MaxOutage) on the shards
// named (none: every shard), from now on this node's clock. Only one may
// be in progress: another is ErrConflict.
func (o *Outages) Start(ctx context.Context, d time.Duration, shards []int) (*store.Outage, error) {
	if d < time.Second || d > MaxOutage {
		return nil, schedule.Invalid("for", "%s: must be from 1s to %s", d, MaxOutage)
	}
	shards = slices.Clone(shards)
	slices.Sort(shards)
	shards = slices.Compact(shards)
	for _, sh := range shards {
		if sh < 0 || sh >= o.shards {
			return nil, schedule.Invalid("shards", "shard %d: the store has shards 0 to %d", sh, o.shards-1)
		}
	}
	if len(shards) == o.shards {
		shards = nil // every shard named: the same as none
	}
	now := o.member.now().Truncate(time.Millisecond)
	out := store.Outage{Shards: shards, StartedAt: now, EndsAt: now.Add(d), CreatedBy: o.nodeID}
	// The outage and its audit row commit together.
	var id int64
	err := store.InTx(ctx, o.store, func(tx store.Tx) (err error) {
		if id, err = tx.InsertOutage(ctx, out); err != nil {
			return err
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: ActorOf(ctx).TenantID, action: AuditOutageStart,
			target: outageTarget(id), detail: fmt.Sprintf("for %s, shards %s", d, shardsText(shards))})
	})
	if errors.Is(err, store.ErrConflict) {
		cur, _ := o.store.CurrentOutage(ctx, now)
		if cur != nil {
			return nil, fmt.Errorf("a simulated outage is in progress until %s; cancel it first: %w", cur.EndsAt.Format(time.RFC3339), ErrConflict)
		}
		return nil, fmt.Errorf("a simulated outage is in progress; cancel it first: %w", ErrConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("start a simulated outage: %w", err)
	}
	out.ID = id
	o.watch.set(&out, o.member.clock.Now())
	o.log.Warn("simulated outage started: planning and claims paused", "outage_id", id, "until", out.EndsAt, "shards", shardsText(shards))
	return &out, nil
}

// Cancel ends the outage in progress now, if any, and returns it as
// canceled; nil when none was in progress.
func (o *Outages) Cancel(ctx context.Context) (*store.Outage, error) {
	canceled, err := o.cancel(ctx, "canceled")
	if err != nil || len(canceled) == 0 {
		return nil, err
	}
	return &canceled[len(canceled)-1], nil
}

// cancel cancels every outage in progress and wakes what waits.
func (o *Outages) cancel(ctx context.Context, why string) ([]store.Outage, error) {
	now := o.member.now().Truncate(time.Millisecond)
	// The outages canceled and their audit rows commit together.
	var canceled []store.Outage
	err := store.InTx(ctx, o.store, func(tx store.Tx) (err error) {
		if canceled, err = tx.CancelOutages(ctx, now); err != nil {
			return err
		}
		for _, c := range canceled {
			if err := appendAudit(ctx, tx, now, auditEntry{tenantID: ActorOf(ctx).TenantID, action: AuditOutageCancel,
				target: outageTarget(c.ID), detail: fmt.Sprintf("%s; was until %s, shards %s",
					why, c.EndsAt.UTC().Format(time.RFC3339), shardsText(c.Shards))}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cancel the simulated outage: %w", err)
	}
	o.watch.set(nil, o.member.clock.Now())
	for _, c := range canceled {
		o.log.Warn("simulated outage "+why, "outage_id", c.ID, "was_until", c.EndsAt, "shards", shardsText(c.Shards))
	}
	if len(canceled) > 0 {
		o.notify.broadcast()
		o.planner.wake()
	}
	return canceled, nil
}

// Current returns the outage in progress, read from the store now; nil
// when there is none.
func (o *Outages) Current(ctx context.Context) (*store.Outage, error) {
	cur, err := o.watch.refresh(ctx, o.member.clock.Now(), o.member.now())
	if err != nil {
		return nil, err
	}
	return cur, nil
}

// InProgress returns the outage this node last read (at its last planner
// pass, claim or request), when it is still in progress now; nil
// otherwise. It reads no store: probes and gauges ask it often.
func (o *Outages) InProgress() *store.Outage {
	o.watch.mu.Lock()
	cur := o.watch.cur
	o.watch.mu.Unlock()
	if !outageOn(cur, o.member.now()) {
		return nil
	}
	return cur
}

// Now is the time the node acts on (Cluster.Now), for answers that say
// how long an outage has left.
func (o *Outages) Now() time.Time { return o.member.now() }

// shardsText is a log field's value for an outage's shards.
func shardsText(shards []int) string {
	if len(shards) == 0 {
		return "all"
	}
	return fmt.Sprint(shards)
}

// outageWatch is a node's last reading of the outage in progress, shared
// by the planner (which reads it afresh every pass) and the claims (which
// read it again when it is older than outageRefresh). It also keeps the
// gauges that say an outage is in progress.
type outageWatch struct {
	store   store.Store
	shards  int
	metrics *metrics.Metrics

	mu     sync.Mutex
	cur    *store.Outage // nil: none
	readAt time.Time     // local clock; zero: never read
}

// refresh reads the outage in progress at now (the store's clock) and
// keeps it, as read at local (this node's clock). On a failed read it
// keeps what it had and returns the error with it.
func (w *outageWatch) refresh(ctx context.Context, local, now time.Time) (*store.Outage, error) {
	cur, err := w.store.CurrentOutage(ctx, now)
	if err != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.cur, fmt.Errorf("read the simulated outage: %w", err)
	}
	w.set(cur, local)
	return cur, nil
}

// current is the outage as last read, read again first when that was
// outageRefresh ago or more.
func (w *outageWatch) current(ctx context.Context, local, now time.Time) (*store.Outage, error) {
	w.mu.Lock()
	cur, fresh := w.cur, !w.readAt.IsZero() && local.Sub(w.readAt) < outageRefresh && !local.Before(w.readAt)
	w.mu.Unlock()
	if fresh {
		return cur, nil
	}
	return w.refresh(ctx, local, now)
}

// set keeps cur as the outage read at local and updates the gauges.
func (w *outageWatch) set(cur *store.Outage, local time.Time) {
	w.mu.Lock()
	w.cur, w.readAt = cur, local
	w.mu.Unlock()
	if w.metrics == nil {
		return
	}
	if cur == nil {
		w.metrics.OutageActive.Set(0)
		w.metrics.OutageEnds.Set(0)
		return
	}
	w.metrics.OutageActive.Set(1)
	w.metrics.OutageEnds.Set(float64(cur.EndsAt.UnixMilli()) / 1000)
}

// outageOn reports whether o is in progress at now.
func outageOn(o *store.Outage, now time.Time) bool {
	return o != nil && o.CanceledAt.IsZero() && now.Before(o.EndsAt)
}

// outageAll reports whether o, in progress at now, covers every shard.
func outageAll(o *store.Outage, now time.Time) bool {
	return outageOn(o, now) && len(o.Shards) == 0
}

// outageCovers reports whether o, in progress at now, covers shard.
func outageCovers(o *store.Outage, now time.Time, shard int) bool {
	if !outageOn(o, now) {
		return false
	}
	_, found := slices.BinarySearch(o.Shards, shard)
	return len(o.Shards) == 0 || found
}

// withheld returns the test a claim applies to each candidate under the
// outage o in progress at now: whether its schedule's shard is paused.
// Nil when nothing is withheld.
func (w *outageWatch) withheld(o *store.Outage, now time.Time) func(scheduleID string) bool {
	if !outageOn(o, now) {
		return nil
	}
	return func(scheduleID string) bool { return outageCovers(o, now, record.ShardOf(scheduleID, w.shards)) }
}

// claimOutage is what a claim at now must do about the outage: all is
// true when it must take nothing; otherwise hold, when not nil, names the
// candidates to leave; until is when the outage ends (zero when none).
func (q *Queue) claimOutage(ctx context.Context, now time.Time) (all bool, hold func(string) bool, until time.Time, err error) {
	o, err := q.outage.current(ctx, q.clock.Now(), now)
	if err != nil && o == nil {
		return false, nil, time.Time{}, err // never read: do not guess
	}
	if !outageOn(o, now) {
		return false, nil, time.Time{}, nil
	}
	return outageAll(o, now), q.outage.withheld(o, now), o.EndsAt, nil
}

// endsOutages cancels, at a node's start, any outage left in progress.
func endsOutages(ctx context.Context, o *Outages) error {
	_, err := o.cancel(ctx, "ended: a node started")
	return err
}

// outageTarget is an outage's target in the audit log.
func outageTarget(id int64) string { return fmt.Sprintf("outage-%d", id) }
