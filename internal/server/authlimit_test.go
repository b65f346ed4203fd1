package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
)

func TestClientOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.2:4321", "127.0.0.2"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:443", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:7070", "fe80::/64"},
		{"[::1]:7070", "::/64"},
		{"192.0.2.7", "192.0.2.7"},
		{"@", ""},
		{"", ""},
		{"/run/sched/schedd.sock", ""},
	} {
		if got := ClientOf(tc.addr); got != tc.want {
			t.Errorf("ClientOf(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.0/8 is all loopback on Linux), so that a test can be
// two clients of the same server.
func clientFrom(t testing.TB, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// getWith sends GET path to h with token from c and returns the status,
// Retry-After and the error body.
func getWith(t testing.TB, h *harness, c *http.Client, path, token string) (int, string, api.ErrorDetail) {
	t.Helper()
	req, err := http.NewRequest("GET", h.ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(raw, &eb); err != nil {
			t.Fatalf("GET %s: %d, not an error body: %s", path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), eb.Error
}

// counterValue reads a counter.
func counterValue(t testing.TB, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// badToken is a token of the right shape that no tenant holds: its
// lookup reads the store.
func badToken(t testing.TB) string {
	t.Helper()
	tok, err := record.NewToken(nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A flood of bad tokens from one address: its first failures are answered
// 401, then every request from it 429 rate_limited with Retry-After,
// without its token being looked up (the store is closed by then, and a
// lookup would fail), and counted, except one with a token that
// authenticated lately (a worker behind the same address), which is
// looked up and served. Another address with a valid token is served
// throughout; the flooding address is heard again once its budget
// refills.
func TestBadTokenFloodLimitedPerClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"), withLimits(func(c *Config) { c.AuthFailureRate = 1 })) // a burst of 2
	clk := limitClock(h)
	if _, _, err := h.eng.Tenants.Create(t.Context(), "victim", engine.TenantPatch{}); err != nil {
		t.Fatal(err)
	}
	good, _, err := h.eng.Tenants.CreateToken(t.Context(), "victim", "w", record.RoleTenant)
	if err != nil {
		t.Fatal(err)
	}
	unseen, _, err := h.eng.Tenants.CreateToken(t.Context(), "victim", "never-used", record.RoleTenant)
	if err != nil {
		t.Fatal(err)
	}
	flooder, other := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.1")
	limited := h.srv.cfg.Metrics.Limits.AuthFailuresLimited
	if code, _, e := getWith(t, h, flooder, "/v1/schedules", good); code != 200 {
		t.Fatalf("a valid token before the flood: %d %+v", code, e)
	}

	for i := range 2 {
		if code, _, e := getWith(t, h, flooder, "/v1/schedules", badToken(t)); code != 401 || e.Code != api.CodeUnauthorized {
			t.Fatalf("bad token %d, within the budget: %d %+v, want 401", i, code, e)
		}
	}
	for _, tok := range []string{badToken(t), "not-even-a-token", unseen} {
		code, retry, e := getWith(t, h, flooder, "/v1/schedules", tok)
		if code != 429 || e.Code != api.CodeRateLimited || retry != "1" || !strings.Contains(e.Message, "--auth-failure-rate") {
			t.Fatalf("from the flooding address past its budget: %d Retry-After %q %+v, want 429 %s", code, retry, e, api.CodeRateLimited)
		}
	}
	if code, _, e := getWith(t, h, flooder, "/v1/schedules", good); code != 200 {
		t.Fatalf("a token that authenticated lately, from the flooding address: %d %+v, want it looked up and served", code, e)
	}
	if code, _, e := getWith(t, h, other, "/v1/schedules", good); code != 200 {
		t.Fatalf("a valid token from another address during the flood: %d %+v", code, e)
	}
	if code, _, e := getWith(t, h, other, "/v1/schedules", badToken(t)); code != 401 {
		t.Fatalf("another address's own first failure: %d %+v, want 401", code, e)
	}

	// With the store closed, a token lookup fails (5xx); the flooding
	// address is answered 429 all the same: nothing was looked up.
	if err := h.st.Close(); err != nil {
		t.Fatal(err)
	}
	before := counterValue(t, limited)
	for i := range 50 {
		if code, _, e := getWith(t, h, flooder, "/v1/schedules", badToken(t)); code != 429 {
			t.Fatalf("flood request %d with the store closed: %d %+v, want 429 before any lookup", i, code, e)
		}
	}
	if got := counterValue(t, limited) - before; got != 50 {
		t.Fatalf("sched_auth_failures_limited_total rose by %v, want 50", got)
	}
	if code, _, _ := getWith(t, h, other, "/v1/schedules", badToken(t)); code < 500 {
		t.Fatalf("a lookup with the store closed: %d, want 5xx (else the check above proves nothing)", code)
	}

	// A second later the flooding address has one failure's budget again:
	// its request is looked up (and fails, the store being closed).
	clk.advance(time.Second)
	if code, _, _ := getWith(t, h, flooder, "/v1/schedules", badToken(t)); code == 429 {
		t.Fatal("the flooding address is still refused after its budget refilled")
	}
}

// Failed-authentication buckets that have refilled are dropped, so the
// limiter holds only the addresses that failed lately, however many have.
func TestAuthFailureBucketsDropped(t *testing.T) {
	t.Parallel()
	clk := &fakeNow{t: start}
	l := newLimits(Config{AuthFailureRate: 10})
	l.now = clk.now
	for i := range 1000 {
		l.authFailed("192.0.2." + strconv.Itoa(i))
	}
	if len(l.authFails.m) != 1000 {
		t.Fatalf("%d buckets, want 1000", len(l.authFails.m))
	}
	clk.advance(sweepEvery)
	l.authFailed("198.51.100.1")
	if len(l.authFails.m) != 1 {
		t.Fatalf("%d buckets after a sweep, want 1 (the one just failed)", len(l.authFails.m))
	}
	if spent, _ := l.authSpent("192.0.2.1"); spent {
		t.Fatal("a dropped address is refused")
	}
}

// The tokens vouched for are bounded (memory does not grow with the
// tokens a daemon ever saw), keep the ones used lately, and expire.
func TestVouchedBounded(t *testing.T) {
	t.Parallel()
	var v vouched
	now := start
	for i := range maxVouched + 500 {
		now = now.Add(time.Millisecond)
		v.add("token-"+strconv.Itoa(i), now)
	}
	if n := len(v.m); n > maxVouched {
		t.Fatalf("%d tokens vouched for, want at most %d", n, maxVouched)
	}
	last := "token-" + strconv.Itoa(maxVouched+499)
	if !v.has(last, now) {
		t.Fatal("the token used last is forgotten")
	}
	if v.has(last, now.Add(vouchedFor)) {
		t.Fatal("a token is vouched for past vouchedFor")
	}
}

// A token that authenticated lately and then stops authenticating (it is
// revoked: typically a leaked one) is vouched for no more: from an
// address past its budget of failed authentications it is answered 429
// before any lookup, like any other bad token, rather than costing a
// store read per request for the rest of vouchedFor.
func TestRevokedTokenNotVouched(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"), withLimits(func(c *Config) { c.AuthFailureRate = 1 })) // a burst of 2
	limitClock(h)
	if _, _, err := h.eng.Tenants.Create(t.Context(), "victim", engine.TenantPatch{}); err != nil {
		t.Fatal(err)
	}
	leaked, _, err := h.eng.Tenants.CreateToken(t.Context(), "victim", "leaked", record.RoleTenant)
	if err != nil {
		t.Fatal(err)
	}
	flooder := clientFrom(t, "127.0.0.2")
	if code, _, e := getWith(t, h, flooder, "/v1/schedules", leaked); code != 200 {
		t.Fatalf("the token before its revocation: %d %+v", code, e)
	}
	if err := h.eng.Tenants.RevokeToken(t.Context(), "victim", "leaked"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if code, _, e := getWith(t, h, flooder, "/v1/schedules", leaked); code != 401 {
			t.Fatalf("revoked token %d, within the budget: %d %+v, want 401", i, code, e)
		}
	}
	// The store closed, a lookup would fail 5xx: 429 shows none was made.
	if err := h.st.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if code, _, e := getWith(t, h, flooder, "/v1/schedules", leaked); code != 429 {
			t.Fatalf("revoked token %d past the budget: %d %+v, want 429 before any lookup", i, code, e)
		}
	}
}
