//go:build faultinject

package engine

// Crash tests of leased runs (docs/engine.md, "Leased runs"): a child
// process (this test binary re-executed, crashchild_test.go) runs a node
// and a worker on a SQLite file, its worker taking batches that runs
// lease, acking each batch with an AckBatch or carried by the next claim
// (AckAndClaim), leaving some deliveries unacked (their run's lease runs
// out with a part acked: a partial expiry) and nacking others (the nack
// folds the run first). It SIGKILLs itself at a crash point of the run
// path; the parent reads the file as the crash left it, then restarts a
// child on it, which runs until run-until and drains. The parent checks
//
//   - RUNS, right after the crash and at the end: every unfolded run holds
//     exactly the claimable rows of its range (as many as it counts), its
//     ack ranges hold what they count and lie in it, the runs of a lane do
//     not overlap and lie at or before the lane's head, every claimable
//     row at or before a head is in a run, and no delivery logged is of an
//     attempt above the one the run holds; at the end no run holds a
//     firing at or before run-until, and a fold leaves no run and no ack;
//   - the crash itself: the state the crash point leaves (a fold rolled
//     back whole, a committed ack kept, an appended one lost, a committed
//     claim never answered...), case by case (runsCrashCases);
//   - RECON: one row per expected firing, every one at or before run-until
//     SUCCEEDED;
//   - DELIV: the effect log against the attempts: attempt numbers grow, no
//     attempt is claimed before the one before it ended (lease out, or
//     nacked), an attempt ends LEASE_EXPIRED only if its worker was killed,
//     left it unacked or had its ack refused as stale, and FAILED_RETRYABLE
//     only if it was nacked; an accepted ack is never followed by another
//     delivery, an attempt left unacked always is (only the unacked part
//     of a run comes back); each attempt is its deliverer's, and a
//     SUCCEEDED one finished at its ack, not at its fold.
//
// Run: go test -tags faultinject -race -count=1 -run CrashRuns -v ./internal/engine/

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

// crashEnvRuns, set in a crash child's environment, makes its worker the
// runs worker (runsChild) in that mode.
const crashEnvRuns = "SCHED_CRASH_RUNS"

// runsMode is what the runs child's worker does with its batches.
type runsMode string

const (
	// runsMixed leaves the first first-attempt delivery of every fourth
	// batch unacked and nacks that of every fourth other one, under a
	// short lease: expiry folds, partial ones among them, and nack folds,
	// with acks both alone and carried by claims.
	runsMixed runsMode = "mixed"
	// runsLeave leaves one delivery of every third batch unacked, from the
	// first one on, and nacks none: the first fold is the sweep's, of the
	// first batch's run, expired with a part acked.
	runsLeave runsMode = "leave"
	// runsNack nacks one delivery of every third batch, from the first
	// one on, and leaves none: the first fold is the first nack's.
	runsNack runsMode = "nack"
	// runsLong acks everything under a lease longer than FoldAfter: a run
	// acked whole is folded by the background fold (the sweep's fold of
	// expired runs would fold it first under a shorter lease), and that
	// is the first fold.
	runsLong runsMode = "long"
)

const (
	runsShortLease = 2 * time.Second
	// runsLongLease outlasts FoldAfter by enough that a run the
	// background fold was folding when the child was killed is still
	// leased when the parent reads the file.
	runsLongLease = FoldAfter + 8*time.Second
	// runsRunForLong leaves the first batch's run time to be folded in
	// the background (FoldAfter after its claim) well before run-until.
	runsRunForLong = FoldAfter + 8*time.Second
	// runsCarryFor is how long acks wait for a claim to carry them before
	// they go alone.
	runsCarryFor = 400 * time.Millisecond
	// runsIdle is how long the worker sleeps when nothing is due.
	runsIdle = 25 * time.Millisecond
	// runsDrainFor bounds the drain after run-until (crashDrainFor's
	// part): a restarted child first waits out the dead node's shard
	// leases, and in runsLong mode the dead worker's claim leases.
	runsDrainFor = 30 * time.Second
)

func (m runsMode) lease() time.Duration {
	if m == runsLong {
		return runsLongLease
	}
	return runsShortLease
}

func (m runsMode) runFor() time.Duration {
	if m == runsLong {
		return runsRunForLong
	}
	return crashRunFor
}

// leaves says whether batch k leaves its first first-attempt delivery
// unacked; nacks whether it nacks it.
func (m runsMode) leaves(k int) bool {
	return (m == runsMixed && k%4 == 1) || (m == runsLeave && k%3 == 0)
}

func (m runsMode) nacks(k int) bool {
	return (m == runsMixed && k%4 == 3) || (m == runsNack && k%3 == 0)
}

// runsEvent is one line of a runs child's effect log: crashEvent's fields
// (the child's "start" line is one), and the batch and how its acks went.
// Events: "effect" (before anything else is done with a delivery),
// "leave" (left unacked), "nack" (before the nack is sent), "nacked"
// (its answer: OK, or Err when refused as stale), "ack" (the answer to
// an ack: OK, or Err when refused as stale).
type runsEvent struct {
	Ev       string `json:"ev"`
	PID      int    `json:"pid"`
	Worker   string `json:"worker,omitempty"`
	Occ      string `json:"occ,omitempty"`
	Schedule string `json:"schedule,omitempty"`
	For      int64  `json:"for,omitempty"`
	Attempt  int64  `json:"attempt,omitempty"`
	OK       bool   `json:"ok,omitempty"`
	Err      string `json:"err,omitempty"`
	CrashAt  string `json:"crash_at,omitempty"`
	At       int64  `json:"at"`
	Batch    int    `json:"batch"`
	Via      string `json:"via,omitempty"` // ack: "batch" (AckBatch) or "claim" (carried by AckAndClaim)
}

// writeRuns appends ev to the log in one write, so that every line in
// the file is whole. Unlike crashLog.write it does not fsync: a SIGKILL
// loses nothing a write handed to the kernel, and the machine does not
// crash; an fsync per line made a child on a busy machine spend its time
// in the log rather than in the run path.
func (l *crashLog) writeRuns(ev runsEvent) error {
	ev.At = time.Now().UnixMilli()
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("effect log: %w", err)
	}
	return nil
}

// runsHeld is a delivery whose ack has not been sent.
type runsHeld struct {
	c     store.Claimed
	batch int
}

