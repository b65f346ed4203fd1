package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/testdaemon"
	"github.com/sched-dev/sched/internal/testio"
)

// These tests build the real schedd binary and drive it as users and
// supervisors do: environment, flags, signals, exit status, stderr, and the
// API over its real socket.

var schedd string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "schedd-test")
	if err != nil {
		panic(err)
	}
	schedd = filepath.Join(dir, "schedd")
	if out, err := exec.Command("go", "build", "-o", schedd, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
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

// env is a zero-config environment inside a short temporary directory
// (a socket path must fit in about 100 bytes).
type env struct {
	root, data, run, home string
}

func newEnv(t *testing.T) env {
	t.Helper()
	root, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	e := env{root: root, data: filepath.Join(root, "data"), run: filepath.Join(root, "run"), home: filepath.Join(root, "home")}
	for _, d := range []string{e.run, e.home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e env) vars() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SCHED_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "XDG_DATA_HOME="+e.data, "XDG_RUNTIME_DIR="+e.run, "HOME="+e.home)
}

func (e env) socket() string { return filepath.Join(e.run, "sched", "schedd.sock") }
func (e env) db() string     { return filepath.Join(e.data, "sched", "sched.db") }

// proc is a running schedd.
type proc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

type syncBuffer = testio.SyncBuffer

func start(t *testing.T, vars []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(schedd, args...)
	cmd.Env = vars
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr, cmd.Stdout = p.stderr, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("schedd stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// wait waits for the process to exit and returns its status and how long
// that took.
func (p *proc) wait(t *testing.T, within time.Duration) (int, time.Duration) {
	t.Helper()
	began := time.Now()
	select {
	case <-p.done:
		return p.code, time.Since(began)
	case <-time.After(within):
		t.Fatalf("schedd still running after %v; stderr:\n%s", within, p.stderr.String())
		return 0, 0
	}
}

// run runs schedd to completion.
func run(t *testing.T, vars []string, args ...string) (int, string) {
	t.Helper()
	p := start(t, vars, args...)
	code, _ := p.wait(t, 10*time.Second)
	return code, p.stderr.String()
}

// client talks HTTP to a schedd over a Unix socket or TCP.
type client struct {
	t     *testing.T
	http  *http.Client
	base  string
	token string
}

func unixClient(t *testing.T, sock string) *client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{t: t, http: &http.Client{Transport: tr, Timeout: time.Minute}, base: "http://sched"}
}

func tcpClient(t *testing.T, addr string) *client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{t: t, http: &http.Client{Transport: tr, Timeout: time.Minute}, base: "http://" + addr}
}

