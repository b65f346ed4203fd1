package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/store"
)

// Defaults for Config.
const (
	// DefaultShards is Config.Shards when it is zero. schedd picks the
	// count of a new store from its driver (sqlite.DefaultShards,
	// postgres.DefaultShards) and passes it.
	DefaultShards        = 16
	DefaultHorizon       = time.Minute
	DefaultShardLease    = 10 * time.Second
	DefaultTick          = time.Second
	DefaultPlanBatch     = 5000
	DefaultMaxFirings    = 1000
	DefaultLateScan      = 1_000_000
	DefaultMaxMissedRows = 100
	DefaultRetryBudget   = 10_000
	DefaultCatchUpRate   = 10.0
	DefaultClaimLease    = 30 * time.Second
	DefaultStatsEvery    = 5 * time.Second
	MaxClaimBatch        = 1000
)

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
	// node's registration lives as long, renewed every planner pass.
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
	// CatchUpRate paces one tenant's catch-up firings, per second.
	CatchUpRate float64
	// Metrics receives the engine's counters and histograms, and serves
	// its store-backed gauges. Nil: a private set nobody reads.
	Metrics *metrics.Metrics
	// StatsEvery is how often the node writes its per-minute figures to
	// the store, and how long a store snapshot is reused (status, top and
	// the gauges read it); DefaultStatsEvery when zero.
	StatsEvery time.Duration
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
	if c.CatchUpRate <= 0 {
		c.CatchUpRate = DefaultCatchUpRate
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New()
	}
	setDur(&c.StatsEvery, DefaultStatsEvery)
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

// Engine is one node of the scheduler: the facade the API server uses.
// Its methods are safe for concurrent use. The control plane and the queue
// work without Start; Start runs the planner in the background.
//
// It is made of parts that each hold what they use and nothing of the
// Engine: the planner (planner.go), the node's place in the cluster and
// its health (cluster.go: heartbeat, shard leases, clock offset, store
// errors), the claim-lease sweeper, the notifier that wakes waiting
// claims, and the observer that counts what happened (observe.go). The
// control plane and the queue are the Engine's own methods.
type Engine struct {
	cfg   Config
	store store.Store
	clock clock.Clock
	log   *slog.Logger

	*observer // metrics and per-minute figures (observe.go, stats.go)

	planner *planner
	member  *member
	sweeper *sweeper
	notify  *notifier
	snap    snapshotCache // the store's last snapshot (stats.go)

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
	e := &Engine{cfg: cfg, store: cfg.Store, clock: cfg.Clock, log: cfg.Logger, observer: &observer{metrics: cfg.Metrics}}
	var clockSrc store.ClockSource
	if cs, ok := cfg.Store.(store.ClockSource); ok && !cfg.IgnoreStoreClock {
		clockSrc = cs
	}
	e.member, err = newMember(ctx, memberConfig{NodeID: cfg.NodeID, NodeAddress: cfg.NodeAddress, Shards: cfg.Shards, ShardLease: cfg.ShardLease},
		cfg.Store, cfg.Clock, cfg.Logger, cfg.Metrics, clockSrc)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.notify = newNotifier()
	e.sweeper = &sweeper{store: cfg.Store, obs: e.observer, notify: e.notify}
	e.planner = newPlanner(plannerConfig{
		Shards: cfg.Shards, Horizon: cfg.Horizon, ShardLease: cfg.ShardLease, Tick: cfg.Tick, PlanBatch: cfg.PlanBatch,
		MaxFirings: cfg.MaxFirings, LateScan: cfg.LateScan, MaxMissedRows: cfg.MaxMissedRows, CatchUpRate: cfg.CatchUpRate,
	}, cfg.Store, cfg.Clock, cfg.Logger, e.observer, e.member, e.sweeper, e.notify)
	e.metrics.SetGaugeSource(e.gauges)
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
		wg.Go(func() { e.flushStatsLoop(ctx) })
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
		e.flushStats(ctx) // the figures of the last seconds
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

// Now is the time the engine acts on: its clock plus the measured offset
// to the store's clock (see ClockOffset), in UTC.
func (e *Engine) Now() time.Time { return e.now() }

func (e *Engine) now() time.Time { return e.member.now() }

// ClockOffset is the last measured offset between the store's clock and
// this node's (the store's minus ours); 0 on a store without a clock of
// its own (SQLite). The planner measures it again every pass, and every
// comparison the store makes with "now" (shard leases, plan commits,
// claims, claim leases) uses the engine's clock plus this offset, so that
// a node with a skewed clock can neither fire early nor steal a live
// lease.
func (e *Engine) ClockOffset() time.Duration { return e.member.clockOffset() }

// NoteStoreErr records a failed store operation: the planner calls it for
// its own writes, the API server for the requests'. It counts the store's
// own failures (busy, full, corrupt, stale epoch) in the metrics, and
// remembers when a write last failed with store.ErrStoreFull (readiness).
// Other errors (nil, a refused request) are ignored.
func (e *Engine) NoteStoreErr(err error) { e.member.noteStoreErr(err) }

// StoreFullWithin reports whether a write failed with store.ErrStoreFull
// within the last d: /readyz answers 503 while it does. There is no
// "space is back" signal: readiness returns d after the last failed
// write, and the planner writes every pass, so a store still full keeps
// failing and keeps the node not ready.
func (e *Engine) StoreFullWithin(d time.Duration) bool { return e.member.storeFullWithin(d) }

// Nodes returns the store's node registry, live or expired (see
// store.NodeStore); a node is live while ExpiresAt is after Now().
func (e *Engine) Nodes(ctx context.Context) ([]store.Node, error) {
	return e.store.ListNodes(ctx)
}

// ShardLeases returns every shard lease, live or expired, by shard.
func (e *Engine) ShardLeases(ctx context.Context) ([]store.ShardLease, error) {
	return e.store.ListShardLeases(ctx)
}

// NodeID is this node's name in the registry and on its shard leases.
func (e *Engine) NodeID() string { return e.cfg.NodeID }

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
}

// expire makes occurrences whose claim lease ran out claimable again (or
// DEAD when they are out of attempts, or CANCELED when their schedule
// moved on) and wakes waiting claims.
func (s *sweeper) expire(ctx context.Context, now time.Time) (int, error) {
	s.lastSweep.Store(now.UnixMilli())
	r, err := ExpireLeases(ctx, s.store, now, 10_000)
	if err != nil {
		return 0, fmt.Errorf("expire claim leases: %w", err)
	}
	s.obs.observeExpiry(now, r)
	if r.Expired > 0 {
		s.notify.broadcast()
	}
	return r.Expired, nil
}

// maybe sweeps if no sweep ran in the last sweepEvery.
func (s *sweeper) maybe(ctx context.Context, now time.Time) error {
	if now.UnixMilli()-s.lastSweep.Load() < sweepEvery.Milliseconds() {
		return nil
	}
	_, err := s.expire(ctx, now)
	return err
}

// maybeExpireLeases is the claims' sweep (see sweeper.maybe).
func (e *Engine) maybeExpireLeases(ctx context.Context, now time.Time) error {
	return e.sweeper.maybe(ctx, now)
}
