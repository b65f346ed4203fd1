package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// The queue's rules, written once for every store: what a claim takes,
// skips or leaves waiting (overlap), what an expired lease leads to, what a
// retryable nack leads to, and what a replay and a purge of the dead-letter
// queue write. Each is a function of a store and a time (the caller's
// clock: these functions never read one), composed from the statements of
// store.QueueTx in one transaction. The Queue's methods call them with
// the node's clock; the conformance suite (internal/store/storetest)
// calls them on every store.

// lanes in the order claims serve them: strict capacity is never taken by
// the other lanes.
var lanes = [...]record.Lane{record.LaneStrict, record.LaneFlexible, record.LaneCatchUp}

// ClaimOccurrences takes up to p.Limit available occurrences of the
// tenant's queue in one transaction (see store.ClaimParams). Candidates
// come lane by lane, strict, flexible, catch-up, oldest available_at
// first, and the overlap rule (decideOverlap) claims, skips or leaves each.
// When the rule leaves the batch short, the lane is read further, so
// waiting queue_one occurrences never block the ones behind them. The
// occurrences marked SKIPPED_OVERLAP are added to *p.Skipped once the
// claim has committed.
func ClaimOccurrences(ctx context.Context, st store.Store, p store.ClaimParams) ([]store.Claimed, error) {
	return claimOccurrences(ctx, st, p, nil, nil)
}

