package engine

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// Defaults for Config.
const (
	// DefaultShards is Config.Shards when it is zero. schedd picks the
	// count of a new store from its driver (sqlite.DefaultShards,
	// postgres.DefaultShards) and passes it.
	DefaultShards           = 16
	DefaultHorizon          = time.Minute
	DefaultShardLease       = 10 * time.Second
	DefaultTick             = time.Second
	DefaultPlanBatch        = 5000
	DefaultMaxFirings       = 1000
	DefaultLateScan         = 1_000_000
	DefaultMaxMissedRows    = 100
	DefaultRetryBudget      = 10_000
	DefaultCatchUpPerSecond = 10
	DefaultClaimLease       = 30 * time.Second
	DefaultStatsEvery       = 5 * time.Second
	MaxClaimBatch           = 1000
)

// DeadNodeLeases is how many shard leases (Config.ShardLease) old a
// node's last heartbeat must be before the live nodes remove its row
// from the registry, once its registration and every shard lease it
// held have expired (store.NodeStore.RemoveDeadNodes): 30 s at the
// default lease. A dead node's row expires one lease after its last
// heartbeat and its shards move when their leases do, so by then it
// has been shown not live for two leases, long enough for an
// operator to see it go, while a node paused for a lease or two (a
// stalled disk, a store that refused a few heartbeats) is not taken
// out and put back. `schedctl cluster forget` removes one sooner.
const DeadNodeLeases = 3

// Config configures an Engine. Store and Clock are required; every other
// zero field takes its default.
type Config struct {
	Store  store.Store
	Clock  clock.Clock
	Logger *slog.Logger

	// NodeID names this node as the owner of shard leases and in the
	// store's node registry. Every node on one store needs its own.
	NodeID string
	// NodeAddress is where this node serves the API, recorded in the node
	// registry for operators (`schedctl cluster`). Informational.
	NodeAddress string
	// IgnoreStoreClock keeps the engine on its own clock even when the
	// store has one (store.ClockSource). Only for tests that drive a
	// virtual clock on such a store: the store's offset is measured
	// against the real clock.
	IgnoreStoreClock bool
	// Shards is the number of logical shards. It is fixed for the life of a
	// database: the first node stores it and a node configured otherwise
	// refuses to start.
	Shards int
	// Horizon is how far ahead of now the planner materializes firings.
	Horizon time.Duration
	// ShardLease is how long a shard lease lasts without renewal: at most
	// this long passes before a dead node's shards move. A
	// node's registration lives as long, renewed every planner pass; a
	// dead node's row is removed DeadNodeLeases leases after its last
	// heartbeat.
	ShardLease time.Duration
	// Tick is how often the background planner runs when nothing wakes it.
	Tick time.Duration
	// PlanBatch is how many schedules one planner transaction advances.
	PlanBatch int
	// MaxFirings bounds the on-time firings one schedule materializes per
	// planner pass; LateScan bounds the late firings it walks past.
	MaxFirings int
	LateScan   int
	// MaxMissedRows bounds the MISSED rows written per recovery of one
	// schedule; the rest are counted.
	MaxMissedRows int
	// RetryBudget is how many of one tenant's occurrences may wait for a
	// retry at once; a retryable failure beyond it goes DEAD.
	RetryBudget int
	// Metrics receives the engine's counters and histograms, and serves
	// its store-backed gauges. Nil: a private set nobody reads.
	Metrics *metrics.Metrics
	// StatsEvery is how often the node writes its per-minute figures to
	// the store, and how long a store snapshot is reused (status, top and
	// the gauges read it); DefaultStatsEvery when zero.
	StatsEvery time.Duration
	// Rand is where the engine draws the random part of the ids it mints
	// (a new schedule's id, a trigger's key when none is given). Nil is
	// crypto/rand; the what-if simulator passes a seeded stream, so that
	// the same input mints the same ids and gives byte-identical answers.
	// The engine serializes its reads, so any io.Reader will do.
	Rand io.Reader
	// TenantDefaults are the quotas of a tenant that sets none of its own
	// (record.Quotas: zero fields are unlimited here, but for
	// CatchUpPerSecond, whose zero is DefaultCatchUpPerSecond: catch-up
	// firings after an outage are always paced).
	TenantDefaults record.Quotas
	// AuditRetention is how long the audit log keeps a row (audit.go):
	// DefaultAuditRetention when zero; negative keeps every row forever.
	AuditRetention time.Duration
	// TargetKinds checks and opens targets (internal/target/kinds). Nil:
	// the node manages no targets and runs no relay.
	TargetKinds TargetKinds

	// relayLease replaces relayLease in tests (a crashed relay's claims
	// come back sooner); zero is relayLease.
	relayLease time.Duration
}

