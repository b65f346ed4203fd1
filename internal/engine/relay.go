package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/target"
)

// The relay delivers the firings of schedules that name a target. A
// target's firings wait in a queue of their own (record.TargetQueue), put
// there by the planner's transaction like any firing: that queue is the
// outbox. The relay claims from it as a worker would, with the same claim,
// lease and attempt number, hands each batch to the target's Sender, and
// records each outcome as the queue's ack or nack. So everything the queue
// promises holds for targets without being written again: at least once
// under the occurrence id, the attempt as fencing token, retries with the
// schedule's backoff, DEAD with the reason, replay by the same id,
// overlap policies and quotas at claim.
//
// A crash between a target's acceptance and the ack leaves the claim to
// expire; the firing is claimed again under a new attempt and sent again
// under the same occurrence id, which the target drops as a duplicate
// (JetStream's duplicate window) or the receiver deduplicates (a
// webhook's webhook-id). Two nodes never send one attempt: the claim is
// the fence, and an ack from a node whose lease ran out is refused.
//
// Every node runs the relay for every target, relayWorkers claim loops
// each: a target's firings are spread over the nodes by their claims, as a
// queue's are over its workers. A target that takes nothing is backed off
// as a whole (breaker): one probe of one firing at a time, a doubling
// pause between probes, so a failing endpoint costs no more than its
// probes, and never holds another target's loops or the built-in queue's
// workers.

const (
	relayBatch   = 1000             // firings one claim takes
	relayWorkers = 8                // claim loops per target per node: enough that claims and sends overlap
	relayLease   = 60 * time.Second // the claim lease; a batch's send ends relaySendMargin before it
	relayWait    = 5 * time.Second  // a claim's long poll when the target's queue is empty
	relayRefresh = 2 * time.Second  // how often the list of targets is read again
	// relaySendMargin is kept of the lease for recording a batch's
	// outcomes after its send.
	relaySendMargin = 10 * time.Second
	relayBreakMin   = time.Second // the first pause after a batch with no delivery
	relayBreakMax   = time.Minute // the longest pause between probes
)

// relay runs the claim loops of every target this node knows.
type relay struct {
	queue  *Queue
	store  store.Store
	kinds  TargetKinds
	clock  clock.Clock
	log    *slog.Logger
	worker string        // the worker id of the relay's claims
	lease  time.Duration // the claims' lease: relayLease but in tests
}

// targetKey names one version of a target: a changed target is served by
// new loops with a new sender.
type targetKey struct {
	tenantID, name string
	version        int64
}

// run keeps one set of loops per target until ctx ends.
func (r *relay) run(ctx context.Context) {
	type running struct {
		cancel context.CancelFunc
		done   chan struct{}
	}
	loops := map[targetKey]running{}
	defer func() {
		for _, l := range loops {
			l.cancel()
			<-l.done
		}
	}()
	for {
		tgs, err := r.store.ListTargets(ctx, "")
		if err != nil && ctx.Err() == nil {
			r.log.Warn("relay: list targets", "err", err)
		}
		if err == nil {
			want := make(map[targetKey]record.Target, len(tgs))
			for _, tg := range tgs {
				want[targetKey{tg.TenantID, tg.Name, tg.Version}] = tg
			}
			for k, l := range loops {
				if _, ok := want[k]; !ok {
					l.cancel()
					<-l.done
					delete(loops, k)
				}
			}
			for k, tg := range want {
				if _, ok := loops[k]; ok {
					continue
				}
				lctx, cancel := context.WithCancel(ctx)
				l := running{cancel: cancel, done: make(chan struct{})}
				loops[k] = l
				go func() {
					defer close(l.done)
					r.serve(lctx, tg)
				}()
			}
		}
		if !sleepCtx(ctx, r.clock, relayRefresh) {
			return
		}
	}
}

