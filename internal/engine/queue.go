package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// ClaimRequest asks for up to Limit occurrences of a tenant's queue.
type ClaimRequest struct {
	TenantID string
	Queue    string
	WorkerID string
	Limit    int           // 1 when zero; at most MaxClaimBatch
	Lease    time.Duration // DefaultClaimLease when zero
	// Wait is how long to wait for an occurrence when none is available
	// (a long poll): the claim returns as soon as one is, and empty when
	// Wait passes. Zero returns at once.
	Wait time.Duration
	// AllTenants claims the queue's work of every ACTIVE tenant, TenantID
	// ignored: a worker pool shared by tenants, served by weight
	// (fair.go). Only an admin may ask for it; the server checks.
	AllTenants bool

	// relay marks the relay's own claims (relay.go): only they may name
	// a target's queue (record.TargetQueue), which no worker can claim.
	relay bool
}

// ErrorClass says what a failed attempt means for its occurrence.
type ErrorClass string

// Error classes of a nack.
const (
	Retryable ErrorClass = "retryable" // network, throttling, 5xx: try again after a backoff
	Permanent ErrorClass = "permanent" // will never succeed: DEAD at once
)

// Queue is the queue: it hands occurrences to workers under a claim lease
// and records how each attempt ended (ack, nack, an expired lease), at
// least once, fenced by the attempt number; it replays and purges the
// dead-letter queue, and reads occurrences and their attempts. Its rules
// are queuerules.go's, called with the node's clock.
type Queue struct {
	retryBudget int // how many of one tenant's occurrences may wait for a retry
	store       store.Store
	clock       clock.Clock // a waiting claim's timer
	log         *slog.Logger
	member      *member // the node's clock (now)
	obs         *observer
	sweeper     *sweeper  // claims end lapsed claim leases themselves
	notify      *notifier // what a waiting claim waits for
	outage      *outageWatch
	tenants     *Tenants  // weights and running quotas
	fair        fairState // pool claims' rounds (fair.go)
	book        *runBook  // the runs this node handed out (runs.go)
}

// now is the time the queue acts on (member.now).
func (q *Queue) now() time.Time { return q.member.now() }

// Claim takes available occurrences of a queue, each under a new attempt
// whose number is the fencing token for its heartbeat, ack and nack.
func (q *Queue) Claim(ctx context.Context, req ClaimRequest) ([]store.Claimed, error) {
	if err := q.checkClaim(&req); err != nil {
		return nil, err
	}
	deadline := q.now().Add(req.Wait)
	for {
		woken := q.notify.wait() // before the claim, so no notification is lost
		now := q.now().Truncate(time.Millisecond)
		var r claimRound
		if req.Wait > 0 {
			onFreshStack(func() { r = q.claimRound(ctx, req, now, deadline) })
		} else {
			r = q.claimRound(ctx, req, now, deadline)
		}
		if r.err != nil {
			return nil, interrupted(ctx, r.err)
		}
		if len(r.got) > 0 || !now.Before(deadline) {
			return r.got, nil
		}
		t := q.clock.NewTimer(r.sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-woken:
			t.Stop()
		case <-t.C():
		}
	}
}

// interrupted is err, from a store call made under ctx, saying so when
// ctx has ended: SQLite answers a call its context interrupts with its own
// "interrupted" error, not the context's, and the transaction it was in
// rolled back. With the context's error wrapped, a caller tells a claim
// cut short (by a shutdown, or the client going away) from a failure.
func interrupted(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && err != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}

// claimRound is what one round of a claim found: the occurrences claimed,
// or how long to sleep before the next round.
type claimRound struct {
	got   []store.Claimed
	sleep time.Duration
	err   error
}