func (c *Config) setDefaults() error {
	if c.Store == nil || c.Clock == nil {
		return errors.New("engine: config needs a Store and a Clock")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.NodeID == "" {
		c.NodeID = "node-1"
	}
	setInt(&c.Shards, DefaultShards)
	setDur(&c.Horizon, DefaultHorizon)
	setDur(&c.ShardLease, DefaultShardLease)
	setDur(&c.Tick, DefaultTick)
	setInt(&c.PlanBatch, DefaultPlanBatch)
	setInt(&c.MaxFirings, DefaultMaxFirings)
	setInt(&c.LateScan, DefaultLateScan)
	setInt(&c.MaxMissedRows, DefaultMaxMissedRows)
	setInt(&c.RetryBudget, DefaultRetryBudget)
	if c.TenantDefaults.CatchUpPerSecond <= 0 {
		c.TenantDefaults.CatchUpPerSecond = DefaultCatchUpPerSecond
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New()
	}
	setDur(&c.StatsEvery, DefaultStatsEvery)
	if c.Rand == nil {
		c.Rand = rand.Reader
	} else {
		c.Rand = &lockedReader{r: c.Rand}
	}
	if c.Shards > 4096 {
		return fmt.Errorf("engine: %d shards is over 4096", c.Shards)
	}
	return nil
}

func setInt(p *int, d int) {
	if *p <= 0 {
		*p = d
	}
}

func setDur(p *time.Duration, d time.Duration) {
	if *p <= 0 {
		*p = d
	}
}

// Engine is one node of the scheduler. It builds the node's parts in New
// and runs its background work (the planner, the figures' flush, the
// store's notifications) between Start and Stop. The API server calls the
// parts through its fields: Control (the control plane), Queue (the
// queue), Cluster (this node's view of the cluster and its health) and
// Stats (the figures); each is safe for concurrent use and works without
// Start. The package documentation describes every part and what it
// holds; none holds a pointer back to the Engine.
type Engine struct {
	// Control is the control plane; Queue the queue; Cluster this node's
	// view of the cluster; Stats the figures. New sets them; they are not
	// to be replaced.
	Control *Control
	Queue   *Queue
	Cluster *Cluster
	Stats   *Stats
	// Outages starts, ends and reports simulated outages (outage.go).
	Outages *Outages
	// Tenants manages tenants and tokens and authenticates requests
	// (tenants.go).
	Tenants *Tenants
	// Audit reads the audit log and keeps it to its retention (audit.go).
	Audit *Audit
	// Retention removes finished history past its age (retention.go).
	Retention *Retention
	// TZ reloads the tz database and moves the firings whose zone's
	// rules changed (tzreload.go).
	TZ *TZ
	// Targets manages tenants' targets (targets.go); the relay delivers
	// their firings (relay.go).
	Targets *Targets

	store store.Store
	log   *slog.Logger

	planner *planner
	member  *member
	notify  *notifier
	relay   *relay // nil without Config.TargetKinds

	stopMu  sync.Mutex // serializes Stop
	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	started bool
}

// New returns an engine on cfg.Store. It checks that the store's shard
// count matches cfg.Shards (storing it on first use).
func New(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	n, err := cfg.Store.InitShards(ctx, cfg.Shards)
	if err != nil {
		return nil, fmt.Errorf("engine: shard count: %w", err)
	}
	if n != cfg.Shards {
		return nil, fmt.Errorf("engine: the store was set up with %d shards, not %d; start with --shards %d", n, cfg.Shards, n)
	}
	var clockSrc store.ClockSource
	if cs, ok := cfg.Store.(store.ClockSource); ok && !cfg.IgnoreStoreClock {
		clockSrc = cs
	}
	mem, err := newMember(ctx, memberConfig{NodeID: cfg.NodeID, NodeAddress: cfg.NodeAddress, Shards: cfg.Shards, ShardLease: cfg.ShardLease},
		cfg.Store, cfg.Clock, cfg.Logger, cfg.Metrics, clockSrc)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	obs := &observer{metrics: cfg.Metrics}
	notify := newNotifier()
	watch := &outageWatch{store: cfg.Store, shards: cfg.Shards, metrics: cfg.Metrics}
	book := newRunBook()
	sweep := &sweeper{store: cfg.Store, obs: obs, notify: notify, book: book}
	pl := newPlanner(plannerConfig{
		Shards: cfg.Shards, Horizon: cfg.Horizon, ShardLease: cfg.ShardLease, Tick: cfg.Tick, PlanBatch: cfg.PlanBatch,
		MaxFirings: cfg.MaxFirings, LateScan: cfg.LateScan, MaxMissedRows: cfg.MaxMissedRows,
	}, cfg.Store, cfg.Clock, cfg.Logger, obs, mem, sweep, notify)
	pl.outage = watch
	// Before anything can compute a cursor (tzreload.go).
	if err := pl.recordNewShards(ctx); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{
		Control: &Control{shards: cfg.Shards, rand: cfg.Rand, store: cfg.Store, member: mem, metrics: cfg.Metrics, planner: pl, notify: notify},
		Queue: &Queue{book: book, retryBudget: cfg.RetryBudget, store: cfg.Store, clock: cfg.Clock, log: cfg.Logger, member: mem,
			obs: obs, sweeper: sweep, notify: notify, outage: watch},
		Cluster: &Cluster{nodeID: cfg.NodeID, store: cfg.Store, member: mem},
		Stats: &Stats{nodeID: cfg.NodeID, every: cfg.StatsEvery, store: cfg.Store, clock: cfg.Clock, log: cfg.Logger,
			member: mem, rec: &obs.rec, metrics: cfg.Metrics},
		Outages: &Outages{nodeID: cfg.NodeID, shards: cfg.Shards, store: cfg.Store, log: cfg.Logger, member: mem,
			watch: watch, notify: notify, planner: pl},
		Tenants: &Tenants{store: cfg.Store, member: mem, defaults: cfg.TenantDefaults},
		Audit:   &Audit{store: cfg.Store, clock: cfg.Clock, member: mem, log: cfg.Logger, retention: auditRetention(cfg.AuditRetention)},
		store:   cfg.Store, log: cfg.Logger, planner: pl, member: mem, notify: notify,
	}
	e.Retention = &Retention{store: cfg.Store, clock: cfg.Clock, member: mem, log: cfg.Logger, metrics: cfg.Metrics,
		defaults: cfg.TenantDefaults}
	e.Targets = &Targets{store: cfg.Store, member: mem, kinds: cfg.TargetKinds}
	if cfg.TargetKinds != nil {
		e.relay = &relay{queue: e.Queue, store: cfg.Store, kinds: cfg.TargetKinds, clock: cfg.Clock,
			log: cfg.Logger, worker: "relay@" + cfg.NodeID, lease: cmp.Or(cfg.relayLease, relayLease)}
	}
	e.Stats.afterFlush = e.Audit.maybePurge // the audit log's retention (audit.go)
	e.Queue.tenants = e.Tenants
	pl.tenants, e.Control.tenants = e.Tenants, e.Tenants
	if err := e.Tenants.ensureDefault(ctx); err != nil {
		return nil, fmt.Errorf("engine: the default tenant: %w", err)
	}
	// A node started on another tz database than the one its shards were
	// planned under rezones them at its passes (tzreload.go).
	e.TZ = &TZ{planner: pl}
	// A node that starts ends any simulated outage in progress (outage.go).
	if err := endsOutages(ctx, e.Outages); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	cfg.Metrics.SetGaugeSource(e.Stats.gauges)
	return e, nil
}

// Start runs the planner in the background until Stop or until ctx ends,
// and, on a store that notifies other nodes of its writes (PostgreSQL's
// LISTEN/NOTIFY, see notify.go), a listener that wakes this node's waiting
// claims and planner at once.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started {
		return errors.New("engine: already started")
	}
	ctx, e.cancel = context.WithCancel(ctx)
	e.done = make(chan struct{})
	e.started = true
	listen := e.startNotifications(ctx)
	go func() {
		defer close(e.done)
		var wg sync.WaitGroup
		if listen != nil {
			wg.Go(listen)
		}
		wg.Go(func() { e.Stats.flushLoop(ctx) })
		wg.Go(func() { e.Retention.loop(ctx) })
		if e.relay != nil {
			wg.Go(func() { e.relay.run(ctx) })
		}
		e.planner.run(ctx)
		wg.Wait()
	}()
	return nil
}

