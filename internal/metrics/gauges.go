package metrics

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sched-dev/sched/internal/record"
)

// Gauges are the figures read from the store rather than counted by this
// process: the whole store's queue, and this node's shard leases. The
// engine computes them (cached for a few seconds, so that a scrape costs
// at most one snapshot of the store however many series it has).
//
// The store's figures are the same on every node that reads them, so
// their series carry the constant label scope="store": summed over nodes
// they count each thing once per node; a query across nodes takes their
// max (`max without (instance) (sched_queue_ready)`). Every node exports
// them, so that any node that answers a scrape answers for the store, as
// it does for `schedctl status`, and a node going down loses no series.
type Gauges struct {
	// Occurrences counts occurrences by state and lane (open states and
	// DEAD), summed over tenants and queues. The states and lanes it does
	// not name are exported at 0.
	Occurrences []StateLaneCount
	// OldestReady is how long the ready occurrence that has waited longest
	// has been ready; 0 when none is.
	OldestReady time.Duration
	// DueBacklog counts firings due within each window, by its minutes
	// (1, 5, 15, 60).
	DueBacklog map[int]int64
	DLQ        int64
	// Queues are the tenants' queues with an open or DEAD occurrence, as
	// `schedctl status` lists them: how many of each one's occurrences are
	// ready and how long its oldest ready one has waited. Collect exports
	// at most MaxQueueSeries of them (boundQueues).
	Queues []QueueGauge
	// Shards are the shard leases this node holds.
	Shards []ShardLease
}

// StateLaneCount is one series of sched_occurrences.
type StateLaneCount struct {
	State, Lane string
	Count       int64
}

// QueueGauge is one queue's series of sched_queue_ready and
// sched_queue_oldest_ready_seconds.
type QueueGauge struct {
	Tenant, Queue string
	// Ready counts the queue's occurrences a worker could claim now.
	Ready int64
	// OldestReady is how long its ready occurrence that has waited
	// longest has been ready; 0 when none is.
	OldestReady time.Duration
}

// ShardLease is one shard lease this node holds.
type ShardLease struct {
	Shard int
	Epoch int64
}

// MaxQueueSeries bounds the queues the per-queue gauges export: each
// gauge has at most MaxQueueSeries series of their own plus one "other".
// Queues are named by users without limit, so the bound is what keeps a
// store with a hundred thousand queues from exporting as many series.
const MaxQueueSeries = 100

// OtherQueue is the queue label (with the tenant label OtherTenant) of
// the per-queue gauges' series that adds up the queues past
// MaxQueueSeries.
const OtherQueue = "other"

// GaugeSource reads Gauges; Collect calls it once per scrape.
type GaugeSource func(ctx context.Context) (Gauges, error)

// SetGaugeSource sets where the store-backed gauges come from. Until it is
// set, they are not exported.
func (m *Metrics) SetGaugeSource(g GaugeSource) {
	m.gaugesMu.Lock()
	m.gauges = g
	m.gaugesMu.Unlock()
}

// storeScope labels the series of figures that describe the whole store.
var storeScope = prometheus.Labels{"scope": "store"}

var (
	descOccurrences = prometheus.NewDesc("sched_occurrences",
		"Occurrences by state and lane in the whole store (open states and DEAD), read from the store; the same on every node: take the max across nodes, not the sum.",
		[]string{"state", "lane"}, storeScope)
	descOldestReady = prometheus.NewDesc("sched_oldest_ready_seconds",
		"How long the ready occurrence that has waited longest for a worker has been ready (0: none is ready), in the whole store.", nil, storeScope)
	descDueBacklog = prometheus.NewDesc("sched_due_backlog",
		"Firings that become due within the next window (materialized and not yet claimed, plus schedules' next firings), in the whole store.",
		[]string{"window"}, storeScope)
	descDLQ = prometheus.NewDesc("sched_dlq_size",
		"Occurrences in the dead-letter queue, in the whole store.", nil, storeScope)
	descQueueReady = prometheus.NewDesc("sched_queue_ready",
		"Occurrences of a tenant's queue that a worker could claim now (ENQUEUED or RETRY_WAIT and due), for each queue with an open or DEAD occurrence; at most "+
			strconv.Itoa(MaxQueueSeries)+" queues, the longest-waiting first, the rest added up under tenant and queue \"other\".",
		[]string{"tenant", "queue"}, storeScope)
	descQueueOldestReady = prometheus.NewDesc("sched_queue_oldest_ready_seconds",
		"How long the ready occurrence of a tenant's queue that has waited longest has been ready (0: none is ready); the queues as sched_queue_ready's, \"other\" the longest of the rest.",
		[]string{"tenant", "queue"}, storeScope)
	descShardsHeld = prometheus.NewDesc("sched_shards_held",
		"Shard leases this node holds.", nil, nil)
	descShardEpoch = prometheus.NewDesc("sched_shard_epoch",
		"The epoch of each shard lease this node holds.", []string{"shard"}, nil)
	descGaugeErrors = prometheus.NewDesc("sched_gauge_read_ok",
		"1 when the store-backed gauges of this scrape were read, 0 when the store did not answer (they are then missing).", nil, nil)
)

