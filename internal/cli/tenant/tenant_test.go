package tenant_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/cli/tenant"
)

// The tenant routes are served by internal/server, whose tests (and an
// end-to-end test against a real schedd) check what they answer. These
// tests check schedctl's half only: that each command line sends the
// request it should and prints the answer as it should. They run the real
// schedctl root over a real loopback HTTP server that records each request
// and answers it with a canned API body.

// answer is a canned answer to one route.
type answer struct {
	status int
	body   any
}

// seen is one request as the server received it.
type seen struct {
	Method, Path, Auth string
	Body               string // compact JSON; "" for none
}

// cannedServer answers "METHOD /path" with its canned answer and records
// every request; any other route is a 404 not_found.
type cannedServer struct {
	addr string

	mu     sync.Mutex
	routes map[string]answer
	reqs   []seen
}

func newServer(t *testing.T, routes map[string]answer) *cannedServer {
	t.Helper()
	s := &cannedServer{routes: routes}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var buf bytes.Buffer
		if len(b) > 0 {
			if err := json.Compact(&buf, b); err != nil {
				t.Errorf("%s %s: body not JSON: %q", r.Method, r.URL.Path, b)
			}
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, seen{Method: r.Method, Path: r.URL.EscapedPath(), Auth: r.Header.Get("Authorization"), Body: buf.String()})
		a, ok := s.routes[r.Method+" "+r.URL.EscapedPath()]
		s.mu.Unlock()
		if !ok {
			a = answer{http.StatusNotFound, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeNotFound, Message: "no route " + r.URL.Path}}}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		json.NewEncoder(w).Encode(a.body)
	}))
	t.Cleanup(srv.Close)
	s.addr = "tcp:" + strings.TrimPrefix(srv.URL, "http://")
	return s
}

// requests returns the requests received so far and forgets them.
func (s *cannedServer) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = nil
	return r
}

// only returns the one request received, failing the test otherwise.
func (s *cannedServer) only(t *testing.T) seen {
	t.Helper()
	r := s.requests()
	if len(r) != 1 {
		t.Fatalf("%d requests, want 1: %+v", len(r), r)
	}
	return r[0]
}

// result is what one schedctl run printed and its exit status.
type result struct {
	code        int
	out, errOut string
}

// schedctl runs the real root against s with args; tty says whether
// standard output is a terminal, prompt whether standard input is one
// too (holding in).
func (s *cannedServer) schedctl(t *testing.T, tty, prompt bool, in string, args ...string) result {
	t.Helper()
	f, out, errOut := clitest.NewFactory(tty)
	f.InTTY = prompt
	f.In = strings.NewReader(in)
	code := cli.Run(f, append([]string{"--addr", s.addr}, args...))
	return result{code, out.String(), errOut.String()}
}

func sampleTenant() api.Tenant {
	return api.Tenant{Name: "acme", State: "ACTIVE", Weight: 2,
		Quotas:    api.Quotas{ActiveSchedules: 500, Running: 0},
		Effective: api.Quotas{ActiveSchedules: 500, FiringsPerSecond: 100, Running: 50, CatchUpPerSecond: 10, APIRequestsPerSecond: 0},
		Version:   1, CreatedAt: clitest.FixedNow, UpdatedAt: clitest.FixedNow}
}

func sampleToken(name, role string) api.TokenInfo {
	return api.TokenInfo{Tenant: "acme", Name: name, Role: role, CreatedAt: clitest.FixedNow}
}

const secret = "sched_0123456789abcdefghijklmnopqrstuv"

