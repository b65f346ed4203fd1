package webhook_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/sched-dev/sched/internal/target/webhook"
)

// BenchmarkSend sends batches of 1,000 firings to a loopback TLS receiver
// that reads each body and answers 204, with the default MaxInFlight, and
// reports deliveries per second.
func BenchmarkSend(b *testing.B) {
	srv := newServer(b, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	h := newHarness(b)
	h.res.set("hooks.example.com", []string{"127.0.0.1"})
	s := h.sender(b, webhook.Config{
		URL:       "https://hooks.example.com:" + port(b, srv) + "/sched",
		Allow:     allowLoopback,
		TLSConfig: trust(srv),
	})
	batch := firings(1000)
	ctx := context.Background()
	delivered := 0
	b.ReportAllocs()
	for b.Loop() {
		for i, o := range s.Send(ctx, batch) {
			if !o.Delivered() {
				b.Fatalf("firing %d: %v", i, o.Err)
			}
		}
		delivered += len(batch)
	}
	b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(h.dialer.dials.Load()), "conns")
}
