// Package daemon is schedd: its configuration (flags and environment), its
// listeners (a private Unix socket by default, TCP on request) and its
// lifecycle: open the store, start the engine, serve the API, and on
// SIGTERM or SIGINT drain and stop within a few seconds.
//
// The store is SQLite (one node) or PostgreSQL (any number of nodes on one
// database, sharing the shards; see package engine).
//
// Start-up order: the store first, so that a second schedd on the same
// SQLite database fails fast (sqlite.ErrInUse) before it touches any socket; then
// the engine, the listeners, and the planner. Shutdown is the reverse:
// stop being ready and taking claims, end long polls, let requests that are
// committing finish (http.Server.Shutdown, at most ShutdownTimeout), stop
// the planner and release its shard leases, close the store.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"github.com/sched-dev/sched/internal/target/kinds"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/paths"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/server"
	"github.com/sched-dev/sched/internal/simulate"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

// Timeouts of the HTTP servers, so that a client that sends its headers
// slowly (or never) cannot hold a connection forever. There is no global
// WriteTimeout or ReadTimeout, which would cut long polls; the server sets
// read and write deadlines per request instead.
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 64 << 10
	ShutdownTimeout   = 5 * time.Second
)

// Exit statuses.
const (
	ExitOK    = 0
	ExitError = 1 // could not start, or failed while running
	ExitUsage = 2 // bad flags or environment

	// schedd reconcile's statuses, as diff's: 1 is a result, so a failure
	// to audit needs its own number.
	ExitFindings = 1 // something is absent or unexpected
	ExitTrouble  = 3 // the audit could not run
)

// defaultGCPercent is the daemon's GOGC unless its environment sets one.
// schedd's live Go heap is small (SQLite's page cache lives outside it),
// so at Go's default of 100 a collection ran every few dozen milliseconds
// under load. Measured in a burst of 500,000 on SQLite, one run each:
// GOGC 100 created 48,100 schedules a second and peaked at 193 MB, 200
// made 51,800 and 204 MB, 400 made 54,900 and 229 MB. 300 keeps the peak
// well under 256 MB (docs/BENCHMARKS.md has the runs).
const defaultGCPercent = 300

// Main is schedd's main: it parses args, runs until SIGTERM or SIGINT, and
// returns the exit status. Fatal errors are one line on stderr.
func Main(version string, args []string, stdout, stderr io.Writer) int {
	// Everything schedd creates (database, socket, lock file, a simulation's scratch store) is private to
	// its user: the database holds payloads.
	syscall.Umask(0o077)
	if len(args) > 0 {
		switch args[0] {
		case "simulate":
			return simulateMain(args[1:], os.Stdin, stdout, stderr)
		case "reconcile":
			return Reconcile(args[1:], os.LookupEnv, stdout, stderr)
		}
	}
	cfg, err := ParseConfig(args, os.LookupEnv, version, stdout)
	switch {
	case errors.Is(err, ErrHelp), errors.Is(err, ErrVersion):
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "schedd: %v\n", err)
		return ExitUsage
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal kills at once
	}()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := Run(ctx, cfg, Options{Version: version, Env: os.LookupEnv, Logger: NewLogger(cfg.LogFormat, cfg.LogLevel, stderr), Reload: hup}); err != nil {
		fmt.Fprintf(stderr, "schedd: %s\n", oneLine(err.Error()))
		return ExitError
	}
	return ExitOK
}

// Options are what Run needs besides the configuration.
type Options struct {
	Version string
	Env     paths.Env
	Logger  *slog.Logger
	// Reload reloads the TLS certificate and key each time it receives
	// (Main: SIGHUP). Nil: only a change of the files reloads them.
	Reload <-chan os.Signal
}

