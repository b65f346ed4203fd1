// Package webhook is the target that delivers firings as HTTP POSTs to one
// endpoint, following the Standard Webhooks specification
// (https://www.standardwebhooks.com): a JSON body, the webhook-id,
// webhook-timestamp and webhook-signature headers (HMAC-SHA256 under a
// "whsec_" secret), the firing's OccurrenceID as webhook-id, so a receiver
// deduplicates the redeliveries at-least-once delivery brings.
//
// A webhook URL is given by a tenant, so the Sender guards the daemon's
// network against server-side request forgery: every connection, the
// first, a redirect's and a reconnect's, resolves the name itself, checks
// every address (Check) and dials the checked IP, never the name. An
// admin opens an internal range with Config.Allow.
//
// The relay hands a Sender firings in bulk; it posts them concurrently
// (Config.MaxInFlight at most) over one Transport's kept-alive connections
// and answers each with a target.Outcome: 2xx delivered; 408, 429, 5xx,
// network errors and timeouts retryable (with the Retry-After asked for);
// everything else, and the guard's refusals, permanent.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/internal/target"
)

// Defaults and bounds.
const (
	// DefaultTimeout bounds one request: connecting, redirects, the answer
	// and reading its body.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxInFlight bounds the requests a Sender has open at once.
	DefaultMaxInFlight = 64
	// EventType is the body's "type".
	EventType = "sched.firing"
	// UserAgent is the requests' user-agent, unless Config.Headers sets one.
	UserAgent = "sched-webhook/1"

	// maxRedirects is how many redirects one request follows.
	maxRedirects = 5
	// maxRetryAfter caps the wait a Retry-After may ask for.
	maxRetryAfter = time.Hour
	// snippetLen is how much of an error answer's body its Outcome quotes.
	snippetLen = 200
	// maxBodyRead is how much of an answer's body is ever read: its first
	// snippetLen bytes are kept, the rest up to this bound discarded so the
	// connection can carry the next request; a longer body is not read
	// further and its connection is dropped.
	maxBodyRead = 64 << 10
	// maxHeaderBytes bounds an answer's header block.
	maxHeaderBytes = 64 << 10
	// idleConnTimeout closes a kept-alive connection left unused this long.
	idleConnTimeout = 90 * time.Second
)

// Resolver looks up a host's addresses; *net.Resolver is one. The guard
// checks the addresses it returns and dials them, so a test (or a daemon
// with its own DNS) controls what a name means.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is one webhook target's settings.
type Config struct {
	// URL is the endpoint: absolute, http or https, with a host.
	URL string
	// Secret is the signing secret, "whsec_" + the base64 of a key of 24
	// to 64 bytes (NewSecret makes one). It is never printed.
	Secret string
	// Headers are added to every request (an Authorization header, say).
	// They may not replace the headers the scheme or HTTP itself owns:
	// webhook-id, webhook-timestamp, webhook-signature, content-type, host,
	// and the hop-by-hop and framing headers. Their values are never
	// printed.
	Headers map[string]string
	// Timeout bounds each request, redirects and reading the answer
	// included; zero means DefaultTimeout.
	Timeout time.Duration
	// Allow are ranges an admin opens despite the guard (an internal
	// network whose receivers are trusted).
	Allow []netip.Prefix
	// MaxInFlight bounds the requests open at once, over all Sends; zero
	// means DefaultMaxInFlight.
	MaxInFlight int
	// TLSConfig is the client's TLS settings (roots for a private CA, a
	// client certificate); nil means the system's roots. It is cloned.
	TLSConfig *tls.Config
	// Resolver resolves the URL's host; nil means net.DefaultResolver.
	Resolver Resolver
	// DialContext connects to a checked IP:port; nil means a net.Dialer.
	// It is only ever given IP literals.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
	// Now is the clock the timestamps are read from; nil means time.Now.
	Now func() time.Time
}

// Sender delivers firings to one webhook endpoint. It is safe for
// concurrent use.
type Sender struct {
	url         string
	key         []byte
	headers     http.Header
	timeout     time.Duration
	allow       []netip.Prefix
	resolver    Resolver
	dialContext func(ctx context.Context, network, address string) (net.Conn, error)
	now         func() time.Time

	transport *http.Transport
	client    *http.Client
	slots     chan struct{} // one token per request in flight

	life     context.Context // ended by Close: in-flight requests end with it
	shutdown context.CancelFunc
	closed   atomic.Bool
	macs     sync.Pool // HMAC-SHA256s of key, reset before each use
}

var _ target.Sender = (*Sender)(nil)

