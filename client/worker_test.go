package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// fakeQueue answers claims, heartbeats, acks and nacks with the documented
// JSON, handing out the jobs it is given; it records what the worker sent.
type fakeQueue struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	jobs  []api.Claimed
	added chan struct{}

	claims []api.ClaimRequest
	// heartbeat answers a heartbeat; nil answers a plain renewal.
	heartbeat func(id string, n int) (int, any)
	hbCount   map[string]int
	finished  chan string // "ack occ_1 3", "nack occ_1 3 permanent: msg"
	claimErr  *api.ErrorBody
	claimCode int
	// acksAlone and acksWithClaims count the acks that came on their own
	// and with a claim.
	acksAlone, acksWithClaims atomic.Int32
	// refuseAcks answers a claim that carries acks as a schedd from before
	// them does: 400, an unknown field.
	refuseAcks bool
	// acting records the Sched-Tenant header of each heartbeat, ack and
	// nack, and the tenant of each ack carried by a claim: "beat a t1".
	acting []string
}

func newFakeQueue(t *testing.T) *fakeQueue {
	q := &fakeQueue{t: t, added: make(chan struct{}, 1), hbCount: map[string]int{}, finished: make(chan string, 100)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/claims", q.claim)
	mux.HandleFunc("POST /v1/occurrences/{id}/heartbeat", q.beat)
	mux.HandleFunc("POST /v1/occurrences/{id}/ack", q.ack)
	mux.HandleFunc("POST /v1/occurrences/{id}/nack", q.nack)
	q.srv = httptest.NewServer(mux)
	t.Cleanup(q.srv.Close)
	return q
}

func (q *fakeQueue) client(t *testing.T) *client.Client {
	c, err := client.New("tcp:"+strings.TrimPrefix(q.srv.URL, "http://"), "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (q *fakeQueue) add(jobs ...api.Claimed) {
	q.mu.Lock()
	q.jobs = append(q.jobs, jobs...)
	q.mu.Unlock()
	select {
	case q.added <- struct{}{}:
	default:
	}
}

func (q *fakeQueue) claim(w http.ResponseWriter, r *http.Request) {
	var req api.ClaimRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(400)
		return
	}
	if q.refuseAcks && len(req.Acks) > 0 {
		w.WriteHeader(400)
		json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeBadRequest,
			Message: `the request body is not the JSON expected: json: unknown field "acks"`}})
		return
	}
	var outcomes []api.AckOutcome
	for _, a := range req.Acks {
		q.mu.Lock()
		q.acting = append(q.acting, "claim-ack "+a.OccurrenceID+" "+a.Tenant)
		q.mu.Unlock()
		q.acksWithClaims.Add(1)
		q.finished <- fmt.Sprintf("ack %s %d", a.OccurrenceID, a.Attempt)
		outcomes = append(outcomes, api.AckOutcome{OccurrenceID: a.OccurrenceID, Attempt: a.Attempt})
	}
	wait, _ := time.ParseDuration(req.Wait)
	deadline := time.After(wait)
	for {
		q.mu.Lock()
		q.claims = append(q.claims, req)
		if eb, code := q.claimErr, q.claimCode; eb != nil {
			q.mu.Unlock()
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(eb)
			return
		}
		n := min(req.Limit, len(q.jobs))
		got := q.jobs[:n:n]
		q.jobs = q.jobs[n:]
		q.mu.Unlock()
		if n > 0 {
			json.NewEncoder(w).Encode(api.ClaimResult{Claimed: got, Acks: outcomes})
			return
		}
		select {
		case <-q.added:
		case <-deadline:
			json.NewEncoder(w).Encode(api.ClaimResult{Claimed: []api.Claimed{}, Acks: outcomes})
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (q *fakeQueue) beat(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q.mu.Lock()
	q.acting = append(q.acting, "beat "+id+" "+r.Header.Get(api.HeaderTenant))
	q.hbCount[id]++
	n, hb := q.hbCount[id], q.heartbeat
	q.mu.Unlock()
	status, body := 200, any(api.HeartbeatResult{LeaseExpiresAt: time.Now().Add(time.Second)})
	if hb != nil {
		status, body = hb(id, n)
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func (q *fakeQueue) ack(w http.ResponseWriter, r *http.Request) {
	var req api.AckRequest
	json.NewDecoder(r.Body).Decode(&req)
	q.acksAlone.Add(1)
	q.mu.Lock()
	q.acting = append(q.acting, "ack "+r.PathValue("id")+" "+r.Header.Get(api.HeaderTenant))
	q.mu.Unlock()
	q.finished <- fmt.Sprintf("ack %s %d", r.PathValue("id"), req.Attempt)
	json.NewEncoder(w).Encode(api.Occurrence{OccurrenceID: r.PathValue("id"), State: "SUCCEEDED"})
}

func (q *fakeQueue) nack(w http.ResponseWriter, r *http.Request) {
	var req api.NackRequest
	json.NewDecoder(r.Body).Decode(&req)
	q.mu.Lock()
	q.acting = append(q.acting, "nack "+r.PathValue("id")+" "+r.Header.Get(api.HeaderTenant))
	q.mu.Unlock()
	q.finished <- fmt.Sprintf("nack %s %d %s: %s", r.PathValue("id"), req.Attempt, req.Class, req.Error)
	json.NewEncoder(w).Encode(api.Occurrence{OccurrenceID: r.PathValue("id")})
}

func (q *fakeQueue) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-q.finished:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no ack or nack")
		return ""
	}
}

func job(id string, attempt int64) api.Claimed {
	return api.Claimed{OccurrenceID: id, ScheduleID: "sch_1", Attempt: attempt, Queue: "q", Payload: json.RawMessage(`{"n":1}`)}
}

// runWorker runs w until the test ends and returns a stop function that
// cancels Run and waits for it.
func runWorker(t *testing.T, w *client.Worker) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(10 * time.Second):
				err = errors.New("Run did not return")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

func TestWorkerAcksAndNacks(t *testing.T) {
	q := newFakeQueue(t)
	w := &client.Worker{
		Client: q.client(t), Queue: "q", WorkerID: "w1", Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error {
			switch job.OccurrenceID {
			case "ok":
				if string(job.Payload) != `{"n":1}` {
					return client.Permanent(fmt.Errorf("payload %s", job.Payload))
				}
				return nil
			case "perm":
				return fmt.Errorf("wrapped: %w", client.Permanent(errors.New("bad input")))
			case "panic":
				panic("kaboom")
			default:
				return errors.New("try again")
			}
		},
	}
	runWorker(t, w)
	for i, tc := range []struct{ id, want string }{
		{"ok", "ack ok 1"},
		{"perm", "nack perm 2 permanent: wrapped: bad input"},
		{"retry", "nack retry 3 retryable: try again"},
		{"panic", "nack panic 4 retryable: handler panicked: kaboom\n"}, // and the stack
	} {
		q.add(job(tc.id, int64(i+1)))
		if got := q.next(t); !strings.HasPrefix(got+"\n", tc.want) {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	q.mu.Lock()
	c := q.claims[0]
	q.mu.Unlock()
	if c.Queue != "q" || c.WorkerID != "w1" || c.Limit != 1 || c.Lease != "30s" || c.Wait != "1s" {
		t.Errorf("claim request %+v", c)
	}
}

// A busy worker's acks go with its next claims, and none goes alone.
func TestWorkerAcksRideOnClaims(t *testing.T) {
	q := newFakeQueue(t)
	w := &client.Worker{
		Client: q.client(t), Queue: "q", WorkerID: "w1", Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error { return nil },
	}
	q.add(job("a", 1), job("b", 1), job("c", 1))
	runWorker(t, w)
	for _, want := range []string{"ack a 1", "ack b 1", "ack c 1"} {
		if got := q.next(t); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if alone, with := q.acksAlone.Load(), q.acksWithClaims.Load(); alone != 0 || with != 3 {
		t.Fatalf("%d acks alone and %d with claims, want 0 and 3", alone, with)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.claims[1]; len(c.Acks) != 1 || c.Acks[0] != (api.AckItem{OccurrenceID: "a", Attempt: 1}) {
		t.Fatalf("second claim %+v, want a's ack in it", c)
	}
}

// Against a schedd that refuses acks with claims, the worker acks each on
// its own from then on, and loses none.
func TestWorkerAcksAloneWhenClaimsRefuseThem(t *testing.T) {
	q := newFakeQueue(t)
	q.refuseAcks = true
	w := &client.Worker{
		Client: q.client(t), Queue: "q", WorkerID: "w1", Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error { return nil },
	}
	q.add(job("a", 1), job("b", 1), job("c", 1))
	stop := runWorker(t, w)
	got := map[string]bool{}
	for range 3 {
		got[q.next(t)] = true
	}
	if !got["ack a 1"] || !got["ack b 1"] || !got["ack c 1"] {
		t.Fatalf("acks: %v", got)
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if alone, with := q.acksAlone.Load(), q.acksWithClaims.Load(); alone != 3 || with != 0 {
		t.Fatalf("%d acks alone and %d with claims, want 3 and 0", alone, with)
	}
}

// An ack does not wait for a long poll that is out: it goes alone. The
// poll here lasts a minute, past q.next's patience.
func TestWorkerAckDoesNotWaitForLongPoll(t *testing.T) {
	q := newFakeQueue(t)
	release := make(chan struct{})
	w := &client.Worker{
		Client: q.client(t), Queue: "q", WorkerID: "w1", Wait: time.Minute, Concurrency: 2,
		Handler: func(ctx context.Context, job *client.Job) error { <-release; return nil },
	}
	q.add(job("slow", 1))
	runWorker(t, w)
	// The worker claims again with its free slot and waits in that poll.
	for {
		q.mu.Lock()
		polls := len(q.claims)
		q.mu.Unlock()
		if polls >= 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	if got := q.next(t); got != "ack slow 1" {
		t.Fatalf("got %q", got)
	}
	if alone := q.acksAlone.Load(); alone != 1 {
		t.Fatalf("%d acks alone, want 1", alone)
	}
}

// A claim that carries acks does not long-poll: their answers (the
// "acked" line) come back within a second even though the worker's wait is
// a minute, and the claim after it, with no acks, waits in full.
func TestWorkerAckAnswersNotHeldByLongPoll(t *testing.T) {
	q := newFakeQueue(t)
	logged := make(chan string, 100)
	w := &client.Worker{
		Client: q.client(t), Queue: "q", WorkerID: "w1", Wait: time.Minute,
		Handler: func(ctx context.Context, job *client.Job) error { return nil },
		Logger:  slog.New(messages{logged}),
	}
	q.add(job("a", 1))
	runWorker(t, w)
	if got := q.next(t); got != "ack a 1" {
		t.Fatalf("got %q", got)
	}
	// This test's patience (10 s) is well short of the worker's wait (1m).
	deadline := time.After(10 * time.Second)
	for acked := false; !acked; {
		select {
		case m := <-logged:
			acked = m == "acked"
		case <-deadline:
			t.Fatal(`no "acked" line: the claim that carried the ack is still waiting`)
		}
	}
	for {
		q.mu.Lock()
		claims := slices.Clone(q.claims)
		q.mu.Unlock()
		i := slices.IndexFunc(claims, func(c api.ClaimRequest) bool { return len(c.Acks) > 0 })
		if i < 0 {
			t.Fatalf("no claim carried the ack: %+v", claims)
		}
		if claims[i].Wait != "1s" {
			t.Fatalf("the claim with the ack waits %s, want 1s", claims[i].Wait)
		}
		if j := slices.IndexFunc(claims[i:], func(c api.ClaimRequest) bool { return len(c.Acks) == 0 }); j >= 0 {
			if c := claims[i+j]; c.Wait != "1m0s" {
				t.Fatalf("the claim after the ack waits %s, want 1m0s", c.Wait)
			}
			return
		}
		select {
		case <-deadline:
			t.Fatalf("no claim after the one with the ack: %+v", claims)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// messages is a slog.Handler that sends each record's message to its
// channel (and drops it when the channel is full).
type messages struct{ ch chan<- string }

func (m messages) Enabled(context.Context, slog.Level) bool { return true }
func (m messages) WithAttrs([]slog.Attr) slog.Handler       { return m }
func (m messages) WithGroup(string) slog.Handler            { return m }
func (m messages) Handle(_ context.Context, r slog.Record) error {
	select {
	case m.ch <- r.Message:
	default:
	}
	return nil
}

func TestPermanent(t *testing.T) {
	if client.Permanent(nil) != nil {
		t.Error("Permanent(nil) is not nil")
	}
	base := errors.New("x")
	p := client.Permanent(base)
	if !client.IsPermanent(p) || !errors.Is(p, base) || p.Error() != "x" {
		t.Error("Permanent does not wrap")
	}
	if !client.IsPermanent(fmt.Errorf("ctx: %w", p)) || client.IsPermanent(base) {
		t.Error("IsPermanent")
	}
}

// TestWorkerStopsHandlerWhenSuperseded: a heartbeat saying superseded (or
// canceled) cancels the handler's context with that cause; the worker
// keeps the lease and nacks what the handler returns.
func TestWorkerStopsHandlerWhenSuperseded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hb    api.HeartbeatResult
		cause error
	}{
		{"superseded", api.HeartbeatResult{Superseded: true}, client.ErrSuperseded},
		{"canceled", api.HeartbeatResult{Canceled: true}, client.ErrScheduleCanceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newFakeQueue(t)
			q.heartbeat = func(string, int) (int, any) { return 200, tc.hb }
			causes := make(chan error, 1)
			w := &client.Worker{
				Client: q.client(t), Queue: "q", Lease: time.Second, Wait: time.Second,
				Handler: func(ctx context.Context, job *client.Job) error {
					<-ctx.Done()
					causes <- context.Cause(ctx)
					return ctx.Err()
				},
			}
			runWorker(t, w)
			q.add(job("o1", 1))
			if cause := <-causes; !errors.Is(cause, tc.cause) {
				t.Fatalf("cause %v, want %v", cause, tc.cause)
			}
			if got := q.next(t); got != "nack o1 1 retryable: context canceled" {
				t.Fatalf("got %q", got)
			}
		})
	}
}

// TestWorkerLeaseLost: a heartbeat refused as stale means another attempt
// owns the occurrence: the handler is canceled with ErrLeaseLost.
func TestWorkerLeaseLost(t *testing.T) {
	q := newFakeQueue(t)
	q.heartbeat = func(string, int) (int, any) {
		return 409, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeStaleAttempt, Message: "attempt 1 is stale"}}
	}
	causes := make(chan error, 1)
	w := &client.Worker{
		Client: q.client(t), Queue: "q", Lease: time.Second, Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil
		},
	}
	runWorker(t, w)
	q.add(job("o1", 1))
	if cause := <-causes; !errors.Is(cause, client.ErrLeaseLost) || !strings.Contains(cause.Error(), "stale") {
		t.Fatalf("cause %v", cause)
	}
	q.next(t) // the ack is still tried: schedd decides whether it stands
}

// TestWorkerLeaseRunsOut: heartbeats that keep failing in transit cancel
// the handler once the lease has run out by the worker's own clock.
func TestWorkerLeaseRunsOut(t *testing.T) {
	q := newFakeQueue(t)
	q.heartbeat = func(string, int) (int, any) {
		return 503, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeStoreBusy}}
	}
	start := make(chan time.Time, 1)
	causes := make(chan error, 1)
	w := &client.Worker{
		Client: q.client(t), Queue: "q", Lease: time.Second, Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error {
			start <- time.Now()
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		},
	}
	runWorker(t, w)
	q.add(job("o1", 1))
	t0 := <-start
	cause := <-causes
	if !errors.Is(cause, client.ErrLeaseLost) {
		t.Fatalf("cause %v", cause)
	}
	if el := time.Since(t0); el < 900*time.Millisecond || el > 3*time.Second {
		t.Errorf("canceled after %v, want about the lease (1s)", el)
	}
	q.mu.Lock()
	n := q.hbCount["o1"]
	q.mu.Unlock()
	if n < 2 {
		t.Errorf("%d heartbeats, want a few", n)
	}
}

// TestWorkerHeartbeatsKeepLease: a handler longer than the lease keeps it
// through heartbeats every lease/3 and is acked.
func TestWorkerHeartbeatsKeepLease(t *testing.T) {
	q := newFakeQueue(t)
	w := &client.Worker{
		Client: q.client(t), Queue: "q", Lease: time.Second, Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(1500 * time.Millisecond):
				return nil
			}
		},
	}
	runWorker(t, w)
	q.add(job("o1", 7))
	if got := q.next(t); got != "ack o1 7" {
		t.Fatalf("got %q", got)
	}
	q.mu.Lock()
	n := q.hbCount["o1"]
	q.mu.Unlock()
	if n < 3 || n > 5 {
		t.Errorf("%d heartbeats in 1.5s with a 1s lease, want about 4", n)
	}
}

// TestWorkerDrains: when Run's context ends, it stops claiming, lets the
// running handlers finish with their contexts intact, acks them, and only
// then returns.
func TestWorkerDrains(t *testing.T) {
	q := newFakeQueue(t)
	started := make(chan struct{}, 2)
	release := make(chan struct{})
	var canceled atomic.Bool
	w := &client.Worker{
		Client: q.client(t), Queue: "q", Concurrency: 2, Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error {
			started <- struct{}{}
			<-release
			canceled.Store(ctx.Err() != nil)
			return nil
		},
	}
	stop := runWorker(t, w)
	q.add(job("a", 1), job("b", 1))
	<-started
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case err := <-stopped:
		t.Fatalf("Run returned (%v) with handlers still running", err)
	case <-time.After(200 * time.Millisecond):
	}
	q.add(job("c", 1)) // must not be claimed any more
	close(release)
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if canceled.Load() {
		t.Error("a draining handler's context was canceled")
	}
	got := []string{q.next(t), q.next(t)}
	if !(got[0] == "ack a 1" && got[1] == "ack b 1" || got[0] == "ack b 1" && got[1] == "ack a 1") {
		t.Errorf("finished %v", got)
	}
	q.mu.Lock()
	left := len(q.jobs)
	q.mu.Unlock()
	if left != 1 {
		t.Errorf("job c was claimed after the drain began")
	}
}