func (c *client) do(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

func (c *client) must(want int, out any, method, path string, body any) {
	c.t.Helper()
	code, raw, err := c.do(method, path, body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if code != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
}

// ready waits until /healthz answers ok (or the process exits).
func (c *client) ready(p *proc) {
	c.t.Helper()
	testdaemon.WaitServing(c.t, testdaemon.Proc{Name: "schedd", Done: p.done, Code: func() int { return p.code }, Output: p.stderr.String},
		15*time.Second, func() error {
			code, raw, err := c.do("GET", "/healthz", nil)
			if err == nil && (code != 200 || string(raw) != "ok\n") {
				err = fmt.Errorf("/healthz: %d %q", code, raw)
			}
			return err
		})
}

// tcpAddr is the address of schedd's TCP listener, from its start-up log.
func tcpAddr(t *testing.T, p *proc) string {
	t.Helper()
	re := regexp.MustCompile(`listen"?[=:]"?[^ ]*tcp:(127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no TCP address in the start-up log:\n%s", p.stderr.String())
	return ""
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// Zero configuration: the database under XDG_DATA_HOME, the socket in a
// private directory under XDG_RUNTIME_DIR, both private to the user.
func TestZeroConfigStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := start(t, e.vars())
	c := unixClient(t, e.socket())
	c.ready(p)

	if m := mode(t, filepath.Dir(e.socket())); !m.IsDir() || m.Perm() != 0o700 {
		t.Errorf("socket directory mode %v, want drwx------", m)
	}
	if m := mode(t, e.socket()); m&os.ModeSocket == 0 || m.Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", m)
	}
	if m := mode(t, e.db()); !m.IsRegular() || m.Perm()&0o077 != 0 {
		t.Errorf("database mode %v, want private", m)
	}
	if code, _, err := c.do("GET", "/readyz", nil); err != nil || code != 200 {
		t.Errorf("readyz: %d %v", code, err)
	}
	var st api.Status
	c.must(200, &st, "GET", "/v1/status", nil)
	if st.Store != "sqlite" || st.Shards != 1 || !buildVersion.MatchString(st.Version) || st.TZVersion == "" || st.NodeID == "" {
		t.Errorf("status %+v", st)
	}
	log := p.stderr.String()
	for _, want := range []string{`msg="schedd started"`, "tz_version=", "store=sqlite:" + e.db(), "listen=unix:" + e.socket(), "shards=1", "node_id="} {
		if !strings.Contains(log, want) {
			t.Errorf("start-up log lacks %q:\n%s", want, log)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code, _ := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}

// A second schedd on the same database exits 1 at once with one clear line
// (not a second writer on the store), and the first one goes on serving.
func TestSecondInstanceFailsFast(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := start(t, e.vars())
	c := unixClient(t, e.socket())
	c.ready(p)

	other := newEnv(t) // another socket, the same database
	second := start(t, append(other.vars(), "SCHED_STORE=sqlite:"+e.db()))
	code, took := second.wait(t, 10*time.Second)
	out := second.stderr.String()
	if code != 1 || took > 5*time.Second {
		t.Fatalf("second schedd: exit %d after %v, want 1 quickly:\n%s", code, took, out)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 ||
		!strings.Contains(out, "another schedd is running") || !strings.Contains(out, e.db()) {
		t.Fatalf("second schedd's stderr, want one line naming the file and another schedd:\n%s", out)
	}
	// The same again with the same socket: still the database's message.
	code, out = run(t, e.vars())
	if code != 1 || !strings.Contains(out, "another schedd is running") {
		t.Fatalf("second schedd on the same socket: %d %s", code, out)
	}
	c.must(200, nil, "GET", "/v1/status", nil)
}

// SIGTERM: waiting claims end, the daemon exits 0 within a few seconds and
// removes its socket, and a restart serves the same schedules.
func TestSIGTERMThenRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := start(t, e.vars())
	c := unixClient(t, e.socket())
	c.ready(p)
	var created api.CreateResult
	c.must(201, &created, "POST", "/v1/schedules", api.ScheduleRequest{Name: "keep", Queue: "q", Cron: "0 9 * * MON-FRI", TimeZone: "Europe/Berlin"})

	polled := make(chan string, 1)
	go func() {
		code, raw, err := c.do("POST", "/v1/claims", api.ClaimRequest{Queue: "idle", WorkerID: "w", Wait: "5m"})
		polled <- fmt.Sprintf("%d %s %v", code, bytes.TrimSpace(raw), err)
	}()
	time.Sleep(200 * time.Millisecond) // the claim is waiting

	p.cmd.Process.Signal(syscall.SIGTERM)
	code, took := p.wait(t, 10*time.Second)
	if code != 0 || took > 5*time.Second {
		t.Fatalf("SIGTERM: exit %d after %v, want 0 within 5s", code, took)
	}
	select {
	case got := <-polled:
		if got != `200 {"claimed":[]} <nil>` {
			t.Fatalf("the waiting claim got %s, want an empty answer", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting claim did not end at the shutdown")
	}
	if _, err := os.Lstat(e.socket()); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	for _, want := range []string{`msg="shutting down"`, `msg="schedd stopped"`} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("log lacks %s", want)
		}
	}

	p2 := start(t, e.vars())
	c2 := unixClient(t, e.socket())
	c2.ready(p2)
	var got api.Schedule
	c2.must(200, &got, "GET", "/v1/schedules/keep", nil)
	if got.ScheduleID != created.ScheduleID || got.Version != 1 || got.State != "ACTIVE" {
		t.Fatalf("after restart: %+v, want %s", got, created.ScheduleID)
	}
	p2.cmd.Process.Signal(syscall.SIGINT)
	if code, _ := p2.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("SIGINT: exit %d", code)
	}
}

// TestShardCountIsTheDatabases: without --shards, schedd runs with the
// count its database was set up with (a new SQLite database gets one); a
// --shards that disagrees with it is refused, naming both.
func TestShardCountIsTheDatabases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status := func(p *proc) api.Status {
		t.Helper()
		c := unixClient(t, e.socket())
		c.ready(p)
		var st api.Status
		c.must(200, &st, "GET", "/v1/status", nil)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code, _ := p.wait(t, 10*time.Second); code != 0 {
			t.Fatalf("SIGTERM: exit %d", code)
		}
		return st
	}
	if st := status(start(t, e.vars(), "--shards", "8")); st.Shards != 8 {
		t.Fatalf("a new database with --shards 8: %d shards", st.Shards)
	}
	if st := status(start(t, e.vars())); st.Shards != 8 {
		t.Fatalf("restarted without --shards: %d shards, want the database's 8", st.Shards)
	}
	code, out := run(t, e.vars(), "--shards", "4")
	if code != 1 || !strings.Contains(out, "8 shards") || !strings.Contains(out, "--shards 8") {
		t.Fatalf("--shards 4 on an 8-shard database: exit %d, %q", code, out)
	}
}

// Refused configurations exit before touching anything: no database, no
// socket (plain HTTP on a network address, and bad input).
func TestRefusedConfigurations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		vars []string
		code int
		want string
	}{
		{"any interface", []string{"--listen", "tcp:0.0.0.0:0"}, nil, 2, "not a loopback address"},
		{"empty host", []string{"--listen", "tcp::0"}, nil, 2, "not a loopback address"},
		{"a LAN address via env", nil, []string{"SCHED_LISTEN=tcp:192.168.1.10:7070"}, 2, "--insecure-listen"},
		{"a name", []string{"--listen", "tcp:example.com:7070"}, nil, 2, "not a loopback address"},
		// Nothing listens on port 1: the store does not open, and the
		// message names it without its password.
		{"postgres unreachable", []string{"--store", "postgres://sched:secret@127.0.0.1:1/sched?connect_timeout=2"}, nil, 1, "cannot open the store postgres://127.0.0.1:1/sched"},
		{"postgres via env", nil, []string{"SCHED_STORE=postgresql://sched:secret@127.0.0.1:1/sched?connect_timeout=2&schema=s1"}, 1, "cannot open the store postgresql://127.0.0.1:1/sched?schema=s1"},
		{"postgres empty schema", []string{"--store", "postgres://127.0.0.1:1/sched?schema="}, nil, 2, "schema=NAME"},
		{"shard lease", []string{"--shard-lease", "10ms"}, nil, 2, "--shard-lease"},
		{"store without scheme", []string{"--store", "/tmp/x.db"}, nil, 2, "want sqlite:PATH"},
		{"listen without scheme", []string{"--listen", "/tmp/x.sock"}, nil, 2, "want unix:PATH or tcp:HOST:PORT"},
		{"https", []string{"--listen", "https://0.0.0.0:443"}, nil, 2, "--tls-cert"},
		{"unknown flag", []string{"--bogus"}, nil, 2, "unknown flag: --bogus"},
		{"unknown one-dash flag", []string{"-bogus"}, nil, 2, "-bogus"},
		{"one-dash spelling of a known flag", []string{"-log-format=xml"}, nil, 2, "--log-format \"xml\""},
		{"argument", []string{"serve"}, nil, 2, "unexpected argument"},
		{"shards", []string{"--shards", "-1"}, nil, 2, "--shards -1"},
		{"horizon", []string{"--horizon", "1ms"}, nil, 2, "--horizon"},
		{"log format", []string{"--log-format", "xml"}, nil, 2, "--log-format"},
		{"log level", []string{"--log-level", "verbose"}, nil, 2, `--log-level "verbose": want debug, info, warn or error`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			code, out := run(t, append(e.vars(), tc.vars...), tc.args...)
			if code != tc.code || !strings.Contains(out, tc.want) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Fatalf("exit %d, want %d; stderr (want one line with %q):\n%s", code, tc.code, tc.want, out)
			}
			if strings.Contains(out, "secret") {
				t.Fatalf("stderr shows the store's password:\n%s", out)
			}
			if _, err := os.Stat(e.data); !os.IsNotExist(err) {
				t.Fatalf("a refused start created %s", e.data)
			}
		})
	}
}

// A TCP listener on loopback with the operator's token: every /v1 request
// over TCP needs a token; over the Unix socket a request without one acts
// as the default tenant's admin, but a wrong one is refused; the probes
// need none.
func TestTCPWithToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sock := filepath.Join(e.root, "s.sock")
	p := start(t, append(e.vars(), "SCHED_TOKEN=tok-123"), "--listen", "tcp:127.0.0.1:0,unix:"+sock, "--log-format", "json")
	uc := unixClient(t, sock)
	uc.ready(p)
	tc := tcpClient(t, tcpAddr(t, p))
	uc.must(200, nil, "GET", "/v1/status", nil)
	tc.must(401, nil, "GET", "/v1/status", nil)
	for _, c := range []*client{uc, tc} {
		c.token = "wrong"
		c.must(401, nil, "GET", "/v1/schedules", nil)
		c.token = "tok-123"
		c.must(200, nil, "GET", "/v1/status", nil)
		c.token = ""
		c.must(200, nil, "GET", "/healthz", nil)
	}
	// A rebound DNS name reaching the loopback listener is refused.
	req, _ := http.NewRequest("GET", "http://"+tcpAddr(t, p)+"/v1/status", nil)
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer tok-123")
	resp, err := tc.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("Host evil.example: %d, want 400", resp.StatusCode)
	}
	// JSON logs, and the token never in them.
	log := p.stderr.String()
	if !strings.Contains(log, `"msg":"schedd started"`) || strings.Contains(log, "tok-123") || strings.Contains(log, "wrong") {
		t.Fatalf("log:\n%s", log)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code, _ := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// A socket left by a daemon that died is replaced; anything else planted
// at the path is refused, and so is a socket directory others can enter.
func TestSocketPathSafety(t *testing.T) {
	t.Parallel()
	t.Run("stale socket replaced", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if err := os.Mkdir(filepath.Dir(e.socket()), 0o700); err != nil {
			t.Fatal(err)
		}
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: e.socket(), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close() // a dead daemon's socket: the file stays, nobody answers
		p := start(t, e.vars())
		c := unixClient(t, e.socket())
		c.ready(p)
		if !strings.Contains(p.stderr.String(), "removed a stale socket") {
			t.Errorf("no log of the stale socket:\n%s", p.stderr.String())
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t, 10*time.Second)
	})
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, e env)
		want  string
	}{
		{"regular file", func(t *testing.T, e env) {
			os.Mkdir(filepath.Dir(e.socket()), 0o700)
			os.WriteFile(e.socket(), []byte("x"), 0o600)
		}, "is not a socket"},
		{"symlink", func(t *testing.T, e env) {
			os.Mkdir(filepath.Dir(e.socket()), 0o700)
			os.Symlink("/tmp/elsewhere.sock", e.socket())
		}, "is not a socket"},
		{"open directory", func(t *testing.T, e env) {
			os.Mkdir(filepath.Dir(e.socket()), 0o700)
			os.Chmod(filepath.Dir(e.socket()), 0o755)
		}, "must be private"},
		{"directory is a symlink", func(t *testing.T, e env) {
			os.Mkdir(filepath.Join(e.root, "elsewhere"), 0o700)
			os.Symlink(filepath.Join(e.root, "elsewhere"), filepath.Dir(e.socket()))
		}, "is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tc.plant(t, e)
			code, out := run(t, e.vars())
			if code != 1 || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, want 1 with %q:\n%s", code, tc.want, out)
			}
		})
	}
}

// The one-dash spelling of the long flags that schedd took before it
// parsed flags with cobra (-store, -listen=...) still starts it, so that
// existing scripts and units keep working.
func TestOneDashFlags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	db, sock := filepath.Join(e.root, "one.db"), filepath.Join(e.root, "one.sock")
	p := start(t, e.vars(), "-store", "sqlite:"+db, "-listen=unix:"+sock, "-log-format", "json")
	unixClient(t, sock).ready(p)
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("-store: %v", err)
	}
	if !strings.Contains(p.stderr.String(), `{"time":`) {
		t.Fatalf("-log-format json: the log is not JSON:\n%s", p.stderr.String())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code, _ := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", code, p.stderr.String())
	}
}

// buildVersion matches the version a test's schedd reports: "dev" when
// nothing stamped one, or the module version Go records from the checkout
// (a pseudo-version such as v0.0.0-20261205030211-3ce0249cf0e0, "+dirty"
// when the tree has changes).
const versionPattern = `(dev|v[0-9]+\.[0-9]+\.[0-9]+\S*)`

var buildVersion = regexp.MustCompile(`^` + versionPattern + `$`)

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The same line as schedctl version: release, Go, tz database.
	code, out := run(t, e.vars(), "--version")
	if code != 0 || !regexp.MustCompile(`^schedd `+versionPattern+` \(go[^)]+\), tz database \S+\n$`).MatchString(out) {
		t.Fatalf("--version: %d %q", code, out)
	}
	code, out = run(t, e.vars(), "--help")
	for _, want := range []string{"Usage:", "Examples:", "Flags:", "--store", "--listen", "--insecure-listen", "--version", "SCHED_TOKEN", "curl --unix-socket"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("--help: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	if _, err := os.Stat(e.data); !os.IsNotExist(err) {
		t.Fatal("--help created the data directory")
	}
}

// Slowloris: connections that trickle their headers are closed by the
// header timeout, and new requests are served meanwhile.
func TestSlowHeadersAreCutOff(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for the 10 s header timeout")
	}
	e := newEnv(t)
	p := start(t, append(e.vars(), "SCHED_TOKEN=tok-123"), "--listen", "tcp:127.0.0.1:0")
	addr := tcpAddr(t, p)
	c := tcpClient(t, addr)
	c.token = "tok-123"
	c.ready(p)
	const slow = 50
	conns := make([]net.Conn, 0, slow)
	for range slow {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.Write([]byte("GET /v1/status HTTP/1.1\r\nHost: x\r\n")) // and never the blank line
		conns = append(conns, nc)
	}
	c.must(200, nil, "GET", "/v1/status", nil)
	began := time.Now()
	for _, nc := range conns {
		nc.SetReadDeadline(began.Add(20 * time.Second))
		_, err := io.ReadAll(nc) // the server closes (after a 408 or nothing)
		if err != nil {
			t.Fatalf("slow connection not closed: %v", err)
		}
	}
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("slow connections closed after %v, want about 10s", took)
	}
	c.must(200, nil, "GET", "/v1/status", nil)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(t, 10*time.Second)
}
