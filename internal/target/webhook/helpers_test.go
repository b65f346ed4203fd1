package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/target"
	"github.com/sched-dev/sched/internal/target/webhook"

	"github.com/sched-dev/sched/internal/target/webhook/webhooktest"
)

// testSecret signs every test's requests: "whsec_" and the base64 of 32
// fixed bytes, so a failure is reproducible.
var testSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// t0 is the tests' fixed clock, for the senders whose timestamps a test
// compares.
var t0 = time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)

// allowLoopback opens 127.0.0.1 only (not the rest of 127/8), as an admin
// would open one internal address.
var allowLoopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// fakeResolver answers the names a test gives it and nothing else: no
// test reaches a real DNS server. A name's answers are given in order,
// the last one repeating, so a test can change what a name resolves to
// between connections (DNS rebinding).
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

// newResolver returns a resolver that answers each name with addrs
// (strings), every time.
func newResolver(names map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for name, addrs := range names {
		r.set(name, addrs)
	}
	return r
}

// set appends one answer for name.
func (r *fakeResolver) set(name string, addrs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	r.answers[name] = append(r.answers[name], as)
}

// LookupNetIP implements webhook.Resolver.
func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.calls[host]
	r.calls[host]++
	answers, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host (fake resolver)", Name: host, IsNotFound: true}
	}
	return answers[min(n, len(answers)-1)], nil
}

// lookups returns how often host was looked up.
func (r *fakeResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// loopbackDialer is the only way a test's Sender connects. It fails the
// test (and refuses) when asked for anything but an IP literal on
// loopback, so no test sends a packet beyond loopback even when the guard
// under test is broken; then it dials for real and counts the bytes read.
type loopbackDialer struct {
	t     testing.TB
	dials atomic.Int64
	read  atomic.Int64
}

// DialContext implements Config.DialContext.
func (d *loopbackDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := webhooktest.CheckLoopback(address); err != nil {
		d.t.Error(err)
		return nil, err
	}
	d.dials.Add(1)
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, read: &d.read}, nil
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// harness is a Sender's test surroundings: its resolver and dialer.
type harness struct {
	res    *fakeResolver
	dialer *loopbackDialer
}

// newHarness returns a harness whose resolver knows no names.
func newHarness(t testing.TB) *harness {
	t.Helper()
	return &harness{res: newResolver(nil), dialer: &loopbackDialer{t: t}}
}

// sender returns a Sender for cfg, closed when the test ends, with the
// harness's resolver and dialer and testSecret unless cfg sets them.
func (h *harness) sender(t testing.TB, cfg webhook.Config) *webhook.Sender {
	t.Helper()
	if cfg.Secret == "" {
		cfg.Secret = testSecret
	}
	if cfg.Resolver == nil {
		cfg.Resolver = h.res
	}
	if cfg.DialContext == nil {
		cfg.DialContext = h.dialer.DialContext
	}
	s, err := webhook.New(cfg)
	if err != nil {
		t.Fatalf("webhook.New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newServer starts a loopback receiver (TLS when tlsOn), closed when the
// test ends. Register it before the Sender, so the Sender closes first.
func newServer(t testing.TB, tlsOn bool, h http.Handler) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	if tlsOn {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

// trust returns a TLS config trusting srv's certificate, issued for
// 127.0.0.1, ::1, example.com and *.example.com.
func trust(srv *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

// port returns the port srv listens on.
func port(t testing.TB, srv *httptest.Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("server address: %v", err)
	}
	return p
}

// request is what a receiver got.
type request struct {
	method string
	path   string
	header http.Header
	body   []byte
}

// recorder is a handler that keeps every request and answers with status.
type recorder struct {
	status int
	mu     sync.Mutex
	reqs   []request
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, request{r.Method, r.URL.Path, r.Header.Clone(), body})
	rec.mu.Unlock()
	w.WriteHeader(cmpOr(rec.status, http.StatusNoContent))
}

// requests returns the requests so far.
func (rec *recorder) requests() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]request(nil), rec.reqs...)
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// firing returns the test firing numbered i.
func firing(i int) target.Firing {
	return target.Firing{
		OccurrenceID:    fmt.Sprintf("occ_test%06d", i),
		TenantID:        "acme",
		ScheduleID:      "sch_0123456789abcdefghijklmnop",
		ScheduleVersion: 3,
		ScheduledFor:    time.Date(2026, 3, 29, 1, 30, 0, 123456789, time.UTC),
		Attempt:         1,
		Payload:         []byte(`{"n":` + strconv.Itoa(i) + `}`),
	}
}

// firings returns n test firings.
func firings(n int) []target.Firing {
	fs := make([]target.Firing, n)
	for i := range fs {
		fs[i] = firing(i)
	}
	return fs
}

// sendOne sends f alone and returns its Outcome.
func sendOne(t testing.TB, s *webhook.Sender, f target.Firing) target.Outcome {
	t.Helper()
	out := s.Send(context.Background(), []target.Firing{f})
	if len(out) != 1 {
		t.Fatalf("Send returned %d outcomes for 1 firing", len(out))
	}
	return out[0]
}

// verifySignature is a receiver's check, written from the Standard
// Webhooks specification and sharing no code with the package: the
// HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" under the
// secret's key must equal one of the header's "v1," signatures (in
// constant time), and the timestamp must be within 5 minutes of now, so a
// captured request cannot be replayed later.
func verifySignature(secret string, h http.Header, body []byte, now time.Time) error {
	const tolerance = 5 * time.Minute
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook headers")
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("bad timestamp %q", ts)
	}
	if d := now.Sub(time.Unix(secs, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("timestamp %s is %v away from now: replay refused", ts, d)
	}
	enc, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return errors.New("secret without whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for sig := range strings.SplitSeq(sigs, " ") {
		version, b64, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no signature matches")
}