// New validates cfg and returns a Sender for it. Its errors name the bad
// setting, never the secret or a header's value.
func New(cfg Config) (*Sender, error) {
	u, err := checkURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	key, err := parseSecret(cfg.Secret)
	if err != nil {
		return nil, err
	}
	headers, err := checkHeaders(cfg.Headers)
	if err != nil {
		return nil, err
	}
	s := &Sender{
		url:         u.String(),
		key:         key,
		headers:     headers,
		timeout:     cfg.Timeout,
		resolver:    cfg.Resolver,
		dialContext: cfg.DialContext,
		now:         cfg.Now,
	}
	switch {
	case s.timeout == 0:
		s.timeout = DefaultTimeout
	case s.timeout < 0:
		return nil, fmt.Errorf("webhook timeout %v: must be positive", cfg.Timeout)
	}
	inFlight := cfg.MaxInFlight
	switch {
	case inFlight == 0:
		inFlight = DefaultMaxInFlight
	case inFlight < 0:
		return nil, fmt.Errorf("webhook max in flight %d: must be positive", cfg.MaxInFlight)
	}
	for _, p := range cfg.Allow {
		if !p.IsValid() {
			return nil, fmt.Errorf("webhook allow %q: not a valid CIDR prefix", p)
		}
		s.allow = append(s.allow, p.Masked())
	}
	if s.resolver == nil {
		s.resolver = net.DefaultResolver
	}
	if s.dialContext == nil {
		s.dialContext = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	if s.now == nil {
		s.now = time.Now
	}
	var tlsConf *tls.Config
	if cfg.TLSConfig != nil {
		tlsConf = cfg.TLSConfig.Clone()
	} else {
		tlsConf = &tls.Config{}
	}
	if tlsConf.MinVersion == 0 {
		tlsConf.MinVersion = tls.VersionTLS12
	}
	s.transport = &http.Transport{
		// Never a proxy from the environment: the guard must check the
		// address actually connected to, not a proxy's.
		Proxy:               nil,
		DialContext:         s.dial,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: s.timeout,
		ForceAttemptHTTP2:   true,
		// No more connections to a host than requests in flight: without
		// the bound, a request that dialed but then took a connection
		// freed meanwhile leaves one more connection behind each time.
		MaxConnsPerHost:        inFlight,
		MaxIdleConns:           inFlight,
		MaxIdleConnsPerHost:    inFlight,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		// Bodies are only read for an error's first bytes: no gzip.
		DisableCompression: true,
	}
	s.client = &http.Client{Transport: s.transport, CheckRedirect: s.checkRedirect}
	s.slots = make(chan struct{}, inFlight)
	s.life, s.shutdown = context.WithCancel(context.Background())
	s.macs.New = func() any { return hmac.New(sha256.New, s.key) }
	return s, nil
}

// checkURL validates a webhook URL. Its errors quote the URL with any
// password redacted.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("webhook url: %w", err)
	}
	bad := func(why string) error { return fmt.Errorf("webhook url %q: %s", u.Redacted(), why) }
	switch {
	case raw == "":
		return nil, errors.New("webhook url is empty")
	case !u.IsAbs():
		return nil, bad("must be absolute (https://host/path)")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad("scheme must be http or https")
	case u.Opaque != "":
		return nil, bad("must be scheme://host/path")
	case u.Hostname() == "":
		return nil, bad("has no host")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// reservedHeaders are the headers Config.Headers may not set: the
// scheme's own, and those HTTP itself (the Transport) owns.
var reservedHeaders = map[string]string{
	"Webhook-Id":        "the Standard Webhooks scheme sets it",
	"Webhook-Timestamp": "the Standard Webhooks scheme sets it",
	"Webhook-Signature": "the Standard Webhooks scheme sets it",
	"Content-Type":      "the body is JSON",
	"Host":              "it is the URL's host",
	"Content-Length":    "the HTTP client sets it",
	"Transfer-Encoding": "the HTTP client sets it",
	"Connection":        "the HTTP client sets it",
	"Keep-Alive":        "the HTTP client sets it",
	"Te":                "the HTTP client sets it",
	"Trailer":           "the HTTP client sets it",
	"Upgrade":           "the HTTP client sets it",
}

// checkHeaders validates the extra headers; its errors name the header,
// never its value.
func checkHeaders(h map[string]string) (http.Header, error) {
	out := make(http.Header, len(h))
	for name, value := range h {
		if !validToken(name) {
			return nil, fmt.Errorf("webhook header %q: not a valid header name", name)
		}
		canon := http.CanonicalHeaderKey(name)
		if why, ok := reservedHeaders[canon]; ok {
			return nil, fmt.Errorf("webhook header %q cannot be set: %s", name, why)
		}
		if _, dup := out[canon]; dup {
			return nil, fmt.Errorf("webhook header %q: given twice, in different cases", name)
		}
		if !validHeaderValue(value) {
			return nil, fmt.Errorf("webhook header %q: its value holds a control character", name)
		}
		out[canon] = []string{value}
	}
	return out, nil
}

// validToken reports whether s is an HTTP token (RFC 9110 section 5.6.2),
// the form of a header name.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s can be sent as a header's value: no
// control characters but tab.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// redirectError is a redirect the Sender will not follow.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// checkRedirect follows at most maxRedirects redirects to http or https
// URLs. Each hop's connection is the guard's (Sender.dial) like any other.
// Only redirects that keep the POST and its body are followed (307 and
// 308): the client would turn the POST into a GET without its body on a
// 301, 302 or 303, and a receiver answering 200 to that GET would count
// as a delivery of a firing it never got. A hop to another host does not
// carry Config.Headers, which may hold the endpoint's credentials (the
// client already drops Authorization and cookies there).
func (s *Sender) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return &redirectError{fmt.Sprintf("webhook redirected more than %d times", maxRedirects)}
	}
	if sc := req.URL.Scheme; sc != "http" && sc != "https" {
		return &redirectError{fmt.Sprintf("webhook redirected to scheme %q: only http and https are followed", sc)}
	}
	if req.Method != http.MethodPost {
		status := "a redirect"
		if req.Response != nil {
			status = strconv.Itoa(req.Response.StatusCode)
		}
		return &redirectError{fmt.Sprintf("webhook redirected with %s, which would turn the POST into a %s without its body: "+
			"update the webhook URL (307 and 308 are followed)", status, req.Method)}
	}
	if !strings.EqualFold(req.URL.Hostname(), via[0].URL.Hostname()) {
		for k := range s.headers {
			req.Header.Del(k)
		}
	}
	return nil
}

