package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/simulate"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// TestSimulateRoute: POST /v1/simulate runs the injected simulator and
// answers its result; its refusals are invalid_argument naming the field;
// a server without one answers 503; the daemon's own store is untouched.
func TestSimulateRoute(t *testing.T) {
	req := api.SimulateRequest{Schedules: []api.ScheduleRequest{{Name: "a", Queue: "q", Every: "1m"}},
		From: "2027-03-15T09:00:00Z", To: "2027-03-15T09:10:00Z",
		Outages: []api.SimWindow{{Start: "2027-03-15T09:02:30Z", End: "2027-03-15T09:05:30Z"}}}

	h := newHarness(t, func(c *Config, _ *[]sqlite.Option) { c.WhatIf = simulate.Server{Limits: simulate.DefaultLimits} })
	code, body := h.do("POST", "/v1/simulate", req)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var res api.SimulateResult
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if o := res.Summary.Outcomes; res.Summary.Firings != 11 || o[api.SimCaughtUp] != 1 || o[api.SimLate] != 2 || o[api.SimOnTime] != 8 {
		t.Errorf("summary %+v", res.Summary)
	}
	if code, body := h.do("GET", "/v1/schedules", nil); code != http.StatusOK || strings.Contains(string(body), `"name":"a"`) {
		t.Errorf("the daemon's store changed: %d %s", code, body)
	}

	req.To = "2027-05-15T09:00:00Z"
	code, body = h.do("POST", "/v1/simulate", req)
	var eb api.ErrorBody
	_ = json.Unmarshal(body, &eb)
	if code != http.StatusBadRequest || eb.Error.Code != api.CodeInvalidArgument || eb.Error.Field != "to" {
		t.Errorf("over the range limit: %d %s", code, body)
	}
	if code, body := h.do("POST", "/v1/simulate", `{"schedules":[],"tenant_id":"x"}`); code != http.StatusBadRequest {
		t.Errorf("unknown field: %d %s", code, body)
	}

	bare := newHarness(t)
	code, body = bare.do("POST", "/v1/simulate", req)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "schedd simulate") {
		t.Errorf("without a simulator: %d %s", code, body)
	}
}
