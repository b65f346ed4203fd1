package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
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
