package engine

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// A claim whose lease runs out is redelivered with the next attempt and
// the same occurrence id; the first attempt is recorded LEASE_EXPIRED, and
// its late ack, heartbeat and nack are refused as stale.
func TestLeaseExpiryRedeliveryAndStaleAck(t *testing.T) {
	onEveryStore(t, testLeaseExpiryRedeliveryAndStaleAck)
}

func testLeaseExpiryRedeliveryAndStaleAck(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := open(t, utc("2027-01-04T10:00:00Z"), nil)
	sc := h.create(every("each minute", "1m"))
	h.advance(time.Minute) // 10:01 is due
	first := h.claim("q", 10)
	if len(first) != 1 || first[0].Attempt.Attempt != 1 {
		t.Fatalf("first claim: %+v", first)
	}
	occ := first[0].Occurrence.OccurrenceID
	if again := h.claim("q", 10); len(again) != 0 {
		t.Fatalf("claimed again while leased: %+v", again)
	}
	h.advance(3 * time.Second) // past the 2 s lease; the pass expires it
	second := h.claim("q", 10)
	if len(second) != 1 || second[0].Occurrence.OccurrenceID != occ || second[0].Attempt.Attempt != 2 {
		t.Fatalf("redelivery: %+v", second)
	}
	if _, err := h.e.Queue.Ack(h.ctx, tenant, occ, 1); !errors.Is(err, ErrStaleAttempt) {
		t.Fatalf("ack with the old attempt: %v, want ErrStaleAttempt", err)
	}
	if _, err := h.e.Queue.Heartbeat(h.ctx, tenant, occ, 1, 0); !errors.Is(err, ErrStaleAttempt) {
		t.Fatalf("heartbeat with the old attempt: %v, want ErrStaleAttempt", err)
	}
	if _, err := h.e.Queue.Nack(h.ctx, tenant, occ, 1, Permanent, "late"); !errors.Is(err, ErrStaleAttempt) {
		t.Fatalf("nack with the old attempt: %v, want ErrStaleAttempt", err)
	}
	o, err := h.e.Queue.Ack(h.ctx, tenant, occ, 2)
	if err != nil || o.State != record.OccurrenceSucceeded {
		t.Fatalf("ack with the current attempt: %v %+v", err, o)
	}
	if _, err := h.e.Queue.Ack(h.ctx, tenant, occ, 2); err != nil {
		t.Fatalf("the same ack again (its answer was lost): %v, want success", err)
	}
	atts, err := h.e.Queue.Attempts(h.ctx, store.ListAttemptsParams{TenantID: tenant, OccurrenceID: occ, Limit: store.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	var results []record.AttemptResult
	for _, a := range atts {
		results = append(results, a.Result)
	}
	if want := []record.AttemptResult{record.ResultLeaseExpired, record.ResultSucceeded}; !reflect.DeepEqual(results, want) {
		t.Fatalf("attempt results %v, want %v", results, want)
	}
	_ = sc
}

// A permanent failure goes to the dead-letter queue; replay delivers it
// again with the same occurrence id and a new attempt.
func TestPermanentNackDeadAndReplay(t *testing.T) { onEveryStore(t, testPermanentNackDeadAndReplay) }

func testPermanentNackDeadAndReplay(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := open(t, utc("2027-01-04T10:00:00Z"), nil)
	h.create(every("each minute", "1m"))
	h.advance(time.Minute)
	c := h.claim("q", 1)[0]
	id := c.Occurrence.OccurrenceID
	o, err := h.e.Queue.Nack(h.ctx, tenant, id, 1, Permanent, "bad payload")
	if err != nil || o.State != record.OccurrenceDead {
		t.Fatalf("permanent nack: %v %+v", err, o)
	}
	dead, err := h.e.Queue.Occurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, State: record.OccurrenceDead, Queue: "q"})
	if err != nil || len(dead) != 1 || dead[0].OccurrenceID != id {
		t.Fatalf("dead-letter queue: %v %+v", err, dead)
	}
	if _, err := h.e.Queue.Replay(h.ctx, tenant, "occ_doesnotexist"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replay of an unknown id: %v", err)
	}
	if _, err := h.e.Queue.Replay(h.ctx, "tenant-b", id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replay by another tenant: %v, want ErrNotFound", err)
	}
	if _, err := h.e.Queue.Replay(h.ctx, tenant, id); err != nil {
		t.Fatalf("replay: %v", err)
	}
	_, err = h.e.Queue.Replay(h.ctx, tenant, id)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("replay of an occurrence no longer DEAD: %v, want ErrConflict", err)
	}
	// One sentence naming the state, then the sentinel: not the store's
	// message wrapped in the engine's.
	if want := "occurrence " + id + " is ENQUEUED; only a DEAD occurrence can be replayed: " + ErrConflict.Error(); err.Error() != want {
		t.Fatalf("replay of an ENQUEUED occurrence: %q, want %q", err, want)
	}
	// Put back at the instant its lane was last claimed from, it is
	// claimable a millisecond later (the floor, docs/engine.md).
	h.clk.Advance(time.Millisecond)
	again := h.claim("q", 1)
	if len(again) != 1 || again[0].Occurrence.OccurrenceID != id || again[0].Attempt.Attempt != 2 {
		t.Fatalf("after replay: %+v", again)
	}
	if o, err := h.e.Queue.Ack(h.ctx, tenant, id, 2); err != nil || o.State != record.OccurrenceSucceeded {
		t.Fatalf("ack after replay: %v %+v", err, o)
	}
}