// Stop stops the planner, waits for the batch it is committing, releases
// its shard leases so another node can take them at once, and takes the
// node out of the registry, so that the others count one node fewer at
// their next pass (a clean handover). It is safe to call twice or before
// Start; an engine driven by PlanOnce alone (tests) is handed over too.
func (e *Engine) Stop() {
	e.stopMu.Lock()
	defer e.stopMu.Unlock()
	e.mu.Lock()
	cancel, done := e.cancel, e.done
	e.cancel = nil
	e.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
		e.mu.Lock()
		e.started = false
		e.mu.Unlock()
	}
	// A fresh context: the run's one has ended, and the release should
	// still reach the store.
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if cancel != nil {
		e.Stats.flush(ctx) // the figures of the last seconds
	}
	e.member.leave(ctx)
}

// PlanOnce runs one full planner pass now: take or renew shard leases,
// materialize every due schedule of the shards held, and expire lapsed
// claim leases. The background planner runs it every tick; tests call it
// after moving a virtual clock.
func (e *Engine) PlanOnce(ctx context.Context) (PlanStats, error) {
	return e.planner.pass(ctx)
}

// notifier wakes waiting claims when occurrences may have become
// available: a channel closed and replaced on every notification.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

// wait returns a channel closed at the next notification.
func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

