package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sched-dev/sched/internal/target"
)

// errSendTimeout is the cause of a Send's own deadline (Config.Timeout),
// told apart from the caller's ctx ending.
var errSendTimeout = errors.New("send timeout")

// errAwaiting marks, in a Send's outcomes, a firing published and not yet
// answered. It never leaves Send.
var errAwaiting = errors.New("nats: awaiting the ack")

// Send publishes every firing of fs to the Sender's subject, at most
// MaxInFlight awaiting their ack at once, then waits for each ack until
// ctx ends or Config.Timeout has passed since Send began. It returns one
// Outcome per firing, in the order of fs, once every firing has one. A
// PubAck is a delivery, a duplicate one included (the stream already
// holds that occurrence). Every failure is retryable.
//
// A publish whose ack had not come when Send returned may still be stored
// by the stream: the firing is then retried and the retry answered as a
// duplicate. Until the server answers it or Timeout passes, such a
// publish keeps a reference to its firing's Payload.
func (s *Sender) Send(ctx context.Context, fs []target.Firing) []target.Outcome {
	if len(fs) == 0 {
		return []target.Outcome{}
	}
	b := &batch{s: s, out: make([]target.Outcome, len(fs)), done: make(chan struct{})}
	if s.closed.Load() {
		err := s.errClosed()
		for i := range b.out {
			b.out[i].Err = err
		}
		return b.out
	}
	ctx, cancel := context.WithDeadlineCause(ctx, time.Now().Add(s.cfg.Timeout), errSendTimeout)
	defer cancel()

	mb := newMsgBuilder(s.cfg.Subject, len(fs))
	b.left.Store(1) // Send's own, while it publishes
	for i := range fs {
		f := &fs[i]
		if f.OccurrenceID == "" {
			// Without a Nats-Msg-Id the stream cannot drop a republish;
			// no retry gives this firing one, so it goes to the DLQ.
			b.out[i] = target.Outcome{Err: fmt.Errorf("nats: firing for schedule %q has no occurrence id to deduplicate by; not published to subject %q", f.ScheduleID, s.cfg.Subject), Permanent: true}
			continue
		}
		if !s.acquire(ctx) {
			// ctx ended: this firing and the ones after it are not
			// published at all.
			err := s.errNotPublished(ctx)
			for j := i; j < len(fs); j++ {
				if b.out[j].Err == nil {
					b.out[j].Err = err
				}
			}
			break
		}
		m := mb.build(i, f)
		b.out[i].Err = errAwaiting
		b.left.Add(1)
		s.mu.Lock()
		s.inflight[m] = pending{b: b, i: i}
		s.mu.Unlock()
		if _, err := s.js.PublishMsgAsync(m); err != nil {
			// The client did not register the publish, so no callback
			// answers it: whoever takes it out of inflight settles it.
			if s.forget(m) {
				b.settle(i, err)
			}
		}
	}
	if b.left.Add(-1) == 0 {
		close(b.done)
	}

	select {
	case <-b.done:
	case <-ctx.Done():
	}
	return b.finish(ctx)
}

// pending is where a published message's answer goes: firing i of a
// Send's batch.
type pending struct {
	b *batch
	i int
}

// batch is one Send's firings on their way.
type batch struct {
	s    *Sender
	done chan struct{} // closed when left reaches zero
	// left counts the publishes awaiting their answer, plus one while
	// Send is still publishing.
	left atomic.Int64

	mu       sync.Mutex
	out      []target.Outcome // errAwaiting until answered
	finished bool             // Send has returned: later answers are dropped
}

// settle records the answer to firing i: delivered when err is nil.
func (b *batch) settle(i int, err error) {
	b.mu.Lock()
	if !b.finished {
		if err == nil {
			b.out[i] = target.Outcome{}
		} else {
			b.out[i].Err = b.s.errPublish(err)
		}
	}
	b.mu.Unlock()
	if b.left.Add(-1) == 0 {
		close(b.done)
	}
}

// finish gives the firings still awaiting their answer an outcome saying
// why Send stopped waiting, and returns the outcomes, which no answer
// touches after it.
func (b *batch) finish(ctx context.Context) []target.Outcome {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finished = true
	var err error
	for i := range b.out {
		if b.out[i].Err == errAwaiting {
			if err == nil {
				err = b.s.errNoAck(ctx)
			}
			b.out[i].Err = err
		}
	}
	return b.out
}

// answer is the client's callback for every publish it registered: the
// ack (err nil) or why none came. It must not block.
func (s *Sender) answer(m *natsio.Msg, err error) {
	s.mu.Lock()
	p, ok := s.inflight[m]
	delete(s.inflight, m)
	s.mu.Unlock()
	if !ok {
		return
	}
	s.release()
	p.b.settle(p.i, err)
}

// forget takes m out of inflight after its publish failed, and gives its
// slot back; false when an answer already took it.
func (s *Sender) forget(m *natsio.Msg) bool {
	s.mu.Lock()
	_, ok := s.inflight[m]
	delete(s.inflight, m)
	s.mu.Unlock()
	if ok {
		s.release()
	}
	return ok
}