// claimOccurrences is ClaimOccurrences leaving the candidates hold names
// (nil: none) on the queue, untouched: a simulated outage of some shards
// withholds their occurrences (outage.go).
func claimOccurrences(ctx context.Context, st store.Store, p store.ClaimParams, hold func(scheduleID string) bool, book *runBook) ([]store.Claimed, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	var (
		out     []store.Claimed
		skipped int
	)
	err := store.InTx(ctx, st, func(tx store.Tx) (err error) {
		out, skipped, err = claimTx(ctx, tx, p, hold, book)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", p.Queue, err)
	}
	addSkipped(p, skipped)
	return out, nil
}

// FinishAndClaim applies the finishes fs as store.Store.FinishAttempts
// does and then claims as ClaimOccurrences does, in one transaction: one
// commit where the two calls pay two. The claim sees the finishes (an
// occurrence just acked no longer counts as RUNNING for overlap). A store
// error fails both and writes nothing; a bad claim request fails before
// anything is written.
func FinishAndClaim(ctx context.Context, st store.Store, fs []store.FinishParams, p store.ClaimParams) ([]store.FinishResult, []store.Claimed, error) {
	return finishAndClaim(ctx, st, fs, p, nil, nil)
}

// finishAndClaim is FinishAndClaim whose claim leaves the candidates hold
// names, as claimOccurrences does.
func finishAndClaim(ctx context.Context, st store.Store, fs []store.FinishParams, p store.ClaimParams, hold func(string) bool, book *runBook) ([]store.FinishResult, []store.Claimed, error) {
	if err := p.Check(); err != nil {
		return nil, nil, fmt.Errorf("finish and claim: %w", err)
	}
	var (
		res     []store.FinishResult
		out     []store.Claimed
		skipped int
	)
	err := store.InTx(ctx, st, func(tx store.Tx) (err error) {
		if res, err = finishTx(ctx, tx, fs, book); err != nil {
			return fmt.Errorf("finish attempts: %w", err)
		}
		if out, skipped, err = claimTx(ctx, tx, p, hold, book); err != nil {
			return fmt.Errorf("claim %s: %w", p.Queue, err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("finish and claim: %w", err)
	}
	addSkipped(p, skipped)
	return res, out, nil
}

// addSkipped adds n to *p.Skipped, when the caller asked for the count.
func addSkipped(p store.ClaimParams, n int) {
	if p.Skipped != nil {
		*p.Skipped += n
	}
}

// candidatePool holds candidate buffers between claims: a batch of 1000
// candidates is a quarter of a megabyte, which allocated afresh per read
// was a seventh of a claim's CPU.
var candidatePool = sync.Pool{New: func() any { return new([]store.ClaimCandidate) }}

// withheldRead is the least a claim reads at once while some shards'
// occurrences are withheld from it.
const withheldRead = 256

// claimTx is the claim of ClaimOccurrences within tx: per lane, a read of
// candidates with their facts, the overlap decision, and at most two
// writes (the skips, the claims). When every candidate's policy is allow,
// a round is the read and the claim's write alone. It also returns how
// many occurrences it marked SKIPPED_OVERLAP. Candidates hold names (nil:
// none) are left as they are, neither claimed nor skipped, and reads are
// then at least withheldRead long, so that a run of them costs few reads.
func claimTx(ctx context.Context, tx store.QueueTx, p store.ClaimParams, hold func(string) bool, book *runBook) ([]store.Claimed, int, error) {
	return claimTenantTx(ctx, tx, p, hold, false, book)
}

// claimTenantTx is claimTx, for one of the tenants of a pool claim when
// pool is set (the running quota's count then never waits).
func claimTenantTx(ctx context.Context, tx store.QueueTx, p store.ClaimParams, hold func(string) bool, pool bool, book *runBook) ([]store.Claimed, int, error) {
	buf := candidatePool.Get().(*[]store.ClaimCandidate)
	used := 0
	defer func() {
		clear((*buf)[:used]) // no payload or id outlives its claim in the pool
		candidatePool.Put(buf)
	}()
	var (
		out         []store.Claimed
		skipped     int
		claim, skip []*store.ClaimCandidate
		rows        []*store.ClaimCandidate
		w           = store.ClaimWrite{WorkerID: p.WorkerID, Now: p.Now, Lease: p.Lease}
	)
	// The run path is the node's (book set): the exported rules of a
	// store and a time claim row by row, as the conformance suite drives
	// them.
	rt, runs := runsOf(tx)
	runs = runs && book != nil
	limit := p.Limit
	if p.MaxRunning > 0 {
		// The running quota, counted in this transaction: what it
		// claims is counted by the next claim, on any node. A claim of
		// many tenants does not wait for another's count (pool), and
		// takes nothing of a tenant another claim is counting.
		running, held, err := tx.CountRunning(ctx, p.TenantID, !pool)
		if err != nil {
			return nil, 0, fmt.Errorf("running quota: %w", err)
		}
		if !held {
			return nil, 0, nil
		}
		leased, err := runningInRuns(ctx, tx, p.TenantID)
		if err != nil {
			return nil, 0, fmt.Errorf("running quota: %w", err)
		}
		limit = int(min(int64(limit), max(p.MaxRunning-running-leased, 0)))
	}
	for _, lane := range lanes {
		var (
			after store.CandidatePos
			lr    *laneRun
		)
		if runs {
			// A run takes the lane from its head: what lies before it
			// is held by runs not yet folded.
			lr = &laneRun{lane: store.Lane{TenantID: p.TenantID, Queue: p.Queue, Lane: lane}}
			head, held, err := rt.LaneHead(ctx, lr.lane, !pool)
			if err != nil {
				return nil, 0, fmt.Errorf("read %s lane head: %w", lane, err)
			}
			if !held {
				continue // another claim holds it: a later claim takes it
			}
			after = head
		}
		for len(out) < limit {
			want := limit - len(out)
			read := want
			if hold != nil {
				read = max(want, withheldRead)
			}
			cands, err := tx.ClaimCandidates(ctx, store.CandidateRead{TenantID: p.TenantID, Queue: p.Queue, Lane: lane,
				Now: p.Now, After: after, Limit: read}, (*buf)[:0])
			if cap(cands) > cap(*buf) {
				*buf = cands[:0]
			}
			used = max(used, len(cands))
			if err != nil {
				return nil, 0, fmt.Errorf("read %s lane: %w", lane, err)
			}
			short := len(cands) < read // the lane has no more
			if len(cands) > 0 {
				after = cands[len(cands)-1].After()
			}
			if hold != nil {
				cands = slices.DeleteFunc(cands, func(c store.ClaimCandidate) bool {
					if hold(c.Occurrence.ScheduleID) && lr != nil {
						lr.left = append(lr.left, posOf(&c))
					}
					return hold(c.Occurrence.ScheduleID)
				})
			}
			claim, skip = decideOverlap(cands, want, claim[:0], skip[:0])
			if len(skip) > 0 {
				if err := tx.SkipOverlap(ctx, p.Now, skip); err != nil {
					return nil, 0, fmt.Errorf("skip overlapping: %w", err)
				}
				skipped += len(skip)
			}
			if len(claim) > 0 && out == nil {
				// One allocation rather than append's doublings, up to
				// a batch the engine allows.
				out = make([]store.Claimed, 0, min(p.Limit, 1024))
			}
			if lr == nil {
				if len(claim) > 0 {
					if out, err = tx.ClaimRows(ctx, w, claim, out); err != nil {
						return nil, 0, fmt.Errorf("claim rows: %w", err)
					}
				}
			} else if out, err = leaseClaimed(ctx, tx, lr, w, cands, claim, skip, rows[:0], out); err != nil {
				return nil, 0, err
			}
			if short {
				break
			}
		}
		if lr != nil {
			if err := commitRun(ctx, rt, lr, w, book); err != nil {
				return nil, 0, fmt.Errorf("lease a run of the %s lane: %w", lane, err)
			}
		}
	}
	return out, skipped, nil
}

// leaseClaimed delivers claim, decided from cands, on the run path: the
// allow-policy ones join lr's run with no write, the others are claimed
// row by row (ClaimRows); out keeps claim's order. The candidates neither
// claimed nor skipped are noted in lr as passed over.
func leaseClaimed(ctx context.Context, tx store.QueueTx, lr *laneRun, w store.ClaimWrite, cands []store.ClaimCandidate,
	claim, skip, rows []*store.ClaimCandidate, out []store.Claimed) ([]store.Claimed, error) {
	taken := make(map[*store.ClaimCandidate]bool, len(claim)+len(skip))
	for _, c := range skip {
		taken[c] = true
	}
	start := len(out)
	for _, c := range claim {
		taken[c] = true
		if c.Occurrence.OverlapPolicy != record.OverlapAllow {
			rows = append(rows, c)
			continue
		}
		d := store.Delivery(c, w)
		lr.leased = append(lr.leased, posOf(c))
		lr.ids = append(lr.ids, c.Occurrence.OccurrenceID)
		lr.tries = append(lr.tries, d.Attempt.Attempt)
		out = append(out, d)
	}
	if len(rows) > 0 {
		var err error
		if out, err = tx.ClaimRows(ctx, w, rows, out); err != nil {
			return nil, fmt.Errorf("claim rows: %w", err)
		}
		// Back into claim's order: the rows' deliveries were appended
		// after the leased ones.
		byID := make(map[string]store.Claimed, len(out)-start)
		for _, d := range out[start:] {
			byID[d.Occurrence.OccurrenceID] = d
		}
		for i, c := range claim {
			out[start+i] = byID[c.Occurrence.OccurrenceID]
		}
	}
	for i := range cands {
		if !taken[&cands[i]] {
			lr.left = append(lr.left, posOf(&cands[i]))
		}
	}
	return out, nil
}

// decideOverlap decides the candidates of one read, in order, at most
// want of them claimed: it appends those to claim and those to mark
// SKIPPED_OVERLAP to skip, and leaves the rest waiting. The rule, for a
// candidate's overlap policy, while its schedule has an occurrence RUNNING
// (one read as RUNNING, or one claimed earlier in this batch):
//
//   - allow: claimed whatever runs;
//   - skip_if_running: skipped;
//   - queue_one: the schedule's earliest pending occurrence (by
//     scheduled_for, version, trigger key) waits; the others are skipped.
//
// With nothing RUNNING every candidate is claimed. A candidate whose
// schedule another transaction is deciding right now (Contended) waits for
// a later claim. Once the batch is full the rest wait, skipped or not.
func decideOverlap(cands []store.ClaimCandidate, want int, claim, skip []*store.ClaimCandidate) ([]*store.ClaimCandidate, []*store.ClaimCandidate) {
	allow := true
	for i := range cands {
		if cands[i].Occurrence.OverlapPolicy != record.OverlapAllow {
			allow = false
			break
		}
	}
	if allow { // the fast path: no facts to weigh
		for i := range cands[:min(len(cands), want)] {
			claim = append(claim, &cands[i])
		}
		return claim, skip
	}
	// What this read's decisions changed: the schedules with an occurrence
	// claimed, and each schedule's occurrences taken off its pending ones
	// (claimed or skipped).
	claimedOf := map[string]bool{}
	takenOf := map[string][]*record.Occurrence{}
	take := func(c *store.ClaimCandidate) {
		sid := c.Occurrence.ScheduleID
		takenOf[sid] = append(takenOf[sid], &c.Occurrence)
	}
	for i := range cands {
		if len(claim) >= want {
			break
		}
		c := &cands[i]
		o := &c.Occurrence
		if o.OverlapPolicy == record.OverlapAllow {
			claim = append(claim, c)
			claimedOf[o.ScheduleID] = true
			take(c)
			continue
		}
		if c.Contended {
			continue // another claim decides this schedule's overlap now
		}
		if !c.Running && !claimedOf[o.ScheduleID] {
			claim = append(claim, c)
			claimedOf[o.ScheduleID] = true
			take(c)
			continue
		}
		if o.OverlapPolicy == record.OverlapQueueOne && pendingBefore(c, takenOf[o.ScheduleID]) == 0 {
			continue // the one that waits
		}
		skip = append(skip, c)
		take(c)
	}
	return claim, skip
}

// pendingBefore is c's count of its schedule's pending occurrences ordered
// before it, less those of taken (taken off the pending ones since the
// count was read).
func pendingBefore(c *store.ClaimCandidate, taken []*record.Occurrence) int {
	n := c.PendingBefore
	for _, t := range taken {
		if pendingOrder(t, &c.Occurrence) < 0 {
			n--
		}
	}
	return n
}

// pendingOrder orders a schedule's pending occurrences, earliest first:
// by scheduled time, then version, then trigger key (a manual occurrence of
// the same second and version comes after the firing).
func pendingOrder(a, b *record.Occurrence) int {
	return cmp.Or(a.ScheduledFor.Compare(b.ScheduledFor), cmp.Compare(a.ScheduleVersion, b.ScheduleVersion),
		cmp.Compare(a.TriggerKey, b.TriggerKey))
}

// movedOn says whether an occurrence of version occVersion is one its
// schedule, at version and state, has moved on from: the schedule has a
// newer version, or it was canceled. The heartbeat tells the occurrence's
// worker to stop in exactly these cases, and such an occurrence is never
// retried.
func movedOn(version int64, state record.ScheduleState, occVersion int64) bool {
	return version > occVersion || state == record.ScheduleCanceled
}

// ExpireLeases ends up to limit attempts whose lease ran out at or before
// now, oldest lease first, in one transaction, and counts what it did.
// Each attempt gets result LEASE_EXPIRED; expiredEnd decides what becomes
// of its occurrence.
func ExpireLeases(ctx context.Context, st store.Store, now time.Time, limit int) (store.ExpireResult, error) {
	return expireLeases(ctx, st, now, limit, nil)
}

// expireLeases is ExpireLeases, which first folds the runs whose lease
// ran out (runs.go): their unacked occurrences are then expired attempts
// like any other.
func expireLeases(ctx context.Context, st store.Store, now time.Time, limit int, book *runBook) (store.ExpireResult, error) {
	if limit <= 0 {
		return store.ExpireResult{}, fmt.Errorf("expire leases: limit %d: want a positive limit", limit)
	}
	var res store.ExpireResult
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		res = store.ExpireResult{}
		if err := foldExpired(ctx, tx, now, 16, book); err != nil {
			return fmt.Errorf("fold expired runs: %w", err)
		}
		exp, err := tx.ExpiredAttempts(ctx, now, limit)
		if err != nil {
			return err
		}
		if len(exp) == 0 {
			return nil
		}
		ends := make([]store.ExpiredEnd, len(exp))
		for i := range exp {
			ends[i] = expiredEnd(&exp[i], now)
			switch ends[i].State {
			case record.OccurrenceCanceled:
				res.Canceled++
			case record.OccurrenceDead:
				res.Dead++
				if ends[i].DeadReason == record.DeadAttemptsExhausted {
					res.DeadAttempts++
				} else {
					res.DeadDeadline++
				}
			default:
				res.Requeued++
			}
		}
		res.Expired = len(ends)
		return tx.EndExpired(ctx, now, ends)
	})
	if err != nil {
		return store.ExpireResult{}, fmt.Errorf("expire leases: %w", err)
	}
	return res, nil
}

// expiredEnd decides what an expired attempt's occurrence becomes, in
// this order of precedence:
//
//   - CANCELED when its schedule has moved on (movedOn): such an
//     occurrence is never retried;
//   - DEAD, attempts_exhausted, when its attempts since the last replay
//     have reached the retry policy's max attempts;
//   - DEAD, deadline_passed, when its retry deadline (retry_from +
//     deadline) is at or before now;
//   - ENQUEUED, claimable again at now, otherwise (a redelivery).
func expiredEnd(x *store.ExpiredAttempt, now time.Time) store.ExpiredEnd {
	end := store.ExpiredEnd{OccurrenceID: x.OccurrenceID, Attempt: x.Attempt, State: record.OccurrenceEnqueued}
	switch {
	case movedOn(x.ScheduleVersion, x.ScheduleState, x.OccurrenceVersion):
		end.State = record.OccurrenceCanceled
	case x.Attempt-int64(x.AttemptFloor) >= int64(x.Retry.MaxAttempts):
		end.State, end.DeadReason = record.OccurrenceDead, record.DeadAttemptsExhausted
	case !now.Before(x.RetryFrom.Add(x.Retry.Deadline)):
		end.State, end.DeadReason = record.OccurrenceDead, record.DeadDeadlinePassed
	}
	return end
}

// retryDecision is what a retryable failure of an attempt does to its
// occurrence (decideRetry).
type retryDecision struct {
	State      record.OccurrenceState
	RetryAt    time.Time
	DeadReason record.DeadReason
	// BudgetSpent: DEAD because the tenant's retry budget is spent.
	BudgetSpent bool
}

// decideRetry decides what a retryable failure of attempt does to its
// occurrence, from the facts read in the nack's transaction: CANCELED when
// the schedule has moved on (checked first: such an occurrence is never
// retried); DEAD when its attempts since the last replay reach the retry
// policy's max attempts (attempts_exhausted), when the next try would
// come after its retry deadline (deadline_passed), or when the tenant
// already has budget occurrences waiting to retry
// (retry_budget_exhausted); otherwise RETRY_WAIT until now plus the
// backoff.
func decideRetry(f *store.NackFacts, attempt int64, now time.Time, budget int) retryDecision {
	o := &f.Occurrence
	if movedOn(f.ScheduleVersion, f.ScheduleState, o.ScheduleVersion) {
		return retryDecision{State: record.OccurrenceCanceled}
	}
	r := f.Retry
	n := int(attempt) - o.AttemptFloor // attempts since the last replay
	if n >= r.MaxAttempts {
		return retryDecision{State: record.OccurrenceDead, DeadReason: record.DeadAttemptsExhausted}
	}
	at := now.Add(backoff(o.OccurrenceID, attempt, n, r.BackoffBase, r.BackoffCap))
	if at.After(o.RetryFrom.Add(r.Deadline)) {
		return retryDecision{State: record.OccurrenceDead, DeadReason: record.DeadDeadlinePassed}
	}
	if f.RetryWaiting >= budget {
		return retryDecision{State: record.OccurrenceDead, DeadReason: record.DeadRetryBudgetExhausted, BudgetSpent: true}
	}
	return retryDecision{State: record.OccurrenceRetryWait, RetryAt: at}
}

// ReplayOccurrence puts a DEAD occurrence back on the queue at now, with
// the same occurrence id (replayOf says how). An occurrence in another
// state is store.ErrConflict; another tenant's is store.ErrNotFound.
func ReplayOccurrence(ctx context.Context, st store.Store, tenantID, occurrenceID string, now time.Time) (*record.Occurrence, error) {
	var got *record.Occurrence
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		// The state a replay refuses is named from the row: a run
		// holding the occurrence is folded first.
		if err := foldOccurrences(ctx, tx, tenantID, []string{occurrenceID}, nil); err != nil {
			return err
		}
		o, err := tx.LockOccurrence(ctx, tenantID, occurrenceID)
		if err != nil {
			return err
		}
		if o.State != record.OccurrenceDead {
			return fmt.Errorf("%w: the occurrence is %s; only a DEAD one can be replayed", store.ErrConflict, o.State)
		}
		if got, err = tx.Requeue(ctx, replayOf(o, now)); err != nil {
			return err
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: tenantID, action: AuditReplay, target: occurrenceID,
			detail: fmt.Sprintf("1 replayed, of schedule %s, after %d attempts", o.ScheduleID, o.AttemptCount)})
	})
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", occurrenceID, err)
	}
	return got, nil
}

