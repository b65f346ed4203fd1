package engine

import (
	"context"
	"errors"
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
// queue's are over its workers. A target whose every delivery fails is
// backed off as a whole: after relayBreakAfter batches in a row with none
// delivered, its loops stop claiming for a doubling pause (up to
// relayBreakMax), and then one loop probes with a claim of one firing; a
// delivery closes the breaker. A failing endpoint thus holds no more than
// its own loops, never another target's or the built-in queue's workers.

const (
	relayBatch      = 1000             // firings one claim takes
	relayWorkers    = 4                // claim loops per target per node
	relayLease      = 60 * time.Second // the claim lease: longer than a Send's worst case
	relayWait       = 5 * time.Second  // a claim's long poll when the target's queue is empty
	relayRefresh    = 2 * time.Second  // how often the list of targets is read again
	relayBreakAfter = 3                // batches in a row with no delivery that open the breaker
	relayBreakMin   = time.Second
	relayBreakMax   = time.Minute
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
	b := &breaker{clock: r.clock}
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
		limit, ok := b.admit(ctx)
		if !ok {
			return
		}
		req.Limit = limit
		next, claimed, delivered, err := r.batch(ctx, s, req, acks)
		b.release()
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
		if claimed > 0 {
			b.record(delivered > 0)
		}
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
	outs := s.Send(ctx, fs)
	faultinject.Crash(faultinject.RelayAfterSend)
	next = make([]AckItem, 0, len(fs))
	for i, o := range outs {
		f := &fs[i]
		if o.Delivered() {
			next = append(next, AckItem{OccurrenceID: f.OccurrenceID, Attempt: f.Attempt})
			continue
		}
		r.fail(ctx, f, o)
	}
	return next, len(fs), len(next), nil
}

// fail records a firing the target did not take: a nack, permanent when
// the target refused it for good, with the target's Retry-After as the
// floor of the retry's time.
func (r *relay) fail(ctx context.Context, f *target.Firing, o target.Outcome) {
	class := Retryable
	if o.Permanent {
		class = Permanent
	}
	var notBefore time.Time
	if o.RetryAfter > 0 {
		notBefore = r.queue.now().Add(o.RetryAfter)
	}
	if _, err := r.queue.nack(ctx, f.TenantID, f.OccurrenceID, f.Attempt, class, o.Err.Error(), notBefore); err != nil &&
		!errors.Is(err, context.Canceled) {
		// The claim's lease ends it instead: the firing comes back.
		r.log.Warn("relay: record a failed delivery", "tenant", f.TenantID, "occurrence_id", f.OccurrenceID, "attempt", f.Attempt, "err", err)
	}
}

// breaker backs a failing target off as a whole (see the relay's
// comment above).
type breaker struct {
	clock clock.Clock

	mu      sync.Mutex
	failed  int       // batches in a row with no delivery
	until   time.Time // no claim before this while open
	probing bool      // one loop holds the probe
}

// admit waits until a loop may claim, and says how many firings: a full
// batch while the breaker is closed, one for the probe once its pause is
// over. It returns false when ctx ends.
func (b *breaker) admit(ctx context.Context) (int, bool) {
	for {
		b.mu.Lock()
		now := b.clock.Now()
		switch {
		case b.failed < relayBreakAfter:
			b.mu.Unlock()
			return relayBatch, true
		case !now.Before(b.until) && !b.probing:
			b.probing = true
			b.mu.Unlock()
			return 1, true
		}
		wait := b.until.Sub(now)
		if wait <= 0 {
			wait = relayBreakMin // another loop holds the probe
		}
		b.mu.Unlock()
		if !sleepCtx(ctx, b.clock, wait) {
			return 0, false
		}
	}
}

// release ends a loop's turn: the probe, if it held it, is given up
// (record has counted what it found).
func (b *breaker) release() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// record counts a batch sent: a delivery closes the breaker, a batch with
// none counts toward opening it, and each one past the threshold doubles
// the pause.
func (b *breaker) record(delivered bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if delivered {
		b.failed, b.until = 0, time.Time{}
		return
	}
	b.failed++
	if n := b.failed - relayBreakAfter; n >= 0 {
		pause := relayBreakMax
		if n < 6 {
			pause = min(relayBreakMin<<n, relayBreakMax)
		}
		b.until = b.clock.Now().Add(pause)
	}
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
