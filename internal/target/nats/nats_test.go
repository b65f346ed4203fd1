package nats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/sched-dev/sched/internal/target"
	"github.com/sched-dev/sched/internal/tcpproxy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConfigValidate(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.creds")
	tests := []struct {
		name string
		cfg  Config
		want []string // each must appear in the error; nil: valid
	}{
		{name: "valid", cfg: Config{Subject: "orders.fire"}},
		{name: "valid with every field", cfg: Config{URL: "nats://a:4222, tls://b:4443", Subject: "orders.fire", Timeout: time.Second, MaxInFlight: 1, Name: "schedd relay"}},
		{name: "valid subject with a star inside a token", cfg: Config{Subject: "orders.a*b"}},
		{name: "empty subject", cfg: Config{}, want: []string{"Subject is empty"}},
		{name: "wildcard subject", cfg: Config{Subject: "orders.*.fire"}, want: []string{`Subject "orders.*.fire"`, "token 2", `wildcard "*"`}},
		{name: "full wildcard subject", cfg: Config{Subject: "orders.>"}, want: []string{`Subject "orders.>"`, "token 2", `wildcard ">"`}},
		{name: "empty token", cfg: Config{Subject: "orders..fire"}, want: []string{`Subject "orders..fire"`, "token 2 is empty"}},
		{name: "trailing dot", cfg: Config{Subject: "orders."}, want: []string{`Subject "orders."`, "token 2 is empty"}},
		{name: "space in subject", cfg: Config{Subject: "orders.to fire"}, want: []string{`Subject "orders.to fire"`, `token 2 ("to fire")`, "white space"}},
		{name: "unparsable URL", cfg: Config{URL: "nats://127.0.0.1:42x22", Subject: "o.f"}, want: []string{`URL "nats://127.0.0.1:42x22"`, "invalid port"}},
		{name: "URL with a wrong scheme", cfg: Config{URL: "http://127.0.0.1:4222", Subject: "o.f"}, want: []string{`URL "http://127.0.0.1:4222"`, `scheme "http"`}},
		{name: "URL without a scheme", cfg: Config{URL: "127.0.0.1", Subject: "o.f"}, want: []string{`URL "127.0.0.1"`, "no scheme"}},
		{name: "URL without a host", cfg: Config{URL: "nats://:4222", Subject: "o.f"}, want: []string{`URL "nats://:4222"`, "no host"}},
		{name: "second URL of a list bad", cfg: Config{URL: "nats://a:4222,ftp://b", Subject: "o.f"}, want: []string{`URL "ftp://b"`, `scheme "ftp"`}},
		{name: "empty entry in a URL list", cfg: Config{URL: "nats://a:4222,,nats://b:4222", Subject: "o.f"}, want: []string{"an empty entry"}},
		{name: "password hidden", cfg: Config{URL: "nats://u:secret@h:4x", Subject: "o.f"}, want: []string{`"nats://u:xxxxx@h:4x"`}},
		{name: "negative timeout", cfg: Config{Subject: "o.f", Timeout: -time.Second}, want: []string{"Timeout -1s is negative"}},
		{name: "negative max in flight", cfg: Config{Subject: "o.f", MaxInFlight: -1}, want: []string{"MaxInFlight -1 is negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: nil, want an error naming %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate: %q does not name %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("Validate: %q shows the URL's password", err)
			}
			// New refuses the same config, before it connects.
			s, nerr := New(tt.cfg)
			if nerr == nil {
				s.Close()
				t.Fatalf("New: nil error, want %v", err)
			}
			if nerr.Error() != err.Error() {
				t.Errorf("New: %v, want Validate's %v", nerr, err)
			}
		})
	}

	t.Run("missing creds file", func(t *testing.T) {
		_, err := New(Config{URL: "nats://127.0.0.1:1", Subject: "o.f", CredsFile: missing})
		if err == nil || !strings.Contains(err.Error(), "CredsFile") || !strings.Contains(err.Error(), missing) {
			t.Fatalf("New: %v, want an error naming CredsFile %s", err, missing)
		}
	})
}

func TestNewUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port nothing listens on
	_, err = New(Config{URL: "nats://" + addr, Subject: "o.f"})
	if err == nil || !strings.Contains(err.Error(), "connecting to nats://"+addr) {
		t.Fatalf("New: %v, want an error naming nats://%s", err, addr)
	}
}

