package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/metrics"
)

// rawRequest writes head (a request's line and headers, no body) on a new
// connection to the harness and reads the answer. The read deadline only
// guards against a hang; the point is that the answer comes without a
// body having been sent.
func rawRequest(t *testing.T, h *harness, head string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", h.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to headers alone: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// A declared Content-Length over MaxBody is refused from the headers, at
// once, with 413 payload_too_large: the server does not wait for a body it
// would refuse.
func TestHugeContentLengthRefusedFromHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, path := range []string{"/v1/schedules", "/v1/claims", "/v1/nowhere"} {
		resp, raw := rawRequest(t, h, "POST "+path+" HTTP/1.1\r\nHost: sched\r\nContent-Type: application/json\r\nContent-Length: 100000000000000\r\n\r\n")
		var eb api.ErrorBody
		if err := json.Unmarshal(raw, &eb); err != nil {
			t.Fatalf("%s: not an error body: %s", path, raw)
		}
		if resp.StatusCode != 413 || eb.Error.Code != api.CodeTooLarge || !strings.Contains(eb.Error.Message, "1048576") {
			t.Fatalf("%s: %d %+v, want 413 %s naming the limit", path, resp.StatusCode, eb.Error, api.CodeTooLarge)
		}
	}
	// One byte over the limit is refused too; at the limit the body is read
	// (and judged on its content).
	resp, _ := rawRequest(t, h, "POST /v1/schedules HTTP/1.1\r\nHost: sched\r\nContent-Length: 1048577\r\n\r\n")
	if resp.StatusCode != 413 {
		t.Fatalf("MaxBody+1: %d, want 413", resp.StatusCode)
	}
	h.fails(400, api.CodeBadRequest, "", "POST", "/v1/schedules", strings.Repeat(" ", MaxBody))
}

// The cap on claims with a wait: with it at 2 (and a tenant allowed all
// of it), two long polls hold, a third, another tenant's, is answered 429
// too_many_waiting at once (with Retry-After) naming the daemon's cap and
// counted under it, a claim without a wait is still served, and once a
// long poll returns a new one is taken.
func TestWaitingClaimsCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withLimits(func(c *Config) { c.MaxWaitingClaims, c.MaxWaitingClaimsPerTenant = 2, 2 }))
	type res struct {
		queue string
		cl    api.ClaimResult
	}
	done := make(chan res, 3)
	poll := func(queue string) {
		go func() {
			var cl api.ClaimResult
			code, raw := h.do("POST", "/v1/claims", api.ClaimRequest{Queue: queue, WorkerID: "w-" + queue, Wait: "5m"})
			if code != 200 || json.Unmarshal(raw, &cl) != nil {
				t.Errorf("long poll on %s: %d %s", queue, code, raw)
			}
			done <- res{queue, cl}
		}()
	}
	waitFor := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); len(h.srv.waitSlots) != n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d claims waiting, want %d", len(h.srv.waitSlots), n)
			}
		}
	}
	poll("a")
	poll("b")
	waitFor(2)

	if _, _, err := h.eng.Tenants.Create(t.Context(), "other", engine.TenantPatch{}); err != nil {
		t.Fatal(err)
	}
	body := strings.NewReader(`{"queue":"c","worker_id":"w","wait":"5m"}`)
	req, _ := http.NewRequest("POST", h.asTenant("other").ts.URL+"/v1/claims", body)
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var eb api.ErrorBody
	_ = json.Unmarshal(raw, &eb)
	if resp.StatusCode != 429 || eb.Error.Code != api.CodeTooManyWaiting || !strings.Contains(eb.Error.Message, "already serves 2 claims with a wait") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third long poll: %d %s Retry-After %q, want 429 %s naming the limit", resp.StatusCode, raw, resp.Header.Get("Retry-After"), api.CodeTooManyWaiting)
	}
	if got := counterValue(t, h.srv.cfg.Metrics.Limits.WaitingClaimsRefused.WithLabelValues(metrics.CapDaemon)); got != 1 {
		t.Fatalf("sched_waiting_claims_refused_total{cap=daemon} %v, want 1", got)
	}
	// Without a wait a claim is not counted.
	var cl api.ClaimResult
	h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "c", WorkerID: "w"})

	// Something due on queue a ends its long poll; its slot is free again.
	s := everyMinute("on-a")
	s.Queue = "a"
	h.create(s)
	h.plan(time.Minute)
	select {
	case r := <-done:
		if r.queue != "a" || len(r.cl.Claimed) != 1 {
			t.Fatalf("returned long poll: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll on a did not return")
	}
	waitFor(1)
	poll("c")
	waitFor(2)

	h.srv.Drain() // ends the two long polls still waiting
	for range 2 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a long poll did not end at the drain")
		}
	}
}