// serve delivers one target's firings with relayWorkers claim loops
// sharing one sender and one breaker, until ctx ends.
func (r *relay) serve(ctx context.Context, tg record.Target) {
	log := r.log.With("tenant", tg.TenantID, "target", tg.Name)
	var s target.Sender
	for {
		var err error
		if s, err = r.kinds.Open(tg); err == nil {
			break
		}
		log.Warn("relay: open target; trying again", "err", err)
		if !sleepCtx(ctx, r.clock, relayBreakMax) {
			return
		}
	}
	defer s.Close()
	b := newBreaker(r.clock)
	var wg sync.WaitGroup
	for range relayWorkers {
		wg.Go(func() { r.loop(ctx, tg, s, b, log) })
	}
	wg.Wait()
}

// loop claims a batch, sends it and records the outcomes, the deliveries'
// acks carried by the next claim, until ctx ends; then it acks what it
// delivered last.
func (r *relay) loop(ctx context.Context, tg record.Target, s target.Sender, b *breaker, log *slog.Logger) {
	var acks []AckItem
	defer func() {
		if len(acks) == 0 {
			return
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := r.queue.AckBatch(fctx, tg.TenantID, acks); err != nil {
			log.Warn("relay: ack the last deliveries; they will be sent again", "n", len(acks), "err", err)
		}
	}()
	req := r.claimRequest(tg)
	for ctx.Err() == nil {
		if len(acks) > 0 && !b.open() {
			// This loop may wait now, past the claims' lease: its acks
			// are committed on their own rather than by the next claim.
			if _, err := r.queue.AckBatch(ctx, tg.TenantID, acks); err != nil && ctx.Err() == nil {
				log.Warn("relay: ack deliveries; they will be sent again", "n", len(acks), "err", err)
			}
			acks = nil
		}
		limit, probe, ok := b.admit(ctx)
		if !ok {
			return
		}
		req.Limit = limit
		next, claimed, delivered, err := r.batch(ctx, s, req, acks)
		if err == nil && claimed > 0 {
			b.record(delivered > 0)
		}
		b.release(probe)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// The acks were not committed: their firings come back after
			// the lease and are sent again under the same ids.
			log.Warn("relay: claim", "err", err)
			acks = nil
			if !sleepCtx(ctx, r.clock, relayBreakMin) {
				return
			}
			continue
		}
		acks = next
	}
}

// claimRequest is the relay's claim of a target's firings.
func (r *relay) claimRequest(tg record.Target) ClaimRequest {
	return ClaimRequest{TenantID: tg.TenantID, Queue: record.TargetQueue(tg.Name), WorkerID: r.worker,
		Limit: relayBatch, Lease: r.lease, Wait: relayWait, relay: true}
}

// batch acks acks and claims the target's next firings (req) in one
// transaction, sends them and records each one the target did not take
// (fail). It returns the acks of those it took, for the next claim to
// carry, how many it claimed and how many were delivered. On an error
// nothing was claimed and acks were not committed.
func (r *relay) batch(ctx context.Context, s target.Sender, req ClaimRequest, acks []AckItem) (next []AckItem, claimed, delivered int, err error) {
	_, got, err := r.queue.AckAndClaim(ctx, req, acks)
	if err != nil || len(got) == 0 {
		return nil, 0, 0, err
	}
	fs := make([]target.Firing, len(got))
	for i, c := range got {
		o := &c.Occurrence
		fs[i] = target.Firing{OccurrenceID: o.OccurrenceID, TenantID: o.TenantID, ScheduleID: o.ScheduleID,
			ScheduleVersion: o.ScheduleVersion, ScheduledFor: o.ScheduledFor, Attempt: c.Attempt.Attempt, Payload: c.Payload}
	}
	// Every outcome is recorded while the claims' lease still holds: a
	// firing not sent by then is a retryable failure, never one another
	// loop or node claims while it is still being sent.
	sctx, cancel := context.WithTimeout(ctx, r.lease-min(relaySendMargin, r.lease/4))
	outs := s.Send(sctx, fs)
	cancel()
	faultinject.Crash(faultinject.RelayAfterSend)
	next = make([]AckItem, 0, len(fs))
	var failed []nackItem
	for i, o := range outs {
		f := &fs[i]
		if o.Delivered() {
			next = append(next, AckItem{OccurrenceID: f.OccurrenceID, Attempt: f.Attempt})
			continue
		}
		failed = append(failed, r.failure(f, o))
	}
	if len(failed) > 0 {
		r.log.Warn("relay: the target did not take firings", "tenant", req.TenantID, "queue", req.Queue,
			"failed", len(failed), "of", len(fs), "first_error", failed[0].Message)
		// One transaction for the batch's failures. Not recorded, they
		// come back when the claims' lease ends.
		if _, _, err := r.queue.nackBatch(ctx, req.TenantID, failed, false); err != nil && ctx.Err() == nil {
			r.log.Warn("relay: record failed deliveries; they come back after the lease",
				"tenant", req.TenantID, "queue", req.Queue, "n", len(failed), "err", err)
		}
	}
	return next, len(fs), len(next), nil
}

