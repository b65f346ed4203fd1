package webhook_test

import (
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/target/webhook"
)

// TestCheck: the ranges the guard refuses by default, the reason it gives,
// and what Allow opens.
func TestCheck(t *testing.T) {
	tenNet := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	tests := []struct {
		addr  string
		allow []netip.Prefix
		want  string // a part of the reason; "" when allowed
	}{
		// Public addresses pass.
		{"8.8.8.8", nil, ""},
		{"1.1.1.1", nil, ""},
		{"172.32.0.1", nil, ""},
		{"100.128.0.1", nil, ""},
		{"169.255.0.1", nil, ""},
		{"2606:4700:4700::1111", nil, ""},
		{"::ffff:8.8.8.8", nil, ""},
		{"64:ff9b::808:808", nil, ""}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", nil, ""},  // 6to4 of 8.8.8.8

		{"127.0.0.1", nil, "a loopback address"},
		{"127.255.255.254", nil, "a loopback address"},
		{"::1", nil, "a loopback address"},
		{"169.254.169.254", nil, "a link-local address (cloud metadata)"},
		{"fd00:ec2::254", nil, "(cloud metadata)"},
		{"169.254.1.1", nil, "a link-local address"},
		{"fe80::1", nil, "a link-local address"},
		{"fe80::1%eth0", nil, "a link-local address"},
		{"10.0.0.1", nil, "a private address"},
		{"172.16.0.1", nil, "a private address"},
		{"172.31.255.255", nil, "a private address"},
		{"192.168.1.1", nil, "a private address"},
		{"fc00::1", nil, "unique local (private)"},
		{"fd12:3456::1", nil, "unique local (private)"},
		{"100.64.0.1", nil, "a carrier-grade NAT address"},
		{"100.127.255.255", nil, "a carrier-grade NAT address"},
		{"224.0.0.1", nil, "a multicast address"},
		{"239.255.255.250", nil, "a multicast address"},
		{"ff02::1", nil, "a multicast address"},
		{"0.0.0.0", nil, "the unspecified address"},
		{"::", nil, "the unspecified address"},
		{"0.1.2.3", nil, "\"this network\""},
		{"255.255.255.255", nil, "the broadcast address"},
		{"240.0.0.1", nil, "a reserved address"},
		{"192.0.2.1", nil, "a documentation address"},
		{"198.51.100.7", nil, "a documentation address"},
		{"203.0.113.9", nil, "a documentation address"},
		{"2001:db8::1", nil, "a documentation address"},
		{"198.18.0.1", nil, "a benchmarking address"},
		{"::ffff:127.0.0.1", nil, "an IPv4-mapped form of 127.0.0.1, a loopback address"},
		{"::ffff:169.254.169.254", nil, "an IPv4-mapped form of 169.254.169.254, a link-local address (cloud metadata)"},
		{"::ffff:10.0.0.1", nil, "an IPv4-mapped form of 10.0.0.1, a private address"},
		{"64:ff9b::a00:1", nil, "a NAT64 form of 10.0.0.1, a private address"},
		{"64:ff9b::a9fe:a9fe", nil, "a NAT64 form of 169.254.169.254"},
		{"2002:7f00:1::1", nil, "a 6to4 form of 127.0.0.1"},
		{"::127.0.0.1", nil, "IPv4-compatible"},

		// Allow opens its range, and IPv4-mapped forms of it, only.
		{"10.0.0.1", tenNet, ""},
		{"::ffff:10.0.0.1", tenNet, ""},
		{"11.0.0.1", tenNet, ""},
		{"192.168.1.1", tenNet, "a private address"},
		{"169.254.169.254", tenNet, "cloud metadata"},
		{"127.0.0.1", allowLoopback, ""},
		{"127.0.0.2", allowLoopback, "a loopback address"},
		{"169.254.169.254", []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}, ""},
		{"fe80::1%eth0", []netip.Prefix{netip.MustParsePrefix("fe80::/10")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			addr := netip.MustParseAddr(tt.addr)
			err := webhook.Check(addr, tt.allow)
			if tt.want == "" {
				if err != nil {
					t.Errorf("Check(%s) = %v, want allowed", tt.addr, err)
				}
				return
			}
			var refused *webhook.RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Check(%s) = %v, want a *RefusedError", tt.addr, err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "allow it with --webhook-allow") {
				t.Errorf("Check(%s) = %q, want it to say %q and how to allow it", tt.addr, err, tt.want)
			}
			if refused.Addr != addr {
				t.Errorf("refused address %s, want %s", refused.Addr, addr)
			}
		})
	}
	if err := webhook.Check(netip.Addr{}, nil); err == nil {
		t.Error("Check(invalid address) = nil, want a refusal")
	}
}

