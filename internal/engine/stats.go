package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/store"
)

// Cluster-wide figures. Each node counts what it does per minute (lag
// histograms, events, its last planner pass) and writes the current
// minutes to the store every StatsEvery (store.StatMinute), keeping two
// hours; Status adds every node's rows up. The queue itself (depth, the
// oldest ready occurrence, the due backlog) is read from the store
// (store.Snapshot), reused for StatsEvery so that status, top and
// Prometheus scrapes cost at most one snapshot per period; a tenant's
// status reads and caches the tenant's own snapshot, and none of the
// per-minute figures, which are counted across tenants. So any node
// answers for the whole cluster, and a node that restarts loses at most
// the figures of its last StatsEvery.

// statsKeep is how long per-minute figures stay in the store.
const statsKeep = 2 * time.Hour

// events counts what happened in a minute.
type events struct {
	Materialized   int64 `json:"materialized,omitempty"`
	Missed         int64 `json:"missed,omitempty"` // rows and counted
	SkippedOverlap int64 `json:"skipped_overlap,omitempty"`
	Claims         int64 `json:"claims,omitempty"`
	Acks           int64 `json:"acks,omitempty"`
	Dead           int64 `json:"dead,omitempty"`
	Redeliveries   int64 `json:"redeliveries,omitempty"`
}

func (a *events) add(b events) {
	a.Materialized += b.Materialized
	a.Missed += b.Missed
	a.SkippedOverlap += b.SkippedOverlap
	a.Claims += b.Claims
	a.Acks += b.Acks
	a.Dead += b.Dead
	a.Redeliveries += b.Redeliveries
}

// minuteFigures is one node's figures for one minute: StatMinute.Data.
// Lag histograms count samples per bucket of metrics.LagBuckets (one more
// entry for +Inf).
type minuteFigures struct {
	ScheduleLag []int64     `json:"schedule_lag,omitempty"`
	DeliveryLag []int64     `json:"delivery_lag,omitempty"`
	Events      events      `json:"events"`
	LastPass    *PassFigure `json:"last_pass,omitempty"`
}

// PassFigure is the figures of one planner pass.
type PassFigure struct {
	At           time.Time     `json:"at"`
	Duration     time.Duration `json:"duration"`
	Shards       int           `json:"shards"`
	Schedules    int           `json:"schedules"`
	Materialized int           `json:"materialized"`
	Missed       int           `json:"missed"`
	// HorizonSlack is the latest firing written by the pass minus its
	// start; zero when it wrote none.
	HorizonSlack time.Duration `json:"horizon_slack"`
}

// recorder keeps this node's figures of the minutes not yet written.
type recorder struct {
	mu       sync.Mutex
	minutes  map[int64]*minuteFigures // by the minute's start, unix ms
	lastPass *PassFigure

	// flushMu serializes flushes (the timer's and those a status asks
	// for), so that an older copy of a minute never overwrites a newer
	// one; flushedAt is when the last one ran (the engine's clock).
	flushMu   sync.Mutex
	flushedAt time.Time
}

// lagKind names one of a minute's lag histograms.
type lagKind int

const (
	scheduleLag lagKind = iota // enqueued_at - scheduled_for
	deliveryLag                // first claim - scheduled_for
)

func (r *recorder) at(now time.Time) *minuteFigures {
	k := now.Truncate(time.Minute).UnixMilli()
	if r.minutes == nil {
		r.minutes = map[int64]*minuteFigures{}
	}
	f := r.minutes[k]
	if f == nil {
		f = &minuteFigures{}
		r.minutes[k] = f
	}
	return f
}

func (r *recorder) add(now time.Time, fn func(*minuteFigures)) {
	r.mu.Lock()
	fn(r.at(now))
	r.mu.Unlock()
}

// addLags adds a batch's lag samples (counts per bucket, nil for none) to
// the minute's histogram of kind.
func (f *minuteFigures) addLags(kind lagKind, counts []int64) {
	if counts == nil {
		return
	}
	h := &f.ScheduleLag
	if kind == deliveryLag {
		h = &f.DeliveryLag
	}
	if *h == nil {
		*h = make([]int64, len(metrics.LagBuckets)+1)
	}
	addCounts(*h, counts)
}

func (r *recorder) pass(p PassFigure) {
	r.mu.Lock()
	r.lastPass = &p
	r.at(p.At)
	r.mu.Unlock()
}

