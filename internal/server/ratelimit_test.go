package server

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

func withLimits(f func(*Config)) option { return func(c *Config, _ *[]sqlite.Option) { f(c) } }

// fakeNow is a settable clock for the rate limiter.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

// limitClock makes h's limiter read a clock the test moves.
func limitClock(h *harness) *fakeNow {
	f := &fakeNow{t: start}
	h.srv.limits.now = f.now
	return f
}

// get sends GET path and returns the status, the Retry-After header and
// the error body (if any).
func (h *harness) getLimited(path string) (int, string, api.ErrorDetail) {
	h.t.Helper()
	resp, err := h.client.Get(h.ts.URL + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(raw, &eb); err != nil {
			h.t.Fatalf("GET %s: %d, not an error body: %s", path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), eb.Error
}

// A tenant's /v1 requests past its burst are answered 429 rate_limited
// with Retry-After and a message naming the quota; the bucket refills at
// the rate; the probes and /metrics are never limited.
func TestAPIRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withLimits(func(c *Config) { c.APIRate, c.APIBurst = 2, 3 }))
	clk := limitClock(h)
	for i := range 3 {
		if code, _, e := h.getLimited("/v1/status"); code != 200 {
			t.Fatalf("request %d within the burst: %d %+v", i, code, e)
		}
	}
	code, retry, e := h.getLimited("/v1/schedules")
	if code != 429 || e.Code != api.CodeRateLimited || retry != "1" ||
		e.Message != "API request rate quota of 2 requests/s exceeded; retry after 1s" {
		t.Fatalf("past the burst: %d Retry-After %q %+v", code, retry, e)
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _, e := h.getLimited(p); code != 200 {
			t.Fatalf("%s while limited: %d %+v", p, code, e)
		}
	}
	// Half a second at 2/s is one request, and only one.
	clk.advance(500 * time.Millisecond)
	if code, _, e := h.getLimited("/v1/status"); code != 200 {
		t.Fatalf("after a refill: %d %+v", code, e)
	}
	if code, _, _ := h.getLimited("/v1/status"); code != 429 {
		t.Fatalf("a second request after one token's refill: %d, want 429", code)
	}
	// A long pause refills the bucket to its burst, no more.
	clk.advance(time.Hour)
	for i := range 3 {
		if code, _, e := h.getLimited("/v1/status"); code != 200 {
			t.Fatalf("request %d after a pause: %d %+v", i, code, e)
		}
	}
	if code, _, _ := h.getLimited("/v1/status"); code != 429 {
		t.Fatalf("past the burst after a pause: %d, want 429", code)
	}
}

// APIRateFor gives a tenant its own quota; ok false falls back to the
// configured one. Retry-After is whole seconds, rounded up.
func TestAPIRateFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		rate        float64
		burst       int
		ok          bool
		allowed     int
		retry, text string
	}{
		{"override", 0.25, 2, true, 2, "4", "API request rate quota of 0.25 requests/s exceeded; retry after 4s"},
		{"override without a burst", 0.5, 0, true, 1, "2", "API request rate quota of 0.5 requests/s exceeded; retry after 2s"},
		{"no override", 100, 100, false, 4, "1", "API request rate quota of 1000 requests/s exceeded; retry after 1s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			var mu sync.Mutex
			h := newHarness(t, withLimits(func(c *Config) {
				c.APIRate, c.APIBurst = 1000, 4
				c.APIRateFor = func(tenant string) (float64, int, bool) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, tenant)
					return tc.rate, tc.burst, tc.ok
				}
			}))
			limitClock(h)
			for i := range tc.allowed {
				if code, _, e := h.getLimited("/v1/status"); code != 200 {
					t.Fatalf("request %d: %d %+v", i, code, e)
				}
			}
			code, retry, e := h.getLimited("/v1/status")
			if code != 429 || retry != tc.retry || e.Message != tc.text {
				t.Fatalf("past the quota: %d Retry-After %q %q, want 429 %q %q", code, retry, e.Message, tc.retry, tc.text)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) == 0 || asked[0] != DefaultTenant {
				t.Fatalf("APIRateFor asked for %q, want %q", asked, DefaultTenant)
			}
		})
	}
}

