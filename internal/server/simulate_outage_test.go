package server

import (
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

// The simulated outage's routes over real HTTP: start, read, conflict,
// bad input, the status field, /readyz and the gauges, claims answering
// nothing, and cancel.
func TestSimulateOutageRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(everyMinute("m"))
	h.plan(0)
	h.plan(time.Minute) // 10:01's firing is due

	var st api.SimulatedOutageStatus
	h.ok(200, &st, "GET", "/v1/simulate/outage", nil)
	if st.Outage != nil || !st.Now.Equal(start.Add(time.Minute)) {
		t.Fatalf("GET with none = %+v; want outage null at %v", st, start.Add(time.Minute))
	}

	h.fails(400, api.CodeInvalidArgument, "for", "POST", "/v1/simulate/outage", map[string]any{})
	h.fails(400, api.CodeInvalidArgument, "for", "POST", "/v1/simulate/outage", map[string]any{"for": "soon"})
	h.fails(400, api.CodeInvalidArgument, "for", "POST", "/v1/simulate/outage", map[string]any{"for": "25h"})
	h.fails(400, api.CodeInvalidArgument, "shards", "POST", "/v1/simulate/outage", map[string]any{"for": "1m", "shards": []int{4}})
	h.fails(400, api.CodeBadRequest, "", "POST", "/v1/simulate/outage", `{"for":"1m","nodes":[1]}`)

	h.ok(201, &st, "POST", "/v1/simulate/outage", api.SimulateOutageRequest{For: "10m"})
	o := st.Outage
	if o == nil || !o.Active || o.Remaining != "10m0s" || len(o.Shards) != 0 || o.CreatedBy != "node-a" ||
		!o.EndsAt.Equal(start.Add(11*time.Minute)) || o.CanceledAt != nil {
		t.Fatalf("started = %+v; want active all shards until 10:11, 10m0s left", o)
	}
	e := h.fails(409, api.CodeConflict, "", "POST", "/v1/simulate/outage", api.SimulateOutageRequest{For: "1m"})
	if !strings.Contains(e.Message, "in progress until 2027-01-04T10:11:00Z") {
		t.Errorf("conflict message %q; want the end of the one in progress", e.Message)
	}

	// Claims answer nothing; the status, /readyz and the gauges say so.
	var cr api.ClaimResult
	h.ok(200, &cr, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	if len(cr.Claimed) != 0 {
		t.Errorf("claim during the outage took %d", len(cr.Claimed))
	}
	h.clk.Advance(90 * time.Second)
	var status api.Status
	h.ok(200, &status, "GET", "/v1/status", nil)
	if status.Outage == nil || status.Outage.ID != o.ID || status.Outage.Remaining != "8m30s" {
		t.Errorf("status outage = %+v; want outage %d with 8m30s left", status.Outage, o.ID)
	}
	code, body := h.do("GET", "/readyz", nil)
	if code != 200 || string(body) != "ok; simulated outage in progress until 2027-01-04T10:11:00Z (planning and claims paused)\n" {
		t.Errorf("/readyz = %d %q; want 200 naming the outage", code, body)
	}
	_, metrics := h.do("GET", "/metrics", nil)
	for _, want := range []string{"sched_simulated_outage_active 1\n", "sched_simulated_outage_ends_timestamp_seconds 1.79905746e+09\n"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	h.ok(200, &st, "POST", "/v1/simulate/outage/cancel", nil)
	if st.Outage == nil || st.Outage.ID != o.ID || st.Outage.Active || st.Outage.CanceledAt == nil ||
		!st.Outage.CanceledAt.Equal(start.Add(150*time.Second)) || st.Outage.Remaining != "0s" {
		t.Fatalf("cancel = %+v; want outage %d canceled at 10:02:30", st.Outage, o.ID)
	}
	h.ok(200, &st, "POST", "/v1/simulate/outage/cancel", nil)
	if st.Outage != nil {
		t.Errorf("a second cancel = %+v; want null", st.Outage)
	}
	h.ok(200, &st, "GET", "/v1/simulate/outage", nil)
	if st.Outage != nil {
		t.Errorf("GET after cancel = %+v; want null", st.Outage)
	}
	h.ok(200, &cr, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	if len(cr.Claimed) != 1 {
		t.Errorf("claim after the cancel took %d, want 1", len(cr.Claimed))
	}
	if code, body := h.do("GET", "/readyz", nil); code != 200 || string(body) != "ok\n" {
		t.Errorf("/readyz after the cancel = %d %q", code, body)
	}
	_, metrics = h.do("GET", "/metrics", nil)
	if !strings.Contains(string(metrics), "sched_simulated_outage_active 0\n") {
		t.Error("/metrics: sched_simulated_outage_active is not 0 after the cancel")
	}

	// Some shards.
	h.ok(201, &st, "POST", "/v1/simulate/outage", api.SimulateOutageRequest{For: "90s", Shards: []int{3, 1, 1}})
	if st.Outage == nil || len(st.Outage.Shards) != 2 || st.Outage.Shards[0] != 1 || st.Outage.Shards[1] != 3 || st.Outage.Remaining != "1m30s" {
		t.Errorf("outage of shards 3, 1, 1 = %+v; want shards [1 3] for 1m30s", st.Outage)
	}
}