// replayOf is the replay of DEAD occurrence o at now: ENQUEUED, available
// at now, out of the dead-letter queue (no dead reason), and with a fresh
// set of retries: its attempts are counted from its attempt count so far
// (the attempt floor), and its retry deadline from now. The next claim is
// attempt attempt_count+1; the earlier attempts stay as history.
func replayOf(o *record.Occurrence, now time.Time) store.RequeueParams {
	return store.RequeueParams{TenantID: o.TenantID, OccurrenceID: o.OccurrenceID,
		AvailableAt: now, AttemptFloor: o.AttemptCount, RetryFrom: now}
}

// PurgeDead takes up to p.Limit DEAD occurrences that match p out of the
// dead-letter queue, oldest scheduled first, in one transaction: each
// becomes CANCELED (finished at p.Now), keeping its dead reason and its
// attempts as history, and can no longer be replayed. It returns how many
// it purged; a caller purges everything by calling again until it returns
// fewer than p.Limit. A DEAD occurrence a concurrent replay takes first is
// left to the replay and not counted.
func PurgeDead(ctx context.Context, st store.Store, p store.PurgeDeadParams) (int, error) {
	if p.Limit < 1 || p.Limit > store.MaxListLimit {
		return 0, fmt.Errorf("purge dead of %s: limit %d: want 1 to %d", p.TenantID, p.Limit, store.MaxListLimit)
	}
	var n int
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		ids, err := tx.DeadOccurrences(ctx, p)
		if err != nil || len(ids) == 0 {
			return err
		}
		if n, err = tx.CancelDead(ctx, p.TenantID, ids, p.Now); err != nil || n == 0 {
			return err
		}
		return appendAudit(ctx, tx, p.Now, auditEntry{tenantID: p.TenantID, action: AuditDLQPurge,
			target: cmp.Or(p.ScheduleID, p.TenantID), detail: fmt.Sprintf("%d purged%s", n, queueNote(p.Queue))})
	})
	if err != nil {
		return 0, fmt.Errorf("purge dead of %s: %w", p.TenantID, err)
	}
	return n, nil
}

