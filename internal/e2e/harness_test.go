// Package e2e holds the end-to-end tests: they build the real
// schedd and schedctl binaries, start schedd on a temporary SQLite store and
// Unix socket, and drive it only through the real schedctl binary, as users,
// scripts and workers do: flags, JSON on stdout, one line on stderr, exit
// status, signals.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sched-dev/sched/internal/testdaemon"
	"github.com/sched-dev/sched/internal/testio"
)

// The binaries under test, built once by TestMain.
var scheddBin, schedctlBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sched-e2e-bin")
	if err != nil {
		panic(err)
	}
	scheddBin = filepath.Join(dir, "schedd")
	schedctlBin = filepath.Join(dir, "schedctl")
	for bin, pkg := range map[string]string{
		scheddBin:   "github.com/sched-dev/sched/cmd/schedd",
		schedctlBin: "github.com/sched-dev/sched/cmd/schedctl",
	} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			os.RemoveAll(dir)
			panic(fmt.Sprintf("go build %s: %v", pkg, err))
		}
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// Generous bounds: the machine runs every test of the package at once.
const (
	deadline = 20 * time.Second // any condition waited for
	pollStep = 100 * time.Millisecond
)

// ---------------------------------------------------------------- processes

// syncBuffer collects a process's output while it runs.
type syncBuffer = testio.SyncBuffer

// proc is a long-running child: schedd or schedctl worker.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer // stdout and stderr
	done chan struct{}
	code int // exit status, once done is closed (-1: killed by a signal)
}

// startProc starts bin and stops it at the end of the test: SIGTERM, then
// SIGKILL if it is still running 5 s later. On failure its output is logged
// unless the caller logs out itself (logged false).
func startProc(t *testing.T, name string, out *syncBuffer, logged bool, env []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	// A grandchild holding the output pipe must not hold Wait forever.
	cmd.WaitDelay = 2 * time.Second
	p := &proc{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.terminate()
		if t.Failed() && !logged {
			t.Logf("--- %s (pid %d) output:\n%s", name, cmd.Process.Pid, out.String())
		}
	})
	return p
}

// watch is p as testdaemon.WaitServing watches it, with out its output.
func (p *proc) watch(out *syncBuffer) testdaemon.Proc {
	return testdaemon.Proc{Name: p.name, Done: p.done, Code: func() int { return p.code }, Output: out.String}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// terminate stops the process: SIGTERM, then SIGKILL after 5 s.
func (p *proc) terminate() {
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// signal sends sig and waits for the process to exit within `within`; it
// returns the exit status and how long the exit took.
func (p *proc) signal(t *testing.T, sig syscall.Signal, within time.Duration) (int, time.Duration) {
	t.Helper()
	began := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s to %s: %v", sig, p.name, err)
	}
	select {
	case <-p.done:
		return p.code, time.Since(began)
	case <-time.After(within):
		t.Fatalf("%s still running %v after %s", p.name, within, sig)
		return 0, 0
	}
}

// hermeticEnv is the environment of every child: no SCHED_* from the
// caller, and XDG and HOME inside the test's directory, so nothing touches
// the user's own daemon or files.
func hermeticEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SCHED_") || strings.HasPrefix(kv, "XDG_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "HOME="+dir)
}

// ---------------------------------------------------------------- schedd

// daemon is one schedd on its own store and socket, possibly restarted.
type daemon struct {
	t     *testing.T
	dir   string
	sock  string
	store string
	args  []string
	env   []string
	log   *syncBuffer // every run's output, in order
	proc  *proc
	runs  int
}

// startDaemon starts schedd on a new SQLite store and Unix socket in a
// private temporary directory (short: a socket path must fit in about 100
// bytes, which t.TempDir's long names may not), with extra flags, and waits
// until it serves.
func startDaemon(t *testing.T, extra ...string) *daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &daemon{
		t: t, dir: dir,
		sock:  filepath.Join(dir, "schedd.sock"),
		store: filepath.Join(dir, "sched.db"),
		args:  extra,
		env:   hermeticEnv(dir),
		log:   &syncBuffer{},
	}
	// Registered before the first run's own cleanup, so it runs after
	// every run has been stopped: the log of all runs, once.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- schedd output (%d runs):\n%s", d.runs, d.log.String())
		}
	})
	d.start()
	return d
}

// start starts (or restarts) schedd on the daemon's store and socket and
// waits until schedctl status answers.
func (d *daemon) start() {
	t := d.t
	t.Helper()
	d.runs++
	fmt.Fprintf(d.log, "=== schedd run %d\n", d.runs)
	args := append([]string{"--store", "sqlite:" + d.store, "--listen", "unix:" + d.sock}, d.args...)
	p := startProc(t, fmt.Sprintf("schedd (run %d)", d.runs), d.log, true, d.env, scheddBin, args...)
	d.proc = p
	var last result
	testdaemon.WaitServing(t, p.watch(d.log), deadline, func() error {
		if last = d.ctl("status"); last.code != 0 {
			return errors.New(last.String())
		}
		return nil
	})
	var st struct {
		Store string `json:"store"`
	}
	if err := json.Unmarshal([]byte(last.stdout), &st); err != nil || st.Store != "sqlite" {
		t.Fatalf("schedctl status: %v: %s", err, last.stdout)
	}
}