// Run runs the daemon until ctx ends, then shuts it down. It returns nil
// after a clean shutdown.
func Run(ctx context.Context, cfg Config, opt Options) (err error) {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opt.Env == nil {
		opt.Env = os.LookupEnv
	}

	checkFileLimit(cfg, log)
	st, driver, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	noteSpaceReuse(st, log)
	defer func() {
		if cerr := st.Close(); cerr != nil {
			log.Error("closing the store", "err", cerr)
			err = errors.Join(err, cerr)
		}
	}()

	if cfg.Shards == 0 {
		// InitShards records the count on a new store and returns the
		// recorded one on any other.
		if cfg.Shards, err = st.InitShards(ctx, defaultShards(driver)); err != nil {
			return fmt.Errorf("shard count: %w", err)
		}
	}
	m := metrics.New()
	eng, err := engine.New(ctx, engine.Config{
		Store: st, Clock: clock.Real{}, Logger: log,
		NodeID: cfg.NodeID, NodeAddress: listenAddresses(cfg.Listen, cfg.TLSEnabled()), Shards: cfg.Shards, Horizon: cfg.Horizon,
		ShardLease: cfg.ShardLease, Metrics: m, AuditRetention: auditRetention(cfg.AuditRetention),
		// Every tenant's quotas unless it has its own.
		TenantDefaults: tenantDefaults(cfg),
		TargetKinds:    kinds.New(kinds.Options{WebhookAllow: cfg.WebhookAllow, Name: "schedd " + cfg.NodeID}),
	})
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{
		Engine: eng, Version: opt.Version, NodeID: cfg.NodeID, Shards: cfg.Shards,
		StoreDriver: driver, Token: cfg.Token, Logger: log, Metrics: m,
		MaxWaitingClaims: cfg.MaxWaitingClaims,
		APIRate:          cfg.APIRate, APIBurst: cfg.APIBurst, MaxWaitingClaimsPerTenant: cfg.MaxWaitingClaimsPerTenant,
		AuthFailureRate: cfg.AuthFailureRate,
		Reconcile: func(ctx context.Context, o reconcile.Options) (*api.ReconcileReport, error) {
			// The audit reads occurrence rows: the runs are folded first.
			if err := engine.FoldTenant(ctx, st, o.TenantID); err != nil {
				return nil, err
			}
			return reconcile.Report(ctx, st, o)
		},
		WhatIf: simulate.Server{Limits: APISimulateLimits},
		Ready: func(ctx context.Context) error {
			_, err := st.ListShardLeases(ctx)
			return err
		},
	})
	if err != nil {
		return err
	}
	var certs *certReloader
	if cfg.TLSEnabled() {
		if certs, err = newCertReloader(cfg.TLSCert, cfg.TLSKey, log); err != nil {
			return err
		}
		if !hasTCP(cfg.Listen) {
			log.Warn("--tls-cert is given but no --listen address is TCP; Unix sockets do not use TLS")
		}
	}
	tlsConfig, err := serverTLS(cfg, certs)
	if err != nil {
		return err
	}
	mem := newMemReleaser(log)
	lns, err := listenAll(cfg, opt.Env, tlsConfig, log, mem, m)
	if err != nil {
		return err
	}
	reloadDone := make(chan struct{})
	var reloading sync.WaitGroup
	tzCtx, tzStop := context.WithCancel(context.Background())
	defer tzStop()
	reloading.Go(func() { reloadOnSignal(opt.Reload, reloadDone, certs, log, func() { reloadTZ(tzCtx, eng, log) }) })
	defer func() {
		close(reloadDone)
		reloading.Wait()
	}()
	if err := eng.Start(context.Background()); err != nil {
		for _, l := range lns {
			l.Close()
		}
		return err
	}
	defer eng.Stop() // releases the shard leases; runs before the store closes
	defer tzStop()   // a tz reload in progress gives up before the engine stops
	memCtx, memStop := context.WithCancel(context.Background())
	memDone := make(chan struct{})
	go func() { defer close(memDone); mem.run(memCtx) }()
	defer func() { memStop(); <-memDone }()

	errLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	servers := make([]*http.Server, len(lns))
	serveErr := make(chan error, len(lns))
	listening := make([]string, len(lns))
	for i, ln := range lns {
		handler := srv.Handler()
		if cfg.Listen[i].Network == "unix" {
			// The socket's owner alone can connect (credListener), and
			// the members of --socket-group on a socket it shares: a
			// request without a token acts as the admin of the default
			// tenant.
			handler = server.Local(handler)
		}
		if cfg.Listen[i].Network == "tcp" && isLoopback(hostOf(cfg.Listen[i].Address)) {
			handler = loopbackHosts(handler)
		}
		hs := &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: ReadHeaderTimeout,
			IdleTimeout:       IdleTimeout,
			MaxHeaderBytes:    MaxHeaderBytes,
			ErrorLog:          errLog,
		}
		servers[i] = hs
		listening[i] = ln.Addr().Network() + ":" + ln.Addr().String()
		go func() {
			if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				serveErr <- fmt.Errorf("serve %s: %w", listening[i], err)
			}
		}()
	}
	log.Info("schedd started", "version", opt.Version, "tz_version", timetable.TZVersion(),
		"store", cfg.RedactedStore(), "listen", strings.Join(listening, ","),
		"node_id", cfg.NodeID, "shards", cfg.Shards, "horizon", cfg.Horizon.String(),
		"shard_lease", cfg.ShardLease.String(), "clock_offset", eng.Cluster.ClockOffset().String(),
		"auth", cfg.Token != "", "tls", tlsConfig != nil, "mtls", cfg.TLSClientCA != "", "pid", os.Getpid())
	notifyReady(opt.Env, log)

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", context.Cause(ctx).Error())
	case runErr = <-serveErr:
		log.Error("a listener failed; shutting down", "err", runErr)
	}
	notifyStopping(opt.Env, log)
	shutdown(srv, servers, log)
	eng.Stop()
	log.Info("schedd stopped")
	return runErr
}

