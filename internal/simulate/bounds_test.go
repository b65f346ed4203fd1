package simulate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/schedule"
)

// mixed is n schedules: a tenth minutely crons, the rest split between
// hourly crons and every 10m, spread over a few queues, with failures and
// overlap policies among them.
func mixed(n int) []api.ScheduleRequest {
	out := make([]api.ScheduleRequest, n)
	for i := range out {
		r := api.ScheduleRequest{Name: fmt.Sprintf("s%04d", i), Queue: fmt.Sprintf("q%d", i%4)}
		switch {
		case i%10 == 0:
			r.Cron, r.TimeZone = "* * * * *", "UTC"
		case i%2 == 0:
			r.Cron, r.TimeZone = fmt.Sprintf("%d * * * *", i%60), "Europe/Berlin"
		default:
			r.Every = "10m"
			r.OverlapPolicy = "skip_if_running"
		}
		out[i] = r
	}
	return out
}

// TestDeterministic: the same request twice gives byte-identical JSON,
// with several nodes, a node down, an outage and failing workers, whose
// ids and failures come from the seed.
func TestDeterministic(t *testing.T) {
	r := &api.SimulateRequest{
		Schedules: mixed(40), Nodes: 3, WorkerFailRate: 0.2, WorkerDuration: "2s",
		From: "2027-03-15T09:50:00Z", To: "2027-03-15T10:20:00Z",
		Outages:  []api.SimWindow{{Start: "2027-03-15T09:55:00Z", End: "2027-03-15T10:05:00Z"}},
		NodeDown: []api.SimNodeDown{{Node: "node-3", Start: "2027-03-15T10:10:00Z", End: "2027-03-15T10:11:00Z"}},
	}
	a, b := simulate(t, r), simulate(t, r)
	if !bytes.Equal(a, b) {
		t.Fatalf("two runs differ:\n%s\n---\n%s", a, b)
	}
	res := decode(t, a)
	if res.Summary.Outcomes[api.SimRetried] == 0 || res.Summary.Outcomes[api.SimMissed] == 0 || res.Summary.Outcomes[api.SimOnTime] == 0 {
		t.Errorf("the run shows too little to compare: %v", res.Summary.Outcomes)
	}
	r.Seed = 2
	if c := simulate(t, r); bytes.Equal(a, c) {
		t.Error("another seed gave the same answer")
	}
}

// TestRefusals: what exceeds a limit or is malformed is refused before
// anything runs, with a ValidationError naming the bad part.
func TestRefusals(t *testing.T) {
	ok := func() *api.SimulateRequest {
		return &api.SimulateRequest{Schedules: []api.ScheduleRequest{{Name: "a", Queue: "q", Every: "1m"}},
			From: "2027-03-15T09:00:00Z", To: "2027-03-15T10:00:00Z"}
	}
	cases := []struct {
		name  string
		mut   func(r *api.SimulateRequest)
		lim   func(l *Limits)
		field string
		want  string
	}{
		{"range", func(r *api.SimulateRequest) { r.To = "2027-04-20T00:00:00Z" }, nil, "to", "over the limit of 744h0m0s"},
		{"backwards", func(r *api.SimulateRequest) { r.To = r.From }, nil, "to", "is not after from"},
		{"bad time", func(r *api.SimulateRequest) { r.From = "yesterday" }, nil, "from", "not an RFC 3339 time"},
		{"firings", func(r *api.SimulateRequest) { r.Schedules[0].Every = "1s"; r.To = "2027-03-27T00:00:00Z" }, nil,
			"schedules", "fire more than 1000000 times"},
		{"schedules", func(r *api.SimulateRequest) { r.Schedules = mixed(11) }, func(l *Limits) { l.MaxSchedules = 10 },
			"schedules", "11 schedules, over the limit of 10"},
		{"none", func(r *api.SimulateRequest) { r.Schedules = nil }, nil, "schedules", "none given"},
		{"bad schedule", func(r *api.SimulateRequest) {
			r.Schedules[0].Cron, r.Schedules[0].Every, r.Schedules[0].TimeZone = "61 * * * *", "", "UTC"
		}, nil,
			"schedules[0].", "minute"},
		{"duplicate", func(r *api.SimulateRequest) { r.Schedules = append(r.Schedules, r.Schedules[0]) }, nil,
			"schedules[1].name", "also the name of schedules[0]"},
		{"nodes", func(r *api.SimulateRequest) { r.Nodes = 17 }, nil, "nodes", "must be from 1 to 16"},
		{"unknown node", func(r *api.SimulateRequest) {
			r.NodeDown = []api.SimNodeDown{{Node: "node-2", Start: r.From, End: r.To}}
		}, nil, "node_down[0].node", `"node-2" is not a node`},
		{"outage backwards", func(r *api.SimulateRequest) { r.Outages = []api.SimWindow{{Start: r.To, End: r.From}} }, nil,
			"outages[0].end", "is not after its start"},
		{"fail rate", func(r *api.SimulateRequest) { r.WorkerFailRate = 1.5 }, nil, "worker_fail_rate", "must be from 0 to 1"},
		{"worker duration", func(r *api.SimulateRequest) { r.WorkerDuration = "12h" }, nil, "worker_duration", "must be from 1ms to 11h"},
		{"wall time", nil, func(l *Limits) { l.MaxWall = time.Nanosecond }, "to", "over its limit of 1ns of wall time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, lim := ok(), DefaultLimits
			if tc.mut != nil {
				tc.mut(r)
			}
			if tc.lim != nil {
				tc.lim(&lim)
			}
			_, err := Simulate(context.Background(), r, lim)
			var ve *schedule.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v (%T), want a ValidationError", err, err)
			}
			if !strings.HasPrefix(ve.Field, tc.field) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q (field %s), want field %s and %q", err, ve.Field, tc.field, tc.want)
			}
		})
	}
}

// BenchmarkDay1000: a simulated day of 1,000 schedules (a tenth minutely
// crons, the rest hourly crons and every 10m) on one node.
func BenchmarkDay1000(b *testing.B) {
	r := &api.SimulateRequest{Schedules: mixed(1000), From: "2027-03-15T00:00:00Z", To: "2027-03-16T00:00:00Z"}
	for b.Loop() {
		res, err := Simulate(context.Background(), r, DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Summary.Firings), "firings")
	}
}

// fleet is n schedules as a typical fleet has them: hourly crons at
// spread minutes and daily crons at spread times in several zones, and
// every 15m and every 30m, over a few queues; no minutely ones.
func fleet(n int) []api.ScheduleRequest {
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"}
	out := make([]api.ScheduleRequest, n)
	for i := range out {
		r := api.ScheduleRequest{Name: fmt.Sprintf("f%04d", i), Queue: fmt.Sprintf("q%d", i%4)}
		switch i % 4 {
		case 0:
			r.Cron, r.TimeZone = fmt.Sprintf("%d * * * *", i%60), zones[i%len(zones)]
		case 1:
			r.Cron, r.TimeZone = fmt.Sprintf("%d %d * * *", i%60, i%24), zones[i%len(zones)]
		case 2:
			r.Every = "15m"
		default:
			r.Every = "30m"
		}
		out[i] = r
	}
	return out
}

// BenchmarkFleet1000: a simulated day of a typical fleet of 1,000
// schedules (fleet) on one node.
func BenchmarkFleet1000(b *testing.B) {
	r := &api.SimulateRequest{Schedules: fleet(1000), From: "2027-03-15T00:00:00Z", To: "2027-03-16T00:00:00Z"}
	for b.Loop() {
		res, err := Simulate(context.Background(), r, DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Summary.Firings), "firings")
	}
}