// runsChild is the runs child's worker, until run-until and the drain.
// It claims only when something is due (so nearly every claim is a
// batch, and a crash point counted in claims lands after one), with no
// wait, in batches of crashClaimLimit; batch k (numbered from 0 in this
// process) is acked at once with AckBatch when k is even, and carried by
// the next claim (AckAndClaim) when k is odd, or alone after
// runsCarryFor.
func runsChild(ctx context.Context, e *Engine, st store.Store, elog *crashLog, pid int, worker string, until time.Time, mode runsMode) error {
	var (
		carried   []runsHeld
		carriedAt time.Time
		batch     int
		planning  = true
	)
	ev := func(kind string, h runsHeld) runsEvent {
		o := &h.c.Occurrence
		return runsEvent{Ev: kind, PID: pid, Worker: worker, Occ: o.OccurrenceID, Schedule: o.ScheduleID,
			For: o.ScheduledFor.Unix(), Attempt: h.c.Attempt.Attempt, Batch: h.batch}
	}
	items := func(hs []runsHeld) []AckItem {
		out := make([]AckItem, len(hs))
		for i, h := range hs {
			out[i] = AckItem{OccurrenceID: h.c.Occurrence.OccurrenceID, Attempt: h.c.Attempt.Attempt}
		}
		return out
	}
	logAcks := func(hs []runsHeld, rs []store.FinishResult, via string) error {
		if len(rs) != len(hs) {
			return fmt.Errorf("%d acks answered with %d results", len(hs), len(rs))
		}
		for i, h := range hs {
			a := ev("ack", h)
			a.Via = via
			switch r := rs[i]; {
			case r.Err == nil && r.Occurrence.State == record.OccurrenceSucceeded:
				a.OK = true
			case r.Err == nil:
				return fmt.Errorf("ack %s attempt %d: accepted but the occurrence is %s", a.Occ, a.Attempt, r.Occurrence.State)
			case errors.Is(r.Err, ErrStaleAttempt):
				a.Err = r.Err.Error()
			default:
				return fmt.Errorf("ack %s attempt %d: %w", a.Occ, a.Attempt, r.Err)
			}
			if err := elog.writeRuns(a); err != nil {
				return err
			}
		}
		return nil
	}
	ackAlone := func() error {
		if len(carried) == 0 {
			return nil
		}
		rs, err := e.Queue.AckBatch(ctx, crashTenant, items(carried))
		if err != nil {
			return err
		}
		err = logAcks(carried, rs, "batch")
		carried = nil
		return err
	}
	for {
		now := time.Now()
		if now.After(until) {
			// As crashChild's drain, on the rows: the runs are folded
			// first, so that the rows say where each occurrence stands.
			if err := FoldTenant(ctx, st, crashTenant); err != nil {
				return err
			}
			cursorsPast, done, waiting, err := crashDrainState(ctx, st, until)
			if err != nil {
				return err
			}
			if planning && cursorsPast {
				e.Stop()
				planning = false
			}
			if !planning && done {
				return ackAlone()
			}
			if now.After(until.Add(runsDrainFor)) {
				return fmt.Errorf("still not drained %s after run-until (planner running: %v): %s", runsDrainFor, planning, waiting)
			}
			if !planning {
				if _, err := ExpireLeases(ctx, st, now.UTC().Truncate(time.Millisecond), 10_000); err != nil {
					return fmt.Errorf("expire leases: %w", err)
				}
			}
		}
		if len(carried) > 0 && time.Since(carriedAt) > runsCarryFor {
			if err := ackAlone(); err != nil {
				return err
			}
		}
		next, err := st.NextAvailable(ctx, crashTenant, crashQueue)
		if err != nil {
			return err
		}
		if next.IsZero() || next.After(time.Now()) {
			time.Sleep(runsIdle)
			continue
		}
		req := ClaimRequest{TenantID: crashTenant, Queue: crashQueue, WorkerID: worker, Limit: crashClaimLimit, Lease: mode.lease()}
		var got []store.Claimed
		if len(carried) > 0 {
			rs, g, err := e.Queue.AckAndClaim(ctx, req, items(carried))
			if err != nil {
				return err
			}
			if err := logAcks(carried, rs, "claim"); err != nil {
				return err
			}
			carried, got = nil, g
		} else if got, err = e.Queue.Claim(ctx, req); err != nil {
			return err
		}
		if len(got) == 0 {
			continue
		}
		k := batch
		batch++
		pick := -1 // the batch's first first-attempt delivery
		for i := range got {
			if err := elog.writeRuns(ev("effect", runsHeld{got[i], k})); err != nil {
				return err
			}
			if pick < 0 && got[i].Attempt.Attempt == 1 {
				pick = i
			}
		}
		leave, nack := -1, -1
		switch {
		case pick >= 0 && mode.leaves(k):
			leave = pick
		case pick >= 0 && mode.nacks(k):
			nack = pick
		}
		if nack >= 0 {
			h := runsHeld{got[nack], k}
			if err := elog.writeRuns(ev("nack", h)); err != nil {
				return err
			}
			a := ev("nacked", h)
			o, err := e.Queue.Nack(ctx, crashTenant, a.Occ, a.Attempt, Retryable, "crash test: a retryable failure")
			switch {
			case err == nil && o.State == record.OccurrenceRetryWait:
				a.OK = true
			case err == nil:
				return fmt.Errorf("nack %s attempt %d: the occurrence is %s, want RETRY_WAIT", a.Occ, a.Attempt, o.State)
			case errors.Is(err, ErrStaleAttempt):
				a.Err = err.Error()
			default:
				return err
			}
			if err := elog.writeRuns(a); err != nil {
				return err
			}
		}
		if leave >= 0 {
			if err := elog.writeRuns(ev("leave", runsHeld{got[leave], k})); err != nil {
				return err
			}
		}
		for i := range got {
			if i != leave && i != nack {
				carried = append(carried, runsHeld{got[i], k})
			}
		}
		carriedAt = time.Now()
		if k%2 == 0 {
			if err := ackAlone(); err != nil {
				return err
			}
		}
	}
}

// ---------------------------------------------------------------- the parent

// runsCrashCase is one crash of the run path: the point, the hit that
// kills, the worker's mode, and what the file must show right after the
// kill (crashed, nil: the invariants alone) and at the end (final, nil:
// the general checks alone).
type runsCrashCase struct {
	name    string
	point   string
	n       int
	mode    runsMode
	crashed func(t *testing.T, v *runsView)
	final   func(t *testing.T, v *runsView)
}

