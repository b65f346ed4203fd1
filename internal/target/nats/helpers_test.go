package nats

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sched-dev/sched/internal/target"
	"github.com/sched-dev/sched/internal/target/nats/natstest"
)

// testURL is the NATS server with JetStream the tests use; they talk to
// 127.0.0.1 only.
const testURL = natstest.URL

// server is a test's own connection to the NATS server, for setting up
// streams and reading back what a Sender stored.
type server struct {
	url string
	nc  *natsio.Conn
	js  jetstream.JetStream
}

// needServer connects to the test server (natstest.Connect: skipped
// without one unless SCHED_TEST_NATS=require).
func needServer(tb testing.TB) *server {
	tb.Helper()
	nc, js := natstest.Connect(tb)
	return &server{url: testURL, nc: nc, js: js}
}

// uniqueName returns a name no other test run uses: the test's name made
// safe for streams and subjects, and a random suffix.
func uniqueName(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatalf("rand: %v", err)
	}
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, tb.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return name + "_" + hex.EncodeToString(b[:])
}

// freeSubject is a subject no stream takes.
func freeSubject(tb testing.TB) string {
	tb.Helper()
	return "schedtest.nostream." + uniqueName(tb)
}

// newStream creates a file-backed stream of its own, taking one subject
// of its own, with a two-minute duplicate window, changed by edit when
// not nil. It is deleted when the test ends.
func (srv *server) newStream(tb testing.TB, edit func(*jetstream.StreamConfig)) (jetstream.Stream, string) {
	tb.Helper()
	name := "SCHEDTEST_" + uniqueName(tb)
	cfg := jetstream.StreamConfig{
		Name:       name,
		Subjects:   []string{"schedtest." + name + ".fire"},
		Storage:    jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	}
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := srv.js.CreateStream(ctx, cfg)
	if err != nil {
		tb.Fatalf("create stream %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.js.DeleteStream(ctx, name); err != nil {
			tb.Errorf("delete stream %s: %v", name, err)
		}
	})
	return st, cfg.Subjects[0]
}

// newSender returns a Sender for cfg (URL defaulting to the test
// server's), closed when the test ends.
func newSender(tb testing.TB, cfg Config) *Sender {
	tb.Helper()
	if cfg.URL == "" {
		cfg.URL = testURL
	}
	if cfg.Name == "" {
		cfg.Name = "sched target/nats test " + tb.Name()
	}
	s, err := New(cfg)
	if err != nil {
		tb.Fatalf("New(%+v): %v", cfg, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// firingTime is the instant of the firings' schedule, with nanoseconds so
// the header's precision shows.
var firingTime = time.Date(2026, 3, 29, 1, 30, 0, 123456789, time.UTC)

// firings returns n firings with distinct occurrence ids under prefix,
// each payload a JSON object padded to about size bytes.
func firings(prefix string, n, size int) []target.Firing {
	fs := make([]target.Firing, n)
	for i := range fs {
		id := fmt.Sprintf("%s-%06d", prefix, i)
		payload := fmt.Sprintf(`{"occurrence":%q,"pad":"`, id)
		if pad := size - len(payload) - 2; pad > 0 {
			payload += strings.Repeat("x", pad)
		}
		payload += `"}`
		fs[i] = target.Firing{
			OccurrenceID:    id,
			TenantID:        "tenant-" + fmt.Sprint(i%3),
			ScheduleID:      "sch-" + fmt.Sprint(i%7),
			ScheduleVersion: int64(1 + i%4),
			ScheduledFor:    firingTime.Add(time.Duration(i) * time.Second),
			Attempt:         1,
			Payload:         []byte(payload),
		}
	}
	return fs
}

// storedMsgs reads every message of st, in sequence order.
func storedMsgs(tb testing.TB, st jetstream.Stream) []*jetstream.RawStreamMsg {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil {
		tb.Fatalf("stream info: %v", err)
	}
	var msgs []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			tb.Fatalf("get message %d: %v", seq, err)
		}
		msgs = append(msgs, m)
	}
	if uint64(len(msgs)) != info.State.Msgs {
		tb.Fatalf("read %d messages, the stream holds %d", len(msgs), info.State.Msgs)
	}
	return msgs
}

// streamState is st's message count and last sequence.
func streamState(tb testing.TB, st jetstream.Stream) jetstream.StreamState {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil {
		tb.Fatalf("stream info: %v", err)
	}
	return info.State
}

// checkMessage compares a stored message with the firing it came from.
func checkMessage(tb testing.TB, m *jetstream.RawStreamMsg, f target.Firing, subject string) {
	tb.Helper()
	if m.Subject != subject {
		tb.Errorf("seq %d: subject %q, want %q", m.Sequence, m.Subject, subject)
	}
	if string(m.Data) != string(f.Payload) {
		tb.Errorf("seq %d: body %q, want %q", m.Sequence, m.Data, f.Payload)
	}
	want := map[string]string{
		jetstream.MsgIDHeader: f.OccurrenceID,
		HeaderOccurrenceID:    f.OccurrenceID,
		HeaderTenant:          f.TenantID,
		HeaderScheduleID:      f.ScheduleID,
		HeaderScheduleVersion: fmt.Sprint(f.ScheduleVersion),
		HeaderScheduledFor:    f.ScheduledFor.UTC().Format(time.RFC3339Nano),
		HeaderAttempt:         fmt.Sprint(f.Attempt),
	}
	for k, v := range want {
		if got := m.Header.Values(k); len(got) != 1 || got[0] != v {
			tb.Errorf("seq %d: header %s = %q, want [%q]", m.Sequence, k, got, v)
		}
	}
}

// byID indexes firings by occurrence id.
func byID(fs []target.Firing) map[string]target.Firing {
	m := make(map[string]target.Firing, len(fs))
	for _, f := range fs {
		m[f.OccurrenceID] = f
	}
	return m
}

// countDelivered counts the delivered outcomes, and fails the test on an
// outcome that is permanent or has RetryAfter: a NATS target has neither.
func countDelivered(tb testing.TB, out []target.Outcome) int {
	tb.Helper()
	n := 0
	for i, o := range out {
		if o.Permanent || o.RetryAfter != 0 {
			tb.Errorf("outcome %d: Permanent=%v RetryAfter=%v, want a plain retryable outcome: %v", i, o.Permanent, o.RetryAfter, o.Err)
		}
		if o.Delivered() {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or d passes.
func waitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
