package webhook_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/target"
	"github.com/sched-dev/sched/internal/target/webhook"
)

// TestDelivery: the receiver gets one POST per firing with the documented
// body and headers, and its own verifier (not Sign) accepts the signature.
func TestDelivery(t *testing.T) {
	tests := []struct {
		name        string
		payload     []byte
		wantPayload string // the body's data.payload, as JSON
	}{
		{"JSON object kept as JSON", []byte(`{ "to": "ops", "n": [1, 2] }`), `{"to":"ops","n":[1,2]}`},
		{"JSON number kept as JSON", []byte(`42`), `42`},
		{"HTML-ish JSON not escaped", []byte(`{"html":"<b>&</b>"}`), `{"html":"<b>&</b>"}`},
		{"text sent as a JSON string", []byte(`run "nightly" <now>`), `"run \"nightly\" <now>"`},
		{"empty payload sent as an empty string", nil, `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{status: http.StatusOK}
			srv := newServer(t, true, rec)
			h := newHarness(t)
			h.res.set("hooks.example.com", []string{"127.0.0.1"})
			s := h.sender(t, webhook.Config{
				URL:       "https://hooks.example.com:" + port(t, srv) + "/sched?k=v",
				Headers:   map[string]string{"Authorization": "Bearer tok", "x-team": "ops"},
				Allow:     allowLoopback,
				TLSConfig: trust(srv),
				Now:       func() time.Time { return t0 },
			})
			f := firing(7)
			f.Payload = tt.payload
			f.Attempt = 2
			if o := sendOne(t, s, f); !o.Delivered() {
				t.Fatalf("outcome %+v, want delivered", o)
			}
			reqs := rec.requests()
			if len(reqs) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.method != http.MethodPost || r.path != "/sched" {
				t.Errorf("request %s %s, want POST /sched", r.method, r.path)
			}
			wantHeaders := map[string]string{
				"Content-Type":      "application/json",
				"Webhook-Id":        f.OccurrenceID,
				"Webhook-Timestamp": strconv.FormatInt(t0.Unix(), 10),
				"User-Agent":        "sched-webhook/1",
				"Authorization":     "Bearer tok",
				"X-Team":            "ops",
			}
			for k, want := range wantHeaders {
				if got := r.header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if sig := r.header.Get("Webhook-Signature"); !strings.HasPrefix(sig, "v1,") {
				t.Errorf("webhook-signature %q, want v1,<base64>", sig)
			}
			if err := verifySignature(testSecret, r.header, r.body, t0.Add(time.Second)); err != nil {
				t.Errorf("receiver's verifier: %v", err)
			}

			var got struct {
				Type      string `json:"type"`
				Timestamp string `json:"timestamp"`
				Data      struct {
					OccurrenceID    string          `json:"occurrence_id"`
					Tenant          string          `json:"tenant"`
					ScheduleID      string          `json:"schedule_id"`
					ScheduleVersion int64           `json:"schedule_version"`
					ScheduledFor    string          `json:"scheduled_for"`
					Attempt         int64           `json:"attempt"`
					Payload         json.RawMessage `json:"payload"`
				} `json:"data"`
			}
			dec := json.NewDecoder(bytes.NewReader(r.body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			d := got.Data
			if got.Type != "sched.firing" || got.Timestamp != "2026-03-29T01:30:00Z" ||
				d.OccurrenceID != f.OccurrenceID || d.Tenant != "acme" || d.ScheduleID != f.ScheduleID ||
				d.ScheduleVersion != 3 || d.ScheduledFor != "2026-03-29T01:30:00.123456789Z" || d.Attempt != 2 {
				t.Errorf("body %s: fields differ from the firing", r.body)
			}
			if string(d.Payload) != tt.wantPayload {
				t.Errorf("data.payload = %s, want %s", d.Payload, tt.wantPayload)
			}
		})
	}
}

// TestReplayRefused: the signature binds the id, the timestamp and the
// body, and a receiver following the specification refuses a request
// whose timestamp is more than 5 minutes from its clock, so a captured
// delivery cannot be replayed later. End to end, a sender whose clock is
// 10 minutes behind is refused by such a receiver, permanently (401).
func TestReplayRefused(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, false, rec)
	h := newHarness(t)
	s := h.sender(t, webhook.Config{
		URL:   srv.URL + "/hook",
		Allow: allowLoopback,
		Now:   func() time.Time { return t0 },
	})
	if o := sendOne(t, s, firing(1)); !o.Delivered() {
		t.Fatalf("outcome %+v, want delivered", o)
	}
	captured := rec.requests()[0]

	with := func(k, v string) http.Header {
		h := captured.header.Clone()
		h.Set(k, v)
		return h
	}
	otherSecret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"fresh", testSecret, captured.header, captured.body, t0.Add(30 * time.Second), true},
		{"4 minutes later", testSecret, captured.header, captured.body, t0.Add(4 * time.Minute), true},
		{"replayed 5 minutes and 1 second later", testSecret, captured.header, captured.body, t0.Add(5*time.Minute + time.Second), false},
		{"replayed an hour later", testSecret, captured.header, captured.body, t0.Add(time.Hour), false},
		{"timestamp from the future", testSecret, captured.header, captured.body, t0.Add(-6 * time.Minute), false},
		{"timestamp rewritten to now", testSecret, with("webhook-timestamp", strconv.FormatInt(t0.Add(time.Hour).Unix(), 10)), captured.body, t0.Add(time.Hour), false},
		{"id rewritten", testSecret, with("webhook-id", "occ_other"), captured.body, t0, false},
		{"body changed", testSecret, captured.header, bytes.Replace(captured.body, []byte(`"n":1`), []byte(`"n":2`), 1), t0, false},
		{"another secret", otherSecret, captured.header, captured.body, t0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verifySignature(tt.secret, tt.header, tt.body, tt.now)
			if (err == nil) != tt.ok {
				t.Errorf("verify = %v, want ok %v", err, tt.ok)
			}
		})
	}

	t.Run("end to end, sender's clock 10 minutes behind", func(t *testing.T) {
		verifying := newServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var buf bytes.Buffer
			buf.ReadFrom(r.Body)
			if err := verifySignature(testSecret, r.Header, buf.Bytes(), time.Now()); err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		for _, lag := range []time.Duration{0, 10 * time.Minute} {
			s := h.sender(t, webhook.Config{
				URL:   verifying.URL,
				Allow: allowLoopback,
				Now:   func() time.Time { return time.Now().Add(-lag) },
			})
			o := sendOne(t, s, firing(2))
			if lag == 0 && !o.Delivered() {
				t.Errorf("in time: outcome %+v, want delivered", o)
			}
			if lag > 0 && (o.Delivered() || !o.Permanent || !strings.Contains(o.Err.Error(), "replay refused")) {
				t.Errorf("10 minutes late: outcome %+v, want a permanent 401 naming the replay", o)
			}
		}
	})
}

// TestClassification: each answer becomes the documented Outcome.
func TestClassification(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		delivered  bool
		permanent  bool
		retryAfter time.Duration
		wantErr    string // the whole error text, when set
		wantInErr  string // a part of it
	}{
		{name: "200", status: 200, body: "ok", delivered: true},
		{name: "204", status: 204, delivered: true},
		{name: "202 with a body", status: 202, body: "queued", delivered: true},
		{name: "404 with body", status: 404, body: "no such hook", permanent: true, wantErr: `webhook answered 404 Not Found: "no such hook"`},
		{name: "410 gone", status: 410, body: "gone for good", permanent: true, wantErr: `webhook answered 410 Gone: "gone for good"`},
		{name: "401 without body", status: 401, permanent: true, wantErr: `webhook answered 401 Unauthorized`},
		{name: "400 body cut at 200 bytes", status: 400, body: long, permanent: true, wantErr: `webhook answered 400 Bad Request: "` + long[:200] + `"`},
		{name: "418 other 4xx", status: 418, permanent: true, wantInErr: "418 I'm a teapot"},
		{name: "304 left after redirects", status: 304, permanent: true, wantErr: "webhook answered 304 Not Modified"},
		{name: "302 without Location", status: 302, permanent: true, wantErr: "webhook answered 302 Found"},
		{name: "408", status: 408, wantInErr: "408 Request Timeout"},
		{name: "429", status: 429, body: "slow down", wantErr: `webhook answered 429 Too Many Requests: "slow down"`},
		{name: "500", status: 500, body: "boom", wantErr: `webhook answered 500 Internal Server Error: "boom"`},
		{name: "503", status: 503, wantInErr: "503 Service Unavailable"},
		{name: "599 unnamed 5xx", status: 599, wantErr: "webhook answered 599"},
		{name: "429 Retry-After seconds", status: 429, header: map[string]string{"Retry-After": "7"}, retryAfter: 7 * time.Second},
		{name: "503 Retry-After HTTP date", status: 503, header: map[string]string{"Retry-After": t0.Add(90 * time.Second).Format(http.TimeFormat)}, retryAfter: 90 * time.Second},
		{name: "503 Retry-After date past", status: 503, header: map[string]string{"Retry-After": t0.Add(-time.Minute).Format(http.TimeFormat)}},
		{name: "503 Retry-After capped at an hour", status: 503, header: map[string]string{"Retry-After": "86400"}, retryAfter: time.Hour},
		{name: "429 Retry-After date capped", status: 429, header: map[string]string{"Retry-After": t0.Add(48 * time.Hour).Format(http.TimeFormat)}, retryAfter: time.Hour},
		{name: "503 Retry-After unreadable", status: 503, header: map[string]string{"Retry-After": "soon"}},
		{name: "503 Retry-After negative", status: 503, header: map[string]string{"Retry-After": "-5"}},
		{name: "404 ignores Retry-After", status: 404, header: map[string]string{"Retry-After": "7"}, permanent: true},
	}
	srv := newServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tt := tests[mustAtoi(t, r.URL.Query().Get("case"))]
		for k, v := range tt.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(tt.status)
		w.Write([]byte(tt.body))
	}))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			s := h.sender(t, webhook.Config{
				URL:   srv.URL + "/hook?case=" + strconv.Itoa(i),
				Allow: allowLoopback,
				Now:   func() time.Time { return t0 },
			})
			o := sendOne(t, s, firing(i))
			if o.Delivered() != tt.delivered || o.Permanent != tt.permanent || o.RetryAfter != tt.retryAfter {
				t.Fatalf("outcome %+v (err %v): want delivered %v, permanent %v, retry after %v",
					o, o.Err, tt.delivered, tt.permanent, tt.retryAfter)
			}
			if tt.wantErr != "" && o.Err.Error() != tt.wantErr {
				t.Errorf("error\n got %s\nwant %s", o.Err, tt.wantErr)
			}
			if tt.wantInErr != "" && !strings.Contains(o.Err.Error(), tt.wantInErr) {
				t.Errorf("error %q does not name %q", o.Err, tt.wantInErr)
			}
		})
	}
}

func mustAtoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Errorf("bad case %q", s)
	}
	return n
}

// TestTimeout: an endpoint slower than Config.Timeout gives a retryable
// Outcome that says so, in about Timeout.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	h := newHarness(t)
	s := h.sender(t, webhook.Config{URL: srv.URL, Allow: allowLoopback, TLSConfig: trust(srv), Timeout: 150 * time.Millisecond})
	start := time.Now()
	o := sendOne(t, s, firing(1))
	took := time.Since(start)
	if o.Delivered() || o.Permanent || !strings.Contains(o.Err.Error(), "timed out after 150ms") {
		t.Fatalf("outcome %+v, want retryable timeout", o)
	}
	if took > 5*time.Second {
		t.Errorf("took %v for a 150ms timeout", took)
	}
}

// TestCancelAndClose: a request in flight when the Send's context ends,
// or when the Sender closes, ends at once with a retryable Outcome saying
// which; firings not started by then too; Sends after Close fail without
// connecting.
func TestCancelAndClose(t *testing.T) {
	tests := []struct {
		name    string
		stop    func(cancel context.CancelFunc, s *webhook.Sender)
		wantErr string
	}{
		{"context canceled", func(cancel context.CancelFunc, _ *webhook.Sender) { cancel() }, "context canceled"},
		{"sender closed", func(_ context.CancelFunc, s *webhook.Sender) { s.Close() }, "webhook sender is closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan struct{}, 10)
			release := make(chan struct{})
			srv := newServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			t.Cleanup(func() { close(release) })
			h := newHarness(t)
			s := h.sender(t, webhook.Config{URL: srv.URL, Allow: allowLoopback, MaxInFlight: 1, Timeout: time.Minute})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-started
				tt.stop(cancel, s)
			}()
			start := time.Now()
			out := s.Send(ctx, firings(3))
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("Send took %v after the stop", took)
			}
			for i, o := range out {
				if o.Delivered() || o.Permanent || !strings.Contains(o.Err.Error(), tt.wantErr) {
					t.Errorf("firing %d: outcome %+v, want retryable %q", i, o, tt.wantErr)
				}
			}
		})
	}

	t.Run("send after close", func(t *testing.T) {
		h := newHarness(t)
		s := h.sender(t, webhook.Config{URL: "https://hooks.example.com/", Allow: allowLoopback})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		o := sendOne(t, s, firing(1))
		if !errors.Is(o.Err, webhook.ErrClosed) || o.Permanent {
			t.Errorf("outcome %+v, want retryable ErrClosed", o)
		}
		if n := h.res.lookups("hooks.example.com") + int(h.dialer.dials.Load()); n != 0 {
			t.Errorf("%d lookups and dials after Close, want none", n)
		}
	})
}

// TestBoundedBody: an endpoint answering an endless body does not make the
// Sender read it: the Outcome comes back with at most 200 bytes quoted,
// at most 64 KiB (and a few buffers) is read from the socket, and the
// connection is dropped, where a short answer's connection is kept for the
// next request.
func TestBoundedBody(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		endless   bool
		delivered bool
		wantDials int64
	}{
		{"short 200 keeps the connection", 200, false, true, 1},
		{"short 500 keeps the connection", 500, false, false, 1},
		{"endless 200 drops the connection", 200, true, true, 2},
		{"endless 500 drops the connection", 500, true, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var written atomic.Int64
			srv := newServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				if !tt.endless {
					w.Write([]byte("short"))
					return
				}
				chunk := bytes.Repeat([]byte("x"), 32<<10)
				for written.Load() < 256<<20 { // stops at 256 MiB if never cut
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			h := newHarness(t)
			s := h.sender(t, webhook.Config{URL: srv.URL, Allow: allowLoopback, Timeout: time.Minute})
			for i := range 2 {
				o := sendOne(t, s, firing(i))
				if o.Delivered() != tt.delivered {
					t.Fatalf("outcome %+v, want delivered %v", o, tt.delivered)
				}
				if !tt.delivered && len(o.Err.Error()) > 300 {
					t.Errorf("error text is %d bytes long, want the body cut at 200", len(o.Err.Error()))
				}
			}
			if read := h.dialer.read.Load(); read > 2*(1<<20) {
				t.Errorf("read %d bytes from the sockets for two answers, want at most 1 MiB each", read)
			}
			if got := h.dialer.dials.Load(); got != tt.wantDials {
				t.Errorf("%d connections for two requests, want %d", got, tt.wantDials)
			}
		})
	}
}

// TestConcurrency: every firing of a Send is delivered exactly once,
// concurrently, and the receiver never sees more than MaxInFlight requests
// at once, over one Send or several at the same time.
func TestConcurrency(t *testing.T) {
	tests := []struct {
		name        string
		sends, each int
		maxInFlight int
	}{
		{"one Send of 200", 1, 200, 8},
		{"four Sends of 50 at once", 4, 50, 8},
		{"one Send of 200, default bound", 1, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now, peak atomic.Int64
			var mu sync.Mutex
			seen := map[string]int{}
			srv := newServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := now.Add(1)
				defer now.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				mu.Lock()
				seen[r.Header.Get("webhook-id")]++
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				w.WriteHeader(http.StatusOK)
			}))
			h := newHarness(t)
			s := h.sender(t, webhook.Config{URL: srv.URL, Allow: allowLoopback, TLSConfig: trust(srv), MaxInFlight: tt.maxInFlight})
			bound := int64(cmpOr(tt.maxInFlight, webhook.DefaultMaxInFlight))

			var wg sync.WaitGroup
			outs := make([][]target.Outcome, tt.sends)
			for k := range tt.sends {
				fs := make([]target.Firing, tt.each)
				for i := range fs {
					fs[i] = firing(k*tt.each + i)
				}
				wg.Go(func() { outs[k] = s.Send(context.Background(), fs) })
			}
			wg.Wait()
			for k, out := range outs {
				if len(out) != tt.each {
					t.Fatalf("send %d: %d outcomes, want %d", k, len(out), tt.each)
				}
				for i, o := range out {
					if !o.Delivered() {
						t.Errorf("send %d firing %d: %v", k, i, o.Err)
					}
				}
			}
			if len(seen) != tt.sends*tt.each {
				t.Errorf("receiver saw %d distinct ids, want %d", len(seen), tt.sends*tt.each)
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("%s received %d times", id, n)
				}
			}
			if p := peak.Load(); p > bound || p < 2 {
				t.Errorf("peak of %d requests at once, want 2..%d", p, bound)
			}
			t.Logf("peak %d requests at once (bound %d), %d connections", peak.Load(), bound, h.dialer.dials.Load())
			if d := h.dialer.dials.Load(); d > bound {
				t.Errorf("%d connections for at most %d requests at once: kept-alive connections not reused", d, bound)
			}
		})
	}
}

// TestConfigErrors: New refuses a bad setting with an error naming it, and
// never prints the secret or a header's value.
func TestConfigErrors(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xA5}, n)) }
	good := webhook.Config{URL: "https://hooks.example.com/sched", Secret: testSecret}
	tests := []struct {
		name    string
		edit    func(*webhook.Config)
		want    string   // a part of the error
		secrets []string // texts that must not appear in it
	}{
		{"empty url", func(c *webhook.Config) { c.URL = "" }, "webhook url is empty", nil},
		{"ftp scheme", func(c *webhook.Config) { c.URL = "ftp://x" }, `webhook url "ftp://x": scheme must be http or https`, nil},
		{"relative url", func(c *webhook.Config) { c.URL = "/hook" }, `webhook url "/hook": must be absolute`, nil},
		{"no host", func(c *webhook.Config) { c.URL = "https:///hook" }, `webhook url "https:///hook": has no host`, nil},
		{"port without host", func(c *webhook.Config) { c.URL = "http://:8080/" }, "has no host", nil},
		{"opaque url", func(c *webhook.Config) { c.URL = "https:hooks.example.com" }, "must be scheme://host/path", nil},
		{"unparsable url", func(c *webhook.Config) { c.URL = "http://[::1" }, "webhook url: missing ']' in host", nil},
		{"password in a bad url redacted", func(c *webhook.Config) { c.URL = "ftp://user:hunter2@x/" }, `"ftp://user:xxxxx@x/": scheme`, []string{"hunter2"}},
		{"empty secret", func(c *webhook.Config) { c.Secret = "" }, "webhook secret is empty", nil},
		{"secret without prefix", func(c *webhook.Config) { c.Secret = b64(32) }, `webhook secret does not start with "whsec_"`, []string{b64(32)}},
		{"secret not base64", func(c *webhook.Config) { c.Secret = "whsec_hunter2-is-not*base64!" }, "is not base64", []string{"hunter2"}},
		{"secret too short", func(c *webhook.Config) { c.Secret = "whsec_" + b64(16) }, "key too short: 16 bytes, want at least 24", []string{b64(16)}},
		{"secret too long", func(c *webhook.Config) { c.Secret = "whsec_" + b64(65) }, "key too long: 65 bytes, want at most 64", []string{b64(65)}},
		{"header name with a space", func(c *webhook.Config) { c.Headers = map[string]string{"Bad Name": "v"} }, `webhook header "Bad Name": not a valid header name`, nil},
		{"header name with a colon", func(c *webhook.Config) { c.Headers = map[string]string{"X:Y": "v"} }, `webhook header "X:Y": not a valid header name`, nil},
		{"empty header name", func(c *webhook.Config) { c.Headers = map[string]string{"": "v"} }, `webhook header "": not a valid header name`, nil},
		{"webhook-signature", func(c *webhook.Config) { c.Headers = map[string]string{"webhook-signature": "v1,forged"} }, `webhook header "webhook-signature" cannot be set`, []string{"forged"}},
		{"webhook-id", func(c *webhook.Config) { c.Headers = map[string]string{"Webhook-Id": "x"} }, `webhook header "Webhook-Id" cannot be set`, nil},
		{"webhook-timestamp", func(c *webhook.Config) { c.Headers = map[string]string{"WEBHOOK-TIMESTAMP": "1"} }, `webhook header "WEBHOOK-TIMESTAMP" cannot be set`, nil},
		{"content-type", func(c *webhook.Config) { c.Headers = map[string]string{"content-type": "text/plain"} }, `webhook header "content-type" cannot be set`, nil},
		{"host", func(c *webhook.Config) { c.Headers = map[string]string{"Host": "internal"} }, `webhook header "Host" cannot be set`, nil},
		{"content-length", func(c *webhook.Config) { c.Headers = map[string]string{"Content-Length": "0"} }, `webhook header "Content-Length" cannot be set`, nil},
		{"header value with CRLF", func(c *webhook.Config) { c.Headers = map[string]string{"X-Token": "s3cr3t\r\nX-Evil: 1"} }, `webhook header "X-Token": its value holds a control character`, []string{"s3cr3t"}},
		{"same header twice", func(c *webhook.Config) { c.Headers = map[string]string{"x-a": "1", "X-A": "2"} }, "given twice", nil},
		{"negative timeout", func(c *webhook.Config) { c.Timeout = -time.Second }, "webhook timeout -1s: must be positive", nil},
		{"negative max in flight", func(c *webhook.Config) { c.MaxInFlight = -1 }, "webhook max in flight -1: must be positive", nil},
		{"invalid allow prefix", func(c *webhook.Config) { c.Allow = []netip.Prefix{{}} }, "webhook allow", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			s, err := webhook.New(cfg)
			if err == nil {
				s.Close()
				t.Fatalf("New succeeded, want an error naming %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
			for _, secret := range append(tt.secrets, strings.TrimPrefix(cfg.Secret, "whsec_")) {
				if secret != "" && strings.Contains(err.Error(), secret) {
					t.Errorf("error %q prints a secret", err)
				}
			}
		})
	}

	t.Run("valid settings", func(t *testing.T) {
		cfg := good
		cfg.URL = "http://user:pw@hooks.example.com:8080/sched?token=t#frag"
		cfg.Headers = map[string]string{"Authorization": "Bearer x", "User-Agent": "mine/2", "X-Tab": "a\tb"}
		cfg.Allow = []netip.Prefix{netip.MustParsePrefix("10.1.2.3/8")}
		s, err := webhook.New(cfg)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		s.Close()
	})
}

// TestUserAgentOverride: Config.Headers may replace the user-agent.
func TestUserAgentOverride(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, false, rec)
	h := newHarness(t)
	s := h.sender(t, webhook.Config{URL: srv.URL, Allow: allowLoopback, Headers: map[string]string{"user-agent": "acme-relay/3"}})
	if o := sendOne(t, s, firing(1)); !o.Delivered() {
		t.Fatalf("outcome %+v", o)
	}
	if got := rec.requests()[0].header.Get("User-Agent"); got != "acme-relay/3" {
		t.Errorf("user-agent %q, want the configured one", got)
	}
}

// TestBadOccurrenceID: an id the scheme cannot sign (a "." is its
// separator) is refused for good, before any connection.
func TestBadOccurrenceID(t *testing.T) {
	h := newHarness(t)
	s := h.sender(t, webhook.Config{URL: "https://hooks.example.com/", Allow: allowLoopback})
	for _, id := range []string{"", "occ_a.b", "occ_\n"} {
		f := firing(1)
		f.OccurrenceID = id
		if o := sendOne(t, s, f); o.Delivered() || !o.Permanent {
			t.Errorf("id %q: outcome %+v, want permanent", id, o)
		}
	}
	if n := h.res.lookups("hooks.example.com"); n != 0 {
		t.Errorf("%d lookups, want none", n)
	}
}

func ExampleSign() {
	sig, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	fmt.Println(sig, err)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= <nil>
}