// claimRound claims what is available at now (from the request's tenant,
// or from every tenant by weight for a pool claim) and, when nothing was
// and the deadline is ahead, works out how long to sleep: until the next
// occurrence is due, or the deadline, whichever is first; during a
// simulated outage, until it ends or for outageRefresh, when it is read
// again (another node may cancel it).
func (q *Queue) claimRound(ctx context.Context, req ClaimRequest, now, deadline time.Time) claimRound {
	fail := func(err error) claimRound { return claimRound{err: fmt.Errorf("claim from %s: %w", req.Queue, err)} }
	all, hold, until, err := q.claimOutage(ctx, now)
	if err != nil {
		return fail(err)
	}
	var (
		got     []store.Claimed
		next    time.Time // the earliest occurrence due, for a pool claim
		limited bool      // something other than an empty queue may hold work back
	)
	if !all {
		if err := q.sweeper.maybe(ctx, now); err != nil {
			return claimRound{err: err}
		}
		skipped := 0
		if req.AllTenants {
			_, got, skipped, next, err = q.claimPool(ctx, req, nil, now, hold)
			// Work due and not taken: held back by a quota, or by
			// another claim deciding it.
			limited = !next.IsZero() && !next.After(now)
		} else {
			var maxRunning int64
			if maxRunning, err = q.runningQuota(ctx, req.TenantID); err != nil {
				return fail(err)
			}
			limited = maxRunning > 0
			got, err = claimOccurrences(ctx, q.store, store.ClaimParams{
				TenantID: req.TenantID, Queue: req.Queue, WorkerID: req.WorkerID,
				Limit: req.Limit, Lease: req.Lease, Now: now, Skipped: &skipped, MaxRunning: maxRunning,
			}, hold, q.book)
		}
		if err != nil {
			return fail(err)
		}
		q.obs.observeClaims(now, got, skipped)
		faultinject.Crash(faultinject.ClaimAfterCommit)
	}
	if len(got) > 0 || !now.Before(deadline) {
		return claimRound{got: got}
	}
	sleep := deadline.Sub(now)
	if !until.IsZero() {
		sleep = min(sleep, max(until.Sub(now), time.Millisecond), outageRefresh)
	}
	if !all {
		if !req.AllTenants {
			if next, err = q.store.NextAvailable(ctx, req.TenantID, req.Queue); err != nil {
				return fail(err)
			}
		}
		// Under an outage of some shards, or a running quota, the first
		// one due may be held: one due already and not taken is no reason
		// to wake every millisecond. A quota is freed by an ack, which
		// wakes no one: it is looked at again every quotaRecheck.
		if !next.IsZero() && next.Sub(now) < sleep && (next.After(now) || (hold == nil && !limited)) {
			sleep = max(next.Sub(now), time.Millisecond)
		}
		if limited {
			sleep = min(sleep, quotaRecheck)
		}
	}
	return claimRound{sleep: sleep}
}

// onFreshStack runs f on a new goroutine and waits for it, passing on its
// panic. A claim with a wait parks its goroutine for up to minutes between
// rounds, and a goroutine keeps the stack its deepest call grew: the
// store's calls (SQLite's above all) grow it to tens of kilobytes, which
// thousands of waiting claims would hold for their whole wait. Run here,
// that growth belongs to a goroutine that ends with the round, and its
// stack goes back to the runtime; the parked one stays small. The cost, a
// goroutine per round, is nothing beside the round's transaction.
func onFreshStack(f func()) {
	var (
		p        any
		panicked = true
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer func() {
			if panicked {
				p = recover()
			}
		}()
		f()
		panicked = false
	}()
	<-done
	if panicked {
		panic(p)
	}
}

