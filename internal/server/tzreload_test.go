package server

import (
	"encoding/hex"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// POST /v1/admin/reload-tz: an admin's reload moves the cursor of a cron
// schedule in the zone whose rules changed and answers what moved; a
// tenant's token is refused, and so is a body.
func TestReloadTZRoute(t *testing.T) {
	tztest.Use(t, "2026a")
	h := newHarness(t)
	res := h.create(api.ScheduleRequest{Name: "feb-2", Queue: "q", Cron: "0 9 2 2 *", TimeZone: "Test/Shift"})
	h.create(api.ScheduleRequest{Name: "steady", Queue: "q", Cron: "0 9 2 2 *", TimeZone: "Test/Steady"})
	h.plan(0)
	if got := res.Schedule.NextRunAt; got == nil || !got.Equal(time.Date(2027, 2, 2, 14, 0, 0, 0, time.UTC)) {
		t.Fatalf("cursor under 2026a: %v, want 2027-02-02T14:00:00Z", got)
	}

	user := h.asTenant(DefaultTenant)
	user.fails(http.StatusForbidden, api.CodeForbidden, "", "POST", "/v1/admin/reload-tz", nil)
	h.fails(http.StatusBadRequest, api.CodeBadRequest, "", "POST", "/v1/admin/reload-tz", `{"zones":["x"]}`)

	tztest.Install(t, "2026b")
	var out api.TZReload
	h.ok(http.StatusOK, &out, "POST", "/v1/admin/reload-tz", nil)
	want := api.TZReload{PreviousTZVersion: "2026a", TZVersion: "2026b", PreviousTZLabel: "2026a", TZLabel: "2026b", Shards: 4,
		Zones: []api.TZZoneMoves{{Zone: "Test/Shift", Schedules: 1, Moved: 1, Replanned: 1}}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("reload-tz:\n got %+v\nwant %+v", out, want)
	}
	var sc api.Schedule
	h.ok(http.StatusOK, &sc, "GET", "/v1/schedules/feb-2", nil)
	if sc.NextRunAt == nil || !sc.NextRunAt.Equal(time.Date(2027, 2, 2, 13, 0, 0, 0, time.UTC)) {
		t.Errorf("cursor after reload-tz: %v, want 2027-02-02T13:00:00Z (09:00 at UTC-4)", sc.NextRunAt)
	}
	var steady api.Schedule
	h.ok(http.StatusOK, &steady, "GET", "/v1/schedules/steady", nil)
	if steady.NextRunAt == nil || !steady.NextRunAt.Equal(time.Date(2027, 2, 2, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("Test/Steady cursor after reload-tz: %v, want 2027-02-02T08:00:00Z, unchanged", steady.NextRunAt)
	}

	// Again: nothing changed since.
	h.ok(http.StatusOK, &out, "POST", "/v1/admin/reload-tz", nil)
	if out.PreviousTZVersion != "2026b" || out.TZVersion != "2026b" || len(out.Zones) != 0 {
		t.Errorf("second reload-tz: %+v, want no zone changed", out)
	}
}

// POST /v1/admin/reload-tz on a tz database rebuilt with other rules
// under the same version line (2026a-local: 2026b's rules, version 2026a):
// the answer keeps the versions and names the rules by their labels, and
// the firings move as for the release that changed them.
func TestReloadTZRouteLocalRebuild(t *testing.T) {
	tztest.Use(t, "2026a")
	h := newHarness(t)
	h.create(api.ScheduleRequest{Name: "feb-2", Queue: "q", Cron: "0 9 2 2 *", TimeZone: "Test/Shift"})
	h.plan(0)

	tztest.Install(t, "2026a-local")
	var out api.TZReload
	h.ok(http.StatusOK, &out, "POST", "/v1/admin/reload-tz", nil)
	digest, ok := strings.CutPrefix(out.TZLabel, "2026a+local.")
	if _, err := hex.DecodeString(digest); !ok || err != nil || len(digest) != 8 {
		t.Errorf("tz_label %q, want 2026a+local. and 8 hex digits", out.TZLabel)
	}
	want := api.TZReload{PreviousTZVersion: "2026a", TZVersion: "2026a", PreviousTZLabel: "2026a", TZLabel: out.TZLabel, Shards: 4,
		Zones: []api.TZZoneMoves{{Zone: "Test/Shift", Schedules: 1, Moved: 1, Replanned: 1}}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("reload-tz:\n got %+v\nwant %+v", out, want)
	}
	var sc api.Schedule
	h.ok(http.StatusOK, &sc, "GET", "/v1/schedules/feb-2", nil)
	if sc.NextRunAt == nil || !sc.NextRunAt.Equal(time.Date(2027, 2, 2, 13, 0, 0, 0, time.UTC)) {
		t.Errorf("cursor after reload-tz: %v, want 2027-02-02T13:00:00Z (09:00 at UTC-4)", sc.NextRunAt)
	}
}