// Buckets that have refilled are dropped, so the limiter holds only the
// tenants active lately; dropping one changes nothing, as a new tenant
// gets a full bucket.
func TestRateBucketsDropped(t *testing.T) {
	t.Parallel()
	clk := &fakeNow{t: start}
	l := newLimits(Config{APIRate: 10, APIBurst: 5})
	l.now = clk.now
	for i := range 1000 {
		if ok, _, _ := l.take("t" + strconv.Itoa(i)); !ok {
			t.Fatalf("tenant %d refused its first request", i)
		}
	}
	for range 5 {
		l.take("busy")
	}
	if len(l.rates.m) != 1001 {
		t.Fatalf("%d buckets, want 1001", len(l.rates.m))
	}
	// 50 ms later no bucket is full again (a tenant's one request takes
	// 0.1 s to refill at 10/s): a sweep keeps them all.
	l.rates.lastSweep = time.Time{}
	clk.advance(50 * time.Millisecond)
	l.take("busy")
	if len(l.rates.m) != 1001 {
		t.Fatalf("%d buckets after an early sweep, want 1001", len(l.rates.m))
	}
	// At the next sweep all have refilled and are dropped; the one
	// taking a request gets a new, full bucket.
	clk.advance(sweepEvery)
	if ok, _, _ := l.take("busy"); !ok {
		t.Fatal("a refilled tenant refused")
	}
	if len(l.rates.m) != 1 {
		t.Fatalf("%d buckets after a sweep, want 1 (the one just used)", len(l.rates.m))
	}
}