// runsView is what a check sees: the case's run, the effect log, the
// file as the crash left it, and at the end its attempts.
type runsView struct {
	r       *crashRun
	events  []runsEvent
	killed  runsEvent // the "start" line of the killed process
	crash   *runsSnapshot
	final   *runsSnapshot                // before the parent's fold
	occs    map[string]record.Occurrence // at the end, after the fold
	atts    map[string][]record.Attempt  // at the end, by attempt number
	effects map[runsKey]runsEvent        // each delivery's effect line
}

// runsKey names an attempt of an occurrence.
type runsKey struct {
	occ     string
	attempt int64
}

// killedEvents are the killed process's events of kind ev, in log order.
func (v *runsView) killedEvents(ev string) []runsEvent {
	var out []runsEvent
	for _, e := range v.events {
		if e.PID == v.killed.PID && e.Ev == ev {
			out = append(out, e)
		}
	}
	return out
}

// lastBatch is the killed process's last batch: the deliveries it logged
// and meant to ack (not left, not nacked), and whether an ack of any of
// them was answered.
func (v *runsView) lastBatch(t *testing.T) (acking []runsEvent, answered bool) {
	t.Helper()
	effects := v.killedEvents("effect")
	if len(effects) == 0 {
		t.Fatal("the killed process delivered nothing")
	}
	last := effects[len(effects)-1].Batch
	not := map[string]bool{}
	for _, e := range v.events {
		if e.PID != v.killed.PID || e.Batch != last {
			continue
		}
		switch e.Ev {
		case "leave", "nack":
			not[e.Occ] = true
		case "ack":
			answered = true
		}
	}
	for _, e := range effects {
		if e.Batch == last && !not[e.Occ] {
			acking = append(acking, e)
		}
	}
	return acking, answered
}

// holding returns the run of snapshot s holding occurrence occ, if any.
func (s *runsSnapshot) holding(occ string) (*runsRunRow, *runsRowState) {
	for i := range s.runs {
		for j := range s.runs[i].held {
			if s.runs[i].held[j].occ == occ {
				return &s.runs[i], &s.runs[i].held[j]
			}
		}
	}
	return nil, nil
}

