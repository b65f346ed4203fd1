package tui

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

// withOutage gives every status of src a simulated outage of shards 0 and
// 3 that ends 90 s after now0.
func withOutage(src *fakeSource) {
	for i := range src.statuses {
		src.statuses[i].Outage = &api.SimulatedOutage{ID: 7, Shards: []int{0, 3}, StartedAt: now0.Add(-time.Minute),
			EndsAt: now0.Add(90 * time.Second), CreatedBy: "node-a", Active: true, Remaining: "1m30s"}
	}
}

// TestOutageBanner: while a simulated outage is in progress the status
// line is a banner that says until when and how long is left, counting
// down by the daemon's clock, and it goes once the outage has ended.
func TestOutageBanner(t *testing.T) {
	src := newFixture(len(delivTrend))
	withOutage(src)
	hs := newHarness(t, src, 80, 24, false)
	hs.ticks(len(delivTrend) - 1)
	golden(t, "overview_outage_80x24", hs.view())
	hs.mustShow("SIMULATED OUTAGE until 09:59:42 (90s left) · shards 0,3")

	src.clock = hs.clock // the daemon's clock moves with the test's
	hs.clock.Add(30 * time.Second)
	hs.ticks(1)
	hs.mustShow("SIMULATED OUTAGE until 09:59:42 (60s left)")

	hs.clock.Add(61 * time.Second)
	hs.ticks(1)
	hs.mustNotShow("SIMULATED OUTAGE")
	hs.mustShow("updated ")
}