// take returns the rows to write for node at now: every minute held, the
// current one with the last pass.
func (r *recorder) take(node string, now time.Time) ([]store.StatMinute, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastPass != nil {
		r.at(now).LastPass = r.lastPass
	}
	rows := make([]store.StatMinute, 0, len(r.minutes))
	for k, f := range r.minutes {
		b, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		rows = append(rows, store.StatMinute{NodeID: node, Minute: time.UnixMilli(k).UTC(), Data: b})
	}
	return rows, nil
}

// forget drops the minutes that ended more than a minute before now, once
// they are written: an event may still be stamped with the minute that
// just ended (its time was read before the minute turned), so that one is
// written once more at the next flush.
func (r *recorder) forget(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := now.Truncate(time.Minute).Add(-time.Minute).UnixMilli()
	for k := range r.minutes {
		if k < keep {
			delete(r.minutes, k)
		}
	}
}

// Stats is the cluster-wide figures: the queue's snapshot (read from the
// store, reused for StatsEvery), the per-minute figures every node writes
// (this node's come from the observer), and their sum, Status. It also
// serves the store-backed gauges of the metrics.
type Stats struct {
	nodeID  string        // the node whose figures this one writes
	every   time.Duration // Config.StatsEvery
	store   store.Store
	clock   clock.Clock // the engine's clock: when the cache and the last flush are fresh
	log     *slog.Logger
	member  *member   // the node's now, store errors, the leases it holds
	rec     *recorder // this node's figures not yet written (the observer's)
	metrics *metrics.Metrics
	snap    snapshotCache
	// afterFlush, when set, runs after every background flush: other
	// periodic upkeep that rides on this loop rather than sleeping on the
	// clock in a loop of its own (the audit log's purge).
	afterFlush func(context.Context)
}

// flush writes this node's current figures to the store. A minute's
// row is rewritten whole at every flush, and kept in memory until written,
// so a failed write loses nothing but is logged and retried at the next.
func (s *Stats) flush(ctx context.Context) {
	s.rec.flushMu.Lock()
	defer s.rec.flushMu.Unlock()
	s.rec.flushedAt = s.clock.Now()
	now := s.member.now()
	rows, err := s.rec.take(s.nodeID, now)
	if err == nil && len(rows) > 0 {
		err = s.store.WriteStatMinutes(ctx, rows, now.Add(-statsKeep))
	}
	if err != nil {
		if ctx.Err() == nil {
			s.member.noteStoreErr(err)
			s.log.Warn("write this node's figures", "err", err)
		}
		return
	}
	s.rec.forget(now)
}

// fresh flushes this node's figures unless a flush ran within the
// last second: a status answers with this node's latest figures, and a
// terminal polling status every second costs at most one write a second.
func (s *Stats) fresh(ctx context.Context) {
	s.rec.flushMu.Lock()
	recent := !s.rec.flushedAt.IsZero() && s.clock.Now().Sub(s.rec.flushedAt) < time.Second
	s.rec.flushMu.Unlock()
	if !recent {
		s.flush(ctx)
		if s.afterFlush != nil {
			s.afterFlush(ctx)
		}
	}
}

