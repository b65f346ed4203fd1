package server

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
)

// documentedSeries is one row of docs/api.md's table of metrics (under
// "### `GET /metrics`"): a row may name several series of one type and
// labels.
type documentedSeries struct {
	kind   string          // counter, gauge, histogram
	labels map[string]bool // label names; values in parentheses are left out
}

var (
	seriesName  = regexp.MustCompile("`(sched_[a-z_]+)`")
	backticked  = regexp.MustCompile("`([a-z_]+)`")
	parentheses = regexp.MustCompile(`\([^)]*\)`)
)

// documentedMetrics reads docs/api.md's table of metrics, by series name.
func documentedMetrics(t *testing.T) map[string]documentedSeries {
	t.Helper()
	b, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "### `GET /metrics`")
	if !ok {
		t.Fatal("docs/api.md: no section \"### `GET /metrics`\"")
	}
	section, _, _ = strings.Cut(section, "\n### ")
	out := map[string]documentedSeries{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `sched_") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") // no cell of the table holds a |
		if len(cells) != 4 {
			t.Fatalf("docs/api.md: a row of metrics with %d cells: %s", len(cells), line)
		}
		d := documentedSeries{kind: strings.TrimSpace(cells[1]), labels: map[string]bool{}}
		for _, m := range backticked.FindAllStringSubmatch(parentheses.ReplaceAllString(cells[2], ""), -1) {
			d.labels[m[1]] = true
		}
		for _, m := range seriesName.FindAllStringSubmatch(cells[0], -1) {
			if _, dup := out[m[1]]; dup {
				t.Errorf("docs/api.md documents %s twice", m[1])
			}
			out[m[1]] = d
		}
	}
	if len(out) < 40 {
		t.Fatalf("docs/api.md's table of metrics has %d series; is it still a table under \"### `GET /metrics`\"?", len(out))
	}
	return out
}

// appearLater are the documented series that a fresh node cannot export,
// because their label values are known only when their first event comes
// (metrics.New says which), and what makes them appear.
var appearLater = map[string]string{
	"sched_shard_epoch":                   "a shard lease this node holds",
	"sched_queue_ready":                   "a queue with an open or DEAD occurrence",
	"sched_queue_oldest_ready_seconds":    "a queue with an open or DEAD occurrence",
	"sched_http_requests_total":           "a request (its route and status code)",
	"sched_http_request_duration_seconds": "a request (its route)",
	// Set by a retention pass of a tenant with a retention; the harness
	// configures none, so this test never sees it.
	"sched_retention_horizon_timestamp_seconds": "a retention pass that sets a tenant's horizon",
}

// TestMetricsDocumented scrapes a fresh daemon's /metrics and checks it
// against docs/api.md's table: every series the table lists is there from
// the start, at 0 where it counts (but those of appearLater); every sched_
// series scraped is in the table, with its type and label names. Then,
// after a schedule's firings, a claim and a request, the series of
// appearLater are there too, with their documented labels.
func TestMetricsDocumented(t *testing.T) {
	docs := documentedMetrics(t)
	for name := range appearLater {
		if _, ok := docs[name]; !ok {
			t.Errorf("%s is expected to appear later, and docs/api.md does not document it", name)
		}
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T) *harness
	}{
		{"sqlite", func(t *testing.T) *harness { return newHarness(t) }},
		{"postgres", func(t *testing.T) *harness { return newPGHarness(t, pgtest.DSN(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.open(t)
			scrape := func() map[string]*dto.MetricFamily {
				t.Helper()
				code, raw := h.do("GET", "/metrics", nil)
				if code != 200 {
					t.Fatalf("GET /metrics: %d %s", code, raw)
				}
				return parseMetrics(t, raw)
			}
			fresh := scrape()
			for _, name := range slices.Sorted(maps.Keys(docs)) {
				if _, later := appearLater[name]; !later && fresh[name] == nil {
					t.Errorf("a fresh node does not export %s, which docs/api.md lists", name)
				}
			}
			checkAgainstDocs(t, "a fresh node", fresh, docs)
			for name, f := range fresh {
				if !strings.HasPrefix(name, "sched_") || f.GetType() != dto.MetricType_COUNTER && f.GetType() != dto.MetricType_HISTOGRAM {
					continue
				}
				for _, m := range f.GetMetric() {
					if m.GetCounter().GetValue() != 0 || m.GetHistogram().GetSampleCount() != 0 {
						t.Errorf("%s %v on a fresh node, want 0", name, m)
					}
				}
			}

			// A queue with ready occurrences, a shard lease, requests; past
			// the gauges' cache of the fresh (empty) snapshot.
			h.create(everySecond("tick"))
			h.plan(0)
			h.clk.Advance(10 * time.Second)
			later := scrape()
			for name, why := range appearLater {
				if later[name] == nil && name != "sched_retention_horizon_timestamp_seconds" {
					t.Errorf("%s not exported after %s", name, why)
				}
			}
			checkAgainstDocs(t, "after a schedule's firings", later, docs)
		})
	}
}

// checkAgainstDocs checks every sched_ family of fams against the table:
// documented, of its documented type, with its documented label names.
func checkAgainstDocs(t *testing.T, when string, fams map[string]*dto.MetricFamily, docs map[string]documentedSeries) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		if !strings.HasPrefix(name, "sched_") {
			continue
		}
		f := fams[name]
		d, ok := docs[name]
		if !ok {
			t.Errorf("%s: /metrics exports %s, which docs/api.md's table does not list", when, name)
			continue
		}
		if kind := strings.ToLower(f.GetType().String()); kind != d.kind {
			t.Errorf("%s: %s is a %s, docs/api.md says %s", when, name, kind, d.kind)
		}
		got := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				got[l.GetName()] = true
			}
		}
		if len(f.GetMetric()) > 0 && !maps.Equal(got, d.labels) {
			t.Errorf("%s: %s has labels %v, docs/api.md says %v", when, name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(d.labels)))
		}
	}
}