// New refuses limits that cannot be meant and fills in the defaults.
func TestLimitDefaults(t *testing.T) {
	t.Parallel()
	for _, bad := range []Config{{APIRate: -1}, {APIRate: math.NaN()}, {APIRate: math.Inf(1)}, {APIBurst: -1}, {MaxWaitingClaimsPerTenant: -1},
		{AuthFailureRate: -1}, {AuthFailureRate: math.NaN()}, {AuthFailureRate: math.Inf(1)}} {
		bad.MaxWaitingClaims = 10
		if err := setLimitDefaults(&bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	// What setLimitDefaults decides: the rate, the burst, the waiting
	// claims per tenant and the failed authentications per client.
	type limitsOf struct {
		rate      float64
		burst     int
		perTenant int
		authRate  float64
	}
	cases := []struct {
		in   Config
		want limitsOf
	}{
		{Config{MaxWaitingClaims: 10}, limitsOf{DefaultAPIRate, DefaultAPIBurst, 2, DefaultAuthFailureRate}},
		{Config{MaxWaitingClaims: 3}, limitsOf{DefaultAPIRate, DefaultAPIBurst, 1, DefaultAuthFailureRate}},
		{Config{MaxWaitingClaims: DefaultMaxWaitingClaims}, limitsOf{DefaultAPIRate, DefaultAPIBurst, 250, DefaultAuthFailureRate}},
		{Config{MaxWaitingClaims: 10, APIRate: 0.2, MaxWaitingClaimsPerTenant: 3, AuthFailureRate: 0.5}, limitsOf{0.2, 1, 3, 0.5}},
		{Config{MaxWaitingClaims: 10, APIRate: 5, APIBurst: 7, MaxWaitingClaimsPerTenant: 30}, limitsOf{5, 7, 10, DefaultAuthFailureRate}},
	}
	for _, tc := range cases {
		c := tc.in
		if err := setLimitDefaults(&c); err != nil {
			t.Fatal(err)
		}
		if got := (limitsOf{c.APIRate, c.APIBurst, c.MaxWaitingClaimsPerTenant, c.AuthFailureRate}); got != tc.want {
			t.Errorf("%+v: got %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// The per-tenant cap on claims with a wait: with it at 2 (the daemon's at
// 10), a tenant's third long poll is answered 429 too_many_waiting naming
// the tenant's cap; once one returns the slot is free again.
func TestWaitingClaimsPerTenantCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withLimits(func(c *Config) { c.MaxWaitingClaims, c.MaxWaitingClaimsPerTenant = 10, 2 }))
	done := make(chan struct{}, 3)
	for _, q := range []string{"a", "b"} {
		go func() {
			code, raw := h.do("POST", "/v1/claims", api.ClaimRequest{Queue: q, WorkerID: "w", Wait: "5m"})
			if code != 200 {
				t.Errorf("long poll on %s: %d %s", q, code, raw)
			}
			done <- struct{}{}
		}()
	}
	waiting := func() int {
		h.srv.limits.mu.Lock()
		defer h.srv.limits.mu.Unlock()
		return h.srv.limits.waiting[DefaultTenant]
	}
	for deadline := time.Now().Add(5 * time.Second); waiting() != 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d claims waiting, want 2", waiting())
		}
	}
	resp, err := h.client.Post(h.ts.URL+"/v1/claims", "application/json", strings.NewReader(`{"queue":"c","worker_id":"w","wait":"5m"}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var eb api.ErrorBody
	_ = json.Unmarshal(raw, &eb)
	if resp.StatusCode != 429 || eb.Error.Code != api.CodeTooManyWaiting || resp.Header.Get("Retry-After") != "1" ||
		!strings.Contains(eb.Error.Message, `tenant "default" already has 2 claims with a wait`) || !strings.Contains(eb.Error.Message, "--max-waiting-claims-per-tenant") {
		t.Fatalf("third long poll: %d %s Retry-After %q", resp.StatusCode, raw, resp.Header.Get("Retry-After"))
	}
	if len(h.srv.waitSlots) != 2 {
		t.Fatalf("the refused claim holds a daemon slot: %d taken, want 2", len(h.srv.waitSlots))
	}
	h.srv.Drain() // ends the two long polls
	for range 2 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a long poll did not end at the drain")
		}
	}
	for deadline := time.Now().Add(5 * time.Second); waiting() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d claims still counted after they ended", waiting())
		}
	}
	h.srv.limits.mu.Lock()
	defer h.srv.limits.mu.Unlock()
	if len(h.srv.limits.waiting) != 0 {
		t.Fatalf("the tenant map keeps %v after its claims ended", h.srv.limits.waiting)
	}
}

// One tenant's long polls leave room for another's: with the daemon's cap
// at 4 and the per-tenant cap at its default (a quarter: 1), a tenant
// sending as many long polls as the daemon holds gets its share and 429s
// for the rest, counted by cap, and the next tenant's first long poll
// still waits.
func TestWaitingClaimsShareLeavesRoom(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withMaxWaitingClaims(4))
	if _, _, err := h.eng.Tenants.Create(t.Context(), "b", engine.TenantPatch{}); err != nil {
		t.Fatal(err)
	}
	b := h.asTenant("b")
	refusedByTenantCap := h.srv.cfg.Metrics.Limits.WaitingClaimsRefused.WithLabelValues(metrics.CapTenant)
	codes := make(chan int, 5)
	longPoll := func(h *harness) {
		code, _ := h.do("POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Wait: "5m"})
		codes <- code
	}
	waiting := func(tenant string) int {
		h.srv.limits.mu.Lock()
		defer h.srv.limits.mu.Unlock()
		return h.srv.limits.waiting[tenant]
	}
	for range 4 {
		go longPoll(h)
	}
	refused := 0
	for deadline := time.Now().Add(10 * time.Second); waiting(DefaultTenant)+refused < 4; {
		select {
		case code := <-codes:
			if code != 429 {
				t.Fatalf("a long poll of the first tenant ended with %d before the drain, want 429", code)
			}
			refused++
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting, %d refused, want 4 in all", waiting(DefaultTenant), refused)
		}
	}
	if n := waiting(DefaultTenant); n != 1 || refused != 3 {
		t.Fatalf("the first tenant has %d long polls waiting and %d refused, want its share (1) and 3", n, refused)
	}
	if got := counterValue(t, refusedByTenantCap); got != 3 {
		t.Fatalf("sched_waiting_claims_refused_total{cap=tenant} %v, want 3", got)
	}

	go longPoll(b)
	for deadline := time.Now().Add(10 * time.Second); waiting("b") != 1; time.Sleep(5 * time.Millisecond) {
		select {
		case code := <-codes:
			t.Fatalf("the second tenant's first long poll was answered %d, want it waiting", code)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second tenant's first long poll is not waiting")
		}
	}
	h.srv.Drain() // ends the two long polls
	for range 2 {
		select {
		case code := <-codes:
			if code != 200 {
				t.Errorf("a long poll ended at the drain with %d, want 200", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a long poll did not end at the drain")
		}
	}
}

// A tenant without a rate of its own runs at the daemon's (schedd gives
// every tenant --api-rate as its default quota), and gets the daemon's
// burst, --api-burst; a tenant with a rate of its own gets twice that
// rate, unless the hook says otherwise.
func TestBurstFollowsTheRate(t *testing.T) {
	t.Parallel()
	l := newLimits(Config{APIRate: 100, APIBurst: 7, APIRateFor: func(tenant string) (float64, int, bool) {
		switch tenant {
		case "own":
			return 50, 0, true
		case "both":
			return 50, 3, true
		}
		return 100, 0, true // the daemon's default, as tenantAPIRate gives it
	}})
	for _, tc := range []struct {
		tenant string
		rate   float64
		burst  int
	}{
		{"acme", 100, 7},
		{"own", 50, 100},
		{"both", 50, 3},
	} {
		if rate, burst := l.quota(tc.tenant); rate != tc.rate || burst != tc.burst {
			t.Errorf("%s: rate %v burst %d, want %v and %d", tc.tenant, rate, burst, tc.rate, tc.burst)
		}
	}
}
