package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// A top-of-the-hour burst on the run path (docs/engine.md, "Leased
// runs"), its schedd SIGKILLed in the middle: schedules all due at one
// instant, created through the batch route as `schedctl bench` loads
// them, four consumers claiming batches of 1,000 through the API, each
// batch acked inside the next claim, as the bench's consumers do. When
// they have received half of the firings, one of them SIGKILLs schedd;
// it is restarted on the same file and socket, and the consumers go on:
// their claims fail meanwhile, and two of them send the acks they carried
// again with the next claim while the other two give them up (as a
// client.Worker gives up an ack after a few tries), so that both a run
// acked after the restart and one that runs out come after the kill.
//
// Then every firing has been delivered and acked (the consumers saw each
// ack accepted; schedctl reconcile finds each SUCCEEDED and nothing
// absent or unexpected), once per schedule, and an occurrence was
// delivered again only if it was leased and unacked at the kill: each
// delivery that came again was handed out by the killed schedd and its
// ack never accepted, attempts grow, none came before the lease of the
// one before ran out, and an attempt no consumer saw (its claim's answer
// lost to the kill) was claimed by a consumer before the kill and ran
// out. (Before acks of a whole run on a node without it in its book were
// one range, a run acked after the restart took seconds to fold, in a
// claim's sweep, and the claims behind it handed out leases that had run
// out when they answered: deliveries of the restarted schedd came again.)
//
// Full size, 50,000 firings (about 30 s on an idle 2-core machine), unless
// -short: burstShort.
func TestBurstSIGKILLLosesNothing(t *testing.T) {
	t.Parallel()
	n := burstFull
	if testing.Short() {
		n = burstShort
	}
	began := time.Now()
	d := startDaemon(t)
	cl, err := client.New("unix:"+d.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	// Due far enough ahead for the load at the pace of a busy 2-core
	// machine; a load slower still only makes the firings due as they
	// are created, still a burst when the consumers start.
	due := time.Now().Add(2*time.Second + time.Duration(n)*time.Second/burstCreatesPerSecond).Truncate(time.Second).Add(time.Second).UTC()
	scheds := burstLoad(t, ctx, cl, n, due)
	loaded := time.Now()

	b := &burst{cl: cl, killAt: n / 2, pid: d.proc.cmd.Process.Pid, killed: make(chan struct{}),
		byOcc: map[string][]*burstDelivery{}}
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range burstConsumers {
		// Half the consumers drop the acks a failed claim carried, as a
		// client.Worker gives up an ack after a few tries: what they held
		// at the kill comes again after its lease. The others send them
		// again with the next claim, as the bench's consumers do.
		wg.Go(func() { b.consume(cctx, fmt.Sprintf("burst-%d", i), i%2 == 1) })
	}
	defer func() { stop(); wg.Wait() }()

	select {
	case <-b.killed:
	case <-time.After(burstBound):
		stop()
		t.Fatalf("no kill within %s: %d of %d firings received", burstBound, b.received(), n)
	}
	<-d.proc.done // SIGKILLed: no clean stop
	killedAt := b.killedAt
	d.start()
	restarted := time.Now()

	// Drained: every firing received, and none open in the store (the
	// status counts an occurrence a run holds unacked as RUNNING). An
	// ack given up may have been taken: the consumers cannot tell.
	waitFor(t, "every firing received and acked", burstBound, func() (bool, string) {
		if got := b.received(); got < n {
			return false, fmt.Sprintf("%d of %d received", got, n)
		}
		st, err := cl.Status(ctx)
		if err != nil {
			return false, err.Error()
		}
		var open []string
		for _, q := range st.Queues {
			if q.Queue == burstQueue && q.State != "DEAD" && q.Count > 0 {
				open = append(open, fmt.Sprintf("%s %s: %d", q.Lane, q.State, q.Count))
			}
		}
		return len(open) == 0, fmt.Sprintf("open: %v", open)
	})
	// The consumers end with the claim they have out, whose answer says
	// whether the acks it carried were taken (they were: nothing is
	// open).
	b.quit.Store(true)
	wg.Wait()
	drained := time.Now()

	// What the consumers saw.
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errs {
		t.Error(e)
	}
	bySched := map[string]map[string]bool{}
	redelivered, unseen, ackedBeforeKill, refused, refusedAfter := 0, 0, 0, 0, 0
	var unseenOccs, lost []string
	for occ, ds := range b.byOcc {
		if bySched[ds[0].sched] == nil {
			bySched[ds[0].sched] = map[string]bool{}
		}
		bySched[ds[0].sched][occ] = true
		if !scheds[ds[0].sched] {
			t.Errorf("%s: delivered for schedule %s, which the test did not create", occ, ds[0].sched)
		}
		if ds[0].attempt > 1 {
			// Its earlier attempts reached no consumer: a claim whose
			// answer the kill lost. Checked against the store below.
			unseen++
			unseenOccs = append(unseenOccs, occ)
			if ds[0].epoch == 0 {
				t.Errorf("%s: first seen at attempt %d before the kill: an earlier delivery was lost while schedd ran", occ, ds[0].attempt)
			}
		}
		if len(ds) > 1 || ds[0].attempt > 1 {
			redelivered++
		}
		for i, cur := range ds {
			if cur.ackOK && cur.ackEpoch == 0 {
				ackedBeforeKill++
			}
			if cur.ackRefused {
				refused++
				if cur.epoch != 0 {
					refusedAfter++
				}
			}
			if i == 0 {
				continue
			}
			prev := ds[i-1]
			switch {
			case cur.attempt <= prev.attempt:
				t.Errorf("%s: attempt %d delivered after attempt %d: attempts must grow", occ, cur.attempt, prev.attempt)
			case prev.ackOK:
				t.Errorf("%s: attempt %d delivered again as attempt %d, after its ack was accepted", occ, prev.attempt, cur.attempt)
			case cur.received.Before(prev.lease):
				t.Errorf("%s: attempt %d received at %s, before attempt %d's lease ran out at %s: delivered twice at once",
					occ, cur.attempt, cur.received.Format(time.RFC3339Nano), prev.attempt, prev.lease.Format(time.RFC3339Nano))
			case prev.epoch != 0:
				t.Errorf("%s: attempt %d, handed out by the restarted schedd, came again as attempt %d (ack refused as stale: %v): only what was leased and unacked at the kill may come again",
					occ, prev.attempt, cur.attempt, prev.ackRefused)
			}
		}
		switch last := ds[len(ds)-1]; {
		case last.ackLost && !last.ackOK:
			lost = append(lost, occ)
		case !last.ackOK:
			t.Errorf("%s: its last delivery (attempt %d) was not acked", occ, last.attempt)
		}
	}
	if len(b.byOcc) != n || len(bySched) != n {
		t.Errorf("%d occurrences of %d schedules delivered; want %d of %d", len(b.byOcc), len(bySched), n, n)
	}
	for sched, occs := range bySched {
		if len(occs) != 1 {
			t.Errorf("schedule %s delivered under %d occurrence ids, want one", sched, len(occs))
		}
	}
	if b.atKill <= 0 || b.atKill >= n {
		t.Errorf("at the kill %d of %d firings were received: the kill was not in the middle of the burst", b.atKill, n)
	}
	// The attempts no consumer saw: claimed before the kill (the claim
	// whose answer it lost), by one of the consumers, and run out.
	for _, occ := range unseenOccs[:min(len(unseenOccs), burstUnseenChecked)] {
		ds := b.byOcc[occ]
		atts, err := cl.ListAttempts(ctx, occ, client.ListAttemptsOptions{Limit: 100})
		if err != nil {
			t.Fatalf("attempts of %s: %v", occ, err)
		}
		earlier := 0
		for _, a := range atts.Attempts {
			if a.Attempt >= ds[0].attempt {
				continue
			}
			earlier++
			if a.Result != "LEASE_EXPIRED" || a.ClaimedAt.After(killedAt) || !slices.Contains(b.workers(), a.WorkerID) {
				t.Errorf("%s: attempt %d, which no consumer received, was claimed by %s at %s and ended %q; want one of the consumers, before the kill (%s), LEASE_EXPIRED",
					occ, a.Attempt, a.WorkerID, a.ClaimedAt.Format(time.RFC3339Nano), a.Result, killedAt.Format(time.RFC3339Nano))
			}
		}
		if earlier != int(ds[0].attempt)-1 {
			t.Errorf("%s: first received at attempt %d, but the store has %d attempts before it", occ, ds[0].attempt, earlier)
		}
	}

	// An ack given up whose occurrence never came again was taken before
	// the kill cut its answer: SUCCEEDED at that attempt.
	for _, occ := range lost[:min(len(lost), burstUnseenChecked)] {
		last := b.byOcc[occ][len(b.byOcc[occ])-1]
		o, err := cl.GetOccurrence(ctx, occ)
		if err != nil {
			t.Fatalf("get %s: %v", occ, err)
		}
		if o.State != "SUCCEEDED" || int64(o.AttemptCount) != last.attempt {
			t.Errorf("%s: delivered last at attempt %d, its ack given up and never delivered again, but it is %s at attempt %d; want SUCCEEDED at that attempt",
				occ, last.attempt, o.State, o.AttemptCount)
		}
	}

	// The store agrees: every firing SUCCEEDED, nothing absent or
	// unexpected (the reconciler folds the runs first). The audit of
	// 50,000 schedules can take longer than an API request may (30 s on
	// a busy machine), so it runs as a large store's is meant to: schedd
	// stopped, `schedd reconcile` on its file, without a time limit.
	to := time.Now().UTC()
	if code, _ := d.proc.signal(t, syscall.SIGTERM, 30*time.Second); code != 0 {
		t.Fatalf("schedd after SIGTERM: exit %d", code)
	}
	r := d.schedd("reconcile", "--store", "sqlite:"+d.store, "-o", "json",
		"--from", due.Add(-time.Minute).Format(time.RFC3339), "--to", to.Format(time.RFC3339))
	var rep struct {
		Totals struct {
			Succeeded, Pending, Absent, Unexpected, Dead, Missed int
		} `json:"totals"`
		Problem bool `json:"problem"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("schedctl reconcile: exit %d, %v; stderr %q", r.code, err, r.stderr)
	}
	if tt := rep.Totals; rep.Problem || tt.Succeeded != n || tt.Pending != 0 || tt.Absent != 0 || tt.Unexpected != 0 {
		t.Errorf("schedctl reconcile: problem %v, totals %+v; want %d SUCCEEDED and nothing else", rep.Problem, tt, n)
	}
	t.Logf("%d firings due at %s: loaded in %s (%s before the due instant); killed at %d received (%d acked), restarted in %s; drained %s after the restart; %d delivered again (%d first seen at a later attempt: their claim's answer lost to the kill), %d acks refused as stale (%d of deliveries after the restart), %d acks given up and taken; whole test %s",
		n, due.Format(time.TimeOnly), loaded.Sub(began).Round(time.Millisecond), due.Sub(loaded).Round(time.Millisecond),
		b.atKill, ackedBeforeKill, restarted.Sub(killedAt).Round(time.Millisecond), drained.Sub(restarted).Round(time.Millisecond),
		redelivered, unseen, refused, refusedAfter, len(lost), time.Since(began).Round(time.Millisecond))
}

const (
	burstFull      = 50_000
	burstShort     = 5_000
	burstConsumers = 4
	burstBatch     = 1000
	burstQueue     = "burst"
	// burstLease is the consumers' claim lease: what was leased and not
	// acked at the kill comes again this long after its claim.
	burstLease = 5 * time.Second
	// burstCreatesPerSecond is the pace the due instant allows the load:
	// about what it ran at on a busy 2-core machine (7,000 to 20,000 a
	// second, idle).
	burstCreatesPerSecond = 10_000
	// burstBound bounds each wait (for the kill, for the drain): a
	// condition not met by then is a failure, not a slow machine.
	burstBound = 3 * time.Minute
	// burstUnseenChecked caps the occurrences read back one by one: those
	// with attempts no consumer saw, and those whose last ack was given
	// up.
	burstUnseenChecked = 200
)

// burstLoad creates n schedules due at due through the batch route
// (POST /v1/schedules:batch), api.MaxBatchItems a request, four requests
// at a time, each retried whole while schedd asks for it (safe: every
// item has an idempotency key), and returns their ids.
func burstLoad(t *testing.T, ctx context.Context, cl *client.Client, n int, due time.Time) map[string]bool {
	t.Helper()
	at := due.Format(time.RFC3339)
	var (
		next atomic.Int64
		mu   sync.Mutex
		ids  = make(map[string]bool, n)
		errs []error
		wg   sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				from := int(next.Add(api.MaxBatchItems)) - api.MaxBatchItems
				if from >= n {
					return
				}
				items := make([]api.BatchItem, 0, api.MaxBatchItems)
				for i := from; i < min(from+api.MaxBatchItems, n); i++ {
					name := fmt.Sprintf("burst-%06d", i)
					items = append(items, api.BatchItem{IdempotencyKey: name, Schedule: api.ScheduleRequest{
						Name: name, Queue: burstQueue, At: at, MisfirePolicy: "fire_once", MaxLateness: "1h"}})
				}
				res, err := burstCreate(ctx, cl, items)
				mu.Lock()
				if err == nil && (res == nil || len(res.Items) != len(items)) {
					err = fmt.Errorf("%d items answered with %d results", len(items), len(res.Items))
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("create burst-%06d..: %w", from, err))
				}
				var got []api.BatchItemResult
				if res != nil {
					got = res.Items
				}
				for _, it := range got {
					if it.Status == api.BatchError || it.Schedule == nil {
						errs = append(errs, fmt.Errorf("create item %d of burst-%06d..: %w", it.Index, from, client.ItemError(it)))
						continue
					}
					ids[it.Schedule.ScheduleID] = true
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("load: %v", errors.Join(errs[:min(len(errs), 5)]...))
	}
	if len(ids) != n {
		t.Fatalf("load: %d schedules created, want %d", len(ids), n)
	}
	return ids
}

// burstCreate sends one batch, again while schedd answers busy or
// rate-limited.
func burstCreate(ctx context.Context, cl *client.Client, items []api.BatchItem) (*api.BatchResult, error) {
	for try := 1; ; try++ {
		res, err := cl.CreateSchedules(ctx, items)
		var e *client.Error
		if err == nil || !errors.As(err, &e) || try == 50 ||
			(e.Code != api.CodeStoreBusy && e.Code != api.CodeRateLimited && e.Status != http.StatusServiceUnavailable) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(min(try, 10)) * 50 * time.Millisecond):
		}
	}
}

// burst is the consumers' record of the burst.
type burst struct {
	cl     *client.Client
	killAt int // received firings at which to SIGKILL
	pid    int // the schedd to kill
	// epoch is 0 until the kill, 1 after: a claim sent in epoch 0 was
	// answered, if at all, by the killed schedd.
	epoch atomic.Int64
	quit  atomic.Bool // the consumers stop after their current claim

	mu       sync.Mutex
	byOcc    map[string][]*burstDelivery // deliveries in the order received
	atKill   int                         // occurrences received when the kill was sent
	killedAt time.Time
	killed   chan struct{} // closed once the kill is sent
	errs     []string
	ids      []string // the consumers' worker ids
}

// burstDelivery is one occurrence as a consumer received it.
type burstDelivery struct {
	occ, sched string
	attempt    int64
	lease      time.Time // its lease, as the claim answered
	received   time.Time
	epoch      int64 // the epoch its claim was sent in
	ackOK      bool  // its ack was accepted
	ackEpoch   int64 // the epoch of the claim whose answer accepted it
	ackRefused bool  // its ack was refused as stale
	ackLost    bool  // its ack was given up after the claim carrying it failed: taken or not
}

// burstAttempts are the attempt numbers of ds.
func burstAttempts(ds []*burstDelivery) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.attempt
	}
	return out
}

func (b *burst) received() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byOcc)
}

func (b *burst) workers() []string {
	return b.ids
}

// consume is one consumer: it claims batches, each carrying the acks of
// the one before, until ctx ends or b.quit is set. A claim that fails (schedd killed or
// restarting) leaves its acks to the next one (whether they were taken is
// unknown, and a repeated ack is accepted again), or, with drop, gives
// them up.
func (b *burst) consume(ctx context.Context, id string, drop bool) {
	b.mu.Lock()
	b.ids = append(b.ids, id)
	b.mu.Unlock()
	var pending []*burstDelivery
	for ctx.Err() == nil && !b.quit.Load() {
		epoch := b.epoch.Load()
		req := api.ClaimRequest{Queue: burstQueue, WorkerID: id, Limit: burstBatch, Lease: burstLease.String(), Wait: "1s"}
		for _, d := range pending {
			req.Acks = append(req.Acks, api.AckItem{OccurrenceID: d.occ, Attempt: d.attempt})
		}
		res, err := b.cl.Claim(ctx, req)
		if err != nil {
			if drop {
				b.mu.Lock()
				for _, d := range pending {
					d.ackLost = true
				}
				b.mu.Unlock()
				pending = nil
			}
			if ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
			}
			continue
		}
		pending = b.record(id, epoch, pending, res)
	}
}

// record notes a claim's answer: the acks of pending it carried, and the
// new deliveries, which it returns. The delivery that brings the count
// received to killAt SIGKILLs schedd, in epoch 0.
func (b *burst) record(id string, epoch int64, pending []*burstDelivery, res *api.ClaimResult) []*burstDelivery {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(res.Acks) != len(pending) {
		b.errs = append(b.errs, fmt.Sprintf("%s: %d acks answered with %d outcomes", id, len(pending), len(res.Acks)))
	}
	for i, a := range res.Acks[:min(len(res.Acks), len(pending))] {
		d := pending[i]
		switch {
		case a.OccurrenceID != d.occ || a.Attempt != d.attempt:
			b.errs = append(b.errs, fmt.Sprintf("%s: ack %d answered for %s attempt %d, sent for %s attempt %d", id, i, a.OccurrenceID, a.Attempt, d.occ, d.attempt))
		case a.Error == nil:
			if !d.ackOK {
				d.ackOK, d.ackEpoch = true, epoch
			}
		case a.Error.Code == api.CodeStaleAttempt:
			d.ackRefused = true
		default:
			b.errs = append(b.errs, fmt.Sprintf("%s: ack of %s attempt %d: %s: %s", id, d.occ, d.attempt, a.Error.Code, a.Error.Message))
		}
	}
	out := make([]*burstDelivery, 0, len(res.Claimed))
	for _, c := range res.Claimed {
		d := &burstDelivery{occ: c.OccurrenceID, sched: c.ScheduleID, attempt: c.Attempt, lease: c.LeaseExpiresAt, received: now, epoch: epoch}
		b.byOcc[d.occ] = append(b.byOcc[d.occ], d)
		out = append(out, d)
	}
	if epoch == 0 && b.killedAt.IsZero() && len(b.byOcc) >= b.killAt {
		b.atKill, b.killedAt = len(b.byOcc), time.Now()
		b.epoch.Store(1)
		if err := syscall.Kill(b.pid, syscall.SIGKILL); err != nil {
			b.errs = append(b.errs, fmt.Sprintf("SIGKILL schedd: %v", err))
		}
		close(b.killed)
	}
	return out
}