// Retryable failures back off with full jitter and go DEAD when attempts
// run out.
func TestRetryBackoffThenDead(t *testing.T) { onEveryStore(t, testRetryBackoffThenDead) }

func testRetryBackoffThenDead(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := open(t, utc("2027-01-04T10:00:00Z"), nil)
	req := every("flaky", "1h")
	req.Retry = record.RetryPolicy{MaxAttempts: 3, BackoffBase: 10 * time.Second, BackoffCap: time.Minute}
	h.create(req)
	h.advance(time.Hour)
	c := h.claim("q", 1)[0]
	id := c.Occurrence.OccurrenceID
	for attempt := int64(1); attempt <= 3; attempt++ {
		now := h.clk.Now()
		o, err := h.e.Queue.Nack(h.ctx, tenant, id, attempt, Retryable, "503")
		if err != nil {
			t.Fatalf("nack %d: %v", attempt, err)
		}
		if attempt == 3 {
			if o.State != record.OccurrenceDead {
				t.Fatalf("after the last attempt: %s, want DEAD", o.State)
			}
			break
		}
		ceil := 10 * time.Second << (attempt - 1)
		if o.State != record.OccurrenceRetryWait || o.AvailableAt.Before(now) || o.AvailableAt.After(now.Add(ceil)) {
			t.Fatalf("nack %d: %s available %s, want RETRY_WAIT within [now, now+%s]", attempt, o.State, o.AvailableAt, ceil)
		}
		if o.AvailableAt.After(h.clk.Now()) {
			if early := h.claim("q", 1); len(early) != 0 {
				t.Fatalf("claimed before its backoff ended")
			}
		}
		h.clk.Set(o.AvailableAt)
		next := h.claim("q", 1)
		if len(next) != 1 || next[0].Attempt.Attempt != attempt+1 {
			t.Fatalf("retry %d: %+v", attempt+1, next)
		}
	}
}

// Ack and Nack answer with the whole occurrence after the finish, as a
// read finds it, with the reason it died and its latest attempt's error
// (a store's finish answers with less; the engine reads the rest in the
// finish's transaction). A repeated ack answers the same.
func TestAckAndNackAnswer(t *testing.T) { onEveryStore(t, testAckAndNackAnswer) }

