package simulate

import (
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
)

// TestMisfirePolicies: a minutely schedule under each misfire policy
// through a ten-minute outage from 09:55 to 10:05.
func TestMisfirePolicies(t *testing.T) {
	for _, policy := range []string{"skip", "fire_once", "catch_up:3"} {
		t.Run(policy, func(t *testing.T) {
			b := simulate(t, misfireRequest(policy))
			golden(t, "misfire-"+strings.ReplaceAll(policy, ":", "-")+".json", b)
		})
	}
}

// misfireRequest is the request of TestMisfirePolicies (and of the live
// run held against it): a minutely cron under policy, 09:50 to 10:10, with
// an outage from 09:55 to 10:05.
func misfireRequest(policy string) *api.SimulateRequest {
	return &api.SimulateRequest{
		Schedules: []api.ScheduleRequest{{Name: "minutely", Queue: "q", Cron: "* * * * *", TimeZone: "UTC", MisfirePolicy: policy}},
		From:      "2027-03-15T09:50:00Z", To: "2027-03-15T10:10:00Z",
		Outages: []api.SimWindow{{Start: "2027-03-15T09:55:00Z", End: "2027-03-15T10:05:00Z"}},
	}
}

// TestOverlapPolicies: a schedule every 10 s whose worker takes 25 s, under
// each overlap policy: allow runs them side by side, skip_if_running skips
// the firings that find one running, queue_one holds one back.
func TestOverlapPolicies(t *testing.T) {
	for _, policy := range []string{"allow", "skip_if_running", "queue_one"} {
		t.Run(policy, func(t *testing.T) {
			b := simulate(t, &api.SimulateRequest{
				Schedules: []api.ScheduleRequest{{Name: "every-10s", Queue: "q", Every: "10s", OverlapPolicy: policy}},
				From:      "2027-03-15T09:00:00Z", To: "2027-03-15T09:02:00Z",
				WorkerDuration: "25s",
			})
			golden(t, "overlap-"+policy+".json", b)
		})
	}
}

// TestDST: a daily 02:30 cron across both daylight saving changes of
// America/New_York and Europe/Berlin, with the default DST policies
// (skip the gap, fire the first of a repeated hour) and with shift and
// all. Spring forward swallows 02:30 in both zones (listed in
// dst_skipped, or shifted to the gap's end); fall back repeats it in
// Berlin only (New York repeats 01:00 to 02:00), and the timeline notes
// it. Moscow's 2011 change is the same gap with another cause.
func TestDST(t *testing.T) {
	cases := []struct{ name, zone, from, to string }{
		{"new-york-spring", "America/New_York", "2027-03-13T00:00:00Z", "2027-03-16T00:00:00Z"},
		{"new-york-fall", "America/New_York", "2027-11-06T00:00:00Z", "2027-11-09T00:00:00Z"},
		{"berlin-spring", "Europe/Berlin", "2027-03-27T00:00:00Z", "2027-03-30T00:00:00Z"},
		{"berlin-fall", "Europe/Berlin", "2027-10-30T00:00:00Z", "2027-11-02T00:00:00Z"},
		// Not daylight saving: Moscow's standard offset went from +03 to
		// +04 on 2011-03-27, so 02:30 did not exist; the skipped wall time
		// and the shifted firing say zone_change.
		{"moscow-2011-zone-change", "Europe/Moscow", "2011-03-26T00:00:00Z", "2011-03-29T00:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := simulate(t, &api.SimulateRequest{
				Schedules: []api.ScheduleRequest{
					{Name: "daily-0230", Queue: "q", Cron: "30 2 * * *", TimeZone: tc.zone},
					{Name: "daily-0230-shift-all", Queue: "q", Cron: "30 2 * * *", TimeZone: tc.zone, DSTGap: "shift", DSTRepeat: "all"},
				},
				From: tc.from, To: tc.to,
			})
			golden(t, "dst-"+tc.name+".json", b)
		})
	}
}

// TestNodeDown: three nodes, node-2 down for 30 s; its shard leases lapse
// and move to the others by the real lease rule.
func TestNodeDown(t *testing.T) {
	var scheds []api.ScheduleRequest
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		scheds = append(scheds, api.ScheduleRequest{Name: "every-5s-" + n, Queue: "q", Every: "5s"})
	}
	b := simulate(t, &api.SimulateRequest{
		Schedules: scheds, Nodes: 3,
		From: "2027-03-15T09:00:00Z", To: "2027-03-15T09:02:00Z",
		NodeDown: []api.SimNodeDown{{Node: "node-2", Start: "2027-03-15T09:00:30Z", End: "2027-03-15T09:01:00Z"}},
	})
	golden(t, "node-down.json", b)
}

// TestWorkerFailures: workers that fail half their attempts, on a schedule
// allowed two: some firings succeed first time, some on the retry after
// the engine's backoff, some go DEAD; the seed decides which, the same in
// every run.
func TestWorkerFailures(t *testing.T) {
	b := simulate(t, &api.SimulateRequest{
		Schedules: []api.ScheduleRequest{{Name: "every-1m", Queue: "q", Every: "1m", MaxAttempts: 2, RetryBase: "5s"}},
		From:      "2027-03-15T09:00:00Z", To: "2027-03-15T09:15:00Z",
		WorkerFailRate: 0.5,
	})
	golden(t, "worker-failures.json", b)
	o := decode(t, b).Summary.Outcomes
	if o[api.SimOnTime] == 0 || o[api.SimRetried] == 0 || o[api.SimDead] == 0 {
		t.Errorf("outcomes %v: want some of each of ON_TIME, RETRIED and DEAD", o)
	}
}