// checkClaim checks req and fills in its defaults.
func (q *Queue) checkClaim(req *ClaimRequest) error {
	if name, ok := record.QueueTarget(req.Queue); ok && req.relay {
		if err := schedule.CheckTargetName(name); err != nil {
			return err
		}
	} else if err := schedule.CheckQueueRef(req.Queue); err != nil {
		return err
	}
	if err := schedule.CheckWorkerID(req.WorkerID); err != nil {
		return err
	}
	switch {
	case req.Limit == 0:
		req.Limit = 1
	case req.Limit < 0 || req.Limit > MaxClaimBatch:
		return schedule.Invalid("limit", "%d: must be 1 to %d", req.Limit, MaxClaimBatch)
	}
	if err := schedule.SetDuration("lease", &req.Lease, DefaultClaimLease, time.Second, 12*time.Hour); err != nil {
		return err
	}
	if req.Wait < 0 || req.Wait > 5*time.Minute {
		return schedule.Invalid("wait", "%s: must be from 0 to 5m", req.Wait)
	}
	return nil
}

// Heartbeat extends the lease of the current attempt and says whether the
// worker should stop because its schedule was superseded or canceled.
func (q *Queue) Heartbeat(ctx context.Context, tenantID, occurrenceID string, attempt int64, lease time.Duration) (store.HeartbeatResult, error) {
	if err := schedule.SetDuration("lease", &lease, DefaultClaimLease, time.Second, 12*time.Hour); err != nil {
		return store.HeartbeatResult{}, err
	}
	// A heartbeat extends the attempt's lease in its row: a run holding
	// the occurrence is folded first (its other occurrences keep the
	// run's lease, now in their rows).
	if err := q.foldFor(ctx, tenantID, occurrenceID); err != nil {
		return store.HeartbeatResult{}, fmt.Errorf("heartbeat %s attempt %d: %w", occurrenceID, attempt, err)
	}
	r, err := q.store.Heartbeat(ctx, store.HeartbeatParams{
		TenantID: tenantID, OccurrenceID: occurrenceID, Attempt: attempt, Lease: lease,
		Now: q.now().Truncate(time.Millisecond),
	})
	if err != nil {
		q.obs.observeStaleErr(err)
		return r, fmt.Errorf("heartbeat %s attempt %d: %w", occurrenceID, attempt, err)
	}
	return r, nil
}