// runsCrashCases are the crash points of the run path, with the hit that
// kills. The hits are low: a child claims what is due when it claims, so
// one slowed down (-race, a busy 2-core machine) makes fewer, larger
// batches, and it must still reach its hit well before run-until. The
// fold points are made to be reached in the fold of a given kind by the
// worker's mode: the first fold of a runsLeave child is an expiry's, of a
// runsNack child a nack's, of a runsLong child the background fold's.
var runsCrashCases = []runsCrashCase{
	{
		// The claim's transaction, its run row written, rolled back:
		// nothing of it remains, so every attempt the killed worker
		// holds in the end is one it logged a delivery of.
		name: "run.before-commit", point: faultinject.RunBeforeCommit, n: 5, mode: runsMixed,
		final: func(t *testing.T, v *runsView) {
			for occ, atts := range v.atts {
				for _, a := range atts {
					if a.WorkerID == v.killed.Worker {
						if _, ok := v.effects[runsKey{occ, a.Attempt}]; !ok {
							t.Errorf("%s attempt %d is the killed worker's, which never delivered it: the claim rolled back by the crash left an attempt", occ, a.Attempt)
						}
					}
				}
			}
		},
	},
	{
		// A claim committed and never answered: its run's occurrences are
		// attempts of the killed worker it never delivered, which run out
		// (LEASE_EXPIRED) and come again.
		name: "claim.after-commit", point: faultinject.ClaimAfterCommit, n: 5, mode: runsMixed,
		final: func(t *testing.T, v *runsView) {
			unseen := 0
			for occ, atts := range v.atts {
				for _, a := range atts {
					if a.WorkerID != v.killed.Worker {
						continue
					}
					if _, ok := v.effects[runsKey{occ, a.Attempt}]; ok {
						continue
					}
					unseen++
					if a.Result != record.ResultLeaseExpired || int(a.Attempt) >= len(atts) {
						t.Errorf("%s attempt %d, claimed by the killed worker and never answered, ended %q of %d attempts; want LEASE_EXPIRED and a later attempt", occ, a.Attempt, a.Result, len(atts))
					}
				}
			}
			if unseen == 0 {
				t.Error("no attempt of the killed worker went undelivered: the crash did not land after a claim that leased something")
			}
		},
	},
	{
		// Acks appended to a run's log, not committed: lost with the
		// crash, so the batch being acked comes again, none of it acked.
		name: "ack.after-append", point: faultinject.AckAfterAppend, n: 5, mode: runsMixed,
		final: func(t *testing.T, v *runsView) {
			acking, answered := v.lastBatch(t)
			if answered || len(acking) == 0 {
				t.Fatalf("the killed process's last batch: %d deliveries being acked, an ack answered: %v; want some, none answered", len(acking), answered)
			}
			for _, e := range acking {
				if atts := v.atts[e.Occ]; len(atts) <= int(e.Attempt) {
					t.Errorf("%s attempt %d: its ack was appended and lost with the crash, but it ended with %d attempts; want it delivered again", e.Occ, e.Attempt, len(atts))
				}
			}
		},
	},
	{
		// An AckBatch committed, not answered: the acks hold, the batch
		// never comes again.
		name: "ack.after-commit", point: faultinject.AckAfterCommit, n: 3, mode: runsMixed,
		final: func(t *testing.T, v *runsView) {
			acking, answered := v.lastBatch(t)
			if answered || len(acking) == 0 {
				t.Fatalf("the killed process's last batch: %d deliveries being acked, an ack answered: %v; want some, none answered", len(acking), answered)
			}
			for _, e := range acking {
				atts := v.atts[e.Occ]
				if len(atts) != int(e.Attempt) || atts[len(atts)-1].Result != record.ResultSucceeded || atts[len(atts)-1].WorkerID != v.killed.Worker {
					t.Errorf("%s attempt %d: its ack was committed before the crash, but it ended %s; want that attempt SUCCEEDED and none after", e.Occ, e.Attempt, runsAttempts(atts))
				}
			}
		},
	},
	{
		// The sweep folding the first batch's run, expired with one
		// delivery left unacked: rolled back whole, the run still there.
		name: "fold.middle/expiry", point: faultinject.FoldMiddle, n: 1, mode: runsLeave,
		crashed: func(t *testing.T, v *runsView) {
			left := v.killedEvents("leave")
			if len(left) == 0 || left[0].Batch != 0 {
				t.Fatalf("the killed process left %v unacked; want one of its first batch", left)
			}
			r, row := v.crash.holding(left[0].Occ)
			switch {
			case r == nil:
				t.Fatalf("after the crash no run holds %s, left unacked in the first batch: the expiry fold was not rolled back", left[0].Occ)
			case r.acked >= r.n || r.leaseExpiresAt.After(v.crash.at) || row.attemptCount != 0:
				t.Errorf("after the crash the first batch's run holds %d, %d acked, lease to %s (read at %s), %s at attempt count %d; want it expired, partly acked, its rows untouched",
					r.n, r.acked, r.leaseExpiresAt.Format(time.RFC3339Nano), v.crash.at.Format(time.RFC3339Nano), left[0].Occ, row.attemptCount)
			}
		},
	},
	{
		// A nack folding its run first: rolled back whole with the nack.
		name: "fold.middle/nack", point: faultinject.FoldMiddle, n: 1, mode: runsNack,
		crashed: func(t *testing.T, v *runsView) {
			nacks := v.killedEvents("nack")
			if len(nacks) != 1 || len(v.killedEvents("nacked")) != 0 {
				t.Fatalf("the killed process sent %d nacks and logged %d answers; want one unanswered", len(nacks), len(v.killedEvents("nacked")))
			}
			n := nacks[0]
			if r, row := v.crash.holding(n.Occ); r == nil || row.attemptCount != int(n.Attempt)-1 || row.state != record.OccurrenceEnqueued {
				t.Errorf("after the crash %s (nacked at attempt %d) is held by run %v as %+v; want its run and row as before the nack", n.Occ, n.Attempt, r, row)
			}
		},
	},
	{
		// The background fold of the first batch's run, acked whole and
		// still leased: rolled back whole.
		name: "fold.middle/background", point: faultinject.FoldMiddle, n: 1, mode: runsLong,
		crashed: func(t *testing.T, v *runsView) {
			effects := v.killedEvents("effect")
			if len(effects) == 0 {
				t.Fatal("the killed process delivered nothing")
			}
			first := effects[0]
			r, _ := v.crash.holding(first.Occ)
			switch {
			case r == nil:
				t.Fatalf("after the crash no run holds %s, the first delivery: the background fold was not rolled back", first.Occ)
			case r.acked != r.n || !r.leaseExpiresAt.After(v.crash.at) || r.claimedAt.Add(FoldAfter).After(v.crash.at):
				t.Errorf("after the crash the first batch's run holds %d, %d acked, claimed at %s, leased to %s (read at %s); want it acked whole, claimed FoldAfter before, still leased (the background fold's, not the sweep's)",
					r.n, r.acked, r.claimedAt.Format(time.RFC3339Nano), r.leaseExpiresAt.Format(time.RFC3339Nano), v.crash.at.Format(time.RFC3339Nano))
			}
		},
	},
	{
		// A background fold committed: the first batch's rows are
		// written, SUCCEEDED at their acks, and no run holds them.
		name: "fold.after-commit", point: faultinject.FoldAfterCommit, n: 1, mode: runsLong,
		crashed: func(t *testing.T, v *runsView) {
			acked := 0
			for _, a := range v.killedEvents("ack") {
				if a.Batch != 0 || !a.OK {
					continue
				}
				acked++
				r, _ := v.crash.holding(a.Occ)
				row, ok := v.crash.rows[a.Occ]
				if r != nil || !ok || row.state != record.OccurrenceSucceeded || row.attemptCount != int(a.Attempt) || row.worker != v.killed.Worker {
					t.Errorf("after the crash %s (acked at attempt %d in the first batch) is held by run %v, its row %+v; want it folded: SUCCEEDED, that attempt, the killed worker's", a.Occ, a.Attempt, r, row)
				}
			}
			if acked == 0 {
				t.Error("the killed process logged no accepted ack of its first batch")
			}
		},
	},
}