// occurrenceStates are the states sched_occurrences counts: the open ones
// and DEAD, each exported in every lane, at 0 when there is none.
var occurrenceStates = []string{string(record.OccurrenceScheduled), string(record.OccurrenceEnqueued),
	string(record.OccurrenceRunning), string(record.OccurrenceRetryWait), string(record.OccurrenceDead)}

// backlogWindows are sched_due_backlog's windows, in minutes.
var backlogWindows = []int{1, 5, 15, 60}

// gaugeCollector exports Gauges at scrape time.
type gaugeCollector struct{ m *Metrics }

func (c *gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOccurrences, descOldestReady, descDueBacklog, descDLQ, descQueueReady,
		descQueueOldestReady, descShardsHeld, descShardEpoch, descGaugeErrors} {
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
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descGaugeErrors, 1)
	type stateLane struct{ state, lane string }
	counts := map[stateLane]int64{}
	for _, o := range g.Occurrences {
		counts[stateLane{o.State, o.Lane}] += o.Count
	}
	for _, st := range occurrenceStates {
		for _, lane := range Lanes {
			gauge(descOccurrences, float64(counts[stateLane{st, lane}]), st, lane)
			delete(counts, stateLane{st, lane})
		}
	}
	for k, n := range counts { // a state or lane of a later release: still shown
		gauge(descOccurrences, float64(n), k.state, k.lane)
	}
	gauge(descOldestReady, g.OldestReady.Seconds())
	for _, w := range backlogWindows {
		gauge(descDueBacklog, float64(g.DueBacklog[w]), strconv.Itoa(w)+"m")
	}
	gauge(descDLQ, float64(g.DLQ))
	for _, q := range boundQueues(g.Queues, MaxQueueSeries) {
		gauge(descQueueReady, float64(q.Ready), q.Tenant, q.Queue)
		gauge(descQueueOldestReady, q.OldestReady.Seconds(), q.Tenant, q.Queue)
	}
	gauge(descShardsHeld, float64(len(g.Shards)))
	for _, s := range g.Shards {
		gauge(descShardEpoch, float64(s.Epoch), strconv.Itoa(s.Shard))
	}
}

// boundQueues returns at most limit of qs, those whose ready occurrence
// has waited longest (then those with the most ready, then by name), and,
// when there are more, one series with tenant OtherTenant and queue
// OtherQueue that adds their ready counts up and has the longest wait
// among them. The longest-waiting queues are the ones an operator must
// see by name; which of the rest are folded may change from scrape to
// scrape.
func boundQueues(qs []QueueGauge, limit int) []QueueGauge {
	if len(qs) <= limit {
		return qs
	}
	qs = slices.Clone(qs)
	slices.SortFunc(qs, func(a, b QueueGauge) int {
		return cmp.Or(cmp.Compare(b.OldestReady, a.OldestReady), cmp.Compare(b.Ready, a.Ready),
			cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Queue, b.Queue))
	})
	kept := make([]QueueGauge, 0, limit+1)
	other := QueueGauge{Tenant: OtherTenant, Queue: OtherQueue}
	for _, q := range qs {
		// A queue that is itself named other of tenant other is added
		// to the fold rather than exported twice under one label set.
		if len(kept) < limit && (q.Tenant != OtherTenant || q.Queue != OtherQueue) {
			kept = append(kept, q)
			continue
		}
		other.Ready += q.Ready
		other.OldestReady = max(other.OldestReady, q.OldestReady)
	}
	return append(kept, other)
}