func testAckAndNackAnswer(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := open(t, utc("2027-01-04T10:00:00Z"), nil)
	for _, name := range []string{"a", "b", "c"} {
		req := every(name, "1h")
		req.Retry = record.RetryPolicy{MaxAttempts: 5, BackoffBase: time.Minute, BackoffCap: time.Minute}
		h.create(req)
	}
	h.advance(time.Hour)
	got := h.claim("q", 10)
	if len(got) != 3 {
		t.Fatalf("claimed %d, want 3", len(got))
	}
	same := func(what string, answer *record.Occurrence, state record.OccurrenceState, reason record.DeadReason, lastError string) {
		t.Helper()
		stored, err := h.e.Queue.Occurrence(h.ctx, tenant, answer.OccurrenceID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*answer, *stored) {
			t.Errorf("%s: answer\n %+v\nstored\n %+v", what, *answer, *stored)
		}
		if answer.State != state || answer.DeadReason != reason || answer.LastError != lastError {
			t.Errorf("%s: %s, reason %q, last error %q; want %s, %q, %q", what, answer.State, answer.DeadReason, answer.LastError,
				state, reason, lastError)
		}
	}
	ids := []string{got[0].Occurrence.OccurrenceID, got[1].Occurrence.OccurrenceID, got[2].Occurrence.OccurrenceID}
	o, err := h.e.Queue.Ack(h.ctx, tenant, ids[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	same("ack", o, record.OccurrenceSucceeded, "", "")
	if o, err = h.e.Queue.Ack(h.ctx, tenant, ids[0], 1); err != nil {
		t.Fatal(err)
	}
	same("the same ack again", o, record.OccurrenceSucceeded, "", "")
	if o, err = h.e.Queue.Nack(h.ctx, tenant, ids[1], 1, Retryable, "boom 1"); err != nil {
		t.Fatal(err)
	}
	same("retryable nack", o, record.OccurrenceRetryWait, "", "boom 1")
	if o, err = h.e.Queue.Nack(h.ctx, tenant, ids[2], 1, Permanent, "boom 2"); err != nil {
		t.Fatal(err)
	}
	same("permanent nack", o, record.OccurrenceDead, record.DeadPermanentFailure, "boom 2")
}

// A tenant's retry budget bounds its occurrences waiting to retry: a
// retryable failure beyond it goes to the dead-letter queue at once
// (retry_budget_exhausted), and one within it waits for its backoff. The
// count is read in the nack's own transaction.
func TestRetryBudget(t *testing.T) { onEveryStore(t, testRetryBudget) }

func testRetryBudget(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := open(t, utc("2027-01-04T10:00:00Z"), func(c *Config) { c.RetryBudget = 1 })
	for _, name := range []string{"a", "b"} {
		req := every(name, "1h")
		req.Retry = record.RetryPolicy{MaxAttempts: 5, BackoffBase: time.Minute, BackoffCap: time.Minute}
		h.create(req)
	}
	h.advance(time.Hour)
	got := h.claim("q", 10)
	if len(got) != 2 {
		t.Fatalf("claimed %d, want 2", len(got))
	}
	first, err := h.e.Queue.Nack(h.ctx, tenant, got[0].Occurrence.OccurrenceID, 1, Retryable, "503")
	if err != nil || first.State != record.OccurrenceRetryWait {
		t.Fatalf("first retryable nack: %+v, %v; want RETRY_WAIT", first, err)
	}
	second, err := h.e.Queue.Nack(h.ctx, tenant, got[1].Occurrence.OccurrenceID, 1, Retryable, "503")
	if err != nil || second.State != record.OccurrenceDead || second.DeadReason != record.DeadRetryBudgetExhausted {
		t.Fatalf("retryable nack over the budget: %+v, %v; want DEAD, retry_budget_exhausted", second, err)
	}
	if _, err := h.e.Queue.Nack(h.ctx, tenant, "occ_missing", 1, Retryable, "503"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("nack of an unknown occurrence: %v, want ErrNotFound", err)
	}
}

// A 2-hour run of an hourly schedule under each overlap policy, where each
// run takes 90 minutes: who gets claimed when.
func TestOverlapPolicies(t *testing.T) { onEveryStore(t, testOverlapPolicies) }

func testOverlapPolicies(t *testing.T, open harnessMaker) {
	t.Parallel()
	tests := []struct {
		policy  record.OverlapPolicy
		run     time.Duration
		claimed map[string]string // scheduled_for -> claimed at (HH:MM)
		skipped []string
	}{
		{record.OverlapAllow, 90 * time.Minute,
			map[string]string{"10:00": "10:00", "11:00": "11:00", "12:00": "12:00"}, nil},
		{record.OverlapSkipIfRunning, 90 * time.Minute,
			map[string]string{"10:00": "10:00", "12:00": "12:00"}, []string{"11:00"}},
		{record.OverlapQueueOne, 90 * time.Minute,
			map[string]string{"10:00": "10:00", "11:00": "11:30", "12:00": "13:00"}, nil},
		// Runs of 150 minutes: 11:00 waits; 12:00 arrives while 11:00 is
		// still waiting, so it is the second in line and is skipped.
		{record.OverlapQueueOne, 150 * time.Minute,
			map[string]string{"10:00": "10:00", "11:00": "12:30"}, []string{"12:00"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.policy, tt.run), func(t *testing.T) {
			t.Parallel()
			h := open(t, utc("2027-01-04T09:50:00Z"), nil)
			req := cronIn("hourly", "0 * * * *", "UTC")
			req.OverlapPolicy = tt.policy
			sc := h.create(req)
			type run struct {
				occ     string
				attempt int64
				ends    time.Time
			}
			var running []run
			claimed := map[string]string{}
			for h.clk.Now().Before(utc("2027-01-04T13:30:00Z")) {
				h.advance(10 * time.Minute)
				now := h.clk.Now()
				var still []run
				for _, r := range running {
					if !now.Before(r.ends) {
						if _, err := h.e.Queue.Ack(h.ctx, tenant, r.occ, r.attempt); err != nil {
							t.Fatalf("ack: %v", err)
						}
						continue
					}
					if _, err := h.e.Queue.Heartbeat(h.ctx, tenant, r.occ, r.attempt, 30*time.Minute); err != nil {
						t.Fatalf("heartbeat: %v", err)
					}
					still = append(still, r)
				}
				running = still
				got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w", Limit: 10, Lease: 30 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range got {
					if c.Occurrence.ScheduledFor.After(utc("2027-01-04T12:00:00Z")) {
						continue // beyond the 2-hour window: leave it running unchecked
					}
					claimed[c.Occurrence.ScheduledFor.Format("15:04")] = now.Format("15:04")
					running = append(running, run{c.Occurrence.OccurrenceID, c.Attempt.Attempt, now.Add(tt.run)})
				}
			}
			for k := range claimed {
				if k > "12:00" {
					delete(claimed, k)
				}
			}
			if !reflect.DeepEqual(claimed, tt.claimed) {
				t.Errorf("claims (scheduled -> claimed at): %v, want %v", claimed, tt.claimed)
			}
			var skipped []string
			for _, o := range h.occurrences(sc.ScheduleID) {
				if o.State == record.OccurrenceSkippedOverlap && !o.ScheduledFor.After(utc("2027-01-04T12:00:00Z")) {
					skipped = append(skipped, o.ScheduledFor.Format("15:04"))
				}
			}
			if !reflect.DeepEqual(skipped, tt.skipped) {
				t.Errorf("skipped %v, want %v", skipped, tt.skipped)
			}
		})
	}
}

// Update and cancel racing claims: whatever the interleaving, no firing
// time runs under two versions, the counts the control plane returns are
// true, and nothing of an old version stays claimable.
func TestUpdateAndCancelRaceClaims(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), func(c *Config) { c.Horizon = 10 * time.Minute })
	req := every("busy", "1s")
	sc := h.create(req)
	h.plan() // 600 firings on the queue, available one per second
	h.clk.Advance(10 * time.Minute)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	var claimErr error
	var mu sync.Mutex
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: fmt.Sprintf("w%d", w), Limit: 7, Lease: time.Minute})
				if err == nil {
					for i, c := range got {
						if i%2 == 0 {
							_, err = h.e.Queue.Ack(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt)
						}
					}
				}
				if err != nil {
					mu.Lock()
					claimErr = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	var canceled, inFlight int
	for i := range 5 {
		req.Payload = []byte(fmt.Sprintf(`{"v":%d}`, i))
		res, err := h.e.Control.Update(h.ctx, tenant, sc.ScheduleID, req)
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		canceled += res.Canceled
		h.plan()
	}
	res, err := h.e.Control.Cancel(h.ctx, tenant, sc.ScheduleID)
	if err != nil {
		t.Fatal(err)
	}
	canceled += res.Canceled
	inFlight = res.InFlight
	close(stop)
	wg.Wait()
	if claimErr != nil {
		t.Fatalf("a worker failed: %v", claimErr)
	}

	final := h.schedule(sc.ScheduleID)
	if final.State != record.ScheduleCanceled || final.Version != 7 {
		t.Fatalf("final schedule %s version %d, want CANCELED version 7", final.State, final.Version)
	}
	byTime := map[time.Time][]record.Occurrence{}
	counted := map[record.OccurrenceState]int{}
	// This tenant has only this schedule, so tenant-wide counts are its own.
	for _, st := range []record.OccurrenceState{record.OccurrenceCanceled, record.OccurrenceRunning, record.OccurrenceSucceeded, record.OccurrenceEnqueued, record.OccurrenceRetryWait} {
		n, err := h.st.CountOccurrences(h.ctx, tenant, st)
		if err != nil {
			t.Fatal(err)
		}
		counted[st] = n
		if st == record.OccurrenceCanceled {
			continue
		}
		occs, err := h.e.Queue.Occurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, ScheduleID: sc.ScheduleID, State: st, Limit: store.MaxListLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(occs) != n {
			t.Fatalf("%d %s listed, %d counted", len(occs), st, n)
		}
		for _, o := range occs {
			byTime[o.ScheduledFor] = append(byTime[o.ScheduledFor], o)
		}
	}
	for at, os := range byTime {
		if len(os) > 1 {
			t.Errorf("firing %s runs under %d versions", at, len(os))
		}
	}
	if counted[record.OccurrenceEnqueued]+counted[record.OccurrenceRetryWait] != 0 {
		t.Errorf("%d occurrences still claimable after cancel", counted[record.OccurrenceEnqueued])
	}
	if counted[record.OccurrenceCanceled] != canceled {
		t.Errorf("%d CANCELED rows, but the control plane reported %d", counted[record.OccurrenceCanceled], canceled)
	}
	if counted[record.OccurrenceRunning] != inFlight {
		t.Errorf("%d RUNNING rows, but cancel reported %d in flight", counted[record.OccurrenceRunning], inFlight)
	}
	t.Logf("canceled %d, succeeded %d, in flight %d", canceled, counted[record.OccurrenceSucceeded], inFlight)
}

