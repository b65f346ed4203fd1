package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// asActor serves h's API with every request made with a token of actor
// (its tenant, token name and role), stored directly in the store as a
// fixture, so that making it writes no audit row of its own.
func asActor(t *testing.T, h *harness, actor engine.Actor) string {
	t.Helper()
	tok, err := record.NewToken(nil)
	if err != nil {
		t.Fatal(err)
	}
	role := record.RoleTenant
	if actor.Admin {
		role = record.RoleAdmin
	}
	err = store.InTx(t.Context(), h.st, func(tx store.Tx) error {
		if actor.TenantID != record.DefaultTenant {
			tn := record.Tenant{ID: actor.TenantID, State: record.TenantActive, Weight: 1, CreatedAt: start, UpdatedAt: start, Version: 1}
			if err := tx.InsertTenant(t.Context(), &tn); err != nil {
				return err
			}
		}
		return tx.InsertToken(t.Context(), &record.Token{TenantID: actor.TenantID, Name: actor.Token,
			Hash: record.TokenHash(tok), Role: role, CreatedAt: start})
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+tok)
		h.srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// getAudit sends GET base+/v1/audit?query and decodes a list or an error.
func getAudit(t *testing.T, h *harness, base, query string) (int, api.AuditList, api.ErrorDetail) {
	t.Helper()
	resp, err := h.client.Get(base + "/v1/audit?" + query)
	if err != nil {
		t.Fatalf("GET /v1/audit?%s: %v", query, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var list api.AuditList
	var e api.ErrorBody
	if resp.StatusCode == http.StatusOK {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&list); err != nil {
			t.Fatalf("GET /v1/audit?%s: %v\n%s", query, err, body)
		}
	} else if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("GET /v1/audit?%s: %d, not an error body: %s", query, resp.StatusCode, body)
	}
	return resp.StatusCode, list, e.Error
}

// TestAuditTenantScoping: a tenant reads its own tenant's rows only and
// gets 403 forbidden for another's; an admin reads any tenant's, or all.
func TestAuditTenantScoping(t *testing.T) {
	h := newHarness(t)
	a := engine.Actor{TenantID: "tenant-a", Token: "ci"}
	b := engine.Actor{TenantID: "tenant-b", Token: "ci"}
	admin := engine.Actor{TenantID: "default", Token: "ops", Admin: true}
	every := schedule.Settings{Name: "job", Queue: "q", Kind: timetable.KindEvery, Expr: "1m", Payload: []byte(`{"password":"hunter2"}`)}
	for _, who := range []engine.Actor{a, b} {
		ctx := engine.WithActor(t.Context(), who)
		if _, _, err := h.eng.Control.Create(ctx, who.TenantID, "", every); err != nil {
			t.Fatalf("create in %s: %v", who.TenantID, err)
		}
		h.clk.Advance(time.Second)
		if _, err := h.eng.Control.Pause(ctx, who.TenantID, "job"); err != nil {
			t.Fatalf("pause in %s: %v", who.TenantID, err)
		}
	}
	tenants := func(l api.AuditList) string {
		var s []string
		for _, e := range l.Entries {
			s = append(s, e.TenantID+":"+e.Action)
		}
		return strings.Join(s, " ")
	}
	asA, asAdmin := asActor(t, h, a), asActor(t, h, admin)
	for _, tc := range []struct {
		name, base, query string
		status            int
		want              string // tenants:actions, or the error code
	}{
		{"own", asA, "", 200, "tenant-a:schedule.create tenant-a:schedule.pause"},
		{"own by name", asA, "tenant=tenant-a", 200, "tenant-a:schedule.create tenant-a:schedule.pause"},
		{"own schedule", asA, "schedule=job", 200, "tenant-a:schedule.create tenant-a:schedule.pause"},
		{"other", asA, "tenant=tenant-b", 403, api.CodeForbidden},
		{"all", asA, "tenant=*", 403, api.CodeForbidden},
		{"admin other", asAdmin, "tenant=tenant-b", 200, "tenant-b:schedule.create tenant-b:schedule.pause"},
		{"admin other schedule", asAdmin, "tenant=tenant-b&schedule=job&since=2027-01-04T10:00:02Z", 200, "tenant-b:schedule.pause"},
		{"admin all", asAdmin, "tenant=*&limit=5", 200,
			"default:tenant.create tenant-a:schedule.create tenant-a:schedule.pause tenant-b:schedule.create tenant-b:schedule.pause"},
		{"no such schedule", asA, "schedule=nope", 404, api.CodeNotFound},
		{"bad since", asA, "since=yesterday", 400, api.CodeInvalidArgument},
		{"bad limit", asA, "limit=0", 400, api.CodeInvalidArgument},
		{"unknown", asA, "who=me", 400, api.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, list, e := getAudit(t, h, tc.base, tc.query)
			if status != tc.status {
				t.Fatalf("status %d (%+v), want %d", status, e, tc.status)
			}
			got := e.Code
			if status == 200 {
				got = tenants(list)
			}
			if got != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
			for _, en := range list.Entries {
				if strings.Contains(en.Detail, "hunter2") {
					t.Errorf("entry %d holds the payload: %s", en.ID, en.Detail)
				}
			}
		})
	}

	// Paging: limit 1 says where the next page starts.
	_, first, _ := getAudit(t, h, asA, "limit=1")
	if len(first.Entries) != 1 || first.NextAfter != first.Entries[0].ID {
		t.Fatalf("limit=1: %+v; want one entry and next_after its id", first)
	}
	_, second, _ := getAudit(t, h, asA, "limit=1&after="+itoa(first.NextAfter))
	if len(second.Entries) != 1 || second.Entries[0].Action != "schedule.pause" || second.Entries[0].Actor != (api.AuditActor{Tenant: "tenant-a", Token: "ci"}) {
		t.Errorf("the page after: %+v; want tenant-a's pause by ci", second)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAuditReadOnly: the log has no route that writes: any other method on
// /v1/audit is 405.
func TestAuditReadOnly(t *testing.T) {
	h := newHarness(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		status, body := h.do(m, "/v1/audit", nil)
		if status != http.StatusMethodNotAllowed {
			t.Errorf("%s /v1/audit: %d %s; want 405", m, status, body)
		}
	}
	status, body := h.do(http.MethodDelete, "/v1/audit/1", nil)
	if status != http.StatusNotFound {
		t.Errorf("DELETE /v1/audit/1: %d %s; want 404", status, body)
	}
}
