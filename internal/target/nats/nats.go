// Package nats is the NATS JetStream target: a target.Sender that
// publishes each firing to one JetStream subject and counts it delivered
// once the stream bound to that subject acknowledges it (a PubAck).
//
// Deduplication is JetStream's own: every message carries the firing's
// OccurrenceID as its Nats-Msg-Id, so when the relay crashes between the
// stream's ack and its own ack to the queue, the republish that follows
// is answered with a duplicate PubAck and stored once. That holds for as
// long as the stream's duplicate window (StreamConfig.Duplicates, two
// minutes by default) lasts; an operator whose retries can be spaced wider
// widens the window.
//
// Every failure is retryable: no stream bound to the subject, a stream
// that refuses (a limit reached with DiscardNew), an ack that does not
// come within Config.Timeout, a lost connection. The queue's retry policy
// decides when an occurrence becomes DEAD, as for any worker.
package nats

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sched-dev/sched/internal/target"
)

// Defaults for the zero fields of a Config.
const (
	// DefaultURL is the server a Config without a URL connects to.
	DefaultURL = natsio.DefaultURL
	// DefaultTimeout bounds one Send's wait for its acks.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxInFlight is how many publishes may await their ack at
	// once, across all of a Sender's concurrent Sends.
	DefaultMaxInFlight = 4096
)

// reconnectBufSize bounds what the client holds while it reconnects:
// publishes beyond it fail at once (and are retried by the queue) rather
// than growing the relay's memory without limit during an outage. 8 MiB
// holds a full window of DefaultMaxInFlight firings of about 1 KiB each.
const reconnectBufSize = 8 << 20

// The headers every message carries besides Nats-Msg-Id, so a consumer
// can tell what it received without parsing the payload, which is the
// schedule's own.
const (
	HeaderOccurrenceID    = "Sched-Occurrence-Id"
	HeaderTenant          = "Sched-Tenant"
	HeaderScheduleID      = "Sched-Schedule-Id"
	HeaderScheduleVersion = "Sched-Schedule-Version"
	HeaderScheduledFor    = "Sched-Scheduled-For" // RFC 3339 with nanoseconds, UTC
	HeaderAttempt         = "Sched-Attempt"
)

// Config is one NATS target's settings. The zero values of URL, Timeout
// and MaxInFlight take the defaults above; Subject is required.
type Config struct {
	// URL is the server to connect to (nats://host:port, or tls://, ws://,
	// wss://), or several separated by commas for a cluster.
	// Default DefaultURL.
	URL string
	// Subject is the one subject every firing is published to. A stream
	// must take it (its subjects include it); it may not be a wildcard.
	Subject string
	// CredsFile is an optional user credentials file (a JWT and its NKey
	// seed), as nats.UserCredentials reads it.
	CredsFile string
	// Timeout bounds one Send: a firing without its ack when it passes
	// gets a retryable Outcome. It also bounds Probe and Close's drain.
	// Default DefaultTimeout.
	Timeout time.Duration
	// MaxInFlight is how many publishes may await their ack at once,
	// shared by all of the Sender's Sends; a Send waits for a free slot
	// before it publishes more. Default DefaultMaxInFlight.
	MaxInFlight int
	// Name is the connection's name as the server shows it (in its
	// connection list, for instance "schedd relay"). Optional.
	Name string
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	return c
}

// Validate checks c without connecting, so a target's settings can be
// refused when they are given rather than when the relay first uses
// them. Its errors name the field and the part of it that is wrong.
func (c Config) Validate() error {
	if err := checkSubject(c.Subject); err != nil {
		return err
	}
	if c.URL != "" {
		if err := checkURL(c.URL); err != nil {
			return err
		}
	}
	if c.Timeout < 0 {
		return fmt.Errorf("nats target: Timeout %s is negative; leave it zero for the default %s", c.Timeout, DefaultTimeout)
	}
	if c.MaxInFlight < 0 {
		return fmt.Errorf("nats target: MaxInFlight %d is negative; leave it zero for the default %d", c.MaxInFlight, DefaultMaxInFlight)
	}
	return nil
}

// checkSubject accepts a subject a message can be published to, by the
// server's rule: dot-separated tokens, none empty, none holding white
// space, and none the wildcard "*" or ">" (a publish names one subject).
func checkSubject(s string) error {
	if s == "" {
		return errors.New(`nats target: Subject is empty; name the subject a stream takes, e.g. "orders.fire"`)
	}
	for i, tok := range strings.Split(s, ".") {
		switch {
		case tok == "":
			return fmt.Errorf("nats target: Subject %q: token %d is empty (a leading, trailing or doubled dot)", s, i+1)
		case tok == "*" || tok == ">":
			return fmt.Errorf("nats target: Subject %q: token %d is the wildcard %q; a firing is published to one subject, not a pattern", s, i+1, tok)
		}
		if j := strings.IndexFunc(tok, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); j >= 0 {
			return fmt.Errorf("nats target: Subject %q: token %d (%q) holds white space or a control character", s, i+1, tok)
		}
	}
	return nil
}

// checkURL accepts what nats.Connect does that names a server plainly:
// one or more scheme://host[:port] URLs separated by commas.
func checkURL(list string) error {
	for _, raw := range strings.Split(list, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return fmt.Errorf("nats target: URL %q: an empty entry in the comma-separated list", list)
		}
		u, err := url.Parse(raw)
		if err != nil {
			// url.Error quotes the URL, credentials and all; say which
			// part is wrong without repeating it.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return fmt.Errorf("nats target: URL %q: %v", redact(raw), err)
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		case "":
			return fmt.Errorf("nats target: URL %q: no scheme; write nats://host:port", u.Redacted())
		default:
			return fmt.Errorf("nats target: URL %q: scheme %q is not nats, tls, ws or wss", u.Redacted(), u.Scheme)
		}
		if u.Hostname() == "" {
			return fmt.Errorf("nats target: URL %q: no host", u.Redacted())
		}
	}
	return nil
}