// TestGuardRefuses: a URL whose host is, or resolves to, a refused
// address fails permanently with an error naming the host, the address
// and why, and without any connection being made.
func TestGuardRefuses(t *testing.T) {
	// A loopback receiver: were the guard to let a loopback address
	// through, the request would reach it and be counted.
	rec := &recorder{}
	srv := newServer(t, false, rec)
	p := port(t, srv)
	tests := []struct {
		name    string
		url     string
		answers map[string][]string
		allow   []netip.Prefix
		want    string // the error, whole
		lookups int
	}{
		{"name resolving to loopback, no Allow", "http://loop.example.com:" + p, map[string][]string{"loop.example.com": {"127.0.0.1"}}, nil,
			`webhook host "loop.example.com" resolves to 127.0.0.1: a loopback address; allow it with --webhook-allow`, 1},
		{"name resolving to cloud metadata", "http://metadata.internal/latest/meta-data/", map[string][]string{"metadata.internal": {"169.254.169.254"}}, allowLoopback,
			`webhook host "metadata.internal" resolves to 169.254.169.254: a link-local address (cloud metadata); allow it with --webhook-allow`, 1},
		{"name resolving to a private address", "https://ten.example.com/", map[string][]string{"ten.example.com": {"10.0.0.1"}}, allowLoopback,
			`webhook host "ten.example.com" resolves to 10.0.0.1: a private address; allow it with --webhook-allow`, 1},
		{"name resolving to ::1", "http://v6.example.com:" + p, map[string][]string{"v6.example.com": {"::1"}}, allowLoopback,
			`webhook host "v6.example.com" resolves to ::1: a loopback address; allow it with --webhook-allow`, 1},
		{"name resolving to ::ffff:127.0.0.1", "http://mapped.example.com:" + p, map[string][]string{"mapped.example.com": {"::ffff:127.0.0.1"}}, nil,
			`webhook host "mapped.example.com" resolves to ::ffff:127.0.0.1: an IPv4-mapped form of 127.0.0.1, a loopback address; allow it with --webhook-allow`, 1},
		{"name resolving to AWS's IPv6 metadata", "http://meta6.example.com/", map[string][]string{"meta6.example.com": {"fd00:ec2::254"}}, nil,
			`webhook host "meta6.example.com" resolves to fd00:ec2::254: a unique local address (cloud metadata); allow it with --webhook-allow`, 1},
		{"loopback outside Allow", "http://loop2.example.com:" + p, map[string][]string{"loop2.example.com": {"127.0.0.2"}}, allowLoopback,
			`webhook host "loop2.example.com" resolves to 127.0.0.2: a loopback address; allow it with --webhook-allow`, 1},
		{"one refused address in the answer refuses the name", "http://mixed.example.com:" + p, map[string][]string{"mixed.example.com": {"127.0.0.1", "10.0.0.1"}}, allowLoopback,
			`webhook host "mixed.example.com" resolves to 10.0.0.1: a private address; allow it with --webhook-allow`, 1},
		{"localhost", "http://localhost:" + p, map[string][]string{"localhost": {"::1", "127.0.0.1"}}, nil,
			`webhook host "localhost" resolves to ::1: a loopback address; allow it with --webhook-allow`, 1},
		{"literal metadata address", "http://169.254.169.254/latest/meta-data/", nil, allowLoopback,
			`webhook host "169.254.169.254": a link-local address (cloud metadata); allow it with --webhook-allow`, 0},
		{"literal loopback, no Allow", "http://127.0.0.1:" + p, nil, nil,
			`webhook host "127.0.0.1": a loopback address; allow it with --webhook-allow`, 0},
		{"literal ::1", "http://[::1]:" + p, nil, allowLoopback,
			`webhook host "::1": a loopback address; allow it with --webhook-allow`, 0},
		{"literal ::ffff:127.0.0.1", "http://[::ffff:127.0.0.1]:" + p, nil, nil,
			`webhook host "::ffff:127.0.0.1": an IPv4-mapped form of 127.0.0.1, a loopback address; allow it with --webhook-allow`, 0},
		{"literal 0.0.0.0", "http://0.0.0.0:" + p, nil, nil,
			`webhook host "0.0.0.0": the unspecified address; allow it with --webhook-allow`, 0},
		{"literal NAT64 of a private address", "http://[64:ff9b::a00:1]/", nil, nil,
			`webhook host "64:ff9b::a00:1": a NAT64 form of 10.0.0.1, a private address; allow it with --webhook-allow`, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			for name, addrs := range tt.answers {
				h.res.set(name, addrs)
			}
			s := h.sender(t, webhook.Config{URL: tt.url, Allow: tt.allow, Timeout: 5 * time.Second})
			o := sendOne(t, s, firing(i))
			if o.Delivered() || !o.Permanent {
				t.Fatalf("outcome %+v, want a permanent refusal", o)
			}
			if o.Err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", o.Err, tt.want)
			}
			var refused *webhook.RefusedError
			if !errors.As(o.Err, &refused) {
				t.Errorf("error %T is not a *RefusedError", o.Err)
			}
			if n := h.dialer.dials.Load(); n != 0 {
				t.Errorf("%d connections made, want none", n)
			}
			lookups := 0
			for name := range tt.answers {
				lookups += h.res.lookups(name)
			}
			if lookups != tt.lookups {
				t.Errorf("%d lookups, want %d", lookups, tt.lookups)
			}
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("the loopback receiver got %d requests, want none", n)
	}

	t.Run("a name that does not resolve is retryable", func(t *testing.T) {
		h := newHarness(t)
		s := h.sender(t, webhook.Config{URL: "https://nowhere.example.com/", Allow: allowLoopback})
		o := sendOne(t, s, firing(1))
		if o.Delivered() || o.Permanent || !strings.Contains(o.Err.Error(), `webhook host "nowhere.example.com": look up`) {
			t.Errorf("outcome %+v, want a retryable lookup failure", o)
		}
	})
}

