package nats

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sched-dev/sched/internal/target"
)

// benchBatch is the firings per Send in the benchmarks, and benchPayload
// the size of each firing's payload.
const benchBatch, benchPayload = 1000, 200

// BenchmarkSend sends batches of 1,000 firings of about 200 bytes to a
// file-backed stream, one Send per iteration, and reports firings per
// second. Every firing has an occurrence id of its own, so none is
// dropped as a duplicate.
func BenchmarkSend(b *testing.B) {
	srv := needServer(b)
	_, subject := srv.newStream(b, nil)
	s := newSender(b, Config{Subject: subject})
	ctx := context.Background()
	var sent int
	round := 0
	b.SetBytes(benchBatch * benchPayload)
	b.ReportAllocs()
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		fs := firings(fmt.Sprintf("b%d", round), benchBatch, benchPayload)
		round++
		b.StartTimer()
		start := time.Now()
		out := s.Send(ctx, fs)
		elapsed += time.Since(start)
		for i, o := range out {
			if !o.Delivered() {
				b.Fatalf("firing %d: %v", i, o.Err)
			}
		}
		sent += len(out)
	}
	b.ReportMetric(float64(sent)/elapsed.Seconds(), "firings/s")
}

// BenchmarkPlainAsyncPublish is the ceiling BenchmarkSend is compared
// to: the same batches published by a bare PublishMsgAsync loop, at most
// 4,096 in flight (the client's own limit), each batch waited for with
// PublishAsyncComplete. "msg-id" publishes the payload with Nats-Msg-Id
// alone; "sched-headers" builds each message as the Sender does, so the
// difference from BenchmarkSend is the Sender's own cost.
func BenchmarkPlainAsyncPublish(b *testing.B) {
	srv := needServer(b)
	b.Run("msg-id", func(b *testing.B) {
		plainAsync(b, srv, func(subject string, _ int) func(int, *target.Firing) *natsio.Msg {
			return func(_ int, f *target.Firing) *natsio.Msg {
				return &natsio.Msg{Subject: subject, Data: f.Payload, Header: natsio.Header{jetstream.MsgIDHeader: {f.OccurrenceID}}}
			}
		})
	})
	b.Run("sched-headers", func(b *testing.B) {
		plainAsync(b, srv, func(subject string, n int) func(int, *target.Firing) *natsio.Msg {
			return newMsgBuilder(subject, n).build
		})
	})
}

// plainAsync publishes batches of firings on a connection and stream of
// its own, each batch's messages built by the function newBatch returns.
func plainAsync(b *testing.B, srv *server, newBatch func(subject string, n int) func(i int, f *target.Firing) *natsio.Msg) {
	b.Helper()
	_, subject := srv.newStream(b, nil)
	nc, err := natsio.Connect(srv.url, natsio.Name("sched target/nats plain benchmark"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	var failed atomic.Int64
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(DefaultMaxInFlight),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *natsio.Msg, err error) { failed.Add(1) }),
	)
	if err != nil {
		b.Fatal(err)
	}
	var sent int
	round := 0
	b.SetBytes(benchBatch * benchPayload)
	b.ReportAllocs()
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		fs := firings(fmt.Sprintf("p%d", round), benchBatch, benchPayload)
		round++
		b.StartTimer()
		start := time.Now()
		msg := newBatch(subject, len(fs))
		for i := range fs {
			if _, err := js.PublishMsgAsync(msg(i, &fs[i])); err != nil {
				b.Fatalf("publish %d: %v", i, err)
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(30 * time.Second):
			b.Fatal("acks not all in within 30s")
		}
		elapsed += time.Since(start)
		sent += len(fs)
	}
	if n := failed.Load(); n != 0 {
		b.Fatalf("%d publishes failed", n)
	}
	b.ReportMetric(float64(sent)/elapsed.Seconds(), "firings/s")
}