// headersPerMsg is how many distinct header values a message has
// (Nats-Msg-Id and Sched-Occurrence-Id share one).
const headersPerMsg = 6

// msgBuilder builds a batch's messages from storage allocated once for
// the batch rather than once per message and header.
type msgBuilder struct {
	subject string
	msgs    []natsio.Msg
	vals    []string
}

func newMsgBuilder(subject string, n int) *msgBuilder {
	return &msgBuilder{subject: subject, msgs: make([]natsio.Msg, n), vals: make([]string, n*headersPerMsg)}
}

// build returns firing f's message, the batch's i-th: subject, the
// payload as the body, the occurrence id as Nats-Msg-Id and the Sched-*
// headers.
func (mb *msgBuilder) build(i int, f *target.Firing) *natsio.Msg {
	v := mb.vals[i*headersPerMsg : (i+1)*headersPerMsg : (i+1)*headersPerMsg]
	v[0] = f.OccurrenceID
	v[1] = f.TenantID
	v[2] = f.ScheduleID
	v[3] = strconv.FormatInt(f.ScheduleVersion, 10)
	v[4] = f.ScheduledFor.UTC().Format(time.RFC3339Nano)
	v[5] = strconv.FormatInt(f.Attempt, 10)
	h := make(natsio.Header, headersPerMsg)
	h[jetstream.MsgIDHeader] = v[0:1:1]
	h[HeaderOccurrenceID] = v[0:1:1]
	h[HeaderTenant] = v[1:2:2]
	h[HeaderScheduleID] = v[2:3:3]
	h[HeaderScheduleVersion] = v[3:4:4]
	h[HeaderScheduledFor] = v[4:5:5]
	h[HeaderAttempt] = v[5:6:6]
	m := &mb.msgs[i]
	*m = natsio.Msg{Subject: mb.subject, Data: f.Payload, Header: h}
	return m
}

// sendError is a failure's text as an operator reads it, with the error
// it came from kept for errors.Is and errors.As.
type sendError struct {
	msg string
	err error
}

func (e *sendError) Error() string { return e.msg }
func (e *sendError) Unwrap() error { return e.err }

// errPublish says why the client or the server did not take a publish.
func (s *Sender) errPublish(err error) error {
	subj := s.cfg.Subject
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, natsio.ErrNoResponders):
		return &sendError{msg: fmt.Sprintf("nats: no JetStream stream takes subject %q (the server had no responders)", subj), err: err}
	case errors.As(err, &apiErr):
		// The stream refused: a limit reached with DiscardNew, a message
		// larger than it allows, and so on. The server's words say which.
		return &sendError{msg: fmt.Sprintf("nats: the stream for subject %q refused the firing: %s (err_code %d)", subj, apiErr.Description, apiErr.ErrorCode), err: err}
	case errors.Is(err, jetstream.ErrAsyncPublishTimeout):
		return &sendError{msg: fmt.Sprintf("nats: no ack from JetStream for subject %q within %s", subj, s.cfg.Timeout), err: err}
	case errors.Is(err, natsio.ErrDisconnected):
		return &sendError{msg: fmt.Sprintf("nats: connection to the server lost before JetStream acked the firing on subject %q", subj), err: err}
	case errors.Is(err, natsio.ErrConnectionClosed), errors.Is(err, natsio.ErrConnectionDraining):
		if s.closed.Load() {
			return s.errClosed()
		}
		return fmt.Errorf("nats: publishing to subject %q: %w", subj, err)
	case errors.Is(err, natsio.ErrReconnectBufExceeded):
		return fmt.Errorf("nats: publishing to subject %q while reconnecting: %w", subj, err)
	}
	return fmt.Errorf("nats: publishing to subject %q: %w", subj, err)
}

// errNoAck says why Send stopped waiting for a published firing's ack.
func (s *Sender) errNoAck(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, errSendTimeout) {
		return &sendError{msg: fmt.Sprintf("nats: no ack from JetStream for subject %q within %s", s.cfg.Subject, s.cfg.Timeout), err: context.DeadlineExceeded}
	}
	return fmt.Errorf("nats: stopped waiting for JetStream's ack on subject %q: %w", s.cfg.Subject, cause)
}

// errNotPublished says why Send did not publish a firing at all.
func (s *Sender) errNotPublished(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, errSendTimeout) {
		return &sendError{msg: fmt.Sprintf("nats: firing not published to subject %q: no publish slot freed within %s (MaxInFlight %d)", s.cfg.Subject, s.cfg.Timeout, s.cfg.MaxInFlight), err: context.DeadlineExceeded}
	}
	return fmt.Errorf("nats: firing not published to subject %q: %w", s.cfg.Subject, cause)
}

// errClosed is the outcome of a Send after Close.
func (s *Sender) errClosed() error {
	return fmt.Errorf("nats: the sender for subject %q is closed: %w", s.cfg.Subject, natsio.ErrConnectionClosed)
}