func TestSendDeliversEveryFiring(t *testing.T) {
	srv := needServer(t)
	st, subject := srv.newStream(t, nil)
	s := newSender(t, Config{Subject: subject})
	ctx := context.Background()

	if err := s.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	fs := firings("occ", 1000, 200)
	out := s.Send(ctx, fs)
	if len(out) != len(fs) {
		t.Fatalf("Send: %d outcomes for %d firings", len(out), len(fs))
	}
	for i, o := range out {
		if !o.Delivered() || o.Permanent {
			t.Fatalf("outcome %d (%s): %+v, want delivered", i, fs[i].OccurrenceID, o)
		}
	}

	msgs := storedMsgs(t, st)
	if len(msgs) != len(fs) {
		t.Fatalf("the stream holds %d messages, want %d", len(msgs), len(fs))
	}
	want := byID(fs)
	seen := map[string]bool{}
	for _, m := range msgs {
		id := m.Header.Get(jetstream.MsgIDHeader)
		f, ok := want[id]
		if !ok {
			t.Fatalf("seq %d: unknown Nats-Msg-Id %q", m.Sequence, id)
		}
		if seen[id] {
			t.Fatalf("seq %d: %s stored twice", m.Sequence, id)
		}
		seen[id] = true
		checkMessage(t, m, f, subject)
	}
}

// TestSendRepublish is a relay that crashed between the stream's acks and
// its own acks to the queue: the firings come again, under the same
// occurrence ids, from another Sender (the restarted relay) and with the
// next attempt number. They are delivered and stored once.
func TestSendRepublish(t *testing.T) {
	srv := needServer(t)
	st, subject := srv.newStream(t, nil)
	ctx := context.Background()

	first := firings("occ", 100, 200)
	crashed := newSender(t, Config{Subject: subject})
	if n := countDelivered(t, crashed.Send(ctx, first)); n != len(first) {
		t.Fatalf("first send: %d of %d delivered", n, len(first))
	}
	if err := crashed.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	again := make([]target.Firing, 0, 150)
	for _, f := range first {
		f.Attempt = 2
		again = append(again, f)
	}
	again = append(again, firings("new", 50, 200)...)
	restarted := newSender(t, Config{Subject: subject})
	for round := 1; round <= 2; round++ {
		out := restarted.Send(ctx, again)
		if n := countDelivered(t, out); n != len(again) {
			for i, o := range out {
				if !o.Delivered() {
					t.Errorf("round %d: %s: %v", round, again[i].OccurrenceID, o.Err)
				}
			}
			t.Fatalf("round %d: %d of %d delivered", round, n, len(again))
		}
	}

	state := streamState(t, st)
	if state.Msgs != 150 || state.LastSeq != 150 {
		t.Fatalf("the stream holds %d messages up to seq %d, want 150 and 150: a duplicate was stored", state.Msgs, state.LastSeq)
	}
	want := byID(append(append([]target.Firing{}, first...), again[100:]...))
	seen := map[string]bool{}
	for _, m := range storedMsgs(t, st) {
		id := m.Header.Get(jetstream.MsgIDHeader)
		if seen[id] {
			t.Fatalf("%s stored twice", id)
		}
		seen[id] = true
		// The copy kept is the first one published: attempt 1.
		checkMessage(t, m, want[id], subject)
	}
	if len(seen) != 150 {
		t.Fatalf("%d distinct ids stored, want 150", len(seen))
	}
}

func TestSendWithoutStream(t *testing.T) {
	needServer(t)
	subject := freeSubject(t)
	s := newSender(t, Config{Subject: subject})
	ctx := context.Background()

	out := s.Send(ctx, firings("occ", 50, 200))
	if n := countDelivered(t, out); n != 0 {
		t.Fatalf("%d firings delivered with no stream for the subject", n)
	}
	wantText := fmt.Sprintf("nats: no JetStream stream takes subject %q", subject)
	for i, o := range out {
		if !strings.Contains(o.Err.Error(), wantText) {
			t.Errorf("outcome %d: %q, want it to contain %q", i, o.Err, wantText)
		}
		if !errors.Is(o.Err, jetstream.ErrNoStreamResponse) {
			t.Errorf("outcome %d: %v does not wrap jetstream.ErrNoStreamResponse", i, o.Err)
		}
	}

	err := s.Probe(ctx)
	if err == nil || !strings.Contains(err.Error(), wantText) || !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("Probe: %v, want %q wrapping jetstream.ErrStreamNotFound", err, wantText)
	}
}