// Errors a Send gives firings it could not deliver for its own reasons.
var (
	// ErrClosed is the Outcome of a firing sent after Close.
	ErrClosed = errors.New("webhook sender is closed")
	// errTimedOut is the cause of a request's own timeout.
	errTimedOut = errors.New("webhook request timed out")
)

// Send posts each firing of fs, concurrently, at most MaxInFlight requests
// at a time over all Sends, and returns their Outcomes in the order of fs.
// Firings it has not started when ctx ends get a retryable Outcome saying
// so; a request in flight then ends the same way.
func (s *Sender) Send(ctx context.Context, fs []target.Firing) []target.Outcome {
	out := make([]target.Outcome, len(fs))
	var wg sync.WaitGroup
	for i := range fs {
		if s.closed.Load() {
			out[i] = target.Outcome{Err: ErrClosed}
			continue
		}
		if ctx.Err() != nil {
			out[i] = target.Outcome{Err: fmt.Errorf("webhook not sent: %w", context.Cause(ctx))}
			continue
		}
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			out[i] = target.Outcome{Err: fmt.Errorf("webhook not sent: %w", context.Cause(ctx))}
			continue
		case <-s.life.Done():
			out[i] = target.Outcome{Err: ErrClosed}
			continue
		}
		wg.Go(func() {
			defer func() { <-s.slots }()
			out[i] = s.deliver(ctx, fs[i])
		})
	}
	wg.Wait()
	return out
}

// Close ends the requests in flight, refuses later Sends and closes the
// idle connections. It is safe to call more than once.
func (s *Sender) Close() error {
	s.closed.Store(true)
	s.shutdown()
	s.transport.CloseIdleConnections()
	return nil
}

// body is the JSON a request carries.
type body struct {
	Type      string   `json:"type"`
	Timestamp string   `json:"timestamp"`
	Data      bodyData `json:"data"`
}

// bodyData is the firing, under the body's "data".
type bodyData struct {
	OccurrenceID    string          `json:"occurrence_id"`
	Tenant          string          `json:"tenant"`
	ScheduleID      string          `json:"schedule_id"`
	ScheduleVersion int64           `json:"schedule_version"`
	ScheduledFor    string          `json:"scheduled_for"`
	Attempt         int64           `json:"attempt"`
	Payload         json.RawMessage `json:"payload"`
}

