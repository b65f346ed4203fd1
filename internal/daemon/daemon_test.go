package daemon

import (
	"errors"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/server"
	"github.com/sched-dev/sched/internal/testio"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if sock := os.Getenv("SCHEDD_PEERCRED_CHILD"); sock != "" {
		os.Exit(peerChild(sock))
	}
	goleak.VerifyTestMain(m)
}

func envOf(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	base := []string{"XDG_DATA_HOME", "/data", "XDG_RUNTIME_DIR", "/run/user/7", "HOME", "/home/u"}
	cases := []struct {
		name string
		args []string
		env  []string
		want func(*Config)
	}{
		{"zero config", nil, nil, func(c *Config) {}},
		{"flags", []string{"--store", "sqlite:/var/lib/s.db", "--listen", "unix:/run/s.sock, tcp:127.0.0.1:7070", "--node-id", "n1",
			"--shards", "64", "--horizon", "2m", "--token", "t", "--log-format", "json", "--max-waiting-claims", "7", "--max-connections", "9"}, nil, func(c *Config) {
			c.MaxWaitingClaims, c.MaxConnections = 7, 9
			c.StorePath, c.DefaultStore = "/var/lib/s.db", false
			c.Listen = []Listen{{Network: "unix", Address: "/run/s.sock"}, {Network: "tcp", Address: "127.0.0.1:7070"}}
			c.NodeID, c.Shards, c.Horizon, c.Token, c.LogFormat = "n1", 64, 2*time.Minute, "t", "json"
		}},
		{"env", nil, []string{"SCHED_STORE", "sqlite:~/s.db", "SCHED_LISTEN", "tcp:[::1]:7070", "SCHED_TOKEN", "envtok"}, func(c *Config) {
			c.StorePath, c.DefaultStore = "/home/u/s.db", false
			c.Listen = []Listen{{Network: "tcp", Address: "[::1]:7070"}}
			c.Token = "envtok"
		}},
		{"flags win over env", []string{"--token", "flagtok", "--store", "sqlite:/f.db"}, []string{"SCHED_TOKEN", "envtok", "SCHED_STORE", "sqlite:/e.db"}, func(c *Config) {
			c.Token, c.StorePath, c.DefaultStore = "flagtok", "/f.db", false
		}},
		{"the default socket named explicitly", []string{"--listen", "unix:/run/user/7/sched/schedd.sock"}, nil, func(c *Config) {}},
		{"the default socket as unix, beside TCP", []string{"--listen", "unix,tcp:127.0.0.1:7070"}, nil, func(c *Config) {
			c.Listen = []Listen{{Network: "unix", Address: "/run/user/7/sched/schedd.sock", Default: true}, {Network: "tcp", Address: "127.0.0.1:7070"}}
		}},
		{"insecure with a token", []string{"--listen", "tcp:0.0.0.0:7070", "--insecure-listen", "--token", "t"}, nil, func(c *Config) {
			c.Listen = []Listen{{Network: "tcp", Address: "0.0.0.0:7070"}}
			c.InsecureListen, c.Token = true, "t"
		}},
		{"localhost", []string{"--listen", "tcp:localhost:7070"}, nil, func(c *Config) {
			c.Listen = []Listen{{Network: "tcp", Address: "localhost:7070"}}
		}},
		{"postgres", []string{"--store", "postgres://u:pw@db:5432/sched?sslmode=disable&schema=s1", "--shard-lease", "3s"}, nil, func(c *Config) {
			c.StorePath, c.DefaultStore = "", false
			c.PostgresDSN, c.PostgresSchema = "postgres://u:pw@db:5432/sched?sslmode=disable", "s1"
			c.ShardLease = 3 * time.Second
		}},
		{"audit kept forever", []string{"--audit-retention", "0"}, nil, func(c *Config) { c.AuditRetention = 0 }},
		{"audit kept a week", []string{"--audit-retention", "168h"}, nil, func(c *Config) { c.AuditRetention = 168 * time.Hour }},
		{"history kept forever", []string{"--retention", "0"}, nil, func(c *Config) { c.Retention = 0 }},
		{"history kept a day", []string{"--retention", "24h"}, nil, func(c *Config) { c.Retention = 24 * time.Hour }},
		{"postgres from env, search_path kept", nil, []string{"SCHED_STORE", "postgresql://db/sched?search_path=s2"}, func(c *Config) {
			c.StorePath, c.DefaultStore = "", false
			c.PostgresDSN = "postgresql://db/sched?search_path=s2"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig(tc.args, envOf(append(append([]string{}, base...), tc.env...)...), "v", io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			want := Config{
				StorePath: "/data/sched/sched.db", DefaultStore: true,
				Listen: []Listen{{Network: "unix", Address: "/run/user/7/sched/schedd.sock", Default: true}},
				Shards: 0, Horizon: time.Minute, ShardLease: 10 * time.Second, LogFormat: "text", NodeID: got.NodeID,
				MaxWaitingClaims: server.DefaultMaxWaitingClaims, MaxConnections: DefaultMaxConnections,
				AuditRetention: engine.DefaultAuditRetention, Retention: engine.DefaultRetention,
				Quotas: record.Quotas{CatchUpPerSecond: engine.DefaultCatchUpPerSecond},
			}
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
			if got.NodeID == "" {
				t.Fatal("no node id")
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "HOME", "/home/u")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "tcp:10.0.0.1:80"}, "not a loopback address"},
		{[]string{"--listen", "tcp:[::]:80"}, "not a loopback address"},
		{[]string{"--listen", "tcp:127.0.0.1"}, "want tcp:HOST:PORT"},
		{[]string{"--listen", "tcp:127.0.0.1:99999"}, "port"},
		{[]string{"--listen", "unix:"}, "give a socket path"},
		{[]string{"--listen", "unix:/" + strings.Repeat("d", 120)}, "longer than"},
		{[]string{"--listen", "unix:/a.sock,unix:/a.sock"}, "given twice"},
		{[]string{"--store", "sqlite:"}, "give a file"},
		{[]string{"--store", "mysql://x"}, "want sqlite:PATH"},
		{[]string{"--token", "a b"}, "--token"},
		{[]string{"--shards", "5000"}, "--shards"},
		{[]string{"--max-waiting-claims", "0"}, "--max-waiting-claims"},
		{[]string{"--retention", "10m"}, "--retention"},
		{[]string{"--retention", "-1h"}, "--retention"},
		{[]string{"--max-connections", "0"}, "--max-connections"},
		{[]string{"--audit-retention", "30m"}, "--audit-retention"},
		{[]string{"--audit-retention", "-1h"}, "--audit-retention"},
	} {
		_, err := ParseConfig(tc.args, env, "v", io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	for _, args := range [][]string{
		{"--store", "postgres://h/db?schema="},
		{"--store", "postgres://h/db?schema=a&schema=b"},
		{"--shard-lease", "500ms"},
		{"--node-id", "a\nb"},
		{"--node-id", ".."},
		{"--node-id", "n1 "},
		{"--node-id", "n\u200b1"},
		{"--node-id", strings.Repeat("n", 201)},
	} {
		var ue *UsageError
		if _, err := ParseConfig(args, env, "v", io.Discard); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, err := ParseConfig(nil, envOf(), "v", io.Discard); err == nil || !strings.Contains(err.Error(), "XDG_DATA_HOME") {
		t.Errorf("no HOME nor XDG_DATA_HOME: %v", err)
	}
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer = testio.SyncBuffer

// A connection from another user is closed before anything is read from
// it, even when the socket's mode would let it in. Needs root, to run
// the other side as nobody.
func TestPeerCredentialsRefuseOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to connect as another user")
	}
	dir, err := os.MkdirTemp("", "pc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// A directory and a socket anyone may use: only the credential check
	// stands between nobody and the API here.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ln, err := listenUnix(Listen{Network: "unix", Address: sock}, envOf(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if m, _ := os.Lstat(sock); m.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v", m.Mode())
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()

	// The child is this test binary, copied where nobody can run it.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "child")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"SCHEDD_PEERCRED_CHILD=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child as nobody: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "closed" {
		t.Fatalf("nobody's connection: %q, want closed by the daemon", got)
	}
	if !strings.Contains(logs.String(), "refused a connection from another user") || !strings.Contains(logs.String(), "peer_uid=65534") {
		t.Fatalf("log:\n%s", logs.String())
	}
	select {
	case c := <-accepted:
		c.Close()
		t.Fatal("a connection of another user was accepted")
	default:
	}

	// This user's connection is accepted.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case s := <-accepted:
		s.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("this user's connection was not accepted")
	}
	ln.Close()
	for range accepted {
	}
}

// peerChild connects to sock and reports whether the daemon closed the
// connection (it writes an HTTP request and reads the answer).
func peerChild(sock string) int {
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Stdout.WriteString("dial: " + err.Error() + "\n")
		return 0
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("GET /v1/status HTTP/1.1\r\nHost: sched\r\n\r\n"))
	b := make([]byte, 64)
	n, err := c.Read(b)
	switch {
	case n > 0:
		os.Stdout.WriteString("answered: " + string(b[:n]) + "\n")
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		os.Stdout.WriteString("closed\n")
	default:
		os.Stdout.WriteString("read: " + err.Error() + "\n")
	}
	return 0
}

// A stale socket is removed only when it is a socket of ours that nobody
// answers on.
func TestRemoveStale(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "st")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.DiscardHandler)
	sock := filepath.Join(dir, "live.sock")
	live, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if err := removeStale(sock, log); err == nil || !strings.Contains(err.Error(), "already listening") {
		t.Fatalf("live socket: %v", err)
	}
	live.(*net.UnixListener).SetUnlinkOnClose(false)
	live.Close()
	if err := removeStale(sock, log); err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("stale socket still there: %v", err)
	}
	if err := removeStale(sock, log); err != nil {
		t.Fatalf("no socket: %v", err)
	}
}

