// Package client is the Go client of schedd's HTTP/JSON API (/v1), for
// workers and tools. It speaks over a Unix socket (the default, the same
// one schedd listens on without configuration), plain TCP, or TLS
// (tls:HOST:PORT or https://HOST:PORT; see TLSFiles).
//
//	c, err := client.New("", os.Getenv("SCHED_TOKEN")) // the default socket
//	sc, err := c.GetSchedule(ctx, "nightly-report")
//
// Every method takes a context first and returns the types of package api.
// An answer that is not 2xx is a *Error carrying the API's stable error
// code; use errors.As, or the predicates IsNotFound, IsStaleAttempt,
// IsConflict, IsInvalid, IsUnauthorized and IsUnavailable.
//
// Over a Unix socket the client trusts only a daemon run by its own user: it
// checks the socket file's owner before it connects and the peer's
// credentials after (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and
// FreeBSD), and refuses to send anything otherwise, and on systems where it
// cannot read them: another user could plant a socket where schedd's would
// be and collect tokens and payloads. The one exception is a socket another
// user's schedd shares with a group of the caller (schedd --socket-group),
// at an address given, in directories no one else could have put it in.
//
// WithActingTenant makes every request act as another tenant, an admin's
// Sched-Tenant header; WithTenant does it for one context.
//
// Worker runs a handler for each occurrence of a queue: it claims by long
// poll, heartbeats while the handler runs, cancels the handler's context
// when the schedule is superseded or canceled or the lease is lost, and
// acks or nacks from the handler's error.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/paths"
)

// Header names of the API.
const (
	// HeaderVersion carries the version of the software that sends a
	// request (and, from schedd, of the daemon that answers).
	HeaderVersion = "Sched-Version"
	// HeaderIdempotencyKey makes a create safe to retry.
	HeaderIdempotencyKey = "Idempotency-Key"
)

// DefaultTimeout bounds every request but a claim's long poll, whose bound
// is its wait plus this.
const DefaultTimeout = 30 * time.Second

// DefaultVersion is what HeaderVersion says unless WithVersion changes it.
const DefaultVersion = "go-client/dev"

// ErrInvalidAddress is wrapped by New's error for an address it cannot
// read.
var ErrInvalidAddress = errors.New("invalid address")

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Client talks to one schedd. It is safe for concurrent use.
type Client struct {
	base    string // scheme://host, no trailing slash
	addr    string // the address as given, for messages
	token   string
	version string
	timeout time.Duration
	hc      *http.Client

	socket        string // Unix socket path; "" over TCP
	defaultSocket bool   // the socket is the default one, not one asked for

	tls      *tls.Config // of a tls: or https:// address; nil otherwise
	tlsFiles TLSFiles    // where tls's CA and client certificate came from

	actAs string // the tenant every request acts as (WithActingTenant); "" for the token's own
}

// Option changes how New builds a Client.
type Option func(*options)

type options struct {
	tls      *tls.Config
	tlsFiles TLSFiles
	timeout  time.Duration
	version  string
	env      paths.Env
	actAs    string
}