// TestWorkerConcurrency: never more than Concurrency handlers at once,
// and claims never ask for more than the free slots.
func TestWorkerConcurrency(t *testing.T) {
	q := newFakeQueue(t)
	var running, peak atomic.Int32
	w := &client.Worker{
		Client: q.client(t), Queue: "q", Concurrency: 3, Wait: time.Second,
		Handler: func(ctx context.Context, job *client.Job) error {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(30 * time.Millisecond)
			running.Add(-1)
			return nil
		},
	}
	runWorker(t, w)
	for i := range 12 {
		q.add(job(fmt.Sprintf("o%d", i), 1))
	}
	for range 12 {
		q.next(t)
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want up to 3", p)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range q.claims {
		if c.Limit < 1 || c.Limit > 3 {
			t.Errorf("claim asked for %d", c.Limit)
		}
	}
}

func TestWorkerFatalClaimError(t *testing.T) {
	q := newFakeQueue(t)
	q.claimCode, q.claimErr = 401, &api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeUnauthorized, Message: "bad token"}}
	w := &client.Worker{Client: q.client(t), Queue: "q", Handler: func(context.Context, *client.Job) error { return nil }}
	err := w.Run(context.Background())
	if !client.IsUnauthorized(err) {
		t.Fatalf("Run: %v, want unauthorized", err)
	}
}