// TestDefaultNodeIDsDiffer: two nodes started without --node-id (the same
// host; in containers, the same pid) get different ids.
func TestDefaultNodeIDsDiffer(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "HOME", "/home/u")
	a, err := ParseConfig(nil, env, "v", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseConfig(nil, env, "v", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if a.NodeID == b.NodeID || !strings.Contains(a.NodeID, "-") {
		t.Errorf("default node ids %q and %q: want distinct HOSTNAME-PID-RANDOM", a.NodeID, b.NodeID)
	}
}

// The one-dash long flags of earlier releases (Go's flag package took
// -store) still work; a flag's value is never rewritten, even when it looks
// like a flag, nor is anything after "--".
func TestOneDashFlags(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "XDG_RUNTIME_DIR", "/run/user/7", "HOME", "/home/u")
	got, err := ParseConfig([]string{"-store", "sqlite:/s.db", "-listen=unix:/s.sock", "-node-id", "-horizon", "-log-format", "json", "-insecure-listen"}, env, "v", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got.StorePath != "/s.db" || len(got.Listen) != 1 || got.Listen[0].Address != "/s.sock" || got.NodeID != "-horizon" || got.LogFormat != "json" || !got.InsecureListen {
		t.Fatalf("got %+v", got)
	}
	for want, args := range map[string][]string{
		"unknown flag: --bogus":                 {"--bogus"},
		"unknown shorthand flag: 'b' in -bogus": {"-bogus"},
		`unexpected argument "-store"`:          {"--", "-store"},
	} {
		_, err := ParseConfig(args, env, "v", io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a usage error with %q", args, err, want)
		}
	}
}

// --help prints the flags' help, never a value from the environment (the
// token in SCHED_TOKEN above all); --version prints one line.
func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "HOME", "/home/u", "SCHED_TOKEN", "s3cret", "SCHED_STORE", "sqlite:/hidden.db")
	var out strings.Builder
	if _, err := ParseConfig([]string{"--help"}, env, "v", &out); !errors.Is(err, ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	if !strings.Contains(out.String(), "--shard-lease duration") || strings.Contains(out.String(), "s3cret") || strings.Contains(out.String(), "hidden.db") {
		t.Fatalf("--help:\n%s", out.String())
	}
	out.Reset()
	if _, err := ParseConfig([]string{"--version"}, env, "v1.2.3", &out); !errors.Is(err, ErrVersion) {
		t.Fatalf("--version: %v", err)
	}
	if !strings.HasPrefix(out.String(), "schedd v1.2.3 (go") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("--version: %q", out.String())
	}
}
