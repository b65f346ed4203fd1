package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

// asTenant is h served to requests made with a tenant's token (not an
// admin's) of tenantID.
func (h *harness) asTenant(tenantID string) *harness {
	h.t.Helper()
	tok, _, err := h.eng.Tenants.CreateToken(h.t.Context(), tenantID, "t", record.RoleTenant)
	if err != nil {
		h.t.Fatal(err)
	}
	inner := h.srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+tok)
		inner.ServeHTTP(w, r)
	}))
	h.t.Cleanup(ts.Close)
	c := *h
	c.ts = ts
	return &c
}

// A pool claim (all_tenants) hands out every tenant's work, each item
// saying its tenant; an admin finishes each as its tenant, with the ack's
// tenant field or the Sched-Tenant header. Anyone else asking for either
// is refused 403 forbidden, and nothing changes.
func TestPoolClaimAndActingTenant(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	if _, _, err := h.eng.Tenants.Create(ctx, "other", engine.TenantPatch{}); err != nil {
		t.Fatal(err)
	}
	h.create(everyMinute("mine"))
	if _, _, err := h.eng.Control.Create(ctx, "other", "", schedule.Settings{Name: "theirs", Queue: "q", Kind: timetable.KindEvery, Expr: "1m"}); err != nil {
		t.Fatal(err)
	}
	h.plan(time.Minute)
	h.plan(time.Second)

	user := h.asTenant(DefaultTenant)
	user.fails(http.StatusForbidden, api.CodeForbidden, "all_tenants", "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", AllTenants: true})

	var res api.ClaimResult
	h.ok(http.StatusOK, &res, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "pool", Limit: 10, AllTenants: true})
	byTenant := map[string]api.Claimed{}
	for _, c := range res.Claimed {
		byTenant[c.Tenant] = c
	}
	if len(res.Claimed) != 2 || byTenant[DefaultTenant].OccurrenceID == "" || byTenant["other"].OccurrenceID == "" {
		t.Fatalf("pool claim: %+v; want one occurrence of each tenant, each with its tenant", res.Claimed)
	}
	theirs := byTenant["other"]
	hb := "/v1/occurrences/" + theirs.OccurrenceID + "/heartbeat"
	body := api.HeartbeatRequest{Attempt: theirs.Attempt}

	// Not the caller's own tenant's occurrence: not found without the
	// header; refused for a tenant token with it.
	h.fails(http.StatusNotFound, api.CodeNotFound, "", "POST", hb, body)
	user.fails(http.StatusForbidden, api.CodeForbidden, api.HeaderTenant, "POST", hb, body, api.HeaderTenant, "other")
	user.fails(http.StatusForbidden, api.CodeForbidden, "acks[0].tenant", "POST", "/v1/claims",
		api.ClaimRequest{Queue: "q", WorkerID: "w", Acks: []api.AckItem{{OccurrenceID: theirs.OccurrenceID, Attempt: theirs.Attempt, Tenant: "other"}}})
	h.fails(http.StatusBadRequest, api.CodeInvalidArgument, api.HeaderTenant, "POST", hb, body, api.HeaderTenant, "bad tenant!")
	var beat api.HeartbeatResult
	h.ok(http.StatusOK, &beat, "POST", hb, body, api.HeaderTenant, "other")
	// A tenant naming itself is itself.
	mine := byTenant[DefaultTenant]
	user.ok(http.StatusOK, &beat, "POST", "/v1/occurrences/"+mine.OccurrenceID+"/heartbeat", api.HeartbeatRequest{Attempt: mine.Attempt},
		api.HeaderTenant, DefaultTenant)

	// The admin's next claim acks both, each as its tenant.
	var next api.ClaimResult
	h.ok(http.StatusOK, &next, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "pool", AllTenants: true, Acks: []api.AckItem{
		{OccurrenceID: mine.OccurrenceID, Attempt: mine.Attempt},
		{OccurrenceID: theirs.OccurrenceID, Attempt: theirs.Attempt, Tenant: "other"},
	}})
	for _, a := range next.Acks {
		if a.Error != nil {
			t.Errorf("ack %s: %+v", a.OccurrenceID, a.Error)
		}
	}
	o, err := h.eng.Queue.Occurrence(ctx, "other", theirs.OccurrenceID)
	if err != nil || o.State != "SUCCEEDED" {
		t.Fatalf("the other tenant's occurrence after the ack: %+v, %v; want SUCCEEDED", o, err)
	}
}
