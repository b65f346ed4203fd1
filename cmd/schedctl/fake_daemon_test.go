package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

// These tests run the real binary against a stand-in for schedd on a real
// Unix socket: an HTTP server answering the routes with the documented
// JSON. They check what only the whole process shows (exit statuses, which
// stream says what, signals), not schedd's behaviour.

// fakeDaemon serves routes ("METHOD /path" -> status and body) on a socket
// in a private directory, and records the queries it got.
type fakeDaemon struct {
	sock    string
	mu      sync.Mutex
	routes  map[string]fakeAnswer
	queries []string
}

type fakeAnswer struct {
	status int
	body   any
}

func newFakeDaemon(t *testing.T) *fakeDaemon {
	t.Helper()
	// Short: socket paths are limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &fakeDaemon{sock: filepath.Join(dir, "s.sock"), routes: map[string]fakeAnswer{}}
	ln, err := net.Listen("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(d.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return d
}

func (d *fakeDaemon) on(method, path string, status int, body any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.routes[method+" "+path] = fakeAnswer{status, body}
}

func (d *fakeDaemon) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.queries = append(d.queries, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery)
	a, ok := d.routes[r.Method+" "+r.URL.EscapedPath()]
	d.mu.Unlock()
	if !ok {
		a = fakeAnswer{404, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeNotFound, Message: "not found: " + r.URL.Path}}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	json.NewEncoder(w).Encode(a.body)
}

func (d *fakeDaemon) env() []string { return []string{"SCHED_ADDR=unix:" + d.sock, "SCHED_TOKEN="} }

var nowUTC = time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)