// failure is the nack of a firing the target did not take: permanent
// when the target refused it for good, with the target's Retry-After as
// the floor of the retry's time.
func (r *relay) failure(f *target.Firing, o target.Outcome) nackItem {
	it := nackItem{OccurrenceID: f.OccurrenceID, Attempt: f.Attempt, Class: Retryable, Message: o.Err.Error()}
	if o.Permanent {
		it.Class = Permanent
	}
	if o.RetryAfter > 0 {
		it.NotBefore = r.queue.now().Add(o.RetryAfter)
	}
	return it
}

// breaker lets a target's loops claim full batches only while the target
// is known to take firings. A target starts unproven: one loop probes it
// with a claim of one firing while the others wait. A delivery proves it,
// and every loop claims full batches. A batch with no delivery unproves
// it and starts a pause, doubling from relayBreakMin to relayBreakMax,
// after which one loop probes again. So a target that refuses everything
// costs a probe a pause, not a batch a loop, and its firings wait in its
// queue with their attempts unspent.
type breaker struct {
	clock clock.Clock

	mu      sync.Mutex
	proven  bool          // the last batch sent delivered something
	failed  int           // batches in a row with no delivery
	until   time.Time     // no probe before this
	probing bool          // a loop holds the probe
	changed chan struct{} // closed, and replaced, at every change
}

func newBreaker(c clock.Clock) *breaker { return &breaker{clock: c, changed: make(chan struct{})} }

// admit waits until a loop may claim, and says how many firings: a full
// batch while the target is proven, else one, as the probe (probe true).
// It returns ok false when ctx ends.
func (b *breaker) admit(ctx context.Context) (limit int, probe, ok bool) {
	for {
		b.mu.Lock()
		if b.proven {
			b.mu.Unlock()
			return relayBatch, false, true
		}
		now := b.clock.Now()
		if !b.probing && !now.Before(b.until) {
			b.probing = true
			b.mu.Unlock()
			return 1, true, true
		}
		wait, changed := b.until.Sub(now), b.changed
		b.mu.Unlock()
		var (
			timer   clock.Timer
			timeout <-chan time.Time // nil: wait for a change alone
		)
		if wait > 0 {
			timer = b.clock.NewTimer(wait)
			timeout = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-timeout:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return 0, false, false
		}
	}
}

// open reports whether every loop may claim a full batch (the target is
// proven) without waiting.
func (b *breaker) open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proven
}

// release ends a loop's turn; the probe's holder gives it up, for the
// next loop to take when record found nothing to go on.
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	b.signal()
}

// record counts a batch sent: a delivery proves the target, a batch with
// none unproves it and pauses the next probe, doubling the pause.
func (b *breaker) record(delivered bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if delivered {
		b.proven, b.failed, b.until = true, 0, time.Time{}
	} else {
		b.proven = false
		b.failed++
		b.until = b.clock.Now().Add(min(relayBreakMin<<min(b.failed-1, 10), relayBreakMax))
	}
	b.signal()
}

// signal wakes the loops waiting in admit; b.mu is held.
func (b *breaker) signal() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// sleepCtx waits d on c, or until ctx ends; it reports whether ctx is
// still alive.
func sleepCtx(ctx context.Context, c clock.Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