func (n *notifier) broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.ch)
	n.ch = make(chan struct{})
}

// sweepEvery is how often claims sweep lapsed claim leases themselves, so a
// node whose planner is stopped (or that holds no shard) still redelivers.
const sweepEvery = 250 * time.Millisecond

// sweeper ends lapsed claim leases: the planner at the end of every pass,
// and claims themselves at most every sweepEvery.
type sweeper struct {
	store     store.Store
	obs       *observer
	notify    *notifier
	lastSweep atomic.Int64 // unix ms of the last sweep
	book      *runBook     // the node's runs, forgotten as they are folded
}

// expire makes occurrences whose claim lease ran out claimable again (or
// DEAD when they are out of attempts, or CANCELED when their schedule
// moved on) and wakes waiting claims.
func (s *sweeper) expire(ctx context.Context, now time.Time) (int, error) {
	s.lastSweep.Store(now.UnixMilli())
	r, err := expireLeases(ctx, s.store, now, 10_000, s.book)
	if err != nil {
		return 0, fmt.Errorf("expire claim leases: %w", err)
	}
	s.obs.observeExpiry(now, r)
	if r.Expired > 0 {
		s.notify.broadcast()
	}
	return r.Expired, nil
}

// fold runs one background fold of runs acked whole (runs.go): the
// planner's pass calls it, never a claim.
func (s *sweeper) fold(ctx context.Context, now time.Time) (int, error) {
	return foldFinished(ctx, s.store, now, s.book)
}

// maybe sweeps if no sweep ran in the last sweepEvery.
func (s *sweeper) maybe(ctx context.Context, now time.Time) error {
	if now.UnixMilli()-s.lastSweep.Load() < sweepEvery.Milliseconds() {
		return nil
	}
	_, err := s.expire(ctx, now)
	return err
}

// lockedReader serializes the reads of a reader that is not safe for
// concurrent use (a seeded stream), since requests create schedules
// concurrently.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}