// ---------------------------------------------------------------- schedctl

// result is one finished run of schedctl.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("schedctl %s: exit %d, stdout %q, stderr %q", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// ctl runs schedctl against this daemon with JSON output and returns what
// it did. Only a failure to run it at all fails the test.
func (d *daemon) ctl(args ...string) result {
	d.t.Helper()
	r := d.ctlEnv(nil, append([]string{"--addr", "unix:" + d.sock, "-o", "json"}, args...)...)
	r.args = args
	return r
}

// ctlEnv runs schedctl with args as given, in the daemon's environment
// and env (which wins), and returns what it did: for a test that names
// the address, the credentials and the output itself.
func (d *daemon) ctlEnv(env []string, args ...string) result {
	d.t.Helper()
	cmd := exec.Command(schedctlBin, args...)
	cmd.Env = append(append([]string{}, d.env...), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{args: args, stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		d.t.Fatalf("run schedctl %v: %v", args, err)
	}
	return r
}

// ctlJSON runs schedctl, requires exit status 0, and decodes its JSON
// output into v (when v is not nil).
func (d *daemon) ctlJSON(v any, args ...string) result {
	d.t.Helper()
	r := d.ctl(args...)
	if r.code != 0 {
		d.t.Fatalf("%s", r)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			d.t.Fatalf("%s: output is not the JSON expected: %v", r, err)
		}
	}
	return r
}

// worker starts `schedctl worker` with args (flags, then -- CMD ...).
func (d *daemon) worker(name string, args ...string) *proc {
	d.t.Helper()
	full := append([]string{"--addr", "unix:" + d.sock, "worker"}, args...)
	return startProc(d.t, name, &syncBuffer{}, false, d.env, schedctlBin, full...)
}

// recordCmd appends one line per delivery to the file "$1": the worker's
// environment and the command's own clock reading.
const recordCmd = `printf '%s %s %s %s %s\n' "$SCHED_OCCURRENCE_ID" "$SCHED_SCHEDULED_FOR" "$SCHED_ATTEMPT" "$SCHED_SCHEDULE_VERSION" "$(date +%s.%N)" >> "$1"`

// recordingWorker starts a worker on queue whose command records each
// delivery in file (see readDeliveries).
func (d *daemon) recordingWorker(name, queue, file string, flags ...string) *proc {
	d.t.Helper()
	args := append([]string{"--queue", queue}, flags...)
	args = append(args, "--", "sh", "-c", recordCmd, "sh", file)
	return d.worker(name, args...)
}

// ---------------------------------------------------------------- JSON contract

// The JSON schedctl prints, as documented (docs/api.md, schedctl --help):
// the test's own declarations, so a renamed field fails here.

type schedule struct {
	ScheduleID string     `json:"schedule_id"`
	Name       string     `json:"name"`
	Version    int64      `json:"version"`
	State      string     `json:"state"`
	NextRunAt  *time.Time `json:"next_run_at"`
	Kind       string     `json:"kind"`
	Expression string     `json:"expression"`
	Queue      string     `json:"queue"`
	Payload    rawJSON    `json:"payload"`
	Preview    []struct {
		ScheduledFor time.Time `json:"scheduled_for"`
	} `json:"preview"`
}

type changeResult struct {
	Schedule schedule `json:"schedule"`
	Canceled *int     `json:"canceled"`
	InFlight *int     `json:"in_flight"`
}

// counts returns canceled and in_flight, failing the test when the JSON
// lacks either.
func (c changeResult) counts(t *testing.T) (canceled, inFlight int) {
	t.Helper()
	if c.Canceled == nil || c.InFlight == nil {
		t.Fatalf("the answer lacks canceled or in_flight: %+v", c)
	}
	return *c.Canceled, *c.InFlight
}

type occurrence struct {
	OccurrenceID    string     `json:"occurrence_id"`
	ScheduleID      string     `json:"schedule_id"`
	ScheduleVersion int64      `json:"schedule_version"`
	ScheduledFor    time.Time  `json:"scheduled_for"`
	AvailableAt     time.Time  `json:"available_at"`
	EnqueuedAt      *time.Time `json:"enqueued_at"`
	State           string     `json:"state"`
	AttemptCount    int        `json:"attempt_count"`
	Manual          bool       `json:"manual"`
	DeadReason      string     `json:"dead_reason"`
	LastError       string     `json:"last_error"`
}

