// Package clidaemon is a real schedd for the tests of schedctl's commands:
// a real engine on a real SQLite file under a virtual clock, the real API
// handler served over loopback TCP, and schedctl's root pointed at it. The
// commands' tests run through it so that what they check is what schedctl
// prints against schedd, not against a stand-in.
//
// Only tests import it: schedctl itself must never link the engine or a
// store (cmd/schedctl's dependency test). It imports the CLI's root, so
// tests that use it live in external test packages (package x_test).
package clidaemon

import (
	"context"
	"github.com/sched-dev/sched/internal/target/kinds"
	"github.com/sched-dev/sched/internal/target/webhook/webhooktest"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/server"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// NodeID is the daemon's node id, as its answers name it.
const NodeID = "node-a"

// Config is what a test chooses of its daemon; zero values take the
// engine's defaults (Shards: 4).
type Config struct {
	Start   time.Time // the virtual clock's start; required
	Shards  int
	Horizon time.Duration
	// Rand is where the engine draws the random part of the ids it mints;
	// a seeded stream makes them the same every run (for golden files).
	// Nil: crypto/rand.
	Rand io.Reader
}

// Daemon is schedd's API on a real engine and SQLite file, served over
// loopback TCP. Tests move its clock and drive its engine (PlanOnce,
// Queue) directly, and read or alter its file at Path behind its back.
type Daemon struct {
	Clock  *clock.Virtual
	Engine *engine.Engine
	Store  *sqlite.Store
	Path   string // the SQLite file
	Addr   string // as SCHED_ADDR says it

	requests atomic.Int64
}

// New starts a daemon for t; it stops when t ends. It is wired as schedd
// wires its own (reconcile audits its store); the what-if simulation is
// not wired.
func New(t testing.TB, cfg Config) *Daemon {
	t.Helper()
	if cfg.Shards == 0 {
		cfg.Shards = 4
	}
	path := filepath.Join(t.TempDir(), "sched.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clock.NewVirtual(cfg.Start)
	eng, err := engine.New(t.Context(), engine.Config{Store: st, Clock: clk, Shards: cfg.Shards, Horizon: cfg.Horizon,
		NodeID: NodeID, Rand: cfg.Rand,
		// Targets on this machine only: a test's webhook receivers listen
		// on loopback, which the guard refuses unless allowed, and the
		// dialer fails the test if asked for anything else.
		TargetKinds: kinds.New(kinds.Options{WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			WebhookDial: webhooktest.LoopbackDial(t), Name: "clidaemon"})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Engine: eng, NodeID: NodeID, Shards: cfg.Shards, StoreDriver: "sqlite",
		Reconcile: func(ctx context.Context, o reconcile.Options) (*api.ReconcileReport, error) {
			return reconcile.Report(ctx, st, o)
		}})
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{Clock: clk, Engine: eng, Store: st, Path: path}
	// Served on a real Unix socket, as schedd serves its default one: a
	// request without a token acts as the default tenant's admin. The
	// directory is short-named, as a socket's path is limited to about
	// 100 bytes.
	dir, err := os.MkdirTemp("", "clid")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	h := server.Local(srv.Handler())
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	d.Addr = "unix:" + sock
	return d
}

// Requests is how many requests the daemon has been sent: a command that
// refuses its input must send none.
func (d *Daemon) Requests() int64 { return d.requests.Load() }

// Run runs schedctl args through its root against d, on a terminal or
// not, and returns its exit status, stdout and stderr.
func (d *Daemon) Run(t testing.TB, tty bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	f, out, errOut := clitest.NewFactory(tty)
	f.LookupEnv = func(k string) (string, bool) {
		if k == "SCHED_ADDR" {
			return d.Addr, true
		}
		return "", false
	}
	code = cli.Run(f, args)
	return code, out.String(), errOut.String()
}
