package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/record"
)

// bearer is the header pair that sends tok.
func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// newTenant creates a tenant through the API as the harness's admin and
// returns its first token.
func (h *harness) newTenant(name string) string {
	h.t.Helper()
	var out api.TenantCreated
	h.ok(http.StatusCreated, &out, "POST", "/v1/tenants", api.TenantRequest{Name: name})
	if !record.LooksLikeToken(out.Token) || out.Tenant.Name != name || out.Info.Name != "initial" || out.Info.Role != "tenant" {
		h.t.Fatalf("create tenant %s: %+v", name, out)
	}
	return out.Token
}

// TestTenantIsolation: two tenants over TCP, each with its own token. Each
// lists only its own schedules, occurrences, queues and dead-letter queue,
// and every read, write, claim, ack and replay of the other's records, by
// id or by name, answers exactly as a random id does (the same status and
// the same body, the reference aside), and changes nothing.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	ta, tb := h.newTenant("acme"), h.newTenant("beta")

	var aOnly, aShared, bShared api.CreateResult
	h.ok(201, &aOnly, "POST", "/v1/schedules", api.ScheduleRequest{Name: "a-only", Queue: "emails", Every: "1m", Payload: json.RawMessage(`{"who":"acme"}`)}, bearer(ta)...)
	h.ok(201, &aShared, "POST", "/v1/schedules", api.ScheduleRequest{Name: "shared", Queue: "emails", Every: "1m"}, bearer(ta)...)
	// The same name and queue in another tenant: another schedule.
	h.ok(201, &bShared, "POST", "/v1/schedules", api.ScheduleRequest{Name: "shared", Queue: "emails", Every: "1m"}, bearer(tb)...)
	h.plan(time.Minute)

	// acme's worker claims acme's work alone, and sends one to the DLQ.
	var cl api.ClaimResult
	h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "emails", WorkerID: "wa", Limit: 100}, bearer(ta)...)
	if len(cl.Claimed) != 2 {
		t.Fatalf("acme claimed %d, want its 2: %+v", len(cl.Claimed), cl.Claimed)
	}
	for _, o := range cl.Claimed {
		if o.ScheduleID == bShared.Schedule.ScheduleID {
			t.Fatalf("acme claimed beta's occurrence %s", o.OccurrenceID)
		}
	}
	dead, running := cl.Claimed[0].OccurrenceID, cl.Claimed[1].OccurrenceID
	h.ok(200, nil, "POST", "/v1/occurrences/"+dead+"/nack", api.NackRequest{Attempt: 1, Class: "permanent", Error: "boom"}, bearer(ta)...)

	// What each one lists is its own, and nothing of the other's.
	acmes := []string{aOnly.Schedule.ScheduleID, aShared.Schedule.ScheduleID, dead, running}
	betas := []string{bShared.Schedule.ScheduleID}
	for _, c := range []struct {
		tok, path   string
		want, never []string
	}{
		{ta, "/v1/schedules", acmes[:2], betas},
		{tb, "/v1/schedules", betas, acmes},
		{ta, "/v1/occurrences?limit=1000", acmes, betas},
		{tb, "/v1/occurrences?limit=1000", betas, acmes},
		{ta, "/v1/dlq", []string{dead}, betas},
		{tb, "/v1/dlq", nil, acmes},
	} {
		_, raw := h.do("GET", c.path, nil, bearer(c.tok)...)
		for _, other := range c.never {
			if bytes.Contains(raw, []byte(other)) {
				t.Errorf("GET %s shows %s, the other tenant's: %s", c.path, other, raw)
			}
		}
		for _, w := range c.want {
			if !bytes.Contains(raw, []byte(w)) {
				t.Errorf("GET %s does not show its own %s: %s", c.path, w, raw)
			}
		}
	}
	var st api.Status
	h.ok(200, &st, "GET", "/v1/status", nil, bearer(tb)...)
	for _, q := range st.Queues {
		if q.Tenant != "beta" {
			t.Errorf("beta's status shows a queue of %s: %+v", q.Tenant, q)
		}
	}

	before := h.snapshotAs(ta)
	// Every route beta might aim at acme's records, and the same with a
	// reference that names nothing at all.
	randomSch := "sch_01JNZZZZZZZZZZZZZZZZZZZZZZ"
	randomOcc := record.OccurrenceID(randomSch, 1, start.Add(time.Minute))
	upd := api.ScheduleRequest{Name: "a-only", Queue: "emails", Every: "2m"}
	for _, c := range []struct {
		method, path string
		body         any
		ref, random  string
	}{
		{"GET", "/v1/schedules/%s", nil, aOnly.Schedule.ScheduleID, randomSch},
		{"GET", "/v1/schedules/%s", nil, "a-only", "no-such-name"},
		{"PUT", "/v1/schedules/%s", upd, aOnly.Schedule.ScheduleID, randomSch},
		{"PUT", "/v1/schedules/%s", upd, "a-only", "no-such-name"},
		{"POST", "/v1/schedules/%s/pause", nil, aOnly.Schedule.ScheduleID, randomSch},
		{"POST", "/v1/schedules/%s/resume", nil, "a-only", "no-such-name"},
		{"POST", "/v1/schedules/%s/cancel", nil, aOnly.Schedule.ScheduleID, randomSch},
		{"POST", "/v1/schedules/%s/trigger", nil, aOnly.Schedule.ScheduleID, randomSch},
		{"GET", "/v1/occurrences?schedule=%s", nil, aOnly.Schedule.ScheduleID, randomSch},
		{"GET", "/v1/dlq?schedule=%s", nil, "a-only", "no-such-name"},
		{"GET", "/v1/occurrences/%s", nil, running, randomOcc},
		{"GET", "/v1/occurrences/%s/attempts", nil, dead, randomOcc},
		{"POST", "/v1/occurrences/%s/heartbeat", api.HeartbeatRequest{Attempt: 1}, running, randomOcc},
		{"POST", "/v1/occurrences/%s/ack", api.AckRequest{Attempt: 1}, running, randomOcc},
		{"POST", "/v1/occurrences/%s/nack", api.NackRequest{Attempt: 1, Class: "permanent"}, running, randomOcc},
		{"POST", "/v1/occurrences/%s/replay", nil, dead, randomOcc},
	} {
		codeA, rawA := h.do(c.method, strings.Replace(c.path, "%s", c.ref, 1), c.body, bearer(tb)...)
		codeR, rawR := h.do(c.method, strings.Replace(c.path, "%s", c.random, 1), c.body, bearer(tb)...)
		bodyA := strings.ReplaceAll(string(rawA), c.ref, "REF")
		bodyR := strings.ReplaceAll(string(rawR), c.random, "REF")
		if codeA != http.StatusNotFound || codeA != codeR || bodyA != bodyR {
			t.Errorf("%s %s as beta: %d %s\nwith a random reference: %d %s\nwant the same 404", c.method, c.path, codeA, rawA, codeR, rawR)
		}
	}
	// An ack of acme's attempt carried by beta's claim: the same outcome as
	// a random one's, and beta's claim takes beta's work alone.
	var bc api.ClaimResult
	h.ok(200, &bc, "POST", "/v1/claims", api.ClaimRequest{Queue: "emails", WorkerID: "wb", Limit: 100,
		Acks: []api.AckItem{{OccurrenceID: running, Attempt: 1}, {OccurrenceID: randomOcc, Attempt: 1}}}, bearer(tb)...)
	if len(bc.Acks) != 2 {
		t.Fatalf("beta's claim answered %d acks, want 2: %+v", len(bc.Acks), bc.Acks)
	}
	a0, _ := json.Marshal(bc.Acks[0].Error)
	a1, _ := json.Marshal(bc.Acks[1].Error)
	if bc.Acks[0].Error == nil || strings.ReplaceAll(string(a0), running, "REF") != strings.ReplaceAll(string(a1), randomOcc, "REF") {
		t.Errorf("beta acking acme's attempt: %s; a random one: %s; want the same refusal", a0, a1)
	}
	if len(bc.Claimed) != 1 || bc.Claimed[0].ScheduleID != bShared.Schedule.ScheduleID {
		t.Errorf("beta claimed %+v; want its own one occurrence", bc.Claimed)
	}
	if after := h.snapshotAs(ta); after != before {
		t.Errorf("beta's requests changed acme's records:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshotAs is snapshot with tok's credentials.
func (h *harness) snapshotAs(tok string) string {
	h.t.Helper()
	saved := h.token
	h.token = tok
	defer func() { h.token = saved }()
	return h.snapshot()
}

// TestTenantRoles: a tenant's token may not manage tenants, see the
// cluster, the metrics or simulations, nor act as another tenant (403);
// an admin may act as any tenant.
func TestTenantRoles(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	ta := h.newTenant("acme")
	h.ok(201, nil, "POST", "/v1/schedules", everyMinute("mine"), bearer(ta)...)
	for _, r := range [][2]string{
		{"POST", "/v1/tenants"}, {"GET", "/v1/tenants"}, {"GET", "/v1/tenants/acme"}, {"POST", "/v1/tenants/acme/tokens"},
		{"POST", "/v1/tenants/acme/tokens/initial/revoke"}, {"GET", "/v1/cluster"}, {"POST", "/v1/simulate/outage"},
		{"GET", "/metrics"},
	} {
		h.fails(403, api.CodeForbidden, "", r[0], r[1], nil, bearer(ta)...)
	}
	h.fails(403, api.CodeForbidden, "", "GET", "/v1/schedules", nil, append(bearer(ta), api.HeaderTenant, "default")...)
	h.fails(403, api.CodeForbidden, "", "GET", "/v1/reconcile?tenant=default", nil, bearer(ta)...)
	// The admin acts as acme with the header, and sees acme's schedule.
	var list api.ScheduleList
	h.ok(200, &list, "GET", "/v1/schedules", nil, api.HeaderTenant, "acme")
	if len(list.Schedules) != 1 || list.Schedules[0].Name != "mine" {
		t.Errorf("admin as acme lists %+v; want acme's schedule", list.Schedules)
	}
	var who api.Whoami
	h.ok(200, &who, "GET", "/v1/whoami", nil, bearer(ta)...)
	if who != (api.Whoami{Tenant: "acme", Token: "initial", Role: "tenant"}) {
		t.Errorf("whoami = %+v", who)
	}
}

// TestTokenLifecycle: several tokens per tenant, each named; revoking one
// or disabling the tenant refuses its tokens at once; a deleted tenant's
// name is never reused; no token is stored in the clear.
func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	initial := h.newTenant("acme")
	var ci api.TokenCreated
	h.ok(201, &ci, "POST", "/v1/tenants/acme/tokens", api.TokenRequest{Name: "ci"})
	h.fails(409, api.CodeConflict, "", "POST", "/v1/tenants/acme/tokens", api.TokenRequest{Name: "ci"})
	h.fails(400, api.CodeInvalidArgument, "role", "POST", "/v1/tenants/acme/tokens", api.TokenRequest{Name: "root", Role: "admin"})
	h.ok(200, nil, "GET", "/v1/schedules", nil, bearer(ci.Token)...)

	var toks api.TokenList
	h.ok(200, &toks, "GET", "/v1/tenants/acme/tokens", nil)
	// By creation, then name: both were made in the same millisecond.
	if len(toks.Tokens) != 2 || toks.Tokens[0].Name != "ci" || toks.Tokens[1].Name != "initial" ||
		toks.Tokens[0].LastUsedAt == nil || toks.Tokens[1].LastUsedAt != nil {
		t.Fatalf("tokens = %+v; want ci (used), initial (not yet)", toks.Tokens)
	}
	raw, _ := json.Marshal(toks)
	if bytes.Contains(raw, []byte(initial)) || bytes.Contains(raw, []byte(ci.Token)) {
		t.Fatalf("the token list shows a token: %s", raw)
	}

	// Revoked: refused on the next request; the other token still works.
	h.ok(200, nil, "POST", "/v1/tenants/acme/tokens/ci/revoke", nil)
	h.fails(401, api.CodeUnauthorized, "", "GET", "/v1/schedules", nil, bearer(ci.Token)...)
	h.ok(200, nil, "GET", "/v1/schedules", nil, bearer(initial)...)
	h.fails(404, api.CodeNotFound, "", "POST", "/v1/tenants/acme/tokens/ci/revoke", nil)

	// Disabled: every token refused at once; enabled: accepted again.
	h.ok(200, nil, "POST", "/v1/tenants/acme/disable", nil)
	h.fails(401, api.CodeUnauthorized, "", "GET", "/v1/schedules", nil, bearer(initial)...)
	h.ok(200, nil, "POST", "/v1/tenants/acme/enable", nil)
	h.ok(200, nil, "GET", "/v1/schedules", nil, bearer(initial)...)

	// Deleting waits for the schedules to be canceled; then the name is
	// a tombstone.
	var sc api.CreateResult
	h.ok(201, &sc, "POST", "/v1/schedules", everyMinute("job"), bearer(initial)...)
	h.fails(409, api.CodeConflict, "", "DELETE", "/v1/tenants/acme", nil)
	h.ok(200, nil, "POST", "/v1/schedules/job/cancel", nil, bearer(initial)...)
	var del api.Tenant
	h.ok(200, &del, "DELETE", "/v1/tenants/acme", nil)
	if del.State != "DELETED" {
		t.Errorf("deleted tenant: %+v", del)
	}
	h.fails(401, api.CodeUnauthorized, "", "GET", "/v1/schedules", nil, bearer(initial)...)
	h.fails(409, api.CodeConflict, "", "POST", "/v1/tenants", api.TenantRequest{Name: "acme"})
	h.fails(409, api.CodeConflict, "", "DELETE", "/v1/tenants/default", nil)

	// The store holds hashes only.
	h.st.Close()
	for _, f := range []string{h.path, h.path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, tok := range []string{initial, ci.Token} {
			if bytes.Contains(b, []byte(tok)) {
				t.Errorf("%s holds a token in the clear", f)
			}
		}
	}
}

// TestDefaultTenantCannotBeDisabled: the default tenant holds the named
// admin tokens, so an admin cannot disable it and lock every admin out
// (only the operator token or the Unix socket could undo that); its tokens
// keep working after the refusal.
func TestDefaultTenantCannotBeDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	var ops api.TokenCreated
	h.ok(201, &ops, "POST", "/v1/tenants/default/tokens", api.TokenRequest{Name: "ops", Role: "admin"})
	d := h.fails(409, api.CodeConflict, "", "POST", "/v1/tenants/default/disable", nil, bearer(ops.Token)...)
	if !strings.Contains(d.Message, "cannot be disabled") {
		t.Errorf("refusal: %+v; want it to say the default tenant cannot be disabled", d)
	}
	var tn api.Tenant
	h.ok(200, &tn, "GET", "/v1/tenants/default", nil, bearer(ops.Token)...)
	if tn.State != "ACTIVE" {
		t.Errorf("default tenant after the refused disable: %+v", tn)
	}
	h.ok(200, nil, "POST", "/v1/tenants/default/enable", nil, bearer(ops.Token)...)
}