type attempt struct {
	Attempt        int64      `json:"attempt"`
	WorkerID       string     `json:"worker_id"`
	ClaimedAt      time.Time  `json:"claimed_at"`
	LeaseExpiresAt time.Time  `json:"lease_expires_at"`
	FinishedAt     *time.Time `json:"finished_at"`
	Result         string     `json:"result"`
	Error          string     `json:"error"`
}

type claimed struct {
	OccurrenceID    string    `json:"occurrence_id"`
	ScheduleID      string    `json:"schedule_id"`
	ScheduleVersion int64     `json:"schedule_version"`
	ScheduledFor    time.Time `json:"scheduled_for"`
	Attempt         int64     `json:"attempt"`
	LeaseExpiresAt  time.Time `json:"lease_expires_at"`
	Payload         rawJSON   `json:"payload"`
}

// rawJSON is a JSON value kept as compact text, for comparisons.
type rawJSON string

func (r *rawJSON) UnmarshalJSON(b []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*r = rawJSON(buf.String())
	return nil
}

// occurrences lists a schedule's occurrences (up to 1000, in time order).
func (d *daemon) occurrences(ref string) []occurrence {
	d.t.Helper()
	var occs []occurrence
	d.ctlJSON(&occs, "occurrences", "--schedule", ref, "--limit", "1000")
	return occs
}

func (d *daemon) get(ref string) schedule {
	d.t.Helper()
	var sc schedule
	d.ctlJSON(&sc, "get", ref)
	return sc
}

// ---------------------------------------------------------------- deliveries

// delivery is one line written by recordCmd.
type delivery struct {
	occ          string
	scheduledFor time.Time
	attempt      int
	version      int64
	clock        time.Time // the command's clock when it ran
}

func (v delivery) String() string {
	return fmt.Sprintf("%s for %s attempt %d v%d ran at %s", v.occ, v.scheduledFor.Format(time.RFC3339),
		v.attempt, v.version, v.clock.UTC().Format("15:04:05.000"))
}

// readDeliveries parses the complete lines of a recordCmd file (none when
// it does not exist yet).
func readDeliveries(t *testing.T, file string) []delivery {
	t.Helper()
	raw, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(raw, '\n'); i >= 0 {
		raw = raw[:i+1]
	} else {
		raw = nil
	}
	var out []delivery
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 {
			t.Fatalf("%s: bad line %q", file, sc.Text())
		}
		sf, err1 := time.Parse(time.RFC3339, f[1])
		att, err2 := strconv.Atoi(f[2])
		ver, err3 := strconv.ParseInt(f[3], 10, 64)
		clock, err4 := parseUnixClock(f[4])
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatalf("%s: bad line %q: %v", file, sc.Text(), err)
		}
		out = append(out, delivery{f[0], sf, att, ver, clock})
	}
	return out
}

// parseUnixClock reads `date +%s.%N`.
func parseUnixClock(s string) (time.Time, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 9 {
		return time.Time{}, fmt.Errorf("clock %q: want SECONDS.NANOSECONDS", s)
	}
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	b, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(a, b), nil
}

func dump[T fmt.Stringer](xs []T) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString("\n  ")
		b.WriteString(x.String())
	}
	return b.String()
}

func (o occurrence) String() string {
	return fmt.Sprintf("%s v%d %s %s attempts=%d", o.OccurrenceID, o.ScheduleVersion,
		o.ScheduledFor.Format(time.RFC3339), o.State, o.AttemptCount)
}

// ---------------------------------------------------------------- waiting

// poll is waitFor with the deadline of any condition: it calls cond every
// pollStep until it reports true, and fails the test after the deadline
// with what it waited for and cond's last word.
func poll(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	waitFor(t, what, deadline, cond)
}

// holds checks for the whole of d that nothing happens that should not:
// check returns "" while all is well. This observes a span of time; it
// does not synchronize with anything.
func holds(t *testing.T, d time.Duration, what string, check func() string) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		if msg := check(); msg != "" {
			t.Fatalf("%s: %s", what, msg)
		}
		if time.Now().After(end) {
			return
		}
		time.Sleep(pollStep)
	}
}

// waitDeliveries waits until file holds at least n deliveries for which
// keep is true (keep nil: all), and returns all of the file's deliveries.
func waitDeliveries(t *testing.T, file string, n int, what string, keep func(delivery) bool) []delivery {
	t.Helper()
	var all []delivery
	poll(t, fmt.Sprintf("%d deliveries (%s)", n, what), func() (bool, string) {
		all = readDeliveries(t, file)
		k := 0
		for _, v := range all {
			if keep == nil || keep(v) {
				k++
			}
		}
		return k >= n, fmt.Sprintf("%d of them:%s", k, dump(all))
	})
	return all
}

// oneLine checks that a failed schedctl wrote exactly one line on stderr
// and nothing on stdout.
func oneLine(t *testing.T, r result) {
	t.Helper()
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("%s: stderr is not one line", r)
	}
	if r.stdout != "" {
		t.Errorf("%s: stdout is not empty", r)
	}
}
