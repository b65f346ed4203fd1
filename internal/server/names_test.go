package server

import (
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// TestNameAndAnchorRefusals: over HTTP, a name shaped like an id, made
// only of dots, or carrying a control, invisible or formatting character,
// a line separator or a private-use character is a 400 naming the field
// name, on create and on update; so is a queue in upper case or of dots
// (field queue), and an every schedule anchored past its last possible
// firing (field anchor).
// Nothing changes, and a schedule that cannot be created cannot be reached
// by another's reference.
func TestNameAndAnchorRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	existing := h.create(everyMinute("existing"))
	before := h.snapshot()

	named := func(n string) api.ScheduleRequest { return everyMinute(n) }
	cases := []struct {
		name        string
		body        api.ScheduleRequest
		field, text string // text: a part of the message
	}{
		{"id of the existing schedule", named(existing.ScheduleID), "name", "the prefix of an id"},
		{"upper case id prefix", named("SCH_x"), "name", "the prefix of an id"},
		{"occurrence prefix", named("occ_x"), "name", "the prefix of an id"},
		{"attempt prefix", named("att_x"), "name", "the prefix of an id"},
		{"dot", named("."), "name", "only dots"},
		{"dot dot", named(".."), "name", "only dots"},
		{"C1 control", named("a\u009bb"), "name", "control character"},
		{"right-to-left override", named("report\u202etxt.exe"), "name", "U+202E"},
		{"zero width space", named("exist\u200bing"), "name", "U+200B"},
		{"byte-order mark", named("\ufeffexisting"), "name", "U+FEFF"},
		{"invisible times", named("exist\u2062ing"), "name", "U+2062"},
		{"mongolian vowel separator", named("exist\u180eing"), "name", "U+180E"},
		{"combining grapheme joiner", named("exist\u034fing"), "name", "U+034F"},
		{"variation selector 16", named("existing\ufe0f"), "name", "U+FE0F"},
		{"tag character", named("existing\U000e0041"), "name", "U+E0041"},
		{"hangul filler", named("\u3164"), "name", "U+3164"},
		{"line separator inside", named("exist\u2028ing"), "name", "U+2028"},
		{"paragraph separator inside", named("exist\u2029ing"), "name", "U+2029"},
		{"private use", named("exist\ue000ing"), "name", "U+E000"},
		{"three dots", named("..."), "name", "only dots"},
		{"upper case queue", api.ScheduleRequest{Name: "upper", Queue: "Emails", Every: "1m"}, "queue", `"Emails": use lowercase letters (emails)`},
		{"queue of dots", api.ScheduleRequest{Name: "dots", Queue: "..", Every: "1m"}, "queue", "only dots"},
		{"anchor past the last firing", api.ScheduleRequest{Name: "late", Queue: "q", Every: "87600h", Anchor: "9999-12-31T23:59:59Z"},
			"anchor", "after 9999-12-31T09:59:59Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hh := *h
			hh.t = t
			for _, where := range []struct{ method, path string }{
				{"POST", "/v1/schedules"},
				{"PUT", "/v1/schedules/existing"},
			} {
				e := hh.fails(400, api.CodeInvalidArgument, tc.field, where.method, where.path, tc.body)
				if !strings.Contains(e.Message, tc.text) {
					t.Errorf("%s %s: message %q, want it to contain %q", where.method, where.path, e.Message, tc.text)
				}
			}
		})
	}
	if after := h.snapshot(); after != before {
		t.Fatalf("refused input changed the store:\nbefore %s\nafter  %s", before, after)
	}

	// Names that were valid stay valid, and are reached by name.
	for _, name := range []string{"nightly-report", "rapport-quotidien-été", "reports/eu", "v1..2", ".hidden"} {
		c := h.create(everyMinute(name))
		var got api.Schedule
		h.ok(200, &got, "GET", "/v1/schedules/"+url.PathEscape(name), nil)
		if got.ScheduleID != c.ScheduleID || got.Name != name {
			t.Fatalf("get %q: %+v, want %s", name, got, c.ScheduleID)
		}
	}
}