func TestWorkerRetriesTransientClaimErrors(t *testing.T) {
	q := newFakeQueue(t)
	q.mu.Lock()
	q.claimCode, q.claimErr = 503, &api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeUnavailable, Message: "starting"}}
	q.mu.Unlock()
	w := &client.Worker{Client: q.client(t), Queue: "q", Wait: time.Second, Handler: func(context.Context, *client.Job) error { return nil }}
	runWorker(t, w)
	time.Sleep(300 * time.Millisecond)
	q.mu.Lock()
	q.claimErr, q.claimCode = nil, 0
	q.mu.Unlock()
	q.add(job("o1", 1))
	if got := q.next(t); got != "ack o1 1" {
		t.Fatalf("got %q", got)
	}
}

func TestWorkerConfig(t *testing.T) {
	c, _ := client.New("tcp:127.0.0.1:1", "")
	h := func(context.Context, *client.Job) error { return nil }
	for _, w := range []*client.Worker{
		{Queue: "q", Handler: h},
		{Client: c, Handler: h},
		{Client: c, Queue: "q"},
		{Client: c, Queue: "q", Handler: h, Lease: 500 * time.Millisecond},
		{Client: c, Queue: "q", Handler: h, Wait: 6 * time.Minute},
		{Client: c, Queue: "q", Handler: h, Concurrency: -1},
	} {
		if err := w.Run(context.Background()); err == nil {
			t.Errorf("%+v: no error", w)
		}
	}
}