// flushLoop flushes every StatsEvery until ctx ends.
func (s *Stats) flushLoop(ctx context.Context) {
	for {
		t := s.clock.NewTimer(s.every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		s.flush(ctx)
	}
}

// snapshotCache holds the store's last snapshot of every tenant's queue,
// and of each tenant's that a tenant asked for, for StatsEvery. A tenant's
// entry is swept once it has not been asked for in a period (its snapshot
// is then stale anyway), so the cache holds the tenants that asked lately,
// never every tenant there is.
type snapshotCache struct {
	all cachedSnapshot

	mu      sync.Mutex // guards tenants and swept
	tenants map[string]*tenantSnapshot
	swept   time.Time // the engine's clock at the last sweep
}

// cachedSnapshot is one snapshot and when it was read.
type cachedSnapshot struct {
	mu   sync.Mutex // held while reading: concurrent callers wait for one read
	at   time.Time  // the engine's clock when it was read
	snap store.Snapshot
	now  time.Time // the snapshot's Now
}

// tenantSnapshot is a tenant's entry; used, guarded by snapshotCache.mu,
// is when it was last asked for.
type tenantSnapshot struct {
	cachedSnapshot
	used time.Time
}

// entry returns the cache entry of tenantID ("": every tenant's) at the
// engine's time local, made if there is none, after sweeping the tenants'
// entries not asked for within every (once per every).
func (c *snapshotCache) entry(tenantID string, local time.Time, every time.Duration) *cachedSnapshot {
	if tenantID == "" {
		return &c.all
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if local.Sub(c.swept) >= every || local.Before(c.swept) {
		for id, e := range c.tenants {
			if local.Sub(e.used) >= every || local.Before(e.used) {
				delete(c.tenants, id)
			}
		}
		c.swept = local
	}
	e := c.tenants[tenantID]
	if e == nil {
		if c.tenants == nil {
			c.tenants = map[string]*tenantSnapshot{}
		}
		e = &tenantSnapshot{}
		c.tenants[tenantID] = e
	}
	e.used = local
	return &e.cachedSnapshot
}

// Snapshot returns the store's snapshot of the queue, of every tenant
// (tenantID "") or of one tenant alone, as of at most StatsEvery ago, and
// the time it was taken at. Each tenant's is cached apart from every
// tenant's, so a tenant's status costs at most one snapshot of its own
// rows per period, however often it asks.
func (s *Stats) Snapshot(ctx context.Context, tenantID string) (store.Snapshot, time.Time, error) {
	c := s.snap.entry(tenantID, s.clock.Now(), s.every)
	c.mu.Lock() // held while reading: concurrent callers wait for one read
	defer c.mu.Unlock()
	local := s.clock.Now()
	if !c.at.IsZero() && local.Sub(c.at) < s.every && !local.Before(c.at) {
		return c.snap, c.now, nil
	}
	now := s.member.now().Truncate(time.Millisecond)
	// Buckets by clock minute (the first one holds the rest of the
	// current minute), so that a firing at 09:00:00 is counted in the
	// 09:00 bucket whenever the snapshot is taken.
	snap, err := s.store.Snapshot(ctx, store.SnapshotParams{Now: now, Buckets: 60, BacklogFrom: now.Truncate(time.Minute), TenantID: tenantID})
	if err != nil {
		s.member.noteStoreErr(err)
		return store.Snapshot{}, time.Time{}, fmt.Errorf("snapshot of the queue: %w", err)
	}
	c.at, c.snap, c.now = local, snap, now
	return snap, now, nil
}

// Status is the cluster's state as Stats.Status computes it, or one
// tenant's part of it.
type Status struct {
	// TenantID is the tenant whose status it is; "" for the whole
	// cluster's. A tenant's Snapshot holds the tenant's rows alone, and
	// its per-minute figures (LastPass, the lag histograms, the events)
	// are empty: they are counted per node, across every tenant, so they
	// are not the tenant's to see.
	TenantID string
	Now      time.Time
	StatsAt  time.Time // when Snapshot was taken
	Nodes    []store.Node
	Leases   []store.ShardLease
	// LastPass is each node's last planner pass, by node id, as the node
	// last wrote it.
	LastPass map[string]*PassFigure
	Snapshot store.Snapshot

	// Lag histograms (counts per bucket of metrics.LagBuckets, one more
	// for +Inf) over the last minute and the last hour.
	ScheduleLagMinute, ScheduleLagHour []int64
	DeliveryLagMinute, DeliveryLagHour []int64
	LastMinute, LastHour               events
	// MinuteWindow is how much time LastMinute covers: the current clock
	// minute so far and the whole previous one (60 to 120 s), since the
	// figures are kept per clock minute.
	MinuteWindow time.Duration
}

// EventCounts are the events of a window, as Status reports them.
type EventCounts = events

// Status computes the cluster's figures from the store, or, for a
// tenantID, that tenant's: its snapshot, and the nodes and shard leases
// (the cluster, no tenant's data), without the per-minute figures (see
// Status.TenantID). The cluster's first writes this node's own figures
// (unless it did within the last second), so the node that answers is
// never behind.
func (s *Stats) Status(ctx context.Context, tenantID string) (*Status, error) {
	if tenantID == "" {
		s.fresh(ctx)
	}
	snap, at, err := s.Snapshot(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	nodes, err := s.store.ListNodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("status: nodes: %w", err)
	}
	leases, err := s.store.ListShardLeases(ctx)
	if err != nil {
		return nil, fmt.Errorf("status: shard leases: %w", err)
	}
	now := s.member.now()
	if tenantID != "" {
		return &Status{TenantID: tenantID, Now: now, StatsAt: at, Nodes: nodes, Leases: leases, Snapshot: snap}, nil
	}
	rows, err := s.store.ReadStatMinutes(ctx, now.Add(-time.Hour).Truncate(time.Minute))
	if err != nil {
		return nil, fmt.Errorf("status: figures: %w", err)
	}
	st := &Status{Now: now, StatsAt: at, Nodes: nodes, Leases: leases, Snapshot: snap, LastPass: map[string]*PassFigure{}}
	minuteFrom := now.Truncate(time.Minute).Add(-time.Minute)
	st.MinuteWindow = now.Sub(minuteFrom)
	hourFrom := now.Add(-time.Hour)
	n := len(metrics.LagBuckets) + 1
	st.ScheduleLagMinute, st.ScheduleLagHour = make([]int64, n), make([]int64, n)
	st.DeliveryLagMinute, st.DeliveryLagHour = make([]int64, n), make([]int64, n)
	for _, r := range rows {
		var f minuteFigures
		if err := json.Unmarshal(r.Data, &f); err != nil {
			s.log.Warn("status: unreadable figures; skipped", "node", r.NodeID, "minute", r.Minute, "err", err)
			continue
		}
		if f.LastPass != nil { // rows come by minute: the last one wins
			st.LastPass[r.NodeID] = f.LastPass
		}
		// A minute counts in the last hour when it ends after the hour's
		// start.
		if r.Minute.Add(time.Minute).After(hourFrom) {
			addCounts(st.ScheduleLagHour, f.ScheduleLag)
			addCounts(st.DeliveryLagHour, f.DeliveryLag)
			st.LastHour.add(f.Events)
		}
		if !r.Minute.Before(minuteFrom) {
			addCounts(st.ScheduleLagMinute, f.ScheduleLag)
			addCounts(st.DeliveryLagMinute, f.DeliveryLag)
			st.LastMinute.add(f.Events)
		}
	}
	return st, nil
}

// addCounts adds histogram src to dst. A histogram of another length was
// written by a version with other buckets (during an upgrade) and is left
// out rather than added bucket by wrong bucket.
func addCounts(dst, src []int64) {
	if len(src) != len(dst) {
		return
	}
	for i := range src {
		dst[i] += src[i]
	}
}

// gauges are the store-backed gauges of the metrics (metrics.GaugeSource).
func (s *Stats) gauges(ctx context.Context) (metrics.Gauges, error) {
	snap, at, err := s.Snapshot(ctx, "")
	if err != nil {
		return metrics.Gauges{}, err
	}
	g := metrics.Gauges{DueBacklog: map[int]int64{}}
	type sl struct{ state, lane string }
	sums := map[sl]int64{}
	// The queues as status lists them (snap.Depth): their ready counts,
	// and how long each one's oldest ready occurrence has waited
	// (snap.QueueOldestReady).
	type tq struct{ tenant, queue string }
	queues := map[tq]int{} // index in g.Queues
	for _, d := range snap.Depth {
		sums[sl{string(d.State), string(d.Lane)}] += d.Count
		if d.State == record.OccurrenceDead {
			g.DLQ += d.Count
		}
		k := tq{d.TenantID, d.Queue}
		i, ok := queues[k]
		if !ok {
			i = len(g.Queues)
			queues[k] = i
			g.Queues = append(g.Queues, metrics.QueueGauge{Tenant: d.TenantID, Queue: d.Queue})
		}
		g.Queues[i].Ready += d.Ready
	}
	for _, o := range snap.QueueOldestReady {
		if i, ok := queues[tq{o.TenantID, o.Queue}]; ok { // always: both are read in one snapshot
			g.Queues[i].OldestReady = max(at.Sub(o.AvailableAt), 0)
		}
	}
	for k, n := range sums {
		g.Occurrences = append(g.Occurrences, metrics.StateLaneCount{State: k.state, Lane: k.lane, Count: n})
	}
	sort.Slice(g.Occurrences, func(i, j int) bool {
		a, b := g.Occurrences[i], g.Occurrences[j]
		return a.State < b.State || a.State == b.State && a.Lane < b.Lane
	})
	if o := snap.OldestReady; o != nil {
		g.OldestReady = max(at.Sub(o.AvailableAt), 0)
	}
	for _, w := range []int{1, 5, 15, 60} {
		var n int64
		for i := 0; i < w && i < len(snap.DueBacklog); i++ {
			n += snap.DueBacklog[i]
		}
		g.DueBacklog[w] = n
	}
	for _, l := range s.member.heldLeases() {
		g.Shards = append(g.Shards, metrics.ShardLease{Shard: l.Shard, Epoch: l.Epoch})
	}
	s.metrics.ClockOffset.Set(s.member.clockOffset().Seconds())
	return g, nil
}