// TestTenantAndTokenNameRefusals: a new tenant named only with dots, in
// upper case or with an invisible character is a 400 naming the field
// tenant, and a new token so named a 400 naming the field name; nothing is
// created. A tenant stored before the rule, in upper case, stays
// reachable: read, given a token, disabled; and a claim may still name a
// queue in upper case.
func TestTenantAndTokenNameRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	h.newTenant("acme")
	var before api.TenantList
	h.ok(200, &before, "GET", "/v1/tenants", nil)

	for _, tc := range []struct{ name, text string }{
		{".", "only dots"},
		{"..", "only dots"},
		{"...", "only dots"},
		{"Acme", `"Acme": use lowercase letters (acme)`},
		{"ACME", `"ACME": use lowercase letters (acme)`},
		{"ac\u2062me", "U+2062"},
		{"acme\u180e", "U+180E"},
	} {
		for _, to := range []struct {
			what, field, path string
			body              any
		}{
			{"tenant", "tenant", "/v1/tenants", api.TenantRequest{Name: tc.name}},
			{"token", "name", "/v1/tenants/acme/tokens", api.TokenRequest{Name: tc.name}},
		} {
			t.Run(to.what+" "+tc.name, func(t *testing.T) {
				hh := *h
				hh.t = t
				e := hh.fails(400, api.CodeInvalidArgument, to.field, "POST", to.path, to.body)
				if !strings.Contains(e.Message, tc.text) {
					t.Errorf("message %q, want it to contain %q", e.Message, tc.text)
				}
			})
		}
	}
	var after api.TenantList
	h.ok(200, &after, "GET", "/v1/tenants", nil)
	if len(after.Tenants) != len(before.Tenants) {
		t.Fatalf("refused names changed the tenants: %+v, then %+v", before.Tenants, after.Tenants)
	}
	var toks api.TokenList
	if h.ok(200, &toks, "GET", "/v1/tenants/acme/tokens", nil); len(toks.Tokens) != 1 {
		t.Fatalf("refused names made tokens: %+v", toks.Tokens)
	}

	// A tenant stored before the rule.
	now := h.clk.Now()
	legacy := record.Tenant{ID: "Legacy", State: record.TenantActive, Weight: 1, CreatedAt: now, UpdatedAt: now, Version: 1}
	if err := store.InTx(t.Context(), h.st, func(tx store.Tx) error { return tx.InsertTenant(t.Context(), &legacy) }); err != nil {
		t.Fatal(err)
	}
	var got api.Tenant
	if h.ok(200, &got, "GET", "/v1/tenants/Legacy", nil); got.Name != "Legacy" {
		t.Fatalf("get Legacy: %+v", got)
	}
	var tok api.TokenCreated
	h.ok(201, &tok, "POST", "/v1/tenants/Legacy/tokens", api.TokenRequest{Name: "ci"})
	h.ok(200, nil, "POST", "/v1/tenants/Legacy/disable", nil)
	h.ok(200, nil, "POST", "/v1/claims", api.ClaimRequest{Queue: "Emails", WorkerID: "w"})
}

// TestUpdateKeepsNamesStoredBeforeTheRule: a schedule stored before the
// rule of names, with a queue in upper case and a name holding a
// character the rule now refuses (an emoji's zero-width joiner), can still
// be updated when the update keeps them: its workers claim that queue,
// and a full replacement must not force a move to another. A name or a
// queue the update changes follows the rule.
func TestUpdateKeepsNamesStoredBeforeTheRule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.create(everyMinute("legacy"))
	const name, queue = "deploy \U0001F468\u200d\U0001F4BB", "Emails"
	db, err := sql.Open("sqlite", h.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), "UPDATE schedules SET name = ?, queue = ? WHERE schedule_id = ?", name, queue, c.ScheduleID); err != nil {
		t.Fatal(err)
	}
	kept := api.ScheduleRequest{Name: name, Queue: queue, Every: "2m"}
	var got api.ChangeResult
	h.ok(200, &got, "PUT", "/v1/schedules/"+c.ScheduleID, kept)
	if got.Schedule.Queue != queue || got.Schedule.Name != name || got.Schedule.Version != 2 {
		t.Fatalf("update keeping the stored name and queue: %+v", got.Schedule)
	}
	h.fails(400, api.CodeInvalidArgument, "queue", "PUT", "/v1/schedules/"+c.ScheduleID, api.ScheduleRequest{Name: name, Queue: "Other", Every: "2m"})
	h.fails(400, api.CodeInvalidArgument, "name", "PUT", "/v1/schedules/"+c.ScheduleID, api.ScheduleRequest{Name: "new\u200dname", Queue: queue, Every: "2m"})
}
