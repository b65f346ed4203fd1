package daemon

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/server"
)

// TestLimitsDocumented: every limit flag of schedd (--max-…, --api-…,
// --auth-…) has a row in the limits tables of docs/api.md and
// docs/security.md, every flag those tables name exists, and each row
// states the default that the code applies when the flag is not given.
func TestLimitsDocumented(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "HOME", "/home/u")
	var help bytes.Buffer
	_, _ = ParseConfig([]string{"--help"}, env, "v", &help) // its error says help was printed
	if !strings.Contains(help.String(), "--max-connections") {
		t.Fatalf("schedd --help printed no flags:\n%s", help.String())
	}
	cfg, err := ParseConfig(nil, env, "v", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// What each limit is when its flag is not given, from the code that
	// applies it.
	defaults := map[string]float64{
		"max-connections":               float64(cfg.MaxConnections),
		"max-connections-per-client":    float64(cfg.connectionsPerClient()),
		"max-waiting-claims":            float64(cfg.MaxWaitingClaims),
		"max-waiting-claims-per-tenant": float64(max(1, cfg.MaxWaitingClaims/server.WaitingClaimsShare)),
		"api-rate":                      server.DefaultAPIRate,
		"api-burst":                     server.DefaultAPIBurst,
		"auth-failure-rate":             server.DefaultAuthFailureRate,
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z][a-z-]*)`).FindAllStringSubmatch(help.String(), -1) {
		flags[m[1]] = true
	}
	for f := range flags {
		if strings.HasPrefix(f, "max-") || strings.HasPrefix(f, "api-") || strings.HasPrefix(f, "auth-") {
			if _, ok := defaults[f]; !ok {
				t.Errorf("--%s looks like a limit: give it a default here and a row in the docs' limits tables", f)
			}
		}
	}
	for doc, cols := range map[string]struct{ flag, def int }{
		"../../docs/api.md":      {1, 2}, // | cap | flag | default | past it |
		"../../docs/security.md": {0, 1}, // | limit (flags) | default | when reached |
	} {
		rows := limitRows(t, doc)
		seen := map[string]bool{}
		for _, cells := range rows {
			if len(cells) <= max(cols.flag, cols.def) {
				continue
			}
			named := regexp.MustCompile("`--([a-z-]+)`").FindAllStringSubmatch(cells[cols.flag], -1)
			for i, m := range named {
				f := m[1]
				if !flags[f] {
					t.Errorf("%s: the limits table names --%s, which schedd does not have", doc, f)
					continue
				}
				want, ok := defaults[f]
				if !ok {
					continue
				}
				seen[f] = true
				// A row naming two flags states their defaults in order
				// ("1,000 / a quarter of the total (250)").
				cell := cells[cols.def]
				if parts := strings.Split(cell, " / "); len(parts) == len(named) {
					cell = parts[i]
				}
				if !statesNumber(cell, want) {
					t.Errorf("%s: --%s's default is %v in the code, but its row says %q", doc, f, want, cell)
				}
			}
		}
		for f := range defaults {
			if !seen[f] {
				t.Errorf("%s: no row of the limits table names --%s", doc, f)
			}
		}
	}
}

// limitRows returns the cells of every table row under doc's "## Limits"
// heading.
func limitRows(t *testing.T, doc string) [][]string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "## Limits":
			in = true
		case strings.HasPrefix(line, "## "):
			in = false
		case in && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "|---"):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			rows = append(rows, cells)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table under \"## Limits\"", doc)
	}
	return rows
}

// statesNumber reports whether text holds n as a number of its own,
// written with or without thousands separators (1000, 1,000).
func statesNumber(text string, n float64) bool {
	for _, m := range regexp.MustCompile(`\d[\d,]*(\.\d+)?`).FindAllString(text, -1) {
		if v, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64); err == nil && v == n {
			return true
		}
	}
	return false
}
