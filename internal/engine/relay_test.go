package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/target/kinds"
	"github.com/sched-dev/sched/internal/target/nats/natstest"
	"github.com/sched-dev/sched/internal/target/webhook/webhooktest"
	"github.com/sched-dev/sched/internal/testio"
	"github.com/sched-dev/sched/internal/timetable"
)

// receiver is a webhook endpoint on loopback that records what it was
// sent and answers with status (200 when it returns 0).
type receiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	ids    []string
	bodies []string
	status func() (int, http.Header)
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("webhook-id"))
		r.bodies = append(r.bodies, string(b))
		status := r.status
		r.mu.Unlock()
		code := http.StatusOK
		if status != nil {
			var h http.Header
			code, h = status()
			for k, v := range h {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(code)
		fmt.Fprint(w, "answer "+http.StatusText(code))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) answer(code int, h http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = func() (int, http.Header) { return code, h }
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// targetKinds are the kinds a test's engine opens targets with: webhooks
// may reach loopback, where the tests' receivers listen, and their dialer
// fails the test if asked for anything else.
func targetKinds(tb testing.TB) TargetKinds {
	return kinds.New(kinds.Options{WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		WebhookDial: webhooktest.LoopbackDial(tb), Name: "engine test"})
}

// withTargets gives a harness's engine targetKinds.
func withTargets(tb testing.TB) func(*Config) {
	return func(c *Config) { c.TargetKinds = targetKinds(tb) }
}

// webhookTarget creates the tenant's webhook target name at url.
func (h *harness) webhookTarget(name, url string) *TargetInfo {
	h.t.Helper()
	cfg, _ := json.Marshal(map[string]string{"url": url})
	tg, err := h.e.Targets.Create(h.ctx, tenant, name, TargetSpec{Kind: record.TargetWebhook, Config: cfg})
	if err != nil {
		h.t.Fatalf("create target %s: %v", name, err)
	}
	return tg
}

// relayOnce runs one batch of the relay for the tenant's target name,
// carrying acks, with no wait: what one turn of a relay loop does.
func (h *harness) relayOnce(name string, acks []AckItem) (next []AckItem, claimed, delivered int) {
	h.t.Helper()
	tg, err := h.st.GetTarget(h.ctx, tenant, name)
	if err != nil {
		h.t.Fatal(err)
	}
	s, err := h.e.relay.kinds.Open(*tg)
	if err != nil {
		h.t.Fatal(err)
	}
	defer s.Close()
	req := h.e.relay.claimRequest(*tg)
	req.Wait = 0
	next, claimed, delivered, err = h.e.relay.batch(h.ctx, s, req, acks)
	if err != nil {
		h.t.Fatalf("relay %s: %v", name, err)
	}
	return next, claimed, delivered
}

// fireOnce creates a schedule naming target that fires once, 10 s from
// the harness's now, moves the clock there and runs one relay batch: the
// firing's occurrence id, the batch's acks, and what it claimed and
// delivered.
func (h *harness) fireOnce(target string) (id string, acks []AckItem, claimed, delivered int) {
	h.t.Helper()
	sc := h.create(atTarget("ping", target, h.clk.Now().Add(10*time.Second)))
	h.advance(10 * time.Second)
	acks, claimed, delivered = h.relayOnce(target, nil)
	return h.occurrences(sc.ScheduleID)[0].OccurrenceID, acks, claimed, delivered
}

func atTarget(name, target string, at time.Time) schedule.Settings {
	return schedule.Settings{Name: name, Target: target, Kind: timetable.KindAt, Expr: at.Format(time.RFC3339)}
}

// TestRelayDeliversToAWebhook: a schedule naming a webhook target is
// planned into the target's queue and delivered by the relay under its
// occurrence id, then acked: SUCCEEDED, and no worker can claim it.
func TestRelayDeliversToAWebhook(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T10:00:00Z")
		h := open(t, start, withTargets(t))
		rc := newReceiver(t)
		tg := h.webhookTarget("hooks", rc.srv.URL)
		if !strings.HasPrefix(tg.NewSecret, "whsec_") || !tg.SecretSet {
			t.Fatalf("create: secret %q set %v; want a whsec_ secret shown once", tg.NewSecret, tg.SecretSet)
		}
		if got, err := h.e.Targets.Get(h.ctx, tenant, "hooks"); err != nil || got.Secret != "" || got.NewSecret != "" || !got.SecretSet {
			t.Fatalf("get: %+v, %v; want no secret, secret_set", got, err)
		}
		sc := h.create(atTarget("ping", "hooks", start.Add(10*time.Second)))
		if sc.Queue != record.TargetQueue("hooks") {
			t.Fatalf("queue %q; want the target's", sc.Queue)
		}
		h.advance(10 * time.Second)
		// No worker can claim a target's firings, under any spelling.
		if _, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: sc.Queue, WorkerID: "w"}); err == nil {
			t.Fatal("a worker claimed the target's queue")
		}
		acks, claimed, delivered := h.relayOnce("hooks", nil)
		if claimed != 1 || delivered != 1 {
			t.Fatalf("relay: claimed %d, delivered %d; want 1, 1", claimed, delivered)
		}
		occ := h.occurrences(sc.ScheduleID)[0]
		if got := rc.got(); len(got) != 1 || got[0] != occ.OccurrenceID {
			t.Fatalf("receiver got %v; want [%s]", got, occ.OccurrenceID)
		}
		h.relayOnce("hooks", acks) // the acks ride on the next claim
		if o := h.got(occ.OccurrenceID); o.State != record.OccurrenceSucceeded || o.AttemptCount != 1 {
			t.Fatalf("after the ack: %s after %d attempts; want SUCCEEDED after 1", o.State, o.AttemptCount)
		}
	})
}