// WithTLSConfig sets the TLS configuration of https:// addresses (for
// example a private CA, or a client certificate for mTLS).
func WithTLSConfig(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithTimeout bounds each request (DefaultTimeout if not given; 0 means no
// bound but the context's). A claim's long poll gets its wait on top.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithVersion sets the HeaderVersion value sent with every request, e.g.
// "schedctl/1.2.0".
func WithVersion(v string) Option { return func(o *options) { o.version = v } }

// WithEnv sets the environment lookup used to find the default socket
// (os.LookupEnv if not given).
func WithEnv(env paths.Env) Option { return func(o *options) { o.env = env } }

// New returns a client for addr:
//
//	""                   the default socket, the one schedd listens on
//	                     without configuration ($XDG_RUNTIME_DIR/sched/schedd.sock,
//	                     else /tmp/sched-$UID/schedd.sock)
//	unix:PATH            a Unix socket
//	tcp:HOST:PORT        plain HTTP over TCP
//	tls:HOST:PORT        HTTPS: TLS 1.2 or later, the daemon's certificate
//	                     verified for HOST (WithTLSFiles, WithTLSConfig)
//	https://HOST:PORT    the same as tls:HOST:PORT
//
// token, when not empty, is sent as "Authorization: Bearer TOKEN". New
// does not connect; the first request does.
func New(addr, token string, opts ...Option) (*Client, error) {
	o := options{timeout: DefaultTimeout, version: DefaultVersion, env: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	for _, r := range token {
		if r <= ' ' || r == 0x7f {
			return nil, errors.New("token contains a space or a control character")
		}
	}
	if err := checkActingTenant(o.actAs); err != nil {
		return nil, err
	}
	c := &Client{addr: addr, token: token, version: o.version, timeout: o.timeout, actAs: o.actAs}
	// No proxy, ever: HTTP_PROXY must not see a bearer token meant for schedd.
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// No ResponseHeaderTimeout: a claim's long poll holds the answer
		// back for as long as its wait; each request's context bounds it.
	}
	switch {
	case addr == "":
		c.socket, c.defaultSocket = paths.Socket(o.env), true
	case strings.HasPrefix(addr, "unix:"):
		c.socket = strings.TrimPrefix(addr, "unix:")
		if c.socket == "" {
			return nil, fmt.Errorf("%w %q: unix: needs a socket path", ErrInvalidAddress, addr)
		}
	case strings.HasPrefix(addr, "tcp:"):
		hp := strings.TrimPrefix(addr, "tcp:")
		if err := checkHostPort(hp); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrInvalidAddress, addr, err)
		}
		c.base = "http://" + hp
		tr.DialContext = c.dialTCP
	case strings.HasPrefix(addr, "https://"), strings.HasPrefix(addr, "tls:"):
		hp := strings.TrimPrefix(addr, "tls:")
		if strings.HasPrefix(addr, "https://") {
			u, err := url.Parse(addr)
			if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
				return nil, fmt.Errorf("%w %q: want https://HOST:PORT", ErrInvalidAddress, addr)
			}
			hp = u.Host
		}
		if err := checkHostPort(hp); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrInvalidAddress, addr, err)
		}
		tc, err := clientTLS(o.tls, o.tlsFiles)
		if err != nil {
			return nil, err
		}
		c.base = "https://" + hp
		c.tls, c.tlsFiles = tc, o.tlsFiles
		// The handshake is dialTLS's, for errors that say what to do.
		tr.DialTLSContext = c.dialTLS
		tr.TLSClientConfig = tc
	default:
		return nil, fmt.Errorf("%w %q: want unix:PATH, tcp:HOST:PORT, tls:HOST:PORT or https://HOST:PORT", ErrInvalidAddress, addr)
	}
	if c.socket != "" {
		c.base = "http://localhost" // the host is not used; the dialer knows the socket
		tr.DialContext = c.dialUnix
	}
	c.hc = &http.Client{
		Transport: tr,
		// A redirect would carry the token to wherever it points; schedd
		// never redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

func checkHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return errors.New("want HOST:PORT")
	}
	if host == "" || port == "" {
		return errors.New("want HOST:PORT")
	}
	return nil
}

// Addr returns the address the client talks to, in the form New takes
// ("unix:PATH" for the default socket).
func (c *Client) Addr() string {
	if c.socket != "" {
		return "unix:" + c.socket
	}
	return c.addr
}

// Error is an answer of schedd that is not 2xx. Code is one of the api.Code*
// constants (empty when the answer was not the API's error JSON, e.g. from
// a proxy); Field names the field at fault for validation errors.
type Error struct {
	Status  int    // the HTTP status
	Code    string // a stable code: api.CodeNotFound, api.CodeStaleAttempt, ...
	Message string // for people
	Field   string // the request field at fault, for validation errors
}

func (e *Error) Error() string {
	if e.Code == "" {
		msg := strings.TrimSpace(e.Message)
		if msg == "" {
			return fmt.Sprintf("schedd answered HTTP %d %s", e.Status, http.StatusText(e.Status))
		}
		return fmt.Sprintf("schedd answered HTTP %d %s: %s", e.Status, http.StatusText(e.Status), msg)
	}
	what := strings.ReplaceAll(e.Code, "_", " ")
	if e.Message == "" {
		return what
	}
	return what + ": " + e.Message
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IsNotFound reports whether err says the schedule or occurrence does not
// exist (or belongs to another tenant).
func IsNotFound(err error) bool {
	e := asError(err)
	return e != nil && (e.Code == api.CodeNotFound || e.Code == "" && e.Status == http.StatusNotFound)
}

// IsStaleAttempt reports whether err refuses a heartbeat, ack or nack
// because the attempt presented is not the occurrence's current one.
func IsStaleAttempt(err error) bool {
	e := asError(err)
	return e != nil && e.Code == api.CodeStaleAttempt
}

// IsConflict reports whether err refuses a change that conflicts with the
// state: a name or idempotency key already taken, or a schedule whose state
// forbids the change. A stale attempt is not a conflict in this sense; see
// IsStaleAttempt.
func IsConflict(err error) bool {
	e := asError(err)
	return e != nil && (e.Code == api.CodeConflict || e.Code == "" && e.Status == http.StatusConflict)
}

// IsInvalid reports whether err says the request was invalid input: a bad
// field, zone or expression, a body that is not the JSON expected, or a
// reference refused before sending (RefError).
func IsInvalid(err error) bool {
	var re *RefError
	if errors.As(err, &re) {
		return true
	}
	e := asError(err)
	if e == nil {
		return false
	}
	switch e.Code {
	case api.CodeInvalidArgument, api.CodeCronNeverFires, api.CodeInvalidTimeZone, api.CodeBadRequest:
		return true
	}
	return e.Code == "" && e.Status == http.StatusBadRequest
}

// RefError refuses a schedule or occurrence reference, before anything is
// sent, that no URL path can carry: an empty one, or one of only dots ("."
// or ".."), which HTTP servers resolve as "this" or "the parent" path
// segment and so would name another resource. No schedule is named so.
type RefError struct {
	Ref string
}

func (e *RefError) Error() string {
	if e.Ref == "" {
		return "the schedule or occurrence reference is empty; give a name or an id"
	}
	return fmt.Sprintf("reference %q: a name or id cannot be only dots (no schedule is named so); give a name or an id", e.Ref)
}

// checkPath refuses an escaped API path with an empty or dot-only segment
// (see RefError). Escaping leaves dots as they are.
func checkPath(p string) error {
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return &RefError{Ref: seg}
		}
	}
	return nil
}