// Ack records that attempt succeeded. Only the current attempt may ack; a
// repeated ack of the same attempt succeeds again without writing. The
// answer is the whole occurrence after the ack, read in its transaction.
func (q *Queue) Ack(ctx context.Context, tenantID, occurrenceID string, attempt int64) (*record.Occurrence, error) {
	ps := ackParams(tenantID, []AckItem{{OccurrenceID: occurrenceID, Attempt: attempt}}, q.now())
	var (
		rs []store.FinishResult
		o  *record.Occurrence
	)
	err := store.InTx(ctx, q.store, func(tx store.Tx) (err error) {
		rs, o, err = finishOne(ctx, tx, ps, q.book)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ack %s attempt %d: %w", occurrenceID, attempt, err)
	}
	q.obs.observeFinishes(ps, rs)
	if rs[0].Err != nil {
		return nil, fmt.Errorf("ack %s attempt %d: %w", occurrenceID, attempt, rs[0].Err)
	}
	return o, nil
}

// finishOne applies the one finish ps[0] in tx and, when it took, reads
// the whole occurrence after it (a finish's own answer holds only what
// the engine needs, see store.FinishResult).
func finishOne(ctx context.Context, tx store.QueueTx, ps []store.FinishParams, book *runBook) ([]store.FinishResult, *record.Occurrence, error) {
	// A single finish answers with the whole occurrence, which is its
	// row: a run holding it is folded first.
	if err := foldOccurrences(ctx, tx, ps[0].TenantID, []string{ps[0].OccurrenceID}, book); err != nil {
		return nil, nil, fmt.Errorf("fold: %w", err)
	}
	rs, err := tx.FinishAttempts(ctx, ps)
	if err != nil || rs[0].Err != nil {
		return rs, nil, err
	}
	o, err := tx.LockOccurrence(ctx, ps[0].TenantID, ps[0].OccurrenceID)
	if err != nil {
		return nil, nil, fmt.Errorf("read back: %w", err)
	}
	return rs, o, nil
}

// AckItem names one attempt to acknowledge.
type AckItem struct {
	OccurrenceID string
	Attempt      int64
	// TenantID is the occurrence's tenant when it is not the one the
	// ack is made for (a pool worker's acks, one per tenant); "" is that
	// one. The server lets only an admin name another.
	TenantID string
}

// AckBatch acknowledges many attempts in one store transaction; each item
// has its own result (store.FinishResult): an acked item's Occurrence says
// its id, tenant, state and attempt count, and perhaps no more. Ack
// answers with the whole occurrence.
func (q *Queue) AckBatch(ctx context.Context, tenantID string, items []AckItem) ([]store.FinishResult, error) {
	ps := ackParams(tenantID, items, q.now())
	var rs []store.FinishResult
	err := store.InTx(ctx, q.store, func(tx store.Tx) (err error) {
		if err := relax(ctx, tx); err != nil {
			return err
		}
		rs, err = finishTx(ctx, tx, ps, q.book)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ack %d attempts: %w", len(items), err)
	}
	faultinject.Crash(faultinject.AckAfterCommit)
	q.obs.observeFinishes(ps, rs)
	return rs, nil
}

// ackParams are the store finishes that ack items at now.
func ackParams(tenantID string, items []AckItem, now time.Time) []store.FinishParams {
	now = now.Truncate(time.Millisecond)
	ps := make([]store.FinishParams, len(items))
	for i, it := range items {
		t := tenantID
		if it.TenantID != "" {
			t = it.TenantID
		}
		ps[i] = store.FinishParams{
			TenantID: t, OccurrenceID: it.OccurrenceID, Attempt: it.Attempt,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now,
		}
	}
	return ps
}

// Nack records that attempt failed. A permanent failure goes DEAD at once.
// A retryable one is decided by decideRetry from the occurrence, its
// schedule and the tenant's retries waiting, read in the same transaction
// as the write, so nothing can change between the decision and the write:
// CANCELED when the schedule has moved on, DEAD when the occurrence is out
// of attempts, past its deadline, or its tenant is out of retry budget,
// RETRY_WAIT for a backoff otherwise. The answer is the occurrence after
// the nack.
func (q *Queue) Nack(ctx context.Context, tenantID, occurrenceID string, attempt int64, class ErrorClass, message string) (*record.Occurrence, error) {
	rs, o, err := q.nackBatch(ctx, tenantID, []nackItem{{OccurrenceID: occurrenceID, Attempt: attempt, Class: class, Message: message}}, true)
	if err == nil {
		err = rs[0].Err
	}
	if err != nil {
		return nil, fmt.Errorf("nack %s attempt %d: %w", occurrenceID, attempt, err)
	}
	return o, nil
}

// nackItem is one failed attempt of a nackBatch.
type nackItem struct {
	OccurrenceID string
	Attempt      int64
	Class        ErrorClass
	Message      string
	// NotBefore is a floor under the retry's time (a target's
	// Retry-After): a retry is not claimable before it, later when the
	// backoff says so. Zero for none.
	NotBefore time.Time
}

// nackBatch records failed attempts of one tenant in one transaction,
// each decided as Nack decides one; the relay records a batch a target
// refused with it, one commit for the batch. Each item has its own
// result. whole (one item only) also answers with the occurrence after
// the nack.
func (q *Queue) nackBatch(ctx context.Context, tenantID string, items []nackItem, whole bool) ([]store.FinishResult, *record.Occurrence, error) {
	for i := range items {
		if c := items[i].Class; c != Retryable && c != Permanent {
			return nil, nil, schedule.Invalid("class", "%q: want retryable or permanent", c)
		}
		if len(items[i].Message) > 4096 {
			items[i].Message = items[i].Message[:4096]
		}
	}
	now := q.now().Truncate(time.Millisecond)
	ps := make([]store.FinishParams, len(items))
	var (
		rs          []store.FinishResult
		o           *record.Occurrence
		budgetSpent bool
		retries     int
	)
	err := store.InTx(ctx, q.store, func(tx store.Tx) error {
		// A nack decides on the occurrence's row: a run holding it is
		// folded first.
		ids := make([]string, len(items))
		for i := range items {
			ids[i] = items[i].OccurrenceID
		}
		if err := foldOccurrences(ctx, tx, tenantID, ids, q.book); err != nil {
			return fmt.Errorf("fold: %w", err)
		}
		budgetSpent, retries = false, 0
		for i, it := range items {
			p := store.FinishParams{
				TenantID: tenantID, OccurrenceID: it.OccurrenceID, Attempt: it.Attempt,
				Result: record.ResultFailedPermanent, State: record.OccurrenceDead, DeadReason: record.DeadPermanentFailure,
				Error: it.Message, Now: now,
			}
			if it.Class == Retryable {
				f, err := tx.NackFacts(ctx, tenantID, it.OccurrenceID)
				if err != nil {
					return err
				}
				f.RetryWaiting += retries // this batch's retries, not written yet, count against the budget
				d := decideRetry(&f, it.Attempt, now, q.retryBudget)
				if d.State == record.OccurrenceRetryWait {
					if d.RetryAt.Before(it.NotBefore) {
						d.RetryAt = it.NotBefore.Truncate(time.Millisecond)
					}
					retries++
				}
				budgetSpent = budgetSpent || d.BudgetSpent
				p.Result, p.State, p.RetryAt, p.DeadReason = record.ResultFailedRetryable, d.State, d.RetryAt, d.DeadReason
			}
			ps[i] = p
		}
		var err error
		if whole {
			rs, o, err = finishOne(ctx, tx, ps, q.book)
		} else {
			rs, err = finishTx(ctx, tx, ps, q.book)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	q.obs.observeFinishes(ps, rs)
	if budgetSpent {
		q.log.Warn("tenant retry budget spent; failures go to the dead-letter queue",
			"tenant", tenantID, "budget", q.retryBudget)
	}
	if retries > 0 {
		q.notify.broadcast()
	}
	return rs, o, nil
}

// Replay puts a DEAD occurrence back on the queue with the same
// occurrence_id; its next claim is a new attempt, with a fresh set of
// retries.
func (q *Queue) Replay(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error) {
	// A firing of a target that was deleted would wait for a relay that
	// never comes.
	if cur, err := q.Occurrence(ctx, tenantID, occurrenceID); err == nil && cur.State == record.OccurrenceDead {
		if gone, err := targetGone(ctx, q.store, tenantID, cur.Queue); err != nil {
			return nil, fmt.Errorf("replay %s: %w", occurrenceID, err)
		} else if gone {
			name, _ := record.QueueTarget(cur.Queue)
			return nil, fmt.Errorf("occurrence %s's target %q no longer exists; create it again to replay the firing: %w", occurrenceID, name, ErrConflict)
		}
	}
	o, err := ReplayOccurrence(ctx, q.store, tenantID, occurrenceID, q.now().Truncate(time.Millisecond))
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			// One sentence naming the state, like the control plane's
			// conflicts, not the store's message wrapped in ours: the API
			// shows the text before the sentinel to the user as it is.
			state := "not DEAD"
			if cur, gerr := q.Occurrence(ctx, tenantID, occurrenceID); gerr == nil {
				state = string(cur.State)
			}
			return nil, fmt.Errorf("occurrence %s is %s; only a DEAD occurrence can be replayed: %w", occurrenceID, state, ErrConflict)
		}
		return nil, fmt.Errorf("replay %s: %w", occurrenceID, err)
	}
	q.obs.metrics.Replays.Inc()
	q.notify.broadcast()
	return o, nil
}

// Occurrence returns one occurrence of a tenant, as its row says once a
// run holding it is folded.
func (q *Queue) Occurrence(ctx context.Context, tenantID, occurrenceID string) (*record.Occurrence, error) {
	return readOccurrence(ctx, q.store, tenantID, occurrenceID, q.book)
}

// foldFor folds the run holding the tenant's occurrence, if any, so that
// its row says where it stands (foldFor in runs.go).
func (q *Queue) foldFor(ctx context.Context, tenantID, occurrenceID string) error {
	return foldFor(ctx, q.store, tenantID, occurrenceID, q.book)
}

// Occurrences lists a tenant's occurrences, after folding its runs.
func (q *Queue) Occurrences(ctx context.Context, p store.ListOccurrencesParams) ([]record.Occurrence, error) {
	if err := foldTenant(ctx, q.store, p.TenantID, q.book); err != nil {
		return nil, err
	}
	return q.store.ListOccurrences(ctx, p)
}

// Attempts lists a page of the attempts of one occurrence, after folding
// the run holding it.
func (q *Queue) Attempts(ctx context.Context, p store.ListAttemptsParams) ([]record.Attempt, error) {
	if err := q.foldFor(ctx, p.TenantID, p.OccurrenceID); err != nil {
		return nil, err
	}
	return q.store.ListAttempts(ctx, p)
}

// DLQFilter selects a tenant's dead-letter entries; empty fields match all.
type DLQFilter struct {
	TenantID   string
	ScheduleID string
	Queue      string
}

// ReplayDead replays up to limit (1..store.MaxListLimit) of the DEAD
// occurrences f matches, oldest first, each as Replay does (same id, a new
// attempt, a fresh set of retries), and returns their ids, and whether
// more may match (the caller calls again). The page is replayed in one
// transaction with one audit row (ReplayDeadOccurrences), and it is
// idempotent: what it replayed is no longer DEAD, so a call again replays
// only what is still DEAD.
func (q *Queue) ReplayDead(ctx context.Context, f DLQFilter, limit int) (ids []string, more bool, err error) {
	page, err := q.store.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: f.TenantID, ScheduleID: f.ScheduleID,
		Queue: f.Queue, State: record.OccurrenceDead, Limit: limit})
	if err != nil {
		return nil, false, fmt.Errorf("replay the dead-letter queue: %w", err)
	}
	want := make([]string, 0, len(page))
	gone := map[string]bool{} // a target's queue whose target was deleted
	for i := range page {
		queue := page[i].Queue
		g, seen := gone[queue]
		if !seen {
			if g, err = targetGone(ctx, q.store, f.TenantID, queue); err != nil {
				return nil, false, fmt.Errorf("replay the dead-letter queue: %w", err)
			}
			gone[queue] = g
		}
		if !g { // a firing whose target is gone stays DEAD (Replay says why)
			want = append(want, page[i].OccurrenceID)
		}
	}
	// One transaction and one audit row for the page (audit.go).
	ids, err = ReplayDeadOccurrences(ctx, q.store, f, want, q.now().Truncate(time.Millisecond))
	if err != nil {
		return nil, false, err
	}
	if len(ids) > 0 {
		q.obs.metrics.Replays.Add(float64(len(ids)))
		q.notify.broadcast()
	}
	// A page of firings whose targets are gone alone replays nothing and
	// would be read again: more stops there.
	return ids, len(page) == limit && len(want) > 0, nil
}

// PurgeDead takes up to limit (1..store.MaxListLimit) of the DEAD
// occurrences f matches out of the dead-letter queue: each becomes
// CANCELED, keeping its dead reason and attempts as history. It returns
// how many, and whether more may match (the caller calls again).
func (q *Queue) PurgeDead(ctx context.Context, f DLQFilter, limit int) (int, bool, error) {
	n, err := PurgeDead(ctx, q.store, store.PurgeDeadParams{TenantID: f.TenantID, ScheduleID: f.ScheduleID, Queue: f.Queue,
		Now: q.now().Truncate(time.Millisecond), Limit: limit})
	if err != nil {
		return 0, false, fmt.Errorf("purge the dead-letter queue: %w", err)
	}
	q.obs.metrics.Purged.Add(float64(n))
	return n, n == limit, nil
}