// Strict work is claimed before flexible and catch-up work of the same
// queue, whatever their available times.
func TestLaneOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	flex := every("flex", "1m")
	flex.FlexibleWindow = time.Second
	h.create(flex)
	h.create(every("strict", "1m"))
	h.advance(time.Minute)
	h.advance(time.Minute + time.Second) // past the flexible offsets too
	got := h.claim("q", 10)
	var lanes []record.Lane
	for _, c := range got {
		lanes = append(lanes, c.Occurrence.Lane)
	}
	if len(lanes) != 4 || lanes[0] != record.LaneStrict || lanes[1] != record.LaneStrict {
		t.Fatalf("lanes in claim order: %v, want the strict ones first", lanes)
	}
}

// A long-poll claim returns as soon as the next occurrence is available.
func TestClaimLongPollWakesAtAvailableAt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	h.create(schedule.Settings{Name: "soon", Queue: "q", Kind: timetable.KindAt, Expr: "2027-01-04T10:00:20Z"})
	h.plan()
	done := make(chan []store.Claimed)
	go func() {
		got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w", Wait: time.Minute})
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	// The claim sleeps on a timer for 10:00:20; move the clock there once it
	// waits.
	for h.clk.Pending() == 0 {
		time.Sleep(time.Millisecond)
	}
	h.clk.Set(utc("2027-01-04T10:00:20Z"))
	got := <-done
	if len(got) != 1 || !got[0].Occurrence.ScheduledFor.Equal(utc("2027-01-04T10:00:20Z")) {
		t.Fatalf("long poll got %+v", got)
	}
}