// IsUnauthorized reports whether err says the token is missing or wrong.
func IsUnauthorized(err error) bool {
	e := asError(err)
	return e != nil && (e.Code == api.CodeUnauthorized || e.Status == http.StatusUnauthorized)
}

// IsUnavailable reports whether err is schedd saying "not now": the store
// is busy, or the daemon is starting or shutting down. Retrying later can
// succeed.
func IsUnavailable(err error) bool {
	e := asError(err)
	return e != nil && (e.Code == api.CodeStoreBusy || e.Code == api.CodeUnavailable ||
		e.Status == http.StatusServiceUnavailable || e.Status == http.StatusTooManyRequests)
}

// request is one API call.
type request struct {
	method string
	path   string // already escaped
	query  url.Values
	body   any
	header http.Header
	// extra is added to the client's timeout (a claim's wait).
	extra time.Duration
}

// do sends r and decodes a 2xx answer into out (unless out is nil).
func (c *Client) do(ctx context.Context, r request, out any) error {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout+r.extra)
		defer cancel()
	}
	resp, err := c.send(ctx, r, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: cannot read schedd's answer: %w", r.method, r.path, err)
	}
	return nil
}

// maxTextBody bounds a text answer (the metrics page): far more than any
// bounded set of series needs, and still a bound.
const maxTextBody = 64 << 20

// text sends a GET of path and returns a 2xx answer's body as text, for the
// routes that do not answer JSON (/metrics). Errors are those of do: a
// non-2xx answer is a *Error.
func (c *Client) text(ctx context.Context, path string) (string, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	r := request{method: http.MethodGet, path: path}
	resp, err := c.send(ctx, r, "text/plain")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTextBody+1))
	if err != nil {
		return "", c.transportError(ctx, r, err)
	}
	if len(b) > maxTextBody {
		return "", fmt.Errorf("%s %s: the answer is over %d MiB", r.method, r.path, maxTextBody>>20)
	}
	return string(b), nil
}

// send makes the round trip of r, accepting the media type accept, and
// returns a 2xx answer for the caller to read and close; any other answer
// is decoded into a *Error.
func (c *Client) send(ctx context.Context, r request, accept string) (*http.Response, error) {
	if err := checkPath(r.path); err != nil {
		return nil, err
	}
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the request: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(HeaderVersion, c.version)
	if t := c.tenantFor(ctx); t != "" {
		req.Header.Set(api.HeaderTenant, t)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, r, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, c.plainToTLS(decodeError(resp))
	}
	return resp, nil
}

// transportError turns a failed round trip into one clear error: the dial
// error as is (it says how to start schedd), or the context's.
func (c *Client) transportError(ctx context.Context, r request, err error) error {
	var de *DialError
	if errors.As(err, &de) {
		return de
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s %s: no answer from schedd at %s in time: %w", r.method, r.path, c.Addr(), ctx.Err())
		}
		return fmt.Errorf("%s %s: %w", r.method, r.path, ctx.Err())
	}
	if c.tls != nil {
		if te := c.tlsError(err); te != nil {
			return te
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s at %s: %w", r.method, r.path, c.Addr(), err)
}

// decodeError reads an error answer: the API's {"error": {...}} when it is
// one, else the status and the start of the body.
func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var eb api.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Code != "" {
		return &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message, Field: eb.Error.Field}
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	msg = strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, msg)
	return &Error{Status: resp.StatusCode, Message: msg}
}