// queueNote is an audit detail's note of a queue filter.
func queueNote(queue string) string {
	if queue == "" {
		return ""
	}
	return fmt.Sprintf(", queue %q", queue)
}

// ReplayDeadOccurrences replays, in one transaction at now, those of ids
// (occurrences of tenantID) that are still DEAD, each as ReplayOccurrence
// does, and records the call in the audit log as one row (target: the
// schedule, or the tenant, the caller selected by). It returns the ids it
// replayed; one no longer DEAD, or gone, is left out.
func ReplayDeadOccurrences(ctx context.Context, st store.Store, f DLQFilter, ids []string, now time.Time) ([]string, error) {
	var done []string
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		done = done[:0]
		for _, id := range ids {
			o, err := tx.LockOccurrence(ctx, f.TenantID, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if o.State != record.OccurrenceDead {
				continue // replayed or purged meanwhile
			}
			if _, err := tx.Requeue(ctx, replayOf(o, now)); err != nil {
				return err
			}
			done = append(done, id)
		}
		if len(done) == 0 {
			return nil
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: f.TenantID, action: AuditDLQReplay,
			target: cmp.Or(f.ScheduleID, f.TenantID), detail: fmt.Sprintf("%d replayed%s", len(done), queueNote(f.Queue))})
	})
	if err != nil {
		return nil, fmt.Errorf("replay %d dead occurrences of %s: %w", len(ids), f.TenantID, err)
	}
	return done, nil
}