// jsonKeys are the sorted top-level keys of a JSON object.
func jsonKeys(t *testing.T, out string) string {
	t.Helper()
	m, ok := clitest.MustJSON(t, []byte(out)).(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %s", out)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// TestTenantCreateRequestAndOutput: create sends the name and only the
// flags given (--quota-running 0 sends 0; a flag not given sends
// nothing), prints the token alone on the first line and the notice on
// stderr, and with -o json the whole answer.
func TestTenantCreateRequestAndOutput(t *testing.T) {
	created := api.TenantCreated{Tenant: sampleTenant(), Token: secret, Info: sampleToken("initial", "tenant")}
	s := newServer(t, map[string]answer{"POST /v1/tenants": {http.StatusCreated, created}})
	for _, tc := range []struct {
		name string
		args []string
		body string
	}{
		{"no flags", nil, `{"name":"acme","quotas":{}}`},
		{"weight", []string{"--weight", "2"}, `{"name":"acme","weight":2,"quotas":{}}`},
		{"zero is sent", []string{"--quota-running", "0"}, `{"name":"acme","quotas":{"running":0}}`},
		{"every quota", []string{"--quota-active-schedules", "500", "--quota-firings-per-second", "100", "--quota-running", "50",
			"--quota-catch-up-per-second", "10", "--quota-api-requests-per-second", "20"},
			`{"name":"acme","quotas":{"active_schedules":500,"firings_per_second":100,"running":50,"catch_up_per_second":10,"api_requests_per_second":20}}`},
		{"retention", []string{"--retention", "72h"}, `{"name":"acme","quotas":{"retention_seconds":259200}}`},
		{"retention back to the default", []string{"--retention", "0"}, `{"name":"acme","quotas":{"retention_seconds":0}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.schedctl(t, false, false, "", append([]string{"tenant", "create", "acme"}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			if req := s.only(t); req.Method != "POST" || req.Path != "/v1/tenants" || req.Body != tc.body {
				t.Errorf("sent %+v\nwant body %s", req, tc.body)
			}
			if first, _, _ := strings.Cut(r.out, "\n"); first != "token: "+secret {
				t.Errorf("first line %q", first)
			}
			if r.errOut != tenant.TokenNotice+"\n" {
				t.Errorf("stderr %q", r.errOut)
			}
		})
	}

	r := s.schedctl(t, true, false, "", "tenant", "create", "acme", "--weight", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	s.requests()
	clitest.Golden(t, "tenant-create-tty.golden", r.out)

	r = s.schedctl(t, false, false, "", "-o", "json", "tenant", "create", "acme")
	if r.code != 0 || r.errOut != tenant.TokenNotice+"\n" {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	s.requests()
	if got := jsonKeys(t, r.out); got != "tenant token token_info" {
		t.Errorf("JSON keys %s", got)
	}
	var back api.TenantCreated
	if err := json.Unmarshal([]byte(r.out), &back); err != nil || back.Token != secret || back.Tenant.Name != "acme" || back.Info.Name != "initial" {
		t.Errorf("JSON %v %+v", err, back)
	}
}

// TestNewNamesCheckedOffline: a tenant or token name schedd would refuse
// (in upper case, only dots, an invisible character) is refused by
// schedctl with exit 2 and the rule's reason, and nothing is sent.
func TestNewNamesCheckedOffline(t *testing.T) {
	s := newServer(t, map[string]answer{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tenant", "create", "Acme"}, `tenant name: "Acme": use lowercase letters (acme)`},
		{[]string{"tenant", "create", ".."}, `tenant name: "..": a name must not be only dots`},
		{[]string{"tenant", "create", "ac\u2062me"}, `tenant name: "ac\u2062me" contains an invisible or formatting character (U+2062)`},
		{[]string{"tenant", "token", "create", "acme", "--name", "CI"}, `--name: "CI": use lowercase letters (ci)`},
		{[]string{"tenant", "token", "create", "acme", "--name", "..."}, `--name: "...": a name must not be only dots`},
	} {
		r := s.schedctl(t, false, false, "", tc.args...)
		if r.code != cmdutil.ExitInvalid || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%q: exit %d %q, want exit %d with %q", tc.args, r.code, r.errOut, cmdutil.ExitInvalid, tc.want)
		}
		if reqs := s.requests(); len(reqs) != 0 {
			t.Errorf("%q: sent %+v", tc.args, reqs)
		}
	}
}

// TestTenantUpdateSendsOnlyGivenFlags: update PATCHes only what its flags
// say; with none it refuses (exit 2) and sends nothing.
func TestTenantUpdateSendsOnlyGivenFlags(t *testing.T) {
	s := newServer(t, map[string]answer{"PATCH /v1/tenants/acme": {http.StatusOK, sampleTenant()}})
	for _, tc := range []struct {
		args []string
		body string
	}{
		{[]string{"--weight", "3"}, `{"weight":3,"quotas":{}}`},
		{[]string{"--quota-firings-per-second", "0"}, `{"quotas":{"firings_per_second":0}}`},
		{[]string{"--quota-catch-up-per-second", "5", "--quota-api-requests-per-second", "0"}, `{"quotas":{"catch_up_per_second":5,"api_requests_per_second":0}}`},
	} {
		r := s.schedctl(t, false, false, "", append([]string{"tenant", "update", "acme"}, tc.args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, r.code, r.errOut)
		}
		if req := s.only(t); req.Method != "PATCH" || req.Path != "/v1/tenants/acme" || req.Body != tc.body {
			t.Errorf("%v: sent %+v\nwant body %s", tc.args, req, tc.body)
		}
		if want := "NAME\tSTATE\tWEIGHT\tSCHEDULES\tFIRINGS/S\tRUNNING\tCATCH-UP/S\tAPI REQ/S\nacme\tACTIVE\t2\t500\t100\t50\t10\tunlimited\n"; r.out != want {
			t.Errorf("%v: out %q, want %q", tc.args, r.out, want)
		}
	}
	r := s.schedctl(t, false, false, "", "tenant", "update", "acme")
	if r.code != cmdutil.ExitInvalid || !strings.Contains(r.errOut, "nothing to change") {
		t.Errorf("no flags: exit %d %q", r.code, r.errOut)
	}
	if reqs := s.requests(); len(reqs) != 0 {
		t.Errorf("sent %+v", reqs)
	}
}

// TestTenantListAndGetOutput: list and get print name, state, weight and
// the quotas in force ("unlimited" for 0); JSON is an array (list, []
// when empty) or the tenant (get).
func TestTenantListAndGetOutput(t *testing.T) {
	other := sampleTenant()
	other.Name, other.State, other.Weight, other.Effective = "default", "ACTIVE", 1, api.Quotas{}
	gone := sampleTenant()
	gone.Name, gone.State = "old-co", "DELETED"
	s := newServer(t, map[string]answer{
		"GET /v1/tenants":      {http.StatusOK, api.TenantList{Tenants: []api.Tenant{sampleTenant(), other, gone}}},
		"GET /v1/tenants/acme": {http.StatusOK, sampleTenant()},
	})
	r := s.schedctl(t, true, false, "", "tenant", "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	clitest.Golden(t, "tenant-list-tty.golden", r.out)
	if req := s.only(t); req.Method != "GET" || req.Path != "/v1/tenants" || req.Body != "" {
		t.Errorf("sent %+v", req)
	}

	r = s.schedctl(t, false, false, "", "tenant", "list", "-o", "json")
	s.requests()
	list, ok := clitest.MustJSON(t, []byte(r.out)).([]any)
	if r.code != 0 || !ok || len(list) != 3 {
		t.Fatalf("JSON list: exit %d %s", r.code, r.out)
	}
	if got := jsonKeys(t, mustMarshal(t, list[0])); got != "created_at effective_quotas name quotas state updated_at version weight" {
		t.Errorf("tenant JSON keys %s", got)
	}

	r = s.schedctl(t, true, false, "", "tenant", "get", "acme")
	if want := "NAME  STATE   WEIGHT  SCHEDULES  FIRINGS/S  RUNNING  CATCH-UP/S  API REQ/S\n" +
		"acme  ACTIVE  2       500        100        50       10          unlimited\n"; r.code != 0 || r.out != want {
		t.Errorf("get: exit %d\n%s\nwant\n%s", r.code, r.out, want)
	}
	if req := s.only(t); req.Path != "/v1/tenants/acme" {
		t.Errorf("sent %+v", req)
	}
	r = s.schedctl(t, false, false, "", "tenant", "get", "acme", "-o", "json")
	s.requests()
	var tn api.Tenant
	if err := json.Unmarshal([]byte(r.out), &tn); err != nil || tn.Effective.Running != 50 || tn.Quotas.ActiveSchedules != 500 {
		t.Errorf("get JSON %v %s", err, r.out)
	}

	empty := newServer(t, map[string]answer{"GET /v1/tenants": {http.StatusOK, api.TenantList{}}})
	r = empty.schedctl(t, false, false, "", "tenant", "list", "-o", "json")
	if strings.TrimSpace(r.out) != "[]" {
		t.Errorf("empty list JSON %q", r.out)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTenantStateVerbs: enable and disable POST their verb; delete asks
// on a terminal (anything but yes sends nothing, exit 1), refuses
// elsewhere without --yes (exit 2, nothing sent), and with --yes deletes.
func TestTenantStateVerbs(t *testing.T) {
	disabled, deleted := sampleTenant(), sampleTenant()
	disabled.State, disabled.Version = "DISABLED", 2
	deleted.State, deleted.Version = "DELETED", 3
	s := newServer(t, map[string]answer{
		"POST /v1/tenants/acme/enable":  {http.StatusOK, sampleTenant()},
		"POST /v1/tenants/acme/disable": {http.StatusOK, disabled},
		"DELETE /v1/tenants/acme":       {http.StatusOK, deleted},
	})
	for _, tc := range []struct {
		args   []string
		tty    bool
		in     string
		code   int
		method string
		path   string
		out    string
		errOut string
	}{
		{args: []string{"enable", "acme"}, method: "POST", path: "/v1/tenants/acme/enable", out: "enabled tenant acme: ACTIVE, version 1\n"},
		{args: []string{"disable", "acme"}, method: "POST", path: "/v1/tenants/acme/disable", out: "disabled tenant acme: DISABLED, version 2\n"},
		{args: []string{"delete", "acme", "--yes"}, method: "DELETE", path: "/v1/tenants/acme", out: "deleted tenant acme: DELETED, version 3\n"},
		{args: []string{"delete", "acme"}, code: cmdutil.ExitInvalid, errOut: "pass --yes to delete without asking"},
		{args: []string{"delete", "acme"}, tty: true, in: "no\n", code: cmdutil.ExitFailure, errOut: "not confirmed; nothing was deleted"},
		{args: []string{"delete", "acme"}, tty: true, in: "yes\n", method: "DELETE", path: "/v1/tenants/acme", out: "deleted tenant acme: DELETED, version 3\n",
			errOut: "Type yes to delete: "},
	} {
		name := strings.Join(tc.args, " ") + " " + tc.in
		r := s.schedctl(t, tc.tty, tc.tty, tc.in, append([]string{"tenant"}, tc.args...)...)
		if r.code != tc.code || r.out != tc.out || !strings.Contains(r.errOut, tc.errOut) {
			t.Errorf("%s: exit %d out %q err %q", name, r.code, r.out, r.errOut)
		}
		reqs := s.requests()
		switch {
		case tc.method == "" && len(reqs) != 0:
			t.Errorf("%s: sent %+v", name, reqs)
		case tc.method != "" && (len(reqs) != 1 || reqs[0].Method != tc.method || reqs[0].Path != tc.path):
			t.Errorf("%s: sent %+v, want %s %s", name, reqs, tc.method, tc.path)
		}
	}
	r := s.schedctl(t, false, false, "", "tenant", "disable", "acme", "-o", "json")
	var tn api.Tenant
	if err := json.Unmarshal([]byte(r.out), &tn); err != nil || tn.State != "DISABLED" {
		t.Errorf("disable JSON %v %s", err, r.out)
	}
}

// TestTokenCommandsRequestAndOutput: token create sends the name and
// role, prints the token once on the first line; token list never shows
// a token; revoke POSTs to the token's path.
func TestTokenCommandsRequestAndOutput(t *testing.T) {
	used, revoked := clitest.FixedNow.Add(time.Hour), clitest.FixedNow.Add(2*time.Hour)
	ci := sampleToken("ci", "tenant")
	ci.LastUsedAt = &used
	old := sampleToken("old", "tenant")
	old.RevokedAt = &revoked
	s := newServer(t, map[string]answer{
		"POST /v1/tenants/acme/tokens":              {http.StatusCreated, api.TokenCreated{Token: secret, Info: sampleToken("ci", "tenant")}},
		"POST /v1/tenants/default/tokens":           {http.StatusCreated, api.TokenCreated{Token: secret, Info: api.TokenInfo{Tenant: "default", Name: "ops", Role: "admin", CreatedAt: clitest.FixedNow}}},
		"GET /v1/tenants/acme/tokens":               {http.StatusOK, api.TokenList{Tokens: []api.TokenInfo{sampleToken("initial", "tenant"), ci, old}}},
		"POST /v1/tenants/acme/tokens/ci/revoke":    {http.StatusOK, api.TokenInfo{Tenant: "acme", Name: "ci", Role: "tenant", CreatedAt: clitest.FixedNow, RevokedAt: &revoked}},
		"POST /v1/tenants/acme/tokens/a%20b/revoke": {http.StatusOK, api.TokenInfo{Tenant: "acme", Name: "a b", Role: "tenant", CreatedAt: clitest.FixedNow, RevokedAt: &revoked}},
	})
	for _, tc := range []struct {
		args []string
		path string
		body string
	}{
		{[]string{"acme", "--name", "ci"}, "/v1/tenants/acme/tokens", `{"name":"ci"}`},
		{[]string{"default", "--name", "ops", "--admin"}, "/v1/tenants/default/tokens", `{"name":"ops","role":"admin"}`},
	} {
		r := s.schedctl(t, false, false, "", append([]string{"tenant", "token", "create"}, tc.args...)...)
		if r.code != 0 || r.errOut != tenant.TokenNotice+"\n" {
			t.Fatalf("%v: exit %d %q", tc.args, r.code, r.errOut)
		}
		if req := s.only(t); req.Method != "POST" || req.Path != tc.path || req.Body != tc.body {
			t.Errorf("%v: sent %+v, want %s", tc.args, req, tc.body)
		}
		if first, _, _ := strings.Cut(r.out, "\n"); first != "token: "+secret {
			t.Errorf("%v: first line %q", tc.args, first)
		}
	}
	r := s.schedctl(t, true, false, "", "tenant", "token", "create", "acme", "--name", "ci")
	s.requests()
	clitest.Golden(t, "token-create-tty.golden", r.out)
	r = s.schedctl(t, false, false, "", "tenant", "token", "create", "acme", "--name", "ci", "-o", "json")
	s.requests()
	if got := jsonKeys(t, r.out); got != "token token_info" {
		t.Errorf("token create JSON keys %s", got)
	}

	r = s.schedctl(t, false, false, "", "tenant", "token", "create", "acme")
	if r.code != cmdutil.ExitInvalid || !strings.Contains(r.errOut, "--name is required") {
		t.Errorf("no --name: exit %d %q", r.code, r.errOut)
	}
	if reqs := s.requests(); len(reqs) != 0 {
		t.Errorf("sent %+v", reqs)
	}

	r = s.schedctl(t, true, false, "", "tenant", "token", "list", "acme")
	if r.code != 0 || strings.Contains(r.out, "sched_") {
		t.Errorf("token list: exit %d %q", r.code, r.out)
	}
	clitest.Golden(t, "token-list-tty.golden", r.out)
	s.requests()
	r = s.schedctl(t, false, false, "", "tenant", "token", "list", "acme", "-o", "json")
	s.requests()
	list, ok := clitest.MustJSON(t, []byte(r.out)).([]any)
	if !ok || len(list) != 3 {
		t.Fatalf("token list JSON %s", r.out)
	}
	if got := jsonKeys(t, mustMarshal(t, list[0])); got != "created_at last_used_at name revoked_at role tenant" {
		t.Errorf("token JSON keys %s", got)
	}

	r = s.schedctl(t, false, false, "", "tenant", "token", "revoke", "acme", "ci")
	if want := "revoked token ci of tenant acme at 2027-03-13T14:00:00Z\n"; r.code != 0 || r.out != want {
		t.Errorf("revoke: exit %d %q", r.code, r.out)
	}
	if req := s.only(t); req.Method != "POST" || req.Path != "/v1/tenants/acme/tokens/ci/revoke" || req.Body != "" {
		t.Errorf("revoke sent %+v", req)
	}
	r = s.schedctl(t, false, false, "", "tenant", "token", "revoke", "acme", "a b")
	if req := s.only(t); r.code != 0 || req.Path != "/v1/tenants/acme/tokens/a%20b/revoke" {
		t.Errorf("revoke escaped: exit %d %+v", r.code, req)
	}
}

// TestWhoamiOutput: whoami sends the token it is given and prints who it
// stands for.
func TestWhoamiOutput(t *testing.T) {
	s := newServer(t, map[string]answer{"GET /v1/whoami": {http.StatusOK, api.Whoami{Tenant: "acme", Token: "ci", Role: "tenant"}}})
	r := s.schedctl(t, true, false, "", "--token", secret, "whoami")
	if want := "tenant  acme\ntoken   ci\nrole    tenant\nlocal   no\n"; r.code != 0 || r.out != want {
		t.Errorf("whoami: exit %d %q, want %q", r.code, r.out, want)
	}
	if req := s.only(t); req.Method != "GET" || req.Auth != "Bearer "+secret {
		t.Errorf("sent %+v", req)
	}
	r = s.schedctl(t, false, false, "", "whoami", "-o", "json")
	s.requests()
	if got := jsonKeys(t, r.out); r.code != 0 || got != "local role tenant token" {
		t.Errorf("whoami JSON: exit %d keys %s", r.code, got)
	}

	local := newServer(t, map[string]answer{"GET /v1/whoami": {http.StatusOK, api.Whoami{Tenant: "default", Role: "admin", Local: true}}})
	r = local.schedctl(t, false, false, "", "whoami")
	if want := "tenant\tdefault\ntoken\t-\nrole\tadmin\nlocal\tyes\n"; r.out != want {
		t.Errorf("local whoami %q, want %q", r.out, want)
	}
}

// TestTenantErrorsAndExitCodes: schedd's refusals keep cmdutil's exit
// statuses (invalid input 2, anything else 1; a forbidden role says whose
// these commands are), and bad flags are refused before anything is sent.
func TestTenantErrorsAndExitCodes(t *testing.T) {
	refuse := func(status int, code, msg string) answer {
		return answer{status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}}}
	}
	for _, tc := range []struct {
		name string
		ans  answer
		code int
		want string
	}{
		{"not found", refuse(404, api.CodeNotFound, `tenant "acme" not found`), cmdutil.ExitFailure, `schedctl: tenant get acme: not found: tenant "acme" not found`},
		{"unauthorized", refuse(401, api.CodeUnauthorized, "bad token"), cmdutil.ExitFailure, "tenant get acme: unauthorized: bad token"},
		{"forbidden", refuse(403, api.CodeForbidden, "an admin's call"), cmdutil.ExitFailure,
			"tenant get acme: forbidden: an admin's call (tenants and tokens are managed with an admin token of the default tenant, or over schedd's Unix socket)"},
		{"invalid", refuse(400, api.CodeInvalidArgument, "name: bad"), cmdutil.ExitInvalid, "tenant get acme: invalid argument: name: bad"},
	} {
		s := newServer(t, map[string]answer{"GET /v1/tenants/acme": tc.ans})
		r := s.schedctl(t, false, false, "", "tenant", "get", "acme")
		if r.code != tc.code || !strings.Contains(r.errOut, tc.want) || r.out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want %d %q", tc.name, r.code, r.errOut, r.out, tc.code, tc.want)
		}
	}

	s := newServer(t, map[string]answer{"POST /v1/tenants": refuse(409, api.CodeConflict, `tenant "acme" exists`)})
	r := s.schedctl(t, false, false, "", "tenant", "create", "acme")
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.errOut, `tenant create acme: conflict: tenant "acme" exists`) || strings.Contains(r.errOut, tenant.TokenNotice) {
		t.Errorf("conflict: exit %d %q", r.code, r.errOut)
	}
	s.requests()

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "acme", "--weight", "0"}, "--weight 0: must be 1 to 1000"},
		{[]string{"create", "acme", "--weight", "1001"}, "--weight 1001: must be 1 to 1000"},
		{[]string{"update", "acme", "--quota-running", "-1"}, "--quota-running -1: must be 0"},
		{[]string{"create", "acme", "--quota-running", "many"}, `invalid argument "many" for "--quota-running"`},
		{[]string{"create", "bad name"}, `tenant name: "bad name": use only letters`},
		{[]string{"create"}, "accepts 1 arg"},
		{[]string{"token", "revoke", "acme"}, "accepts 2 arg"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for schedctl tenant`},
		{[]string{"get", ".."}, "cannot be only dots"},
	} {
		r := s.schedctl(t, false, false, "", append([]string{"tenant"}, tc.args...)...)
		if r.code != cmdutil.ExitInvalid || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", tc.args, r.code, r.errOut, tc.want)
		}
		if reqs := s.requests(); len(reqs) != 0 {
			t.Errorf("%v: sent %+v", tc.args, reqs)
		}
	}
}