// redact hides the password of a URL that does not parse, for errors.
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
		return scheme + "://" + user + ":xxxxx" + rest[at:]
	}
	return raw
}

// redactList is the URL list for errors, each URL's password hidden.
func redactList(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// Sender publishes firings to one JetStream subject. It is safe for
// concurrent use: every Send shares the connection and the MaxInFlight
// slots.
type Sender struct {
	cfg Config
	nc  *natsio.Conn
	js  jetstream.JetStream

	// slots holds one token per publish awaiting its answer. A token is
	// put before PublishMsgAsync and taken back by answer, which the
	// client calls exactly once for every publish it registered (its ack
	// timeout included), or by Send when the publish call itself fails.
	// The jetstream client's own pending limit is set to the same size, so
	// it never stalls: it counts a subset of these tokens.
	slots chan struct{}

	// inflight maps each published message awaiting its answer to the
	// Send it belongs to. The client's callbacks hand back the message,
	// not its future; waiting on one signal per Send rather than on each
	// firing's future saves a wake-up per firing.
	mu       sync.Mutex
	inflight map[*natsio.Msg]pending

	closed   atomic.Bool
	closeMu  sync.Mutex // serializes Close
	closedCh chan struct{}
	onClosed sync.Once
}

// New validates cfg, connects to the server and returns a Sender for
// cfg.Subject. It does not check that a stream takes the subject (Probe
// does): a stream may be created after the target. The connection
// reconnects without end, buffering at most reconnectBufSize bytes of
// publishes while it does.
func New(cfg Config) (*Sender, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Sender{
		cfg:      cfg,
		slots:    make(chan struct{}, cfg.MaxInFlight),
		inflight: make(map[*natsio.Msg]pending),
		closedCh: make(chan struct{}),
	}
	opts := []natsio.Option{
		natsio.MaxReconnects(-1),
		natsio.ReconnectBufSize(reconnectBufSize),
		natsio.DrainTimeout(cfg.Timeout),
		natsio.ClosedHandler(func(*natsio.Conn) { s.onClosed.Do(func() { close(s.closedCh) }) }),
	}
	if cfg.Name != "" {
		opts = append(opts, natsio.Name(cfg.Name))
	}
	if cfg.CredsFile != "" {
		if _, err := os.Stat(cfg.CredsFile); err != nil {
			return nil, fmt.Errorf("nats target: CredsFile: %w", err)
		}
		opts = append(opts, natsio.UserCredentials(cfg.CredsFile))
	}
	nc, err := natsio.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("nats target: connecting to %s: %w", redactList(cfg.URL), err)
	}
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(cfg.MaxInFlight),
		// Every publish resolves (acked, refused, or timed out) within
		// Timeout, so the slots of a Send abandoned by its ctx come back.
		jetstream.WithPublishAsyncTimeout(cfg.Timeout),
		jetstream.WithPublishAsyncAckHandler(func(_ jetstream.JetStream, m *natsio.Msg, _ *jetstream.PubAck) { s.answer(m, nil) }),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *natsio.Msg, err error) { s.answer(m, err) }),
		jetstream.WithDefaultTimeout(cfg.Timeout),
	)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats target: JetStream context: %w", err)
	}
	s.nc, s.js = nc, js
	return s, nil
}

// Subject is the subject the Sender publishes to.
func (s *Sender) Subject() string { return s.cfg.Subject }

// Probe checks that a JetStream stream takes the Sender's subject, for
// `target test`: a Send without one fails every firing. It waits at most
// Config.Timeout when ctx has no deadline.
func (s *Sender) Probe(ctx context.Context) error {
	if s.closed.Load() {
		return s.errClosed()
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.Timeout)
		defer cancel()
	}
	_, err := s.js.StreamNameBySubject(ctx, s.cfg.Subject)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return &sendError{msg: fmt.Sprintf("nats: no JetStream stream takes subject %q; create one whose subjects include it", s.cfg.Subject), err: err}
	case err != nil:
		return fmt.Errorf("nats: looking up the stream that takes subject %q: %w", s.cfg.Subject, err)
	}
	return nil
}

// Close drains the connection (what was published is flushed, the acks
// already received are handled) and closes it, waiting at most
// Config.Timeout for the drain and a few seconds for the flush. Sends
// after Close fail; Sends still running get the outcomes of a closed
// connection. Calling it again returns nil.
func (s *Sender) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	err := s.nc.Drain()
	if errors.Is(err, natsio.ErrConnectionReconnecting) || errors.Is(err, natsio.ErrConnectionClosed) {
		// Drain closed it at once: there was nothing to drain.
		err = nil
	}
	// The drain waits for Timeout at most, then flushes for 5s at most.
	select {
	case <-s.closedCh:
	case <-time.After(s.cfg.Timeout + 10*time.Second):
		s.nc.Close()
	}
	if err != nil {
		return fmt.Errorf("nats target: draining the connection for subject %q: %w", s.cfg.Subject, err)
	}
	return nil
}

// acquire takes a publish slot, or reports false when ctx ends first. A
// done ctx wins over a free slot, so a cancelled Send stops publishing.
func (s *Sender) acquire(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release gives a slot back. It never blocks: every release matches an
// acquire whose token is still in the channel.
func (s *Sender) release() { <-s.slots }

var _ target.Sender = (*Sender)(nil)