func TestSendFullStream(t *testing.T) {
	srv := needServer(t)
	tests := []struct {
		name   string
		limit  func(c *jetstream.StreamConfig, msgBytes int64) // to 10 messages
		reason string
	}{
		{name: "max messages", limit: func(c *jetstream.StreamConfig, _ int64) { c.MaxMsgs = 10 }, reason: "maximum messages exceeded"},
		// Exactly ten messages' worth as the stream counts them: older
		// servers (2.9) check DiscardNew against a smaller estimate of a
		// message than the store counts, and when the two disagree they
		// store the message and drop the oldest instead of refusing.
		{name: "max bytes", limit: func(c *jetstream.StreamConfig, msgBytes int64) { c.MaxBytes = 10 * msgBytes }, reason: "maximum bytes exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, subject := srv.newStream(t, func(c *jetstream.StreamConfig) { c.Discard = jetstream.DiscardNew })
			s := newSender(t, Config{Subject: subject})
			fs := firings("occ", 26, 200) // all the same size

			// Size one message as the stream stores it, then empty the
			// stream and set the limit.
			if n := countDelivered(t, s.Send(ctx, fs[:1])); n != 1 {
				t.Fatal("the sizing firing was not delivered")
			}
			msgBytes := int64(streamState(t, st).Bytes)
			if err := st.Purge(ctx); err != nil {
				t.Fatalf("purge: %v", err)
			}
			info, err := st.Info(ctx)
			if err != nil {
				t.Fatalf("stream info: %v", err)
			}
			cfg := info.Config
			tt.limit(&cfg, msgBytes)
			if _, err := srv.js.UpdateStream(ctx, cfg); err != nil {
				t.Fatalf("set the stream's limit: %v", err)
			}

			fs = fs[1:]
			out := s.Send(ctx, fs)
			delivered := map[string]bool{}
			for i, o := range out {
				if o.Delivered() {
					delivered[fs[i].OccurrenceID] = true
					continue
				}
				if o.Permanent {
					t.Errorf("outcome %d: permanent, want retryable: %v", i, o.Err)
				}
				for _, w := range []string{tt.reason, fmt.Sprintf("subject %q", subject)} {
					if !strings.Contains(o.Err.Error(), w) {
						t.Errorf("outcome %d: %q does not name %q", i, o.Err, w)
					}
				}
			}
			if len(delivered) != 10 {
				t.Fatalf("%d of %d delivered, want the 10 the stream holds", len(delivered), len(fs))
			}
			msgs := storedMsgs(t, st)
			if len(msgs) != 10 {
				t.Fatalf("the stream holds %d messages, want 10", len(msgs))
			}
			for _, m := range msgs {
				if id := m.Header.Get(jetstream.MsgIDHeader); !delivered[id] {
					t.Errorf("%s is stored but its outcome says not delivered", id)
				}
			}
		})
	}
}

