package server

import (
	"net/http"
	"testing"

	"github.com/sched-dev/sched/api"
)

// TestDryRunRoutes: ?dry_run=true on a create, a bulk create and an
// update answers what the write would, and keeps nothing; a conflict is
// the write's own answer; a dry_run that is not true or false is refused
// naming it.
func TestDryRunRoutes(t *testing.T) {
	h := newHarness(t)
	hourly := api.ScheduleRequest{Name: "hourly", Queue: "q", Cron: "0 * * * *", TimeZone: "UTC"}
	var made api.CreateResult
	h.ok(http.StatusCreated, &made, "POST", "/v1/schedules", hourly)

	var cr api.CreateResult
	h.ok(http.StatusOK, &cr, "POST", "/v1/schedules?dry_run=true",
		api.ScheduleRequest{Name: "nightly", Queue: "q", Cron: "0 2 * * *", TimeZone: "Europe/Berlin"})
	if !cr.DryRun || !cr.Created || cr.Name != "nightly" || cr.NextFireAt == nil || len(cr.Preview) == 0 {
		t.Errorf("dry create: %+v; want dry_run, created, its next firing and preview", cr)
	}
	h.fails(http.StatusConflict, api.CodeConflict, "", "POST", "/v1/schedules?dry_run=true", hourly)

	var br api.BatchResult
	h.ok(http.StatusOK, &br, "POST", "/v1/schedules:batch?dry_run=true", api.BatchRequest{Items: []api.BatchItem{
		{Schedule: api.ScheduleRequest{Name: "a", Queue: "q", Every: "1m"}}, {Schedule: hourly}}})
	if !br.DryRun || br.Created != 1 || br.Failed != 1 || br.Items[0].Status != api.BatchCreated || br.Items[1].Error == nil {
		t.Errorf("dry batch: %+v; want a would be created, hourly a conflict", br)
	}

	var ch api.ChangeResult
	h.ok(http.StatusOK, &ch, "PUT", "/v1/schedules/hourly?dry_run=true",
		api.ScheduleRequest{Name: "hourly", Queue: "q", Cron: "30 * * * *", TimeZone: "UTC"})
	if !ch.DryRun || ch.Schedule.Version != made.Version+1 || ch.Schedule.Expression != "30 * * * *" {
		t.Errorf("dry update: %+v; want version %d at 30 * * * *", ch, made.Version+1)
	}

	var list api.ScheduleList
	h.ok(http.StatusOK, &list, "GET", "/v1/schedules", nil)
	if len(list.Schedules) != 1 || list.Schedules[0].Version != made.Version || list.Schedules[0].Expression != "0 * * * *" {
		t.Errorf("after the dry runs: %+v; want hourly alone, unchanged", list.Schedules)
	}

	for _, path := range []string{"/v1/schedules?dry_run=yes", "/v1/schedules:batch?dry_run=1", "/v1/schedules?dry_run=true&x=1"} {
		d := h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "", "POST", path, hourly)
		if d.Field != "dry_run" && d.Field != "x" {
			t.Errorf("%s: field %q, want the parameter named", path, d.Field)
		}
	}
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, "dry_run", "PUT", "/v1/schedules/hourly?dry_run=maybe", hourly)
}