// encode renders f's body as sent at now. A payload that is valid JSON is
// embedded as it is (compacted); any other payload, an empty one included,
// as a JSON string.
func encode(f target.Firing, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	payload := json.RawMessage(f.Payload)
	if !json.Valid(f.Payload) {
		if err := enc.Encode(string(f.Payload)); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		payload = bytes.Clone(buf.Bytes())
		buf.Reset()
	}
	err := enc.Encode(body{
		Type:      EventType,
		Timestamp: now.UTC().Format(time.RFC3339),
		Data: bodyData{
			OccurrenceID:    f.OccurrenceID,
			Tenant:          f.TenantID,
			ScheduleID:      f.ScheduleID,
			ScheduleVersion: f.ScheduleVersion,
			ScheduledFor:    f.ScheduledFor.UTC().Format(time.RFC3339Nano),
			Attempt:         f.Attempt,
			Payload:         payload,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("encode body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// deliver posts one firing and classifies how it went.
func (s *Sender) deliver(ctx context.Context, f target.Firing) target.Outcome {
	if err := checkMsgID(f.OccurrenceID); err != nil {
		return target.Outcome{Err: err, Permanent: true}
	}
	if s.life.Err() != nil {
		return target.Outcome{Err: ErrClosed}
	}
	now := s.now()
	payload, err := encode(f, now)
	if err != nil {
		return target.Outcome{Err: fmt.Errorf("webhook %s: %w", f.OccurrenceID, err), Permanent: true}
	}
	mac := s.macs.Get().(hash.Hash)
	mac.Reset()
	sig := sign(mac, f.OccurrenceID, now, payload)
	s.macs.Put(mac)

	// The request ends with ctx, with Close (s.life), or at its timeout;
	// the cause tells them apart.
	reqCtx, cancel := context.WithTimeoutCause(ctx, s.timeout, errTimedOut)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()

	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, s.url, bytes.NewReader(payload))
	if err != nil {
		return target.Outcome{Err: fmt.Errorf("webhook request: %w", err), Permanent: true}
	}
	h := req.Header
	h["User-Agent"] = []string{UserAgent}
	for k, v := range s.headers {
		h[k] = []string{v[0]} // a request's own slice: nothing shares it
	}
	h["Content-Type"] = []string{"application/json"}
	h["Webhook-Id"] = []string{f.OccurrenceID}
	h["Webhook-Timestamp"] = []string{strconv.FormatInt(now.Unix(), 10)}
	h["Webhook-Signature"] = []string{sig}

	resp, err := s.client.Do(req)
	if err != nil {
		return s.failed(ctx, reqCtx, err)
	}
	snippet := readBounded(resp.Body)
	resp.Body.Close()
	return s.classify(resp, snippet)
}

// readBounded reads at most maxBodyRead bytes of an answer's body and
// returns the first snippetLen. A body left longer is not read on: closing
// it then drops the connection instead of reading a hostile endpoint's
// endless answer.
func readBounded(r io.Reader) []byte {
	buf := make([]byte, snippetLen)
	n, err := io.ReadFull(r, buf)
	if err == nil {
		io.CopyN(io.Discard, r, maxBodyRead-snippetLen)
	}
	return buf[:n]
}

// classify turns an answer into an Outcome.
func (s *Sender) classify(resp *http.Response, snippet []byte) target.Outcome {
	code := resp.StatusCode
	if code >= 200 && code <= 299 {
		return target.Outcome{}
	}
	status := strconv.Itoa(code)
	if text := http.StatusText(code); text != "" {
		status += " " + text
	}
	msg := "webhook answered " + status
	if len(snippet) > 0 {
		msg += ": " + strconv.Quote(string(snippet))
	}
	err := errors.New(msg)
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code >= 500 && code <= 599:
		return target.Outcome{Err: err, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), s.now())}
	default: // other 4xx; 1xx and 3xx left after redirects; anything else
		return target.Outcome{Err: err, Permanent: true}
	}
}

// retryAfter reads a Retry-After header (delta-seconds or an HTTP date,
// relative to now), capped at maxRetryAfter; zero when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// failed classifies a request that got no answer.
func (s *Sender) failed(ctx, reqCtx context.Context, err error) target.Outcome {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return target.Outcome{Err: refused, Permanent: true}
	}
	var redirect *redirectError
	if errors.As(err, &redirect) {
		return target.Outcome{Err: redirect, Permanent: true}
	}
	switch {
	case ctx.Err() != nil:
		return target.Outcome{Err: fmt.Errorf("webhook not delivered: %w", context.Cause(ctx))}
	case s.life.Err() != nil:
		return target.Outcome{Err: ErrClosed}
	case context.Cause(reqCtx) == errTimedOut:
		return target.Outcome{Err: fmt.Errorf("webhook timed out after %v: %w", s.timeout, errTimedOut)}
	}
	// Drop the url.Error's "Post <url>": the URL may carry a token.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return target.Outcome{Err: fmt.Errorf("webhook request failed: %w", err)}
}
