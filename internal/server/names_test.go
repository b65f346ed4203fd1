package server

import (
	"net/url"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
)

// TestNameAndAnchorRefusals: over HTTP, a name shaped like an id, made
// only of dots, or carrying an invisible or bidirectional formatting
// character is a 400 naming the field name, on create and on update; so is
// an every schedule anchored past its last possible firing (field anchor).
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