// An occurrence whose schedule has moved on (a newer version, or canceled)
// while it runs is never retried: its heartbeat says stop, and a retryable
// nack or the expiry of its lease ends it CANCELED, where it used to be
// delivered again until it ran out of attempts. A permanent nack still
// sends it to DEAD, from where a replay still delivers it; an ack still
// succeeds.
func TestMovedOnNeverRetried(t *testing.T) { onEveryStore(t, testMovedOnNeverRetried) }

func testMovedOnNeverRetried(t *testing.T, open harnessMaker) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(h *harness, scheduleID string) error
		end    func(h *harness, occ string) // how the running attempt 1 ends
		want   record.OccurrenceState
		result record.AttemptResult
	}{
		{"update, retryable nack", update, nack(Retryable), record.OccurrenceCanceled, record.ResultFailedRetryable},
		{"pause, retryable nack", pause, nack(Retryable), record.OccurrenceCanceled, record.ResultFailedRetryable},
		{"cancel, retryable nack", cancel, nack(Retryable), record.OccurrenceCanceled, record.ResultFailedRetryable},
		{"update, lease expiry", update, expire, record.OccurrenceCanceled, record.ResultLeaseExpired},
		{"pause, lease expiry", pause, expire, record.OccurrenceCanceled, record.ResultLeaseExpired},
		{"cancel, lease expiry", cancel, expire, record.OccurrenceCanceled, record.ResultLeaseExpired},
		{"update, permanent nack", update, nack(Permanent), record.OccurrenceDead, record.ResultFailedPermanent},
		{"pause, ack", pause, ack, record.OccurrenceSucceeded, record.ResultSucceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := open(t, utc("2027-01-04T10:00:00Z"), nil)
			req := every("each minute", "1m")
			req.Retry = record.RetryPolicy{MaxAttempts: 10, BackoffBase: time.Second, BackoffCap: time.Second}
			sc := h.create(req)
			h.advance(time.Minute)
			c := h.claim("q", 1)
			if len(c) != 1 {
				t.Fatalf("claimed %d, want 1", len(c))
			}
			occ := c[0].Occurrence.OccurrenceID
			if err := tc.change(h, sc.ScheduleID); err != nil {
				t.Fatal(err)
			}
			hb, err := h.e.Queue.Heartbeat(h.ctx, tenant, occ, 1, 2*time.Second)
			if err != nil || !hb.Superseded {
				t.Fatalf("heartbeat after the change: %+v, %v; want superseded", hb, err)
			}
			tc.end(h, occ)

			o, err := h.e.Queue.Occurrence(h.ctx, tenant, occ)
			if err != nil {
				t.Fatal(err)
			}
			if o.State != tc.want || o.FinishedAt.IsZero() {
				t.Fatalf("after the change and the end of its attempt: %s finished at %v, want %s and finished", o.State, o.FinishedAt, tc.want)
			}
			atts, err := h.e.Queue.Attempts(h.ctx, store.ListAttemptsParams{TenantID: tenant, OccurrenceID: occ, Limit: store.MaxListLimit})
			if err != nil || len(atts) != 1 || atts[0].Result != tc.result {
				t.Fatalf("attempts: %+v, %v; want one, %s", atts, err, tc.result)
			}
			// Never delivered again, however long we wait.
			for range 5 {
				h.advance(time.Minute)
				for _, got := range h.claim("q", 100) {
					if got.Occurrence.OccurrenceID == occ {
						t.Fatalf("delivered again: attempt %d", got.Attempt.Attempt)
					}
					if _, err := h.e.Queue.Ack(h.ctx, tenant, got.Occurrence.OccurrenceID, got.Attempt.Attempt); err != nil {
						t.Fatal(err)
					}
				}
			}
			if o.State != record.OccurrenceDead {
				return
			}
			// A DEAD one is still replayed on request, and delivered.
			if _, err := h.e.Queue.Replay(h.ctx, tenant, occ); err != nil {
				t.Fatalf("replay: %v", err)
			}
			h.clk.Advance(time.Millisecond) // the floor: see TestPermanentNackDeadAndReplay
			again := h.claim("q", 100)
			if len(again) == 0 || again[0].Occurrence.OccurrenceID != occ || again[0].Attempt.Attempt != 2 {
				t.Fatalf("after replay: %+v, want %s at attempt 2", again, occ)
			}
		})
	}
}