// TestGuardRedirects: redirects are followed up to 5 times, 307 and 308
// keep the POST, its body and its signature (the configured headers only
// on the same host), and every hop's connection is guarded: a redirect
// from an allowed receiver to a refused address or another scheme fails
// permanently, without connecting there; so does one (301, 302, 303)
// that would turn the POST into a GET without its body.
func TestGuardRedirects(t *testing.T) {
	final := &recorder{}
	b := newServer(t, false, final)
	pb := port(t, b)
	var mu sync.Mutex
	hits := map[string]int{}
	var landed []http.Header // what /landing, on a's own host, received
	a := newServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		if r.URL.Path == "/landing" {
			landed = append(landed, r.Header.Clone())
		}
		mu.Unlock()
		switch path := r.URL.Path; {
		case path == "/to-metadata":
			http.Redirect(w, r, "http://metadata.internal/latest/meta-data/", http.StatusTemporaryRedirect)
		case path == "/to-private-literal":
			http.Redirect(w, r, "http://10.0.0.1/admin", http.StatusTemporaryRedirect)
		case path == "/to-loopback-outside-allow":
			http.Redirect(w, r, "http://other.example.com:"+pb+"/in", http.StatusPermanentRedirect)
		case path == "/to-ftp":
			http.Redirect(w, r, "ftp://b.example.com/in", http.StatusTemporaryRedirect)
		case path == "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusTemporaryRedirect)
		case path == "/301", path == "/302", path == "/303":
			code, _ := strconv.Atoi(path[1:])
			http.Redirect(w, r, "http://b.example.com:"+pb+"/in", code)
		case path == "/to-same-host":
			http.Redirect(w, r, "/landing", http.StatusPermanentRedirect)
		case path == "/landing":
			w.WriteHeader(http.StatusNoContent)
		case path == "/307":
			http.Redirect(w, r, "http://b.example.com:"+pb+"/in", http.StatusTemporaryRedirect)
		case path == "/308":
			http.Redirect(w, r, "http://b.example.com:"+pb+"/in", http.StatusPermanentRedirect)
		case strings.HasPrefix(path, "/chain/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(path, "/chain/"))
			if n == 0 {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			http.Redirect(w, r, "/chain/"+strconv.Itoa(n-1), http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	pa := port(t, a)

	tests := []struct {
		path      string
		delivered bool
		want      string // a part of the error
		hits      int    // requests a got on path
		finals    int    // requests b got
	}{
		{path: "/to-metadata", want: `webhook host "metadata.internal" resolves to 169.254.169.254: a link-local address (cloud metadata)`, hits: 1},
		{path: "/to-private-literal", want: `webhook host "10.0.0.1": a private address`, hits: 1},
		{path: "/to-loopback-outside-allow", want: `webhook host "other.example.com" resolves to 127.0.0.2: a loopback address`, hits: 1},
		{path: "/to-ftp", want: `webhook redirected to scheme "ftp": only http and https are followed`, hits: 1},
		{path: "/to-file", want: `webhook redirected to scheme "file"`, hits: 1},
		{path: "/301", want: "webhook redirected with 301, which would turn the POST into a GET without its body", hits: 1},
		{path: "/302", want: "webhook redirected with 302, which would turn the POST into a GET", hits: 1},
		{path: "/303", want: "webhook redirected with 303, which would turn the POST into a GET", hits: 1},
		{path: "/to-same-host", delivered: true, hits: 1},
		{path: "/307", delivered: true, hits: 1, finals: 1},
		{path: "/308", delivered: true, hits: 1, finals: 1},
		{path: "/chain/5", delivered: true, hits: 1},
		{path: "/chain/6", want: "webhook redirected more than 5 times", hits: 1},
	}
	for i, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			h := newHarness(t)
			h.res.set("a.example.com", []string{"127.0.0.1"})
			h.res.set("b.example.com", []string{"127.0.0.1"})
			h.res.set("other.example.com", []string{"127.0.0.2"})
			h.res.set("metadata.internal", []string{"169.254.169.254"})
			s := h.sender(t, webhook.Config{
				URL:     "http://a.example.com:" + pa + tt.path,
				Allow:   allowLoopback,
				Now:     func() time.Time { return t0 },
				Headers: map[string]string{"X-Api-Key": "k1"},
			})
			before := len(final.requests())
			f := firing(i)
			o := sendOne(t, s, f)
			if o.Delivered() != tt.delivered {
				t.Fatalf("outcome %+v, want delivered %v", o, tt.delivered)
			}
			if !tt.delivered && (!o.Permanent || !strings.Contains(o.Err.Error(), tt.want)) {
				t.Errorf("outcome %+v, want permanent, naming %q", o, tt.want)
			}
			mu.Lock()
			got := hits[tt.path]
			mu.Unlock()
			if got != tt.hits {
				t.Errorf("a got %d requests on %s, want %d", got, tt.path, tt.hits)
			}
			reqs := final.requests()[before:]
			if len(reqs) != tt.finals {
				t.Fatalf("b got %d requests, want %d", len(reqs), tt.finals)
			}
			for _, r := range reqs {
				if r.method != http.MethodPost || len(r.body) == 0 {
					t.Errorf("b got %s with %d bytes, want the POST and its body", r.method, len(r.body))
				}
				if err := verifySignature(testSecret, r.header, r.body, t0); err != nil {
					t.Errorf("b's verifier: %v", err)
				}
				if id := r.header.Get("webhook-id"); id != f.OccurrenceID {
					t.Errorf("b got webhook-id %q, want %q", id, f.OccurrenceID)
				}
				if k := r.header.Get("X-Api-Key"); k != "" {
					t.Errorf("b, another host, got the configured X-Api-Key %q", k)
				}
			}
			// a is reached on loopback only; every other hop is refused
			// before a connection (the dialer fails the test otherwise).
			if n := h.dialer.dials.Load(); n < 1 || n > 2 {
				t.Errorf("%d connections, want a's (and b's)", n)
			}
		})
	}
	if len(landed) != 1 || landed[0].Get("X-Api-Key") != "k1" || landed[0].Get("webhook-signature") == "" {
		t.Errorf("a redirect on the same host did not keep the configured and webhook headers: %v", landed)
	}
	// /chain/5 ran down to /chain/0 (5 redirects followed); /chain/6 ran
	// down to /chain/1, whose redirect, the 6th, was refused.
	mu.Lock()
	defer mu.Unlock()
	for n, want := range []int{1, 2, 2, 2, 2, 2, 1} {
		if got := hits["/chain/"+strconv.Itoa(n)]; got != want {
			t.Errorf("/chain/%d got %d requests, want %d", n, got, want)
		}
	}
}

// TestGuardRebinding: a name is resolved and checked again on each new
// connection, and the checked IP is what gets dialed, so a name that
// resolves to an allowed loopback address first and to a refused one the
// next time is refused on the second connection.
func TestGuardRebinding(t *testing.T) {
	tests := []struct {
		second string
		want   string
	}{
		{"10.0.0.1", `webhook host "rebind.example.com" resolves to 10.0.0.1: a private address`},
		{"169.254.169.254", `webhook host "rebind.example.com" resolves to 169.254.169.254: a link-local address (cloud metadata)`},
		{"127.0.0.2", `webhook host "rebind.example.com" resolves to 127.0.0.2: a loopback address`},
	}
	for _, tt := range tests {
		t.Run(tt.second, func(t *testing.T) {
			rec := &recorder{}
			srv := newServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Connection", "close") // the next request needs a new connection
				rec.ServeHTTP(w, r)
			}))
			h := newHarness(t)
			h.res.set("rebind.example.com", []string{"127.0.0.1"})
			h.res.set("rebind.example.com", []string{tt.second})
			s := h.sender(t, webhook.Config{
				URL:       "https://rebind.example.com:" + port(t, srv) + "/hook",
				Allow:     allowLoopback,
				TLSConfig: trust(srv),
			})
			if o := sendOne(t, s, firing(1)); !o.Delivered() {
				t.Fatalf("first send: outcome %+v, want delivered", o)
			}
			o := sendOne(t, s, firing(2))
			if o.Delivered() || !o.Permanent || !strings.Contains(o.Err.Error(), tt.want) {
				t.Fatalf("second send: outcome %+v, want permanent, naming %q", o, tt.want)
			}
			if n := h.res.lookups("rebind.example.com"); n != 2 {
				t.Errorf("%d lookups, want one per connection (2)", n)
			}
			if n := h.dialer.dials.Load(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
			if n := len(rec.requests()); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
		})
	}
}