// TestSendContextCancelled ends a Send's ctx while firings are still
// awaiting their acks and others their turn to be published: every
// firing gets an outcome, and Send returns at once.
func TestSendContextCancelled(t *testing.T) {
	srv := needServer(t)

	t.Run("acks withheld", func(t *testing.T) {
		// A plain subscriber stands in for the stream, so which firings
		// are acked is certain: it acks the first 50 messages it gets
		// and none after. With 64 in flight at most, 114 messages are
		// then published and 86 firings wait for a slot.
		const n, acked, inFlight = 200, 50, 64
		subject := freeSubject(t)
		var got atomic.Int64
		allIn := make(chan struct{})
		sub, err := srv.nc.Subscribe(subject, func(m *natsio.Msg) {
			k := got.Add(1)
			if k <= acked {
				_ = m.Respond(fmt.Appendf(nil, `{"stream":"FAKE","seq":%d}`, k))
			}
			if k == acked+inFlight {
				close(allIn)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
		if err := srv.nc.Flush(); err != nil {
			t.Fatal(err)
		}

		s := newSender(t, Config{Subject: subject, MaxInFlight: inFlight})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fs := firings("occ", n, 200)
		done := make(chan []target.Outcome)
		go func() { done <- s.Send(ctx, fs) }()

		select {
		case <-allIn:
		case <-time.After(10 * time.Second):
			t.Fatalf("the subscriber got %d messages, want %d", got.Load(), acked+inFlight)
		}
		cancel()
		cancelled := time.Now()
		var out []target.Outcome
		select {
		case out = <-done:
		case <-time.After(2 * time.Second):
			t.Fatal("Send did not return within 2s of its ctx being cancelled")
		}
		if d := time.Since(cancelled); d > 500*time.Millisecond {
			t.Errorf("Send returned %s after its ctx was cancelled", d)
		}
		if len(out) != n {
			t.Fatalf("%d outcomes for %d firings", len(out), n)
		}
		if d := countDelivered(t, out); d != acked {
			t.Errorf("%d delivered, want %d", d, acked)
		}
		for i, o := range out[acked:] {
			i += acked
			if o.Delivered() || !errors.Is(o.Err, context.Canceled) || !strings.Contains(o.Err.Error(), subject) {
				t.Errorf("outcome %d: %v, want a retryable error naming %q and wrapping context.Canceled", i, o.Err, subject)
			}
		}
		if got := got.Load(); got != acked+inFlight {
			t.Errorf("%d firings published, want %d: a publish slot was not kept or was leaked", got, acked+inFlight)
		}
	})

	t.Run("real stream", func(t *testing.T) {
		st, subject := srv.newStream(t, nil)
		s := newSender(t, Config{Subject: subject, MaxInFlight: 8})
		fs := firings("occ", 50000, 200)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancel once the stream holds some of the firings.
		var cancelled atomic.Int64
		go func() {
			for ctx.Err() == nil {
				if info, err := st.Info(ctx); err == nil && info.State.Msgs >= 100 {
					cancelled.Store(time.Now().UnixNano())
					cancel()
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		out := s.Send(ctx, fs)
		if d := time.Since(time.Unix(0, cancelled.Load())); cancelled.Load() == 0 || d > 500*time.Millisecond {
			t.Errorf("Send returned %s after its ctx was cancelled", d)
		}
		if len(out) != len(fs) {
			t.Fatalf("%d outcomes for %d firings", len(out), len(fs))
		}
		delivered := countDelivered(t, out)
		if delivered == len(fs) {
			t.Fatalf("all %d firings were delivered before the cancel; the test needs more of them", len(fs))
		}
		for i, o := range out {
			if !o.Delivered() && !errors.Is(o.Err, context.Canceled) {
				t.Errorf("outcome %d: %v, want delivered or context.Canceled", i, o.Err)
			}
		}
		// Every firing said delivered is in the stream (a few more may be:
		// acked after Send stopped waiting).
		waitFor(t, 5*time.Second, "publishes in flight settled", func() bool { return s.js.PublishAsyncPending() == 0 })
		stored := map[string]bool{}
		for _, m := range storedMsgs(t, st) {
			stored[m.Header.Get(jetstream.MsgIDHeader)] = true
		}
		for i, o := range out {
			if o.Delivered() && !stored[fs[i].OccurrenceID] {
				t.Errorf("%s: delivered, but not in the stream", fs[i].OccurrenceID)
			}
		}
		t.Logf("%d delivered, %d stored, %d cancelled", delivered, len(stored), len(fs)-delivered)
	})
}

// viaProxy returns a stream and a Sender whose connection goes through a
// loopback proxy the test can blackhole and cut.
func viaProxy(t *testing.T, cfg Config) (*server, jetstream.Stream, *Sender, *tcpproxy.Proxy) {
	t.Helper()
	srv := needServer(t)
	st, subject := srv.newStream(t, nil)
	p := tcpproxy.New(t, strings.TrimPrefix(srv.url, "nats://"))
	cfg.URL, cfg.Subject = "nats://"+p.Addr(), subject
	return srv, st, newSender(t, cfg), p
}

// waitReconnected waits until s's connection was re-established after
// the proxy cut it.
func waitReconnected(t *testing.T, s *Sender) {
	t.Helper()
	waitFor(t, 15*time.Second, "reconnected", func() bool { return s.nc.Stats().Reconnects > 0 && s.nc.IsConnected() })
}

func TestSendTimeout(t *testing.T) {
	_, st, s, p := viaProxy(t, Config{Timeout: 300 * time.Millisecond})
	fs := firings("occ", 20, 200)

	p.Blackhole() // nothing reaches the server, no ack comes back
	start := time.Now()
	out := s.Send(context.Background(), fs)
	if d := time.Since(start); d < 250*time.Millisecond || d > 2*time.Second {
		t.Errorf("Send took %s with a 300ms timeout", d)
	}
	if n := countDelivered(t, out); n != 0 {
		t.Fatalf("%d delivered through a blackhole", n)
	}
	want := fmt.Sprintf("nats: no ack from JetStream for subject %q within 300ms", s.Subject())
	for i, o := range out {
		if o.Err.Error() != want {
			t.Errorf("outcome %d: %q, want %q", i, o.Err, want)
		}
	}

	p.Heal()
	waitReconnected(t, s)
	if n := countDelivered(t, s.Send(context.Background(), fs)); n != len(fs) {
		t.Fatalf("after the proxy healed: %d of %d delivered", n, len(fs))
	}
	if got := streamState(t, st).Msgs; got != uint64(len(fs)) {
		t.Fatalf("the stream holds %d messages, want %d", got, len(fs))
	}
}

func TestSendConnectionLost(t *testing.T) {
	_, st, s, p := viaProxy(t, Config{})
	fs := firings("occ", 100, 200)

	p.Blackhole()
	done := make(chan []target.Outcome)
	go func() { done <- s.Send(context.Background(), fs) }()
	// Every firing is published and awaits its ack when the connection
	// is cut.
	waitFor(t, 5*time.Second, "100 publishes pending", func() bool { return s.js.PublishAsyncPending() == len(fs) })
	p.Heal()

	var out []target.Outcome
	select {
	case out = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Send did not return within 5s of losing its connection")
	}
	if n := countDelivered(t, out); n != 0 {
		t.Fatalf("%d delivered through a blackhole", n)
	}
	want := fmt.Sprintf("nats: connection to the server lost before JetStream acked the firing on subject %q", s.Subject())
	for i, o := range out {
		if o.Err.Error() != want || !errors.Is(o.Err, natsio.ErrDisconnected) {
			t.Errorf("outcome %d: %q, want %q wrapping nats.ErrDisconnected", i, o.Err, want)
		}
	}

	// The connection comes back by itself, and the retry delivers.
	waitReconnected(t, s)
	if n := countDelivered(t, s.Send(context.Background(), fs)); n != len(fs) {
		t.Fatalf("after reconnecting: %d of %d delivered", n, len(fs))
	}
	if got := streamState(t, st).Msgs; got != uint64(len(fs)) {
		t.Fatalf("the stream holds %d messages, want %d", got, len(fs))
	}
}

// TestSendConcurrent runs several Sends at once on one Sender with few
// publish slots, which they share.
func TestSendConcurrent(t *testing.T) {
	srv := needServer(t)
	st, subject := srv.newStream(t, nil)
	s := newSender(t, Config{Subject: subject, MaxInFlight: 16})

	const senders, each = 8, 500
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			fs := firings(fmt.Sprintf("g%d", g), each, 200)
			out := s.Send(context.Background(), fs)
			for i, o := range out {
				if !o.Delivered() {
					t.Errorf("sender %d, firing %d: %v", g, i, o.Err)
				}
			}
		})
	}
	wg.Wait()
	if got := streamState(t, st).Msgs; got != senders*each {
		t.Fatalf("the stream holds %d messages, want %d", got, senders*each)
	}
	if n := len(s.slots); n != 0 {
		t.Fatalf("%d publish slots still taken after every Send returned", n)
	}
}

func TestSendFiringWithoutOccurrenceID(t *testing.T) {
	srv := needServer(t)
	st, subject := srv.newStream(t, nil)
	s := newSender(t, Config{Subject: subject})
	fs := firings("occ", 3, 50)
	fs[1].OccurrenceID = ""

	out := s.Send(context.Background(), fs)
	if !out[0].Delivered() || !out[2].Delivered() {
		t.Fatalf("the firings with ids: %+v, %+v, want delivered", out[0], out[2])
	}
	if out[1].Delivered() || !out[1].Permanent || !strings.Contains(out[1].Err.Error(), "no occurrence id") {
		t.Fatalf("the firing without an id: %+v, want a permanent refusal", out[1])
	}
	if got := streamState(t, st).Msgs; got != 2 {
		t.Fatalf("the stream holds %d messages, want 2", got)
	}
}

func TestSendAfterClose(t *testing.T) {
	srv := needServer(t)
	_, subject := srv.newStream(t, nil)
	s, err := New(Config{URL: srv.url, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	out := s.Send(context.Background(), firings("occ", 3, 50))
	for i, o := range out {
		if o.Delivered() || o.Permanent || !strings.Contains(o.Err.Error(), "is closed") {
			t.Errorf("outcome %d after Close: %+v, want a retryable error saying the sender is closed", i, o)
		}
	}
	if err := s.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "is closed") {
		t.Errorf("Probe after Close: %v, want an error saying the sender is closed", err)
	}
	if out := s.Send(context.Background(), nil); len(out) != 0 {
		t.Errorf("Send(nil): %d outcomes", len(out))
	}
}
