package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/jsonkeys"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// TestStatusJSONFields pins the field names of status -o json, the API's
// status object as is: scripts and dashboards read them.
func TestStatusJSONFields(t *testing.T) {
	f, out, _ := testFactory(false)
	s := seeded()
	if err := statusRun(&StatusOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: true}); err != nil {
		t.Fatal(err)
	}
	paths, err := jsonkeys.Paths(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "status-json-keys.golden", strings.Join(paths, "\n")+"\n")

	// As is: what schedd said, nothing added or lost.
	var got api.Status
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := sampleStatus(); !reflect.DeepEqual(got, want) {
		t.Errorf("status JSON is not the API's status\n got %+v\nwant %+v", got, want)
	}
}

// TestStatusTable: the whole status on a terminal and off one, golden.
func TestStatusTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		st   func() api.Status
	}{
		{"status-tty.golden", true, sampleStatus},
		{"status-plain.golden", false, sampleStatus},
		// A daemon with nothing to do: no nodes reported, no samples, no
		// backlog, no queues.
		{"status-idle-tty.golden", true, func() api.Status {
			return api.Status{Version: "1.0", TZVersion: "2026a", NodeID: "n1", Store: "sqlite", Shards: 1, ShardsOwned: 1,
				Now: fixedNow, StatsAt: fixedNow, DueBacklog: backlog(fixedNow, nil)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, out, _ := testFactory(tc.tty)
			s := newStub()
			st := tc.st()
			s.status = &st
			if err := statusRun(&StatusOptions{IO: f, API: apiOf(s), Ctx: bg}); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), "\x1b[") {
				t.Errorf("escape codes in %q", out)
			}
			golden(t, tc.name, out.String())
		})
	}
}

func TestSparkline(t *testing.T) {
	for _, tc := range []struct {
		counts []int64
		want   string
	}{
		{nil, ""},
		{[]int64{0, 0, 0}, "···"},
		{[]int64{1}, "█"},
		{[]int64{0, 1, 8}, "·▁█"},
		{[]int64{1, 100}, "▁█"}, // one firing in a quiet minute still shows
		{[]int64{4, 8, 7, 2}, "▄█▇▂"},
	} {
		if got := sparkline(tc.counts); got != tc.want {
			t.Errorf("sparkline(%v) = %q, want %q", tc.counts, got, tc.want)
		}
	}
}

// TestShortDurations: lags read at a glance, whatever precision schedd
// sends.
func TestShortDurations(t *testing.T) {
	for in, want := range map[string]string{
		"850.123456ms": "850ms", "-59.9876s": "-1m0s", "-59.94s": "-59.9s", "1.25s": "1.3s", "84.0012s": "1m24s",
		"3m0.4s": "3m0s", "26h3m31s": "26h4m", "0s": "0s", "500us": "1ms", "not a duration": "not a duration",
	} {
		if got := shortDur(&in); got != want {
			t.Errorf("shortDur(%q) = %q, want %q", in, got, want)
		}
	}
	if got := shortDur(nil); got != "-" {
		t.Errorf("shortDur(nil) = %q", got)
	}
}