func TestCrashRuns(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("parameters: claim limit %d, short lease %s, long lease %s, FoldAfter %s, run for %s (long mode %s)",
		crashClaimLimit, runsShortLease, runsLongLease, FoldAfter, crashRunFor, runsRunForLong)
	// As in TestCrashPoints, the cases run at once, each in its own
	// goroutine, and the subtests check what each left behind.
	type scenario struct {
		c     runsCrashCase
		r     *crashRun
		crash *runsSnapshot
		err   error
	}
	var scenarios []*scenario
	for _, c := range runsCrashCases {
		scenarios = append(scenarios, &scenario{c: c, r: newRunsCrashRun(t, exe, c.mode)})
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range scenarios {
		wg.Go(func() {
			if _, s.err = s.r.child(fmt.Sprintf("%s:%d", s.c.point, s.c.n), crashWantKill); s.err != nil {
				return
			}
			// The file as the crash left it, before anything else opens it.
			if s.crash, s.err = readRunsSnapshot(s.r.db); s.err != nil {
				return
			}
			_, s.err = s.r.child("", crashWantExit0)
		})
	}
	wg.Wait()
	t.Logf("%d scenarios ran in %s", len(scenarios), time.Since(start).Round(time.Millisecond))

	for _, s := range scenarios {
		t.Run(s.c.name, func(t *testing.T) {
			t.Parallel()
			for _, line := range s.r.logs {
				t.Log(line)
			}
			if s.err != nil {
				t.Error(s.err)
				// What the file holds: a run path that stranded
				// something, or only a machine too slow.
				if s.crash != nil {
					checkRunsSnapshot(t, "after the crash", s.crash, nil)
				}
				if snap, err := readRunsSnapshot(s.r.db); err == nil {
					checkRunsSnapshot(t, "at the failure", snap, s.r.readRunsLog(t))
					t.Logf("at the failure: %d runs, lane heads %+v", len(snap.runs), snap.heads)
				}
				t.FailNow()
			}
			s.r.runsCheck(t, s.c, s.crash)
		})
	}
}

// newRunsCrashRun creates a database with the runs schedules and a run
// whose children run the runs worker in mode: six schedules firing every
// second on the strict lane and two with a flexible window (the
// flexible lane), retried soon after a nack.
func newRunsCrashRun(t *testing.T, exe string, mode runsMode) *crashRun {
	t.Helper()
	dir := t.TempDir()
	r := &crashRun{exe: exe, db: filepath.Join(dir, "sched.db"), log: filepath.Join(dir, "effects.log"),
		killed: map[string]bool{}, flex: map[string]time.Duration{}, env: []string{crashEnvRuns + "=" + string(mode)}}
	ctx := t.Context()
	st, err := sqlite.Open(ctx, r.db)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer st.Close()
	e, err := New(ctx, Config{Store: st, Clock: clock.Real{}, Shards: crashShards, NodeID: "setup"})
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	retry := record.RetryPolicy{MaxAttempts: 10, BackoffBase: 200 * time.Millisecond, BackoffCap: time.Second}
	for i := range 8 {
		s := schedule.Settings{Name: fmt.Sprintf("runs-%d", i), Kind: timetable.KindEvery, Expr: "1s", Queue: crashQueue, Retry: retry}
		if i >= 6 {
			s.Name, s.FlexibleWindow = fmt.Sprintf("runs-flex-%d", i), 2*time.Second
		}
		sc, _, err := e.Control.Create(ctx, crashTenant, "", s)
		if err != nil {
			t.Fatalf("create %s: %v", s.Name, err)
		}
		r.flex[sc.ScheduleID] = sc.FlexibleWindow
		// Every 1s counts from the Unix epoch: every whole second fires.
		r.schedules = append(r.schedules, crashSchedule{name: sc.Name, id: sc.ScheduleID, createdAt: sc.CreatedAt, cursor0: sc.NextRunAt,
			fires: func(int64) bool { return true }})
	}
	r.until = time.Now().Add(mode.runFor()).Truncate(time.Second).Add(500 * time.Millisecond).UTC()
	return r
}

// ---------------------------------------------------------------- the file

// runsPos is a position of a lane: (available_at, row).
type runsPos [2]int64

func (p runsPos) less(q runsPos) bool { return p[0] < q[0] || (p[0] == q[0] && p[1] < q[1]) }

// runsRunRow is a runs row, with the claimable rows of its range.
type runsRunRow struct {
	id                        int64
	tenant, queue, lane       string
	first, last               runsPos
	n, acked                  int
	worker                    string
	claimedAt, leaseExpiresAt time.Time
	held                      []runsRowState // the claimable rows in [first, last]
}

func (r *runsRunRow) String() string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("run %d (%s/%s/%s [%v, %v], %d held, %d acked, worker %s)", r.id, r.tenant, r.queue, r.lane, r.first, r.last, r.n, r.acked, r.worker)
}

// runsRowState is an occurrence row as it stands in the file.
type runsRowState struct {
	occ          string
	state        record.OccurrenceState
	attemptCount int
	worker       string
	scheduledFor int64 // unix seconds
}

// runsAckRow is a run_acks row, with the claimable rows of its range.
type runsAckRow struct {
	run         int64
	first, last runsPos
	n, held     int
}

// runsHead is a lane_heads row, with the claimable rows at or before it.
type runsHead struct {
	tenant, queue, lane string
	head                runsPos
	before              int
}

// runsSnapshot is what the file holds of runs, read in one transaction.
type runsSnapshot struct {
	at     time.Time // when it was read
	runs   []runsRunRow
	acks   []runsAckRow
	heads  []runsHead
	orphan int // ack ranges of no run
	rows   map[string]runsRowState
}

// Reads of the file for the checks: the schema's own columns, not the
// store's statements.
const (
	qSnapRuns = `SELECT id, tenant_id, queue, lane, first_at, first_row, last_at, last_row, n, acked, worker_id, claimed_at,
    lease_expires_at FROM runs ORDER BY tenant_id, queue, lane, first_at, first_row`
	qSnapHeld = `SELECT occurrence_id, state, attempt_count, coalesce(worker_id, ''), scheduled_for FROM occurrences
WHERE tenant_id = ?1 AND queue = ?2 AND lane = ?3 AND state IN ('ENQUEUED', 'RETRY_WAIT')
    AND (available_at, rowid) >= (?4, ?5) AND (available_at, rowid) <= (?6, ?7)
ORDER BY available_at, rowid`
	qSnapAcks = `SELECT a.run_id, a.first_at, a.first_row, a.last_at, a.last_row, a.n,
    (SELECT count(*) FROM occurrences o WHERE o.tenant_id = r.tenant_id AND o.queue = r.queue AND o.lane = r.lane
        AND o.state IN ('ENQUEUED', 'RETRY_WAIT')
        AND (o.available_at, o.rowid) >= (a.first_at, a.first_row) AND (o.available_at, o.rowid) <= (a.last_at, a.last_row))
FROM run_acks a JOIN runs r ON r.id = a.run_id ORDER BY a.run_id, a.first_at, a.first_row`
	qSnapOrphans = `SELECT count(*) FROM run_acks WHERE run_id NOT IN (SELECT id FROM runs)`
	qSnapHeads   = `SELECT h.tenant_id, h.queue, h.lane, h.head_at, h.head_row,
    (SELECT count(*) FROM occurrences o WHERE o.tenant_id = h.tenant_id AND o.queue = h.queue AND o.lane = h.lane
        AND o.state IN ('ENQUEUED', 'RETRY_WAIT') AND (o.available_at, o.rowid) <= (h.head_at, h.head_row))
FROM lane_heads h ORDER BY h.tenant_id, h.queue, h.lane`
	qSnapRows = `SELECT occurrence_id, state, attempt_count, coalesce(worker_id, ''), scheduled_for FROM occurrences`
)