func update(h *harness, scheduleID string) error {
	req := every("each minute", "1m")
	req.Payload = []byte(`{"v":2}`)
	req.Retry = record.RetryPolicy{MaxAttempts: 10, BackoffBase: time.Second, BackoffCap: time.Second}
	_, err := h.e.Control.Update(h.ctx, tenant, scheduleID, req)
	return err
}

func pause(h *harness, scheduleID string) error {
	_, err := h.e.Control.Pause(h.ctx, tenant, scheduleID)
	return err
}

func cancel(h *harness, scheduleID string) error {
	_, err := h.e.Control.Cancel(h.ctx, tenant, scheduleID)
	return err
}

func nack(class ErrorClass) func(h *harness, occ string) {
	return func(h *harness, occ string) {
		h.t.Helper()
		if _, err := h.e.Queue.Nack(h.ctx, tenant, occ, 1, class, "stopped: the schedule moved on"); err != nil {
			h.t.Fatalf("nack %s: %v", class, err)
		}
	}
}

func expire(h *harness, _ string) {
	h.advance(3 * time.Second) // past the 2 s lease; the pass expires it
}

func ack(h *harness, occ string) {
	h.t.Helper()
	if _, err := h.e.Queue.Ack(h.ctx, tenant, occ, 1); err != nil {
		h.t.Fatalf("ack: %v", err)
	}
}
