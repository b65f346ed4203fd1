package importcmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/store"
)

// result is import's -o json summary.
type result struct {
	Created, Existing, Failed, Items, Skipped int
	Seconds                                   float64
	PerSecond                                 float64 `json:"per_second"`
	Errors                                    []struct {
		Line    int
		Code    string
		Field   string
		Message string
	}
}

func newDaemon(t *testing.T) *clidaemon.Daemon {
	t.Helper()
	return clidaemon.New(t, clidaemon.Config{Start: clitest.FixedNow, Shards: 1})
}

// run runs schedctl import -o json with args against d and decodes its
// summary.
func run(t *testing.T, d *clidaemon.Daemon, wantCode int, args ...string) (result, string) {
	t.Helper()
	code, out, errOut := d.Run(t, false, append([]string{"import", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("import %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, wantCode, out, errOut)
	}
	var r result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("import %v: not a JSON summary: %v\n%s", args, err, out)
	}
	if r.Items != r.Created+r.Existing+r.Failed {
		t.Fatalf("summary %+v: items is not created+existing+failed", r)
	}
	return r, errOut
}

// stored counts the daemon's schedules.
func stored(t *testing.T, d *clidaemon.Daemon) int {
	t.Helper()
	n := 0
	p := store.ListSchedulesParams{TenantID: "default", Limit: store.MaxListLimit}
	for {
		page, err := d.Store.ListSchedules(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page)
		if len(page) < p.Limit {
			return n
		}
		p.After = page[len(page)-1].ScheduleID
	}
}

// ndjsonLines is n schedule requests, one a line; bad maps a line number
// (1-based) to the text to put there instead.
func ndjsonLines(n int, bad map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := bad[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, `{"name":"s-%05d","queue":"q","cron":"%d * * * *","time_zone":"UTC","payload":{"n":%d}}`+"\n", i, i%60, i)
	}
	return b.String()
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImportNDJSON: a file of 2,500 lines (a blank one among them) is
// created in batches in parallel; the state file records every line done,
// and a second run skips them all and creates nothing.
func TestImportNDJSON(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	file := writeFile(t, "s.ndjson", ndjsonLines(2500, map[int]string{7: ""}))
	r, _ := run(t, d, 0, "-f", file, "--parallel", "3")
	if r.Created != 2499 || r.Failed != 0 || r.Existing != 0 {
		t.Fatalf("first import: %+v, want 2499 created", r)
	}
	if n := stored(t, d); n != 2499 {
		t.Fatalf("%d schedules stored, want 2499", n)
	}
	st, err := os.ReadFile(file + ".import-state")
	if err != nil || !strings.Contains(string(st), `"done":2500`) {
		t.Fatalf("state file: %v %s, want done 2500", err, st)
	}
	before := d.Requests()
	r, _ = run(t, d, 0, "-f", file)
	if r.Items != 0 || r.Skipped != 2499 || d.Requests() != before {
		t.Fatalf("second import: %+v after %d requests, want everything skipped and none sent", r, d.Requests()-before)
	}
	// --restart sends everything again: every item exists already.
	r, _ = run(t, d, 0, "-f", file, "--restart")
	if r.Existing != 2499 || r.Created != 0 {
		t.Fatalf("import --restart: %+v, want 2499 existing", r)
	}
	if n := stored(t, d); n != 2499 {
		t.Fatalf("%d schedules stored after three imports, want 2499", n)
	}
}

// TestImportResumesAfterBadLine: a bad line in the middle fails alone
// (exit 1, named by its line); the checkpoint stays before its batch.
// Once the line is fixed, the same command goes on from there and
// creates every schedule exactly once.
func TestImportResumesAfterBadLine(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	const n = 2300
	bad := map[int]string{
		1234: `{"name":"s-01234","queue":"q","cron":"99 * * * *","time_zone":"UTC"}`, // schedd refuses it
		1500: `{"name": oops`,                                                        // not JSON
	}
	file := writeFile(t, "s.ndjson", ndjsonLines(n, bad))
	r, errOut := run(t, d, 1, "-f", file, "--batch", "500")
	if r.Created != n-2 || r.Failed != 2 {
		t.Fatalf("first import: %+v, want %d created and 2 failed", r, n-2)
	}
	lines := map[int]string{}
	for _, e := range r.Errors {
		lines[e.Line] = e.Code + " " + e.Field
	}
	if lines[1234] != "invalid_argument cron" || lines[1500] != "bad_request " {
		t.Fatalf("failures %+v, want line 1234 (cron) and line 1500 (not JSON)", r.Errors)
	}
	if !strings.Contains(errOut, "2 items of 2300 failed") {
		t.Errorf("stderr %q does not say how many failed", errOut)
	}
	st, _ := os.ReadFile(file + ".import-state")
	if !strings.Contains(string(st), `"done":1000`) {
		t.Fatalf("state file %s: want done 1000 (the batches before line 1234's)", st)
	}

	// Fixed: the run skips the first 1,000 lines, creates the two, and
	// finds the rest created.
	if err := os.WriteFile(file, []byte(ndjsonLines(n, nil)), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ = run(t, d, 0, "-f", file, "--batch", "500")
	if r.Skipped != 1000 || r.Created != 2 || r.Existing != n-1000-2 || r.Failed != 0 {
		t.Fatalf("resumed import: %+v, want 1000 skipped, 2 created, %d existing", r, n-1002)
	}
	if got := stored(t, d); got != n {
		t.Fatalf("%d schedules stored, want %d: one per line", got, n)
	}
}

// TestImportChangedFileStartsOver: a state file whose prefix no longer
// matches the file is not trusted: the import says so and sends it all.
func TestImportChangedFileStartsOver(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	file := writeFile(t, "s.ndjson", ndjsonLines(30, nil))
	run(t, d, 0, "-f", file, "--batch", "10")
	other := strings.Replace(ndjsonLines(30, nil), `"s-00003"`, `"renamed"`, 1)
	if err := os.WriteFile(file, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	r, errOut := run(t, d, 0, "-f", file, "--batch", "10")
	if !strings.Contains(errOut, "does not match") || r.Skipped != 0 || r.Created != 1 || r.Existing != 29 {
		t.Fatalf("changed file: %+v, stderr %q; want a warning, 1 created, 29 existing", r, errOut)
	}
}

// TestImportYAML: the schedules file of apply -f imports too; its items'
// keys derive from their content, so a second import finds them all.
func TestImportYAML(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	file := writeFile(t, "s.yaml", `schedules:
  - name: nightly
    queue: reports
    cron: "0 2 * * *"
    time_zone: Europe/Berlin
    payload: {format: pdf}
  - name: sync
    queue: sync
    every: 15m
`)
	r, _ := run(t, d, 0, "-f", file)
	if r.Created != 2 {
		t.Fatalf("yaml import: %+v, want 2 created", r)
	}
	sc, err := d.Store.GetScheduleByName(t.Context(), "default", "nightly")
	if err != nil || string(sc.Payload) != `{"format":"pdf"}` || !strings.HasPrefix(sc.IdempotencyKey, "import:") {
		t.Fatalf("nightly: %v %+v", err, sc)
	}
	r, _ = run(t, d, 0, "-f", file, "--restart")
	if r.Existing != 2 || r.Created != 0 {
		t.Fatalf("second yaml import: %+v, want 2 existing", r)
	}
	code, _, errOut := d.Run(t, false, "import", "-f", writeFile(t, "bad.yaml", "schedules:\n  - name: x\n    queue: q\n    every: soon\n"))
	if code != 2 || !strings.Contains(errOut, "every") {
		t.Fatalf("invalid yaml: exit %d, %q; want 2 naming the field", code, errOut)
	}
}

// TestImportTableOutput: without -o json, a summary line on stdout and
// each failure with its line on stderr; no progress when stderr is not a
// terminal.
func TestImportTableOutput(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	file := writeFile(t, "s.ndjson", ndjsonLines(5, map[int]string{3: `{"name":"x","queue":"q","every":"1m","colour":"red"}`}))
	code, out, errOut := d.Run(t, false, "import", "-f", file, "--state", filepath.Join(t.TempDir(), "st"))
	if code != 1 || !strings.HasPrefix(out, "4 created, 0 existing, 1 failed of 5 items") ||
		!strings.Contains(errOut, `line 3: not a schedule request: json: unknown field "colour"`) || strings.Contains(errOut, "\r") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// TestImportDryRun: --dry-run checks every line with the daemon, as the
// import would create it, reports what would be created and which lines
// would fail, and creates nothing and writes no state file; the real
// import after it does what the dry run said.
func TestImportDryRun(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	file := writeFile(t, "s.ndjson", ndjsonLines(1500, map[int]string{1200: `{"name":"bad","queue":"q","cron":"0 25 * * *","time_zone":"UTC"}`}))
	r, errOut := run(t, d, 1, "-f", file, "--dry-run")
	if r.Created != 1499 || r.Failed != 1 || len(r.Errors) != 1 || r.Errors[0].Line != 1200 {
		t.Fatalf("dry run: %+v (stderr %q), want 1499 would be created and line 1200 failing", r, errOut)
	}
	if n := stored(t, d); n != 0 {
		t.Fatalf("a dry run stored %d schedules", n)
	}
	if _, err := os.Stat(file + ".import-state"); !os.IsNotExist(err) {
		t.Fatalf("a dry run wrote the state file: %v", err)
	}
	code, out, _ := d.Run(t, false, "import", "-f", file, "--dry-run")
	if code != 1 || !strings.Contains(out, "1499 created, 0 existing, 1 failed of 1500 items") || !strings.Contains(out, "a dry run: nothing was created") {
		t.Errorf("dry run table: exit %d\n%s", code, out)
	}
	r, _ = run(t, d, 1, "-f", file)
	if r.Created != 1499 || r.Failed != 1 {
		t.Fatalf("the import after the dry run: %+v", r)
	}
	if n := stored(t, d); n != 1499 {
		t.Fatalf("%d schedules stored, want 1499", n)
	}
}
