package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Gauges are the figures read from the store rather than counted by this
// process: the whole cluster's queue, and this node's shard leases. The
// engine computes them (cached for a few seconds, so that a scrape costs
// at most one snapshot of the store however many series it has).
type Gauges struct {
	// Occurrences counts occurrences by state and lane (open states and
	// DEAD), summed over tenants and queues.
	Occurrences []StateLaneCount
	// OldestReady is how long the ready occurrence that has waited longest
	// has been ready; 0 when none is.
	OldestReady time.Duration
	// DueBacklog counts firings due within each window, by its minutes
	// (1, 5, 15, 60).
	DueBacklog map[int]int64
	DLQ        int64
	// Shards are the shard leases this node holds.
	Shards []ShardLease
}

// StateLaneCount is one series of sched_occurrences.
type StateLaneCount struct {
	State, Lane string
	Count       int64
}

// ShardLease is one shard lease this node holds.
type ShardLease struct {
	Shard int
	Epoch int64
}

// GaugeSource reads Gauges; Collect calls it once per scrape.
type GaugeSource func(ctx context.Context) (Gauges, error)

// SetGaugeSource sets where the store-backed gauges come from. Until it is
// set, they are not exported.
func (m *Metrics) SetGaugeSource(g GaugeSource) {
	m.gaugesMu.Lock()
	m.gauges = g
	m.gaugesMu.Unlock()
}

var (
	descOccurrences = prometheus.NewDesc("sched_occurrences",
		"Occurrences by state and lane across the cluster (open states and DEAD), read from the store.", []string{"state", "lane"}, nil)
	descOldestReady = prometheus.NewDesc("sched_oldest_ready_seconds",
		"How long the ready occurrence that has waited longest for a worker has been ready (0: none is ready).", nil, nil)
	descDueBacklog = prometheus.NewDesc("sched_due_backlog",
		"Firings that become due within the next window (materialized and not yet claimed, plus schedules' next firings).", []string{"window"}, nil)
	descDLQ = prometheus.NewDesc("sched_dlq_size",
		"Occurrences in the dead-letter queue across the cluster.", nil, nil)
	descShardsHeld = prometheus.NewDesc("sched_shards_held",
		"Shard leases this node holds.", nil, nil)
	descShardEpoch = prometheus.NewDesc("sched_shard_epoch",
		"The epoch of each shard lease this node holds.", []string{"shard"}, nil)
	descGaugeErrors = prometheus.NewDesc("sched_gauge_read_ok",
		"1 when the store-backed gauges of this scrape were read, 0 when the store did not answer (they are then missing).", nil, nil)
)

// gaugeCollector exports Gauges at scrape time.
type gaugeCollector struct{ m *Metrics }

func (c *gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOccurrences, descOldestReady, descDueBacklog, descDLQ, descShardsHeld, descShardEpoch, descGaugeErrors} {
		ch <- d
	}
}

func (c *gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.gaugesMu.Lock()
	src := c.m.gauges
	c.m.gaugesMu.Unlock()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := src(ctx)
	if err != nil {
		c.m.NoteStoreError(err, "other")
		ch <- prometheus.MustNewConstMetric(descGaugeErrors, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descGaugeErrors, prometheus.GaugeValue, 1)
	for _, o := range g.Occurrences {
		ch <- prometheus.MustNewConstMetric(descOccurrences, prometheus.GaugeValue, float64(o.Count), o.State, o.Lane)
	}
	ch <- prometheus.MustNewConstMetric(descOldestReady, prometheus.GaugeValue, g.OldestReady.Seconds())
	for w, n := range g.DueBacklog {
		ch <- prometheus.MustNewConstMetric(descDueBacklog, prometheus.GaugeValue, float64(n), strconv.Itoa(w)+"m")
	}
	ch <- prometheus.MustNewConstMetric(descDLQ, prometheus.GaugeValue, float64(g.DLQ))
	ch <- prometheus.MustNewConstMetric(descShardsHeld, prometheus.GaugeValue, float64(len(g.Shards)))
	for _, s := range g.Shards {
		ch <- prometheus.MustNewConstMetric(descShardEpoch, prometheus.GaugeValue, float64(s.Epoch), strconv.Itoa(s.Shard))
	}
}