// TestRelayFailures: a receiver's answers become the queue's outcomes:
// 5xx a retry with the schedule's backoff, 429 a retry no sooner than its
// Retry-After, 404 DEAD at once with the status in the reason.
func TestRelayFailures(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		for _, tc := range []struct {
			name  string
			code  int
			h     http.Header
			state record.OccurrenceState
			after time.Duration // the retry no sooner than this after the failure
			err   string
		}{
			{"server error", 503, nil, record.OccurrenceRetryWait, 0, "503"},
			{"throttled", 429, http.Header{"Retry-After": {"120"}}, record.OccurrenceRetryWait, 120 * time.Second, "429"},
			{"not found", 404, nil, record.OccurrenceDead, 0, "404 Not Found"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				start := utc("2027-01-04T10:00:00Z")
				h := open(t, start, withTargets(t))
				rc := newReceiver(t)
				rc.answer(tc.code, tc.h)
				h.webhookTarget("hooks", rc.srv.URL)
				id, _, claimed, delivered := h.fireOnce("hooks")
				if claimed != 1 || delivered != 0 {
					t.Fatalf("relay: claimed %d, delivered %d; want 1, 0", claimed, delivered)
				}
				o := h.got(id)
				if o.State != tc.state {
					t.Fatalf("state %s; want %s", o.State, tc.state)
				}
				as, err := h.e.Queue.Attempts(h.ctx, store.ListAttemptsParams{TenantID: tenant, OccurrenceID: o.OccurrenceID, Limit: 10})
				if err != nil || len(as) != 1 || !strings.Contains(as[0].Error, tc.err) {
					t.Fatalf("attempts %+v, %v; want one whose error names %q", as, err, tc.err)
				}
				if tc.after > 0 && o.AvailableAt.Before(h.clk.Now().Add(tc.after).Truncate(time.Millisecond)) {
					t.Errorf("retry at %s; want no sooner than Retry-After, %s", o.AvailableAt, h.clk.Now().Add(tc.after))
				}
			})
		}
	})
}

// TestRelayRedeliversUnderTheSameID: a relay that sent a batch and died
// before its ack (its claim never acked) leaves the firing to come back
// after the lease; the next attempt is sent under the same occurrence id,
// so the receiver can drop it as a duplicate.
func TestRelayRedeliversUnderTheSameID(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-04T10:00:00Z")
	h := newHarness(t, start, withTargets(t))
	rc := newReceiver(t)
	h.webhookTarget("hooks", rc.srv.URL)
	id, _, _, _ := h.fireOnce("hooks") // sent; its ack is lost with the relay
	h.advance(relayLease + time.Second)
	acks, claimed, delivered := h.relayOnce("hooks", nil)
	if claimed != 1 || delivered != 1 {
		t.Fatalf("after the lease: claimed %d, delivered %d; want 1, 1", claimed, delivered)
	}
	h.relayOnce("hooks", acks)
	if got := rc.got(); len(got) != 2 || got[0] != id || got[1] != id {
		t.Fatalf("receiver got %v; want %s twice", got, id)
	}
	if o := h.got(id); o.State != record.OccurrenceSucceeded || o.AttemptCount != 2 {
		t.Fatalf("%s after %d attempts; want SUCCEEDED after 2", o.State, o.AttemptCount)
	}
}

