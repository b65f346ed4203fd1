package server

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
)

// BenchmarkClaimAckAPI: occurrences claimed and acked per second through
// the HTTP API on loopback, on a real SQLite file, by one worker taking
// batches of 100: acks sent one request each (POST .../ack), or carried
// by the next claim (api.ClaimRequest.Acks), as client.Worker sends them.
func BenchmarkClaimAckAPI(b *testing.B) {
	const schedules, batch = 2000, 100
	for _, mode := range []string{"alone", "with-claim"} {
		b.Run("acks="+mode, func(b *testing.B) {
			h := newHarness(b)
			for i := range schedules {
				h.create(api.ScheduleRequest{Name: fmt.Sprintf("s%d", i), Queue: "q", Every: "1m"})
			}
			c, err := client.New("tcp:"+strings.TrimPrefix(h.ts.URL, "http://"), "")
			if err != nil {
				b.Fatal(err)
			}
			done := 0
			var held []api.AckItem
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				h.plan(time.Minute) // a firing of every schedule
				b.StartTimer()
				for {
					req := api.ClaimRequest{Queue: "q", WorkerID: "w", Limit: batch, Lease: "1h"}
					if mode == "with-claim" {
						req.Acks = held
					} else {
						for _, a := range held {
							if _, err := c.Ack(b.Context(), a.OccurrenceID, api.AckRequest{Attempt: a.Attempt}); err != nil {
								b.Fatal(err)
							}
						}
					}
					res, err := c.Claim(b.Context(), req)
					if err != nil {
						b.Fatal(err)
					}
					for _, o := range res.Acks {
						if o.Error != nil {
							b.Fatalf("ack %s: %+v", o.OccurrenceID, o.Error)
						}
					}
					done += len(held)
					held = held[:0]
					for _, cl := range res.Claimed {
						held = append(held, api.AckItem{OccurrenceID: cl.OccurrenceID, Attempt: cl.Attempt})
					}
					if len(held) == 0 {
						break
					}
				}
			}
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "claim+ack/s")
		})
	}
}

// BenchmarkBadTokenFlood: one tenant's request latency (GET
// /v1/schedules with a valid token, from 127.0.0.1) alone, and while
// another address (127.0.0.2) floods the API with well-formed bad tokens
// from 8 connections: with the limit on failed authentications per client
// (the default), and with it off (a budget no flood spends), which is
// what a flood cost before the limit. It reports the victim's p50 and p99
// and the flood's rate.
func BenchmarkBadTokenFlood(b *testing.B) {
	const flooders = 8
	for _, bc := range []struct {
		name     string
		flood    bool
		authRate float64
		pace     float64 // the flood's requests per second; 0: as fast as it goes
	}{
		{"flood=none", false, 0, 0},
		{"flood=bad-tokens/limit=default", true, 0, 0},
		{"flood=bad-tokens/limit=off", true, 1e9, 0},
		// The same flood rate either way, so that what differs is what
		// each bad token costs the daemon, not how many the flood sends.
		{"flood=5000/s/limit=default", true, 0, 5000},
		{"flood=5000/s/limit=off", true, 1e9, 5000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b, withToken("operator-token"), withLimits(func(c *Config) { c.AuthFailureRate = bc.authRate }))
			if _, _, err := h.eng.Tenants.Create(b.Context(), "victim", engine.TenantPatch{}); err != nil {
				b.Fatal(err)
			}
			good, _, err := h.eng.Tenants.CreateToken(b.Context(), "victim", "w", record.RoleTenant)
			if err != nil {
				b.Fatal(err)
			}
			victim := clientFrom(b, "127.0.0.1")
			var (
				stop    = make(chan struct{})
				flooded atomic.Int64
				wg      sync.WaitGroup
			)
			if bc.flood {
				flood := clientFrom(b, "127.0.0.2")
				flood.Transport.(*http.Transport).MaxIdleConnsPerHost = flooders
				bad := badToken(b)
				var tick <-chan time.Time
				if bc.pace > 0 {
					t := time.NewTicker(time.Duration(float64(time.Second) / bc.pace))
					defer t.Stop()
					tick = t.C
				}
				for range flooders {
					wg.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							if tick != nil {
								select {
								case <-stop:
									return
								case <-tick:
								}
							}
							req, _ := http.NewRequest("GET", h.ts.URL+"/v1/schedules", nil)
							req.Header.Set("Authorization", "Bearer "+bad)
							resp, err := flood.Do(req)
							if err != nil {
								continue
							}
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							flooded.Add(1)
						}
					})
				}
			}
			var lat []time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if code, _, e := getWith(b, h, victim, "/v1/schedules", good); code != 200 {
					b.Fatalf("the victim's request: %d %+v", code, e)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			pct := func(q float64) float64 {
				return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(flooded.Load())/b.Elapsed().Seconds(), "flood-req/s")
		})
	}
}
