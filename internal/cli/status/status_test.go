package status

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/jsonkeys"
)

var bg = context.Background()

// TestStatusJSONFields pins the field names of status -o json, the API's
// status object as is: scripts and dashboards read them.
func TestStatusJSONFields(t *testing.T) {
	f, out, _ := clitest.NewFactory(false)
	s := clitest.Seeded()
	if err := statusRun(&StatusOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true}); err != nil {
		t.Fatal(err)
	}
	paths, err := jsonkeys.Paths(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	clitest.Golden(t, "status-json-keys.golden", strings.Join(paths, "\n")+"\n")

	// As is: what schedd said, nothing added or lost.
	var got api.Status
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := clitest.SampleStatus(); !reflect.DeepEqual(got, want) {
		t.Errorf("status JSON is not the API's status\n got %+v\nwant %+v", got, want)
	}
}

// TestStatusTable: the whole status on a terminal and off one, golden.
func TestStatusTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		st   func() api.Status
	}{
		{"status-tty.golden", true, clitest.SampleStatus},
		{"status-plain.golden", false, clitest.SampleStatus},
		// A daemon with nothing to do: no nodes reported, no samples, no
		// backlog, no queues.
		{"status-idle-tty.golden", true, func() api.Status {
			return api.Status{Version: "1.0", TZVersion: "2026a", NodeID: "n1", Store: "sqlite", Shards: 1, ShardsOwned: 1,
				Now: clitest.FixedNow, StatsAt: clitest.FixedNow, DueBacklog: clitest.Backlog(clitest.FixedNow, nil),
				ScheduleLag: &api.LagWindows{}, DeliveryLag: &api.LagWindows{}, LastHour: &api.EventCounts{}, Throughput: &api.Throughput{}}
		}},
		// A tenant's status: its own figures, and none of those counted
		// across tenants (null: "-", not shown).
		{"status-tenant-tty.golden", true, tenantStatus},
		{"status-tenant-plain.golden", false, tenantStatus},
		// A simulated outage in progress: a row says until when.
		{"status-outage-plain.golden", false, func() api.Status {
			st := api.Status{Version: "1.0", TZVersion: "2026a", NodeID: "n1", Store: "sqlite", Shards: 4, ShardsOwned: 4,
				Now: clitest.FixedNow, StatsAt: clitest.FixedNow, DueBacklog: clitest.Backlog(clitest.FixedNow, nil),
				ScheduleLag: &api.LagWindows{}, DeliveryLag: &api.LagWindows{}, LastHour: &api.EventCounts{}, Throughput: &api.Throughput{}}
			st.Outage = &api.SimulatedOutage{ID: 2, Shards: []int{0, 3}, StartedAt: clitest.FixedNow.Add(-time.Minute),
				EndsAt: clitest.FixedNow.Add(9 * time.Minute), CreatedBy: "n1", Active: true, Remaining: "9m0s"}
			return st
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, out, _ := clitest.NewFactory(tc.tty)
			s := clitest.NewStub()
			st := tc.st()
			s.StatusAnswer = &st
			if err := statusRun(&StatusOptions{IO: f, API: clitest.APIOf(s), Ctx: bg}); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), "\x1b[") {
				t.Errorf("escape codes in %q", out)
			}
			clitest.Golden(t, tc.name, out.String())
		})
	}
}

// tenantStatus is the sample status as a tenant gets it: its own rows, no
// lags, events, throughput nor last passes.
func tenantStatus() api.Status {
	st := clitest.SampleStatus()
	st.Tenant = "default"
	st.ScheduleLag, st.DeliveryLag, st.LastHour, st.Throughput = nil, nil, nil, nil
	for i := range st.Nodes {
		st.Nodes[i].LastPass = nil
	}
	return st
}

func TestSparkline(t *testing.T) {
	for _, tc := range []struct {
		counts []int64
		want   string
	}{
		{nil, ""},
		{[]int64{0, 0, 0}, "···"},
		{[]int64{1}, "█"},
		{[]int64{0, 1, 8}, "·▁█"},
		{[]int64{1, 100}, "▁█"}, // one firing in a quiet minute still shows
		{[]int64{4, 8, 7, 2}, "▄█▇▂"},
	} {
		if got := sparkline(tc.counts); got != tc.want {
			t.Errorf("sparkline(%v) = %q, want %q", tc.counts, got, tc.want)
		}
	}
}