// TestTenantQuotaPatch: an update changes only the quotas it names, 0
// returns one to the default, and the quotas in force are shown.
func TestTenantQuotaPatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	ten := int64(10)
	var out api.TenantCreated
	h.ok(201, &out, "POST", "/v1/tenants", api.TenantRequest{Name: "acme", Weight: new(3), Quotas: api.QuotasPatch{Running: &ten}})
	if out.Tenant.Weight != 3 || out.Tenant.Quotas.Running != 10 || out.Tenant.Effective.Running != 10 {
		t.Fatalf("created %+v", out.Tenant)
	}
	zero, five := int64(0), int64(5)
	var got api.Tenant
	h.ok(200, &got, "PATCH", "/v1/tenants/acme", api.TenantRequest{Quotas: api.QuotasPatch{ActiveSchedules: &five}})
	if got.Weight != 3 || got.Quotas.Running != 10 || got.Quotas.ActiveSchedules != 5 || got.Version != 2 {
		t.Errorf("after a patch of active_schedules: %+v", got)
	}
	h.ok(200, &got, "PATCH", "/v1/tenants/acme", api.TenantRequest{Quotas: api.QuotasPatch{Running: &zero}})
	if got.Quotas.Running != 0 || got.Quotas.ActiveSchedules != 5 {
		t.Errorf("after running back to the default: %+v", got)
	}
	neg := int64(-1)
	h.fails(400, api.CodeInvalidArgument, "quotas.running", "PATCH", "/v1/tenants/acme", api.TenantRequest{Quotas: api.QuotasPatch{Running: &neg}})
	h.fails(400, api.CodeInvalidArgument, "weight", "PATCH", "/v1/tenants/acme", api.TenantRequest{Weight: new(0)})
	h.fails(400, api.CodeInvalidArgument, "tenant", "POST", "/v1/tenants", api.TenantRequest{Name: "bad name"})
	h.fails(404, api.CodeNotFound, "", "GET", "/v1/tenants/nobody", nil)
}

