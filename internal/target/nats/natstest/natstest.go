// Package natstest is test support for what talks to NATS JetStream: the
// server the tests use, on loopback, and the one rule of what a test does
// without it.
package natstest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// URL is the NATS server with JetStream the tests use: 127.0.0.1 only.
const URL = "nats://127.0.0.1:4222"

// Connect connects to URL for tb and checks it has JetStream. Without
// such a server the test is skipped, unless SCHED_TEST_NATS=require (as
// .ci/run sets when the machine has nats-server), when it fails.
func Connect(tb testing.TB) (*natsio.Conn, jetstream.JetStream) {
	tb.Helper()
	unavailable := func(format string, args ...any) {
		tb.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("SCHED_TEST_NATS") == "require" {
			tb.Fatalf("%s (SCHED_TEST_NATS=require)", msg)
		}
		tb.Skipf("%s; set SCHED_TEST_NATS=require to fail instead of skipping", msg)
	}
	nc, err := natsio.Connect(URL, natsio.Timeout(2*time.Second), natsio.Name("sched test "+tb.Name()))
	if err != nil {
		unavailable("no NATS server at %s: %v", URL, err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatalf("jetstream.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		unavailable("NATS server at %s has no JetStream: %v", URL, err)
	}
	return nc, js
}
