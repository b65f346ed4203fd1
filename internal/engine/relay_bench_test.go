package engine

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/target/kinds"
	"github.com/sched-dev/sched/internal/target/webhook/webhooktest"
)

// BenchmarkRelayWebhook is the relay end to end: a node (its planner and
// relay running on the real clock) on a SQLite file delivers rounds of
// 5,000 firings due at one instant to a webhook receiver over TLS on
// loopback. deliveries/s is the receiver's rate from the due instant to
// its last request. beside-a-failing-target adds a second target whose
// 5,000 firings, due at the same instant, go to a receiver answering 500
// throughout: the healthy target's rate side by side with alone says
// what a failing endpoint costs the others. Run it with -benchtime 3x.
func BenchmarkRelayWebhook(b *testing.B) {
	for _, failing := range []bool{false, true} {
		name := "alone"
		if failing {
			name = "beside-a-failing-target"
		}
		b.Run(name, func(b *testing.B) { benchRelayWebhook(b, failing) })
	}
}

func benchRelayWebhook(b *testing.B, failing bool) {
	const n = 5000
	var got, refused atomic.Int64
	var last atomic.Int64 // unix ns of the healthy receiver's last request
	ok := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		last.Store(time.Now().UnixNano())
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ok.Close()
	down := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refused.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer down.Close()
	roots := ok.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ctx := b.Context()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "sched.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e, err := New(ctx, Config{Store: st, Clock: clock.Real{}, Shards: 4, Horizon: 10 * time.Second, Tick: 100 * time.Millisecond,
		TargetKinds: kinds.New(kinds.Options{WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			WebhookTLS: &tls.Config{RootCAs: roots}, WebhookDial: webhooktest.LoopbackDial(b)})})
	if err != nil {
		b.Fatal(err)
	}
	for name, url := range map[string]string{"ok": ok.URL, "down": down.URL} {
		cfg, _ := json.Marshal(map[string]string{"url": url})
		if _, err := e.Targets.Create(ctx, tenant, name, TargetSpec{Kind: record.TargetWebhook, Config: cfg}); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer e.Stop()
	var rates []float64
	round := 0
	for b.Loop() {
		due := time.Now().Add(3 * time.Second).Truncate(time.Second)
		targets := []string{"ok"}
		if failing {
			targets = append(targets, "down")
		}
		for _, tg := range targets {
			for first := 0; first < n; first += MaxBatch {
				items := make([]BatchItem, min(MaxBatch, n-first))
				for i := range items {
					items[i].Settings = atTarget(fmt.Sprintf("%s-%d-%d", tg, round, first+i), tg, due)
				}
				if _, err := e.Control.CreateBatch(ctx, tenant, items); err != nil {
					b.Fatal(err)
				}
			}
		}
		want := int64(n * (round + 1))
		for got.Load() < want {
			if time.Now().After(due.Add(2 * time.Minute)) {
				b.Fatalf("round %d: %d of %d delivered after 2 minutes", round, got.Load()-int64(n*round), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		rates = append(rates, float64(n)/time.Unix(0, last.Load()).Sub(due).Seconds())
		round++
	}
	var sum float64
	for _, r := range rates {
		sum += r
	}
	b.ReportMetric(sum/float64(len(rates)), "deliveries/s")
	b.ReportMetric(float64(refused.Load())/float64(round), "refused/round")
}
