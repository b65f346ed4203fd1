package simulate_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/daemon"
	"github.com/sched-dev/sched/internal/testdaemon"
)

// startSchedd runs a real schedd in this process on a SQLite file and a
// Unix socket, and returns its address.
func startSchedd(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "simcli") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	addr := "unix:" + filepath.Join(dir, "s.sock")
	noEnv := func(string) (string, bool) { return "", false }
	cfg, err := daemon.ParseConfig([]string{"--store", "sqlite:" + filepath.Join(dir, "s.db"), "--listen", addr}, noEnv, "test", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() { defer close(done); runErr = daemon.Run(ctx, cfg, daemon.Options{Version: "test", Env: noEnv}) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if runErr != nil {
			t.Errorf("schedd: %v", runErr)
		}
	})
	c, err := client.New(addr, "")
	if err != nil {
		t.Fatal(err)
	}
	testdaemon.WaitServing(t, testdaemon.Proc{Name: "schedd", Done: done}, 10*time.Second, func() error {
		return c.Ready(context.Background())
	})
	return addr
}

// schedctl runs schedctl with args against addr and returns its exit
// status, stdout and stderr.
func schedctl(t *testing.T, addr string, args ...string) (int, string, string) {
	t.Helper()
	f, out, errOut := clitest.NewFactory(false)
	f.LookupEnv = func(k string) (string, bool) {
		if k == "SCHED_ADDR" {
			return addr, true
		}
		return "", false
	}
	code := cli.Run(f, args)
	return code, out.String(), errOut.String()
}

const file = `schedules:
  - name: billing-sync
    queue: billing
    cron: "*/5 * * * *"
    time_zone: Europe/Berlin
    misfire_policy: catch_up:3
    payload: {account: all}
  - name: cache-warm
    queue: web
    every: 1m
    misfire_policy: skip
  - name: hourly-report
    queue: reports
    cron: "0 * * * *"
    time_zone: UTC
`

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "schedules.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var outage = []string{"--from", "2027-03-15T09:30:00Z", "--to", "2027-03-15T10:30:00Z",
	"--outage", "2027-03-15T09:55:00Z/2027-03-15T10:05:00Z"}

// TestWhatIfThroughSchedd: schedctl simulate -f asks a real schedd, which
// runs the simulation on a private store: the table and the JSON report
// the outage's misses, lateness and catch-up, and schedd's own store
// holds no schedule afterwards.
func TestWhatIfThroughSchedd(t *testing.T) {
	addr := startSchedd(t)
	path := writeFile(t, file)

	code, out, errOut := schedctl(t, addr, append([]string{"simulate", "-f", path}, outage...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	clitest.Golden(t, "whatif-outage.golden", out)

	code, out, _ = schedctl(t, addr, append([]string{"simulate", "-o", "json", "-f", path}, outage...)...)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var res api.SimulateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := res.Summary.Outcomes
	if res.Summary.Firings != 75 || got[api.SimMissed] != 8 || got[api.SimCaughtUp] != 2 || got[api.SimLate] != 3 || got[api.SimOnTime] != 62 {
		t.Errorf("summary %+v", res.Summary)
	}
	if res.Summary.Lag.Max != (10 * time.Minute).Milliseconds() {
		t.Errorf("max lag %d ms, want the outage's 10m", res.Summary.Lag.Max)
	}

	code, out, _ = schedctl(t, addr, "list", "-o", "json")
	if code != 0 || strings.Contains(out, "billing-sync") {
		t.Errorf("schedd's own store changed: exit %d\n%s", code, out)
	}
}

// TestWhatIfRefusals: bad input exits 2 with one line naming the bad
// part, whether schedctl sees it (flags, the file) or schedd does (a
// limit).
func TestWhatIfRefusals(t *testing.T) {
	addr := startSchedd(t)
	path := writeFile(t, file)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"simulate", "--from", "2027-03-15T09:30:00Z", "--to", "2027-03-15T10:30:00Z"}, "-f FILE is required"},
		{"no range", []string{"simulate", "-f", path}, "--from and --to are required"},
		{"bad file", []string{"simulate", "-f", writeFile(t, "schedules:\n  - name: a\n    queue: q\n    every: 1h\n    misfire: skip\n"),
			"--from", "2027-03-15T09:30:00Z", "--to", "2027-03-15T10:30:00Z"}, `unknown field "misfire"`},
		{"bad outage", []string{"simulate", "-f", path, "--from", "2027-03-15T09:30:00Z", "--to", "2027-03-15T10:30:00Z",
			"--outage", "2027-03-15T09:55:00Z"}, "want START/END"},
		{"range over the limit", []string{"simulate", "-f", path, "--from", "2027-03-15T00:00:00Z", "--to", "2027-05-15T00:00:00Z"},
			"to: the range is 1464h0m0s, over the limit of 744h0m0s"},
		{"unknown node", []string{"simulate", "-f", path, "--from", "2027-03-15T09:30:00Z", "--to", "2027-03-15T10:30:00Z",
			"--node-down", "node-4@2027-03-15T09:55:00Z/2027-03-15T10:05:00Z", "--nodes", "3"}, `"node-4" is not a node`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := schedctl(t, addr, tc.args...)
			if code != cmdutil.ExitInvalid || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, out, errOut, cmdutil.ExitInvalid, tc.want)
			}
		})
	}
}
