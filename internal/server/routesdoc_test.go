package server

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// routeMention is a route named in the docs: "`METHOD /path`", the path
// ending at a space, a backtick or a query ("`GET /v1/audit?since=T`").
var routeMention = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE)\\s+(/[^`?\\s]*)[^`]*`")

// siblingMention is "`/resume`" after "`POST /v1/schedules/{ref}/pause`"
// in one heading or cell: the same method and path, its last segment
// replaced.
var siblingMention = regexp.MustCompile("`(/[a-z-]+)`")

// normRoute spells a route with its path parameters unnamed, so that the
// docs' {name} and the table's {tenant} are the same route.
func normRoute(method, path string) string {
	return method + " " + regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "{}")
}

// documentedRoutes are the /v1 routes docs/api.md documents: those named in
// a "###" heading or in the first cell of a table row, a "`/x`" after a
// route there naming its sibling.
func documentedRoutes(doc string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		var where string
		switch {
		case strings.HasPrefix(line, "### "):
			where = line
		case strings.HasPrefix(line, "| "):
			where = strings.Split(line, " | ")[0]
		default:
			continue
		}
		// Each full mention and the sibling mentions after it, in order.
		var method, path string
		i := 0
		for i < len(where) {
			if m := routeMention.FindStringSubmatchIndex(where[i:]); m != nil && m[0] == 0 {
				method, path = where[i+m[2]:i+m[3]], where[i+m[4]:i+m[5]]
				i += m[1]
			} else if m := siblingMention.FindStringSubmatchIndex(where[i:]); m != nil && m[0] == 0 && path != "" {
				path = path[:strings.LastIndex(path, "/")] + where[i+m[2]:i+m[3]]
				i += m[1]
			} else {
				i++
				continue
			}
			if strings.HasPrefix(path, "/v1/") {
				out[normRoute(method, path)] = true
			}
		}
	}
	return out
}

// TestRoutesDocumented: every route of the server's route table is
// documented in docs/api.md, with its method and path, in a heading or a
// table row; and every "`METHOD /v1/...`" that docs/api.md or
// docs/security.md names anywhere is a route of the table.
func TestRoutesDocumented(t *testing.T) {
	t.Parallel()
	table := map[string]bool{}
	for _, rt := range (&Server{}).routeTable() {
		table[normRoute(rt.method, rt.path)] = true
	}
	if len(table) < 30 {
		t.Fatalf("the route table has %d routes; routeTable no longer lists them", len(table))
	}
	b, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedRoutes(string(b))
	for _, r := range slices.Sorted(maps.Keys(table)) {
		if !documented[r] {
			t.Errorf("docs/api.md documents no route %s (in a ### heading or a table row's first cell)", r)
		}
	}
	for _, doc := range []string{"../../docs/api.md", "../../docs/security.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range routeMention.FindAllStringSubmatch(string(b), -1) {
			if r := normRoute(m[1], m[2]); strings.HasPrefix(m[2], "/v1/") && !table[r] {
				t.Errorf("%s names %s, which the server does not serve", doc, r)
			}
		}
	}
}