// TestTenantAPIRateQuota: a tenant's own quota of API requests per second
// is enforced on it alone: over it, 429 rate_limited naming the quota and
// a Retry-After; another tenant is not slowed.
func TestTenantAPIRateQuota(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	two := int64(2)
	var slow api.TenantCreated
	h.ok(201, &slow, "POST", "/v1/tenants", api.TenantRequest{Name: "slow", Quotas: api.QuotasPatch{APIRequestsPerSecond: &two}})
	fast := h.newTenant("fast")
	limitClock(h) // no refill between the ten, however slowly the machine runs them
	limited := 0
	for range 10 {
		code, raw := h.do("GET", "/v1/schedules", nil, bearer(slow.Token)...)
		if code == http.StatusTooManyRequests {
			limited++
			if !bytes.Contains(raw, []byte(`"rate_limited"`)) || !bytes.Contains(raw, []byte("2 requests/s")) {
				t.Errorf("429 body: %s; want rate_limited naming the quota of 2 requests/s", raw)
			}
		}
		h.ok(200, nil, "GET", "/v1/schedules", nil, bearer(fast)...)
	}
	// A burst of twice the rate passes; the rest of the ten, at one
	// instant, not.
	if limited != 6 {
		t.Errorf("%d of 10 requests at one instant were limited; want the 6 past the burst of 4", limited)
	}
}