// hasTCP reports whether any listener is TCP.
func hasTCP(ls []Listen) bool {
	for _, l := range ls {
		if l.Network == "tcp" {
			return true
		}
	}
	return false
}

// openStore opens the configured store and names its driver.
func openStore(ctx context.Context, cfg Config) (store.Store, string, error) {
	if cfg.PostgresDSN != "" {
		var opts []postgres.Option
		if cfg.PostgresSchema != "" {
			opts = append(opts, postgres.WithSchema(cfg.PostgresSchema))
		}
		st, err := postgres.Open(ctx, cfg.PostgresDSN, opts...)
		if err != nil {
			return nil, "", fmt.Errorf("cannot open the store %s: %w", cfg.RedactedStore(), err)
		}
		return st, "postgres", nil
	}
	if cfg.DefaultStore {
		if err := os.MkdirAll(filepath.Dir(cfg.StorePath), 0o700); err != nil {
			return nil, "", fmt.Errorf("create the data directory: %w", err)
		}
	} else if _, err := os.Stat(filepath.Dir(cfg.StorePath)); errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("cannot open the store %s: the directory %s does not exist; create it first", cfg.StorePath, filepath.Dir(cfg.StorePath))
	}
	st, err := sqlite.Open(ctx, cfg.StorePath)
	switch {
	case errors.Is(err, sqlite.ErrInUse):
		return nil, "", &inUseError{path: cfg.StorePath, holder: unwrapInUse(err)}
	case errors.Is(err, store.ErrCorrupt):
		return nil, "", fmt.Errorf("the database %s is corrupt; refusing to serve it (restore a backup): %w", cfg.StorePath, err)
	case err != nil:
		return nil, "", err
	}
	return st, "sqlite", nil
}

// listenAddresses is the node's address in the registry, in the forms
// clients dial: a TCP listener serving TLS is tls:HOST:PORT.
func listenAddresses(ls []Listen, tlsOn bool) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
		if tlsOn && l.Network == "tcp" {
			out[i] = "tls:" + l.Address
		}
	}
	return strings.Join(out, ",")
}

// shutdown drains the API and shuts the HTTP servers down, forcing the
// connections still open after ShutdownTimeout closed.
func shutdown(srv *server.Server, servers []*http.Server, log *slog.Logger) {
	srv.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, hs := range servers {
		wg.Go(func() {
			if err := hs.Shutdown(ctx); err != nil {
				log.Warn("requests still running at the shutdown deadline; closing their connections", "err", err)
				hs.Close()
			}
		})
	}
	wg.Wait()
}

// loopbackHosts refuses requests to a loopback listener whose Host is not
// a loopback name or address: a web page that rebinds its own domain name
// to 127.0.0.1 (DNS rebinding) sends its own name as the Host.
func loopbackHosts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopback(hostOf(r.Host)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"code":"bad_request","message":"the Host header does not name this loopback daemon"}}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostOf is the host part of HOST:PORT, or all of it when there is no port.
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// inUseError is a SQLite database another process holds: it names the
// file and the holder, and is sqlite.ErrInUse to errors.Is.
type inUseError struct{ path, holder string }

func (e *inUseError) Error() string {
	return fmt.Sprintf("another schedd is running on %s (%v)", e.path, e.holder)
}
func (e *inUseError) Unwrap() error { return sqlite.ErrInUse }

// unwrapInUse keeps the lock holder's part of the store's message.
func unwrapInUse(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, sqlite.ErrInUse.Error()+": "); i >= 0 {
		return msg[i+len(sqlite.ErrInUse.Error())+2:]
	}
	return msg
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// defaultShards is the shard count of a new store opened by driver, as
// the driver suggests it: one on SQLite, where one node plans alone, and
// sixteen on PostgreSQL, where nodes share them.
func defaultShards(driver string) int {
	if driver == "sqlite" {
		return sqlite.DefaultShards
	}
	return postgres.DefaultShards
}

// auditRetention is --audit-retention as the engine takes it: 0 (keep
// forever) is a negative retention there, where 0 is the default.
func auditRetention(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