// TestDiffExitStatusesThroughTheBinary: differences exit 1 with the plan
// on stdout and nothing on stderr; an error other than invalid input
// exits 3 with one line; no differences exit 0.
func TestDiffExitStatusesThroughTheBinary(t *testing.T) {
	d := newFakeDaemon(t) // knows no schedule: every one would be created
	r := run(t, d.env(), "diff", "-f", "testdata/schedules/good.yaml")
	if r.code != 1 || r.stderr != "" || !strings.Contains(r.stdout, "+ create nightly-report") || !strings.Contains(r.stdout, "4 to create") {
		t.Errorf("differences: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	d.on("GET", "/v1/schedules/nightly-report", 500, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeInternal, Message: "disk on fire"}})
	r = run(t, d.env(), "diff", "-f", "testdata/schedules/good.yaml")
	if r.code != 3 || r.stdout != "" || !strings.Contains(r.stderr, "disk on fire") {
		t.Errorf("schedd failing: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	oneLine(t, r)
	r = run(t, noDaemon(t), "diff", "-f", "testdata/schedules/good.yaml")
	if r.code != 3 || !strings.Contains(r.stderr, "start it with: schedd") {
		t.Errorf("no daemon: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, d.env(), "diff", "-f", "testdata/schedules/bad-cron.yaml")
	if r.code != 2 {
		t.Errorf("invalid file: exit %d, stderr %q", r.code, r.stderr)
	}
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	os.WriteFile(empty, []byte("schedules: []\n"), 0o600)
	r = run(t, d.env(), "diff", "-f", empty)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "No changes") || r.stderr != "" {
		t.Errorf("no differences: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestReconcileExitStatusesThroughTheBinary: reconcile's statuses are
// diff's, so a cron job tells a finding (1) from an audit that could not
// run (3): schedd failing or unreachable is 3 with one line, bad input 2.
func TestReconcileExitStatusesThroughTheBinary(t *testing.T) {
	d := newFakeDaemon(t)
	d.on("GET", "/v1/reconcile", 500, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeInternal, Message: "disk on fire"}})
	r := run(t, d.env(), "reconcile")
	if r.code != 3 || r.stdout != "" || !strings.Contains(r.stderr, "disk on fire") {
		t.Errorf("schedd failing: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	oneLine(t, r)
	r = run(t, noDaemon(t), "reconcile")
	if r.code != 3 || !strings.Contains(r.stderr, "start it with: schedd") {
		t.Errorf("no daemon: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, noDaemon(t), "reconcile", "--from", "yesterday")
	if r.code != 2 || !strings.Contains(r.stderr, "--from") {
		t.Errorf("bad flag: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestFooterGoesToStderrOffATerminal: piped, the header and the rows are
// on stdout (--no-headers: the rows alone) and the "more exist" footer on
// stderr; the page token reaches schedd as page=, newest first as
// order=desc.
func TestFooterGoesToStderrOffATerminal(t *testing.T) {
	d := newFakeDaemon(t)
	occ := api.Occurrence{OccurrenceID: "occ_1", ScheduleID: "sch_1", ScheduledFor: nowUTC, AvailableAt: nowUTC, State: "SUCCEEDED", Queue: "q", Due: true}
	d.on("GET", "/v1/occurrences", 200, api.OccurrenceList{Occurrences: []api.Occurrence{occ}, NextPage: "tok2"})
	r := run(t, d.env(), "occurrences", "--schedule", "n", "--reverse", "--limit", "1")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 2 || !strings.HasPrefix(r.stdout, "OCCURRENCE\t") || !strings.Contains(r.stdout, "\nocc_1\t") {
		t.Errorf("stdout %q (exit %d)", r.stdout, r.code)
	}
	if r := run(t, d.env(), "--no-headers", "occurrences", "--schedule", "n", "--reverse", "--limit", "1"); r.code != 0 ||
		strings.Count(r.stdout, "\n") != 1 || !strings.HasPrefix(r.stdout, "occ_1\t") {
		t.Errorf("--no-headers: stdout %q (exit %d)", r.stdout, r.code)
	}
	if r.stderr != "1 occurrence shown; more exist. Next page: --page tok2 (same flags), or --all for every page.\n" {
		t.Errorf("stderr %q", r.stderr)
	}
	r = run(t, d.env(), "occurrences", "--schedule", "n", "--reverse", "--page", "tok2", "-o", "json")
	// JSON stays the array it always was; the footer, with the token,
	// goes to stderr.
	var rows []api.Occurrence
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rows) != nil || len(rows) != 1 || !strings.Contains(r.stderr, "--page tok2") {
		t.Errorf("JSON: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if q := d.queries[0]; q != "GET /v1/occurrences?limit=1&order=desc&schedule=n" {
		t.Errorf("first query %q", q)
	}
	if q := d.queries[2]; q != "GET /v1/occurrences?order=desc&page=tok2&schedule=n" { // [1] is the --no-headers run
		t.Errorf("second query %q", q)
	}
}

func TestTriggerThroughTheBinary(t *testing.T) {
	d := newFakeDaemon(t)
	occ := api.Occurrence{OccurrenceID: "occ_zabc", ScheduleID: "sch_1", ScheduledFor: nowUTC, AvailableAt: nowUTC, State: "ENQUEUED", Queue: "q", Manual: true}
	d.on("POST", "/v1/schedules/nightly/trigger", 201, api.TriggerResult{Occurrence: occ, Created: true})
	r := run(t, d.env(), "trigger", "nightly", "--idempotency-key", "k1")
	if want := "triggered nightly: occurrence occ_zabc, scheduled for 2027-03-13T12:00:00Z, manual, ENQUEUED\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q; stderr %q", r.code, r.stdout, want, r.stderr)
	}
	d.on("POST", "/v1/schedules/nightly/trigger", 200, api.TriggerResult{Occurrence: occ})
	r = run(t, d.env(), "trigger", "nightly", "--idempotency-key", "k1")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "nightly already triggered with this key: occurrence occ_zabc") {
		t.Errorf("again: exit %d, stdout %q", r.code, r.stdout)
	}
}

// TestWatchStopsOnSIGTERM: status -w keeps polling until SIGTERM, then
// exits 0.
func TestWatchStopsOnSIGTERM(t *testing.T) {
	d := newFakeDaemon(t)
	d.on("GET", "/v1/status", 200, api.Status{Version: "1.0", NodeID: "n1", Store: "sqlite", Shards: 1, Now: nowUTC, StatsAt: nowUTC})
	cmd := exec.Command(schedctl, "status", "-w", "--interval", "1s")
	cmd.Env = append(os.Environ(), d.env()...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The first frame is drawn: the watch is running.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "version\t1.0\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = bufio.NewReader(stdout).WriteTo(new(bytes.Buffer)) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; stderr %q", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q", stderr.String())
	}
}