// TestTargetsBelongToTheirTenant: a tenant can neither see nor name
// another tenant's target, and a target that schedules still name cannot
// be deleted.
func TestTargetsBelongToTheirTenant(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T10:00:00Z")
		h := open(t, start, withTargets(t))
		if _, _, err := h.e.Tenants.Create(h.ctx, "other", TenantPatch{}); err != nil {
			t.Fatal(err)
		}
		h.webhookTarget("hooks", "http://127.0.0.1:9/")
		if _, err := h.e.Targets.Get(h.ctx, "other", "hooks"); !errors.Is(err, ErrNotFound) {
			t.Errorf("another tenant's get: %v; want not found", err)
		}
		if l, err := h.e.Targets.List(h.ctx, "other"); err != nil || len(l) != 0 {
			t.Errorf("another tenant's list: %v, %v; want none", l, err)
		}
		_, _, err := h.e.Control.Create(h.ctx, "other", "", atTarget("x", "hooks", start.Add(time.Hour)))
		var ve *schedule.ValidationError
		if !errors.As(err, &ve) || ve.Field != "target" {
			t.Errorf("another tenant's schedule naming it: %v; want invalid target", err)
		}
		sc := h.create(atTarget("x", "hooks", start.Add(time.Hour)))
		if err := h.e.Targets.Delete(h.ctx, tenant, "hooks"); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "1 schedules") {
			t.Errorf("delete while a schedule names it: %v; want a conflict naming it", err)
		}
		if _, err := h.e.Control.Cancel(h.ctx, tenant, sc.ScheduleID); err != nil {
			t.Fatal(err)
		}
		if err := h.e.Targets.Delete(h.ctx, tenant, "hooks"); err != nil {
			t.Errorf("delete after the cancel: %v", err)
		}
	})
}

// TestBreakerBacksAFailingTargetOff: a target starts with one probe at a
// time; a delivery opens full batches to every loop; a batch with no
// delivery goes back to probes, the next after a doubling pause.
func TestBreakerBacksAFailingTargetOff(t *testing.T) {
	t.Parallel()
	clk := clock.NewVirtual(utc("2027-01-04T10:00:00Z"))
	b := newBreaker(clk)
	admit := func(want int, wantProbe bool) {
		t.Helper()
		n, probe, ok := b.admit(t.Context())
		if n != want || probe != wantProbe || !ok {
			t.Fatalf("admit = %d, probe %v, %v; want %d, probe %v", n, probe, ok, want, wantProbe)
		}
	}
	admit(1, true) // unproven: a probe
	b.record(true)
	b.release(true)
	admit(relayBatch, false) // proven: full batches, for every loop
	admit(relayBatch, false)
	b.record(false) // a batch with no delivery
	for i, pause := range []time.Duration{relayBreakMin, 2 * relayBreakMin, 4 * relayBreakMin} {
		waiting := make(chan int)
		go func() { n, _, _ := b.admit(t.Context()); waiting <- n }()
		for clk.Pending() == 0 {
			time.Sleep(time.Millisecond) // the loop waits out the pause
		}
		select {
		case n := <-waiting:
			t.Fatalf("failure %d: admitted %d during the pause", i+1, n)
		default:
		}
		clk.Advance(pause)
		if n := <-waiting; n != 1 {
			t.Fatalf("failure %d: after the pause admitted %d; want a probe of 1", i+1, n)
		}
		b.record(false)
		b.release(true)
	}
}

// natsTarget creates the tenant's nats target name publishing to subject.
func (h *harness) natsTarget(name, subject string) {
	h.t.Helper()
	cfg, _ := json.Marshal(map[string]string{"subject": subject, "url": natstest.URL})
	if _, err := h.e.Targets.Create(h.ctx, tenant, name, TargetSpec{Kind: record.TargetNATS, Config: cfg}); err != nil {
		h.t.Fatalf("create target %s: %v", name, err)
	}
}