// readRunsSnapshot opens the file as a restarted schedd would (the
// store's Open: quick_check, migrations) and reads its runs. It runs
// outside the test goroutine: it returns what it could not do.
func readRunsSnapshot(path string) (*runsSnapshot, error) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("reopen after the crash: %w", err)
	}
	defer st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	s := &runsSnapshot{at: time.Now(), rows: map[string]runsRowState{}}
	scanRow := func(rows *sql.Rows) (runsRowState, error) {
		var (
			o     runsRowState
			state string
			sf    int64
		)
		err := rows.Scan(&o.occ, &state, &o.attemptCount, &o.worker, &sf)
		o.state, o.scheduledFor = record.OccurrenceState(state), sf/1000
		return o, err
	}
	each := func(q string, args []any, f func(*sql.Rows) error) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := f(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	err = each(qSnapRuns, nil, func(rows *sql.Rows) error {
		var (
			r               runsRunRow
			claimed, expiry int64
		)
		if err := rows.Scan(&r.id, &r.tenant, &r.queue, &r.lane, &r.first[0], &r.first[1], &r.last[0], &r.last[1], &r.n, &r.acked,
			&r.worker, &claimed, &expiry); err != nil {
			return err
		}
		r.claimedAt, r.leaseExpiresAt = time.UnixMilli(claimed).UTC(), time.UnixMilli(expiry).UTC()
		s.runs = append(s.runs, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	for i := range s.runs {
		r := &s.runs[i]
		err := each(qSnapHeld, []any{r.tenant, r.queue, r.lane, r.first[0], r.first[1], r.last[0], r.last[1]}, func(rows *sql.Rows) error {
			o, err := scanRow(rows)
			r.held = append(r.held, o)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read the rows of run %d: %w", r.id, err)
		}
	}
	err = each(qSnapAcks, nil, func(rows *sql.Rows) error {
		var a runsAckRow
		s.acks = append(s.acks, a)
		p := &s.acks[len(s.acks)-1]
		return rows.Scan(&p.run, &p.first[0], &p.first[1], &p.last[0], &p.last[1], &p.n, &p.held)
	})
	if err != nil {
		return nil, fmt.Errorf("read run acks: %w", err)
	}
	if err := tx.QueryRowContext(ctx, qSnapOrphans).Scan(&s.orphan); err != nil {
		return nil, fmt.Errorf("read run acks: %w", err)
	}
	err = each(qSnapHeads, nil, func(rows *sql.Rows) error {
		var h runsHead
		if err := rows.Scan(&h.tenant, &h.queue, &h.lane, &h.head[0], &h.head[1], &h.before); err != nil {
			return err
		}
		s.heads = append(s.heads, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read lane heads: %w", err)
	}
	err = each(qSnapRows, nil, func(rows *sql.Rows) error {
		o, err := scanRow(rows)
		s.rows[o.occ] = o
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read occurrences: %w", err)
	}
	return s, nil
}

// checkRunsSnapshot checks the invariants of the runs (docs/engine.md,
// "Leased runs") on s: what each run and ack range counts is what its
// range holds, the runs of a lane lie apart and at or before its head,
// every claimable row at or before a head is in a run, and the effect
// log has no delivery of an attempt above the one a run holds.
func checkRunsSnapshot(t *testing.T, stage string, s *runsSnapshot, events []runsEvent) {
	t.Helper()
	delivered := map[string]int64{} // occurrence -> highest attempt delivered
	for _, e := range events {
		if e.Ev == "effect" {
			delivered[e.Occ] = max(delivered[e.Occ], e.Attempt)
		}
	}
	type laneKey struct{ tenant, queue, lane string }
	byLane := map[laneKey][]*runsRunRow{}
	acked := map[int64]int{}
	for _, a := range s.acks {
		acked[a.run] += a.n
	}
	for i := range s.runs {
		r := &s.runs[i]
		k := laneKey{r.tenant, r.queue, r.lane}
		byLane[k] = append(byLane[k], r)
		if r.n < 1 || r.acked < 0 || r.acked > r.n || r.last.less(r.first) {
			t.Errorf("%s: %s: bad counts or range", stage, r)
		}
		if len(r.held) != r.n {
			t.Errorf("%s: %s: its range holds %d claimable rows, it counts %d (Invariant 2)", stage, r, len(r.held), r.n)
		}
		if acked[r.id] != r.acked {
			t.Errorf("%s: %s: its ack ranges count %d", stage, r, acked[r.id])
		}
		for _, o := range r.held {
			// The run holds attempt attempt_count+1; a delivery of a
			// higher one would be a second live attempt.
			if d := delivered[o.occ]; d > int64(o.attemptCount)+1 {
				t.Errorf("%s: %s holds %s at attempt %d, but attempt %d of it was delivered", stage, r, o.occ, o.attemptCount+1, d)
			}
		}
	}
	var prev *runsAckRow
	for i := range s.acks {
		a := &s.acks[i]
		var r *runsRunRow
		for j := range s.runs {
			if s.runs[j].id == a.run {
				r = &s.runs[j]
			}
		}
		switch {
		case a.n < 1 || a.held != a.n:
			t.Errorf("%s: ack range [%v, %v] of run %d counts %d and holds %d claimable rows", stage, a.first, a.last, a.run, a.n, a.held)
		case r == nil || a.first.less(r.first) || r.last.less(a.last) || a.last.less(a.first):
			t.Errorf("%s: ack range [%v, %v] is not within %s", stage, a.first, a.last, r)
		case prev != nil && prev.run == a.run && !prev.last.less(a.first):
			t.Errorf("%s: ack ranges [%v, %v] and [%v, %v] of run %d overlap", stage, prev.first, prev.last, a.first, a.last, a.run)
		}
		prev = a
	}
	if s.orphan != 0 {
		t.Errorf("%s: %d ack ranges of no run", stage, s.orphan)
	}
	for _, h := range s.heads {
		runs := byLane[laneKey{h.tenant, h.queue, h.lane}]
		held := 0
		for i, r := range runs {
			held += r.n
			if h.head.less(r.last) {
				t.Errorf("%s: %s ends after its lane's head %v", stage, r, h.head)
			}
			if i > 0 && !runs[i-1].last.less(r.first) {
				t.Errorf("%s: %s and %s overlap", stage, runs[i-1], r)
			}
		}
		if h.before != held {
			t.Errorf("%s: lane %s/%s/%s: %d claimable rows at or before its head %v, its runs hold %d", stage, h.tenant, h.queue, h.lane, h.before, h.head, held)
		}
	}
}

// readRunsLog parses a runs child's effect log.
func (r *crashRun) readRunsLog(t *testing.T) []runsEvent {
	t.Helper()
	f, err := os.Open(r.log)
	if err != nil {
		t.Fatalf("effect log: %v", err)
	}
	defer f.Close()
	var evs []runsEvent
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var ev runsEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("effect log line %d %q: %v", line, sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("effect log: %v", err)
	}
	return evs
}

// runsCheck checks a case's run after its last child: the crash as the
// file showed it, RUNS at the end, RECON and DELIV.
func (r *crashRun) runsCheck(t *testing.T, c runsCrashCase, crash *runsSnapshot) {
	t.Helper()
	ctx := t.Context()
	events := r.readRunsLog(t)
	v := &runsView{r: r, events: events, crash: crash, occs: map[string]record.Occurrence{}, atts: map[string][]record.Attempt{},
		effects: map[runsKey]runsEvent{}}
	beforeRestart := events // the lines logged before the crash
	for i, e := range events {
		switch {
		case e.Ev == "start" && r.killed[e.Worker]:
			v.killed = e
		case e.Ev == "start" && v.killed.PID != 0 && len(beforeRestart) == len(events):
			beforeRestart = events[:i]
		case e.Ev == "effect":
			v.effects[runsKey{e.Occ, e.Attempt}] = e
		}
	}
	if v.killed.PID == 0 {
		t.Fatal("no start line of the killed process in the effect log")
	}

	// RUNS, as the crash left them.
	checkRunsSnapshot(t, "after the crash", crash, beforeRestart)
	if c.crashed != nil {
		c.crashed(t, v)
	}

	// RUNS at the end: drained, so no run holds a firing at or before
	// run-until; then folded, nothing is left.
	final, err := readRunsSnapshot(r.db)
	if err != nil {
		t.Fatal(err)
	}
	v.final = final
	checkRunsSnapshot(t, "at the end", final, events)
	for i := range final.runs {
		for _, o := range final.runs[i].held {
			if o.scheduledFor <= r.until.Unix() {
				t.Errorf("at the end %s holds %s (%s), at or before run-until: not drained", &final.runs[i], o.occ, crashFmt(o.scheduledFor))
			}
		}
	}
	st, err := sqlite.Open(ctx, r.db)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	if err := FoldTenant(ctx, st, ""); err != nil {
		t.Fatalf("fold every run at the end: %v", err)
	}
	st.Close()
	folded, err := readRunsSnapshot(r.db)
	if err != nil {
		t.Fatal(err)
	}
	if len(folded.runs) != 0 || len(folded.acks) != 0 || folded.orphan != 0 {
		t.Errorf("after a fold of every run: %d runs, %d ack ranges, %d orphans; want none", len(folded.runs), len(folded.acks), folded.orphan)
	}
	checkRunsSnapshot(t, "after the fold", folded, events)

	st, err = sqlite.Open(ctx, r.db)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer st.Close()

	// RECON: one row per firing, every one at or before run-until
	// SUCCEEDED.
	until := r.until.Unix()
	nExpected := 0
	for _, s := range r.schedules {
		sc, err := st.GetSchedule(ctx, crashTenant, s.id)
		if err != nil {
			t.Fatalf("get %s: %v", s.name, err)
		}
		if sc.NextRunAt.Unix() <= until {
			t.Errorf("%s: cursor %s is not past run-until", s.name, sc.NextRunAt.Format(time.RFC3339))
		}
		occs, err := st.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: crashTenant, ScheduleID: s.id, Limit: store.MaxListLimit})
		if err != nil {
			t.Fatalf("list occurrences of %s: %v", s.name, err)
		}
		if len(occs) == store.MaxListLimit {
			t.Fatalf("%s: %d occurrences, the list limit: the check would be partial", s.name, len(occs))
		}
		got := map[int64]int{}
		for _, o := range occs {
			f := o.ScheduledFor.Unix()
			got[f]++
			v.occs[o.OccurrenceID] = o
			switch {
			case f <= until && o.State != record.OccurrenceSucceeded:
				t.Errorf("RECON %s %s: %s attempt %d, want SUCCEEDED", s.name, crashFmt(f), o.State, o.AttemptCount)
			case f > until && !crashFinalOrPending(o.State):
				t.Errorf("RECON %s %s: %s", s.name, crashFmt(f), o.State)
			}
		}
		for u := s.createdAt.Unix() + 1; u < sc.NextRunAt.Unix(); u++ {
			nExpected++
			if got[u] != 1 {
				t.Errorf("RECON %s %s: %d rows, want one", s.name, crashFmt(u), got[u])
			}
			delete(got, u)
		}
		for f := range got {
			t.Errorf("RECON %s: phantom %s", s.name, crashFmt(f))
		}
	}

	// DELIV.
	accepted, refused, left, nacked := map[runsKey]runsEvent{}, map[runsKey]bool{}, map[runsKey]bool{}, map[runsKey]bool{}
	lastEffect := map[string]runsEvent{}
	idsByKey := map[string]map[string]bool{}
	for _, e := range events {
		k := runsKey{e.Occ, e.Attempt}
		switch e.Ev {
		case "effect":
			if p, ok := lastEffect[e.Occ]; ok && e.Attempt <= p.Attempt {
				t.Errorf("DELIV %s: attempt %d (pid %d) delivered after attempt %d (pid %d): attempts must grow", e.Occ, e.Attempt, e.PID, p.Attempt, p.PID)
			}
			lastEffect[e.Occ] = e
			fk := fmt.Sprintf("%s@%s", e.Schedule, crashFmt(e.For))
			if idsByKey[fk] == nil {
				idsByKey[fk] = map[string]bool{}
			}
			idsByKey[fk][e.Occ] = true
		case "ack":
			if e.OK {
				if _, dup := accepted[k]; dup {
					t.Errorf("DELIV %s attempt %d: two accepted acks logged", e.Occ, e.Attempt)
				}
				accepted[k] = e
			} else {
				refused[k] = true
			}
		case "leave":
			left[k] = true
		case "nacked":
			if e.OK {
				nacked[k] = true
			} else {
				refused[k] = true
			}
		}
	}
	for fk, ids := range idsByKey {
		if len(ids) != 1 {
			t.Errorf("DELIV %s was delivered under %d occurrence ids", fk, len(ids))
		}
	}
	redeliveredLeft, retried, killedRedelivered, unseen := 0, 0, 0, 0
	for id, o := range v.occs {
		atts, err := st.ListAttempts(ctx, store.ListAttemptsParams{TenantID: crashTenant, OccurrenceID: id, Limit: store.MaxListLimit})
		if err != nil {
			t.Fatalf("list attempts of %s: %v", id, err)
		}
		slices.SortFunc(atts, func(a, b record.Attempt) int { return int(a.Attempt - b.Attempt) })
		v.atts[id] = atts
		if o.State != record.OccurrenceSucceeded {
			continue
		}
		if len(atts) == 0 || int(atts[len(atts)-1].Attempt) != len(atts) || o.AttemptCount != len(atts) {
			t.Errorf("DELIV %s: attempts %s, attempt_count %d: want 1..attempt_count", id, runsAttempts(atts), o.AttemptCount)
			continue
		}
		for i, a := range atts {
			k := runsKey{id, a.Attempt}
			eff, delivered := v.effects[k]
			if delivered && eff.Worker != a.WorkerID {
				t.Errorf("DELIV %s attempt %d: delivered by %s, the attempt says %s", id, a.Attempt, eff.Worker, a.WorkerID)
			}
			if !delivered {
				unseen++
				if !r.killed[a.WorkerID] {
					t.Errorf("DELIV %s attempt %d of live worker %s: never delivered", id, a.Attempt, a.WorkerID)
				}
			}
			if ack, ok := accepted[k]; ok && i != len(atts)-1 {
				t.Errorf("DELIV %s attempt %d: its ack was accepted, yet it ended %s: an acked delivery came back", id, a.Attempt, runsAttempts(atts))
			} else if ok && (a.FinishedAt.UnixMilli() < eff.At || a.FinishedAt.UnixMilli() > ack.At) {
				t.Errorf("DELIV %s attempt %d: finished at %s, not between its delivery (%s) and the answer to its ack (%s): not the ack's time",
					id, a.Attempt, a.FinishedAt.Format(time.RFC3339Nano), time.UnixMilli(eff.At).UTC().Format(time.RFC3339Nano), time.UnixMilli(ack.At).UTC().Format(time.RFC3339Nano))
			}
			if i == len(atts)-1 {
				if a.Result != record.ResultSucceeded || !delivered {
					t.Errorf("DELIV %s: last attempt %d ended %q (delivered: %v), want SUCCEEDED and delivered", id, a.Attempt, a.Result, delivered)
				}
				if left[k] || nacked[k] {
					t.Errorf("DELIV %s attempt %d: left unacked or nacked, yet SUCCEEDED", id, a.Attempt)
				}
				continue
			}
			next := atts[i+1]
			switch a.Result {
			case record.ResultLeaseExpired:
				if !r.killed[a.WorkerID] && !left[k] && !refused[k] {
					t.Errorf("DELIV %s attempt %d of live worker %s expired, but it was neither left unacked nor its ack refused", id, a.Attempt, a.WorkerID)
				}
				if next.ClaimedAt.Before(a.LeaseExpiresAt) {
					t.Errorf("DELIV %s: attempt %d claimed at %s, before attempt %d's lease ran out at %s: delivered twice at once",
						id, next.Attempt, next.ClaimedAt.Format(time.RFC3339Nano), a.Attempt, a.LeaseExpiresAt.Format(time.RFC3339Nano))
				}
				switch {
				case left[k]:
					redeliveredLeft++
				case r.killed[a.WorkerID]:
					killedRedelivered++
				}
			case record.ResultFailedRetryable:
				if !nacked[k] {
					t.Errorf("DELIV %s attempt %d ended FAILED_RETRYABLE, but no nack of it was accepted", id, a.Attempt)
				}
				if next.ClaimedAt.Before(a.FinishedAt) {
					t.Errorf("DELIV %s: attempt %d claimed at %s, before attempt %d was nacked at %s", id, next.Attempt,
						next.ClaimedAt.Format(time.RFC3339Nano), a.Attempt, a.FinishedAt.Format(time.RFC3339Nano))
				}
				retried++
			default:
				t.Errorf("DELIV %s attempt %d ended %q before attempt %d", id, a.Attempt, a.Result, next.Attempt)
			}
		}
	}
	// Every delivery left unacked came again, and every nacked one, of
	// the firings the drain waited for.
	for k := range left {
		if v.occs[k.occ].ScheduledFor.Unix() > until {
			continue
		}
		if atts := v.atts[k.occ]; len(atts) <= int(k.attempt) || atts[k.attempt-1].Result != record.ResultLeaseExpired {
			t.Errorf("DELIV %s attempt %d was left unacked, but its attempts are %s: want it LEASE_EXPIRED and delivered again", k.occ, k.attempt, runsAttempts(atts))
		}
	}
	for k := range nacked {
		if v.occs[k.occ].ScheduledFor.Unix() > until {
			continue
		}
		if atts := v.atts[k.occ]; len(atts) <= int(k.attempt) {
			t.Errorf("DELIV %s attempt %d was nacked, but its attempts are %s: want it retried", k.occ, k.attempt, runsAttempts(atts))
		}
	}
	switch c.mode {
	case runsMixed, runsLeave:
		if redeliveredLeft == 0 {
			t.Error("no delivery left unacked in a run came again: no partial expiry was exercised")
		}
	}
	switch c.mode {
	case runsMixed, runsNack:
		if retried == 0 {
			t.Error("no nacked delivery was retried: no nack fold was exercised")
		}
	}
	if c.final != nil {
		c.final(t, v)
	}

	// The reconciler agrees.
	from := r.until
	for _, s := range r.schedules {
		if s.createdAt.Before(from) {
			from = s.createdAt
		}
	}
	rep, err := reconcile.Report(ctx, st, reconcile.Options{From: from, To: r.until})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if rep.Problem || rep.Totals.Succeeded == 0 {
		t.Errorf("reconcile: totals %+v, absent %+v, unexpected %+v", rep.Totals, rep.Absent, rep.Unexpected)
	}
	t.Logf("%s: %d processes (%d killed); after the crash %d runs, %d ack ranges; RECON %d expected firings, %d rows; DELIV %d deliveries logged, %d left unacked and delivered again, %d nacked and retried, %d of killed workers delivered again, %d attempts never delivered (a killed worker's)",
		c.name, r.children, len(r.killed), len(crash.runs), len(crash.acks), nExpected, len(v.occs), len(v.effects), redeliveredLeft, retried, killedRedelivered, unseen)
}

// runsAttempts formats attempts for a message.
func runsAttempts(atts []record.Attempt) string {
	var b strings.Builder
	b.WriteString("[")
	for i, a := range atts {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d:%s:%s", a.Attempt, a.WorkerID, a.Result)
	}
	b.WriteString("]")
	return b.String()
}
