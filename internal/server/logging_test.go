package server

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/testio"
)

// logTo is a text logger on w at level.
func logTo(w *testio.SyncBuffer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// TestRequestLogLine: every request's line is at debug level, names its
// route by pattern (never the path, which holds names and ids) and who it
// was: the tenant, and the token's name when it authenticated with one.
// At info level there is none.
func TestRequestLogLine(t *testing.T) {
	t.Parallel()
	var logs testio.SyncBuffer
	h := newHarness(t, withToken("operator-token"), withLogger(logTo(&logs, slog.LevelDebug)))
	acme := h.newTenant("acme")
	for _, tc := range []struct {
		path  string
		token string
		want  string // the line, from level to status, and after duration
	}{
		{"/v1/schedules/secret-name", acme, `level=DEBUG msg=request route="GET /v1/schedules/{ref}" status=404 .* tenant=acme token=initial$`},
		{"/v1/occurrences/occ_secretid", "operator-token", `level=DEBUG msg=request route="GET /v1/occurrences/{id}" status=404 .* tenant=default$`},
		{"/v1/schedules/secret-name", "not-a-token", `level=DEBUG msg=request route="GET /v1/schedules/{ref}" status=401 .* duration=\S+$`},
		{"/v1/no/secret-route", acme, `level=DEBUG msg=request route=unmatched status=404 .* tenant=acme token=initial$`},
	} {
		before := len(logs.String())
		h.do("GET", tc.path, nil, bearer(tc.token)...)
		line := strings.TrimSpace(logs.String()[before:])
		if !regexp.MustCompile(tc.want).MatchString(line) {
			t.Errorf("GET %s: log\n%s\nwant a line matching %s", tc.path, line, tc.want)
		}
	}
	if strings.Contains(logs.String(), "secret") || strings.Contains(logs.String(), acme) {
		t.Errorf("the log names a path or a token:\n%s", logs.String())
	}

	var info testio.SyncBuffer
	h = newHarness(t, withLogger(logTo(&info, slog.LevelInfo)))
	h.ok(200, nil, "GET", "/v1/schedules", nil)
	if strings.Contains(info.String(), "msg=request") {
		t.Errorf("a request line at info level:\n%s", info.String())
	}
}

// TestRefusalsLoggedAtInfo: a request refused by a quota or limit (429)
// is an info line naming the route, the tenant, the code and the limit;
// refusals of the same code and tenant within refusalLogEvery of a line
// are counted into the next line rather than each logged.
func TestRefusalsLoggedAtInfo(t *testing.T) {
	t.Parallel()
	refusedLine := regexp.MustCompile(`level=INFO msg="request refused by a limit" route="([^"]+)" code=(\w+) tenant=(\w+) message=("(?:[^"\\]|\\.)*"|\S+) refused=(\d+)`)
	refused := func(log string) [][]string { return refusedLine.FindAllStringSubmatch(log, -1) }

	var logs testio.SyncBuffer
	h := newHarness(t, withLogger(logTo(&logs, slog.LevelInfo)), withLimits(func(c *Config) { c.APIRate, c.APIBurst = 1, 1 }))
	clk := limitClock(h)
	h.ok(200, nil, "GET", "/v1/status", nil)
	for range 3 {
		h.fails(429, api.CodeRateLimited, "", "GET", "/v1/schedules", nil)
	}
	got := refused(logs.String())
	if len(got) != 1 || got[0][1] != "GET /v1/schedules" || got[0][2] != api.CodeRateLimited || got[0][3] != DefaultTenant ||
		!strings.Contains(got[0][4], "API request rate quota of 1 requests/s") || got[0][5] != "1" {
		t.Fatalf("three refusals in a row logged %q; want one line naming the quota\nlog:\n%s", got, logs.String())
	}
	clk.advance(refusalLogEvery)
	h.ok(200, nil, "GET", "/v1/status", nil)
	h.fails(429, api.CodeRateLimited, "", "GET", "/v1/status", nil)
	if got = refused(logs.String()); len(got) != 2 || got[1][5] != "3" {
		t.Fatalf("a refusal %v later logged %q; want a second line counting 3 refusals\nlog:\n%s", refusalLogEvery, got, logs.String())
	}

	var quota testio.SyncBuffer
	h = newHarness(t, withLogger(logTo(&quota, slog.LevelInfo)))
	if _, err := h.eng.Tenants.Update(t.Context(), record.DefaultTenant, engine.TenantPatch{ActiveSchedules: new(int64(1))}); err != nil {
		t.Fatal(err)
	}
	h.create(api.ScheduleRequest{Name: "first", Queue: "q", Every: "1m"})
	h.fails(429, api.CodeQuotaExceeded, "", "POST", "/v1/schedules", api.ScheduleRequest{Name: "second", Queue: "q", Every: "1m"})
	if got := refused(quota.String()); len(got) != 1 || got[0][1] != "POST /v1/schedules" || got[0][2] != api.CodeQuotaExceeded ||
		!strings.Contains(got[0][4], "active_schedules quota of 1") {
		t.Errorf("a create past the active_schedules quota logged %q; want a line naming the quota\nlog:\n%s", got, quota.String())
	}
}