// TestRelayStreamRefusesThenReplay: a subject no stream takes is a
// retryable failure naming the subject, until the attempts run out and
// the firing is DEAD; once a stream takes the subject, a replay delivers
// it under the same occurrence id, and the stream holds it once.
func TestRelayStreamRefusesThenReplay(t *testing.T) {
	t.Parallel()
	_, js := natstest.Connect(t)
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T10:00:00Z")
		h := open(t, start, withTargets(t))
		stream := fmt.Sprintf("relay_refuses_%d", time.Now().UnixNano())
		subject := stream + ".fire"
		h.natsTarget("orders", subject)
		s := atTarget("ping", "orders", start.Add(10*time.Second))
		s.Retry = record.RetryPolicy{MaxAttempts: 2, BackoffBase: time.Second, BackoffCap: time.Second}
		sc := h.create(s)
		h.advance(10 * time.Second)
		h.relayOnce("orders", nil)
		id := h.occurrences(sc.ScheduleID)[0].OccurrenceID
		if o := h.got(id); o.State != record.OccurrenceRetryWait {
			t.Fatalf("after a publish no stream took: %s; want RETRY_WAIT", o.State)
		}
		h.advance(2 * time.Second)
		h.relayOnce("orders", nil)
		o := h.got(id)
		if o.State != record.OccurrenceDead || o.DeadReason != record.DeadAttemptsExhausted {
			t.Fatalf("after the second: %s (%s); want DEAD, attempts exhausted", o.State, o.DeadReason)
		}
		as, err := h.e.Queue.Attempts(h.ctx, store.ListAttemptsParams{TenantID: tenant, OccurrenceID: id, Limit: 10})
		if err != nil || len(as) != 2 || !strings.Contains(as[1].Error, subject) {
			t.Fatalf("attempts %+v, %v; want two whose error names the subject", as, err)
		}

		str, err := js.CreateStream(h.ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject},
			Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { js.DeleteStream(context.Background(), stream) })
		if _, err := h.e.Queue.Replay(h.ctx, tenant, id); err != nil {
			t.Fatal(err)
		}
		acks, _, delivered := h.relayOnce("orders", nil)
		if delivered != 1 {
			t.Fatalf("after the replay: delivered %d; want 1", delivered)
		}
		h.relayOnce("orders", acks)
		if o := h.got(id); o.State != record.OccurrenceSucceeded {
			t.Fatalf("after the replay's ack: %s; want SUCCEEDED", o.State)
		}
		m, err := str.GetLastMsgForSubject(h.ctx, subject)
		if err != nil || m.Header.Get(natsio.MsgIdHdr) != id || m.Header.Get("Sched-Attempt") != "3" {
			t.Fatalf("the stream's message: %v, %v; want %s, attempt 3", m, err, id)
		}
		if info, err := str.Info(h.ctx); err != nil || info.State.Msgs != 1 {
			t.Fatalf("the stream holds %v messages (%v); want 1", info.State.Msgs, err)
		}
	})
}

// TestReplayNeedsItsTarget: a DEAD firing whose target was deleted is not
// replayed (it would wait for a relay that never comes): Replay says why,
// and the dead-letter queue's replay leaves it DEAD without looping.
func TestReplayNeedsItsTarget(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-04T10:00:00Z")
	h := newHarness(t, start, withTargets(t))
	rc := newReceiver(t)
	rc.answer(http.StatusNotFound, nil)
	h.webhookTarget("hooks", rc.srv.URL)
	id, _, _, _ := h.fireOnce("hooks")
	if err := h.e.Targets.Delete(h.ctx, tenant, "hooks"); err != nil {
		t.Fatal(err) // the at schedule is COMPLETED: nothing names the target
	}
	if _, err := h.e.Queue.Replay(h.ctx, tenant, id); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `target "hooks" no longer exists`) {
		t.Fatalf("replay: %v; want a conflict naming the target", err)
	}
	ids, more, err := h.e.Queue.ReplayDead(h.ctx, DLQFilter{TenantID: tenant}, 1)
	if err != nil || len(ids) != 0 || more {
		t.Fatalf("dlq replay: %v, more %v, %v; want nothing and no more", ids, more, err)
	}
	if o := h.got(id); o.State != record.OccurrenceDead {
		t.Fatalf("%s; want still DEAD", o.State)
	}
}

// resolveTo is a resolver that answers every name with addr.
type resolveTo netip.Addr

func (r resolveTo) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// TestRelayRefusesForbiddenAddresses: a webhook whose name resolves to a
// loopback, private or cloud metadata address is never connected to (the
// dialer fails the test if asked): the firing goes DEAD at once, its
// reason naming the address, and the relay logs it.
func TestRelayRefusesForbiddenAddresses(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"169.254.169.254", "10.1.2.3", "127.0.0.1", "::1"} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			start := utc("2027-01-04T10:00:00Z")
			var logged testio.SyncBuffer
			h := newHarness(t, start, func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
				c.TargetKinds = kinds.New(kinds.Options{
					WebhookResolver: resolveTo(netip.MustParseAddr(addr)),
					WebhookDial:     webhooktest.LoopbackDial(t), // fails the test if asked
				})
			})
			h.webhookTarget("hooks", "http://hooks.example.test/sched")
			id, _, claimed, delivered := h.fireOnce("hooks")
			if claimed != 1 || delivered != 0 {
				t.Fatalf("relay: claimed %d, delivered %d; want 1, 0", claimed, delivered)
			}
			o := h.got(id)
			if o.State != record.OccurrenceDead || o.DeadReason != record.DeadPermanentFailure {
				t.Fatalf("%s (%s); want DEAD, permanent", o.State, o.DeadReason)
			}
			as, err := h.e.Queue.Attempts(h.ctx, store.ListAttemptsParams{TenantID: tenant, OccurrenceID: o.OccurrenceID, Limit: 10})
			if err != nil || len(as) != 1 || !strings.Contains(as[0].Error, addr) {
				t.Fatalf("attempts %+v, %v; want one whose error names %s", as, err, addr)
			}
			if !strings.Contains(logged.String(), addr) {
				t.Errorf("the log does not name %s:\n%s", addr, logged.String())
			}
		})
	}
}

// TestDeleteWaitsForOwedFirings: a target whose queue still holds a
// firing waiting to be retried is not deleted; once it is delivered, it
// is.
func TestDeleteWaitsForOwedFirings(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T10:00:00Z")
		h := open(t, start, withTargets(t))
		rc := newReceiver(t)
		rc.answer(http.StatusServiceUnavailable, nil)
		h.webhookTarget("hooks", rc.srv.URL)
		h.fireOnce("hooks") // RETRY_WAIT; the at schedule is COMPLETED
		err := h.e.Targets.Delete(h.ctx, tenant, "hooks")
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "owes 1 firings") {
			t.Fatalf("delete with a firing waiting: %v; want a conflict saying it owes 1", err)
		}
		rc.answer(http.StatusOK, nil)
		h.advance(time.Hour) // past any backoff
		acks, _, delivered := h.relayOnce("hooks", nil)
		if delivered != 1 {
			t.Fatalf("the retry: delivered %d; want 1", delivered)
		}
		h.relayOnce("hooks", acks)
		if err := h.e.Targets.Delete(h.ctx, tenant, "hooks"); err != nil {
			t.Fatalf("delete once delivered: %v", err)
		}
	})
}

// TestRelaySendEndsInsideTheLease: a receiver slower than the claims'
// lease does not hold its firings past it: the send is cut short before
// the lease ends and the firing is recorded as a retryable failure, so no
// other loop or node can claim it while it is still being sent.
func TestRelaySendEndsInsideTheLease(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-04T10:00:00Z")
	h := newHarness(t, start, func(c *Config) { withTargets(t)(c); c.relayLease = 2 * time.Second })
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	h.webhookTarget("slow", slow.URL)
	id, _, claimed, delivered := h.fireOnce("slow")
	if claimed != 1 || delivered != 0 {
		t.Fatalf("relay: claimed %d, delivered %d; want 1, 0", claimed, delivered)
	}
	o := h.got(id)
	if o.State != record.OccurrenceRetryWait {
		t.Fatalf("%s; want RETRY_WAIT: the send was cut short inside the lease", o.State)
	}
}
