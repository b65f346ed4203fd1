// Package status is schedctl status and top: the daemon and the whole
// cluster's work, printed once (or watched), or as a live dashboard.
package status

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// StatusOptions is schedctl status.
type StatusOptions struct {
	IO    *cmdutil.Factory
	API   func() (cmdutil.API, error)
	Ctx   context.Context
	JSON  bool
	Watch cmdutil.WatchFlags
}

// NewCmdStatus builds schedctl status.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "status [-w]",
		Short: "Show the daemon and the cluster's work: lag, backlog, queues, DLQ",
		Long: `Status shows the schedd it talks to and, read from the store, the whole
cluster's work, so any node gives the same figures:

  - version, tz database, node, store, shards (and how many have an owner),
    schedd's clock, and when the queue figures were read (they are cached
    for a few seconds);
  - the dead-letter queue's size, the oldest ready occurrence no worker has
    claimed and how long it has waited, the last hour's events (MISSED and
    SKIPPED_OVERLAP among them) and claims and acks per second;
  - every node: live or not, shards held, clock offset, and its last
    planner pass (how long ago, how long it took, occurrences written,
    firings missed, and the horizon slack: how far ahead the planner is);
  - schedule lag (enqueued - scheduled for) and delivery lag (first claim -
    scheduled for), p50/p95/p99 over the last minute and the last hour;
  - the firings due in the next 1, 5, 15 and 60 minutes, and per minute as
    a sparkline of the next hour, so a cliff shows before it arrives;
  - the depth of every queue by lane and state, with how many are ready.

Asked with a tenant's token, it shows that tenant's own figures: its
queues, due backlog, oldest ready occurrence and dead-letter queue, read
from its rows alone, and the nodes; the lags, the last hour's events, the
throughput and the nodes' last passes are counted across every tenant, so
they are not shown ("-", and null in JSON).

Off a terminal each table row is tab-separated with its kind first (node,
lag, due, queue), under a header line starting with KIND (--no-headers
drops the headers); the due line ends with the 60 per-minute counts,
comma-separated. JSON output (-o json) is the API's status object as is;
its field names are a stable contract.

With -w it keeps watching: it asks again every --interval (2s) and redraws
when the output changes, until Ctrl-C (exit 0). It is also the quickest
check that schedctl reaches schedd.`,
		Example: `  schedctl status
  schedctl status -w --interval 5s
  schedctl status -o json | jq '.delivery_lag.last_minute.p99'
  schedctl status --addr tcp:127.0.0.1:7070 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Watch.Check(cmd.Flags()); err != nil {
				return err
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return statusRun(opts)
		},
	}
	opts.Watch.Register(cmd.Flags())
	return cmd
}

func statusRun(opts *StatusOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	return opts.Watch.Run(opts.Ctx, opts.IO, "schedctl status", func(ctx context.Context, f *cmdutil.Factory) error {
		st, err := c.Status(ctx)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		if opts.JSON {
			return cmdutil.WriteJSON(f.Out, st)
		}
		return printStatus(f, st)
	})
}

// printStatus prints a status: field/value rows (the first six as schedctl
// always printed them), then a table each for nodes, lag, the due backlog
// and queue depths. Off a terminal the tables' rows are tagged with their
// kind, as cluster's are.
func printStatus(f *cmdutil.Factory, st *api.Status) error {
	kv := cmdutil.NewTable(f)
	kv.Row("version", st.Version)
	kv.Row("tz_version", st.TZVersion)
	kv.Row("node_id", st.NodeID)
	kv.Row("store", st.Store)
	kv.Row("shards", strconv.Itoa(st.Shards))
	kv.Row("now", cmdutil.TSV(st.Now))
	kv.Row("shards_owned", strconv.Itoa(st.ShardsOwned))
	kv.Row("stats_at", cmdutil.TSV(st.StatsAt))
	kv.Row("dlq_size", strconv.FormatInt(st.DLQSize, 10))
	kv.Row("oldest_ready", oldestReady(st.OldestReady))
	if st.Tenant != "" {
		kv.Row("tenant", st.Tenant+" (its own queues, backlog and DLQ)")
	}
	if h := st.LastHour; h != nil {
		kv.Row("last_hour", fmt.Sprintf("%d materialized, %d MISSED, %d SKIPPED_OVERLAP, %d claims, %d acks, %d DEAD, %d redeliveries",
			h.Materialized, h.Missed, h.SkippedOverlap, h.Claims, h.Acks, h.Dead, h.Redeliveries))
	} else {
		kv.Row("last_hour", notShown)
	}
	if tp := st.Throughput; tp != nil {
		kv.Row("throughput", fmt.Sprintf("%.2f claims/s, %.2f acks/s (last minute)", tp.ClaimsPerSecond, tp.AcksPerSecond))
	} else {
		kv.Row("throughput", notShown)
	}
	if o := st.Outage; o != nil && o.Active {
		shards := "all shards"
		if len(o.Shards) > 0 {
			parts := make([]string, len(o.Shards))
			for i, sh := range o.Shards {
				parts[i] = strconv.Itoa(sh)
			}
			shards = "shards " + strings.Join(parts, ",")
		}
		kv.Row("outage", fmt.Sprintf("SIMULATED OUTAGE until %s (%s left) on %s: planning and claims paused (schedctl simulate cancel ends it)",
			cmdutil.TSV(o.EndsAt), o.Remaining, shards))
	}
	if err := kv.Print(); err != nil {
		return err
	}
	for _, section := range []func(*cmdutil.Factory, *api.Status) *cmdutil.Table{nodesTable, lagTable, dueTable, queuesTable} {
		t := section(f, st)
		if t == nil {
			continue
		}
		if f.IsTTY {
			fmt.Fprintln(f.Out)
		}
		if err := t.Print(); err != nil {
			return err
		}
	}
	return nil
}

func oldestReady(o *api.OldestReady) string {
	if o == nil {
		return "none: no occurrence is waiting for a worker"
	}
	age := o.Age
	if d, err := time.ParseDuration(o.Age); err == nil {
		age = cmdutil.Short(d)
	}
	return fmt.Sprintf("%s on %s, waiting %s (ready since %s)", o.OccurrenceID, cmdutil.Cell(o.Queue), age, cmdutil.TSV(o.AvailableAt))
}

func nodesTable(f *cmdutil.Factory, st *api.Status) *cmdutil.Table {
	if len(st.Nodes) == 0 {
		return nil
	}
	yes := map[bool]string{true: "yes", false: "no"}
	t := cmdutil.NewTable(f, "NODE", "ADDRESS", "LIVE", "SHARDS", "CLOCK OFFSET", "LAST PASS", "TOOK", "SCHEDULES", "MATERIALIZED", "MISSED", "HORIZON SLACK").Tag("node")
	for _, n := range st.Nodes {
		pass := []string{"-", "-", "-", "-", "-", "-"}
		if p := n.LastPass; p != nil {
			pass = []string{cmdutil.Short(st.Now.Sub(p.At).Round(time.Second)) + " ago", cmdutil.ShortDur(&p.Duration), strconv.Itoa(p.Schedules),
				strconv.Itoa(p.Materialized), strconv.Itoa(p.Missed), cmdutil.ShortDur(&p.HorizonSlack)}
		}
		t.Row(append([]string{n.NodeID, n.Address, yes[n.Live], strconv.Itoa(n.ShardsOwned), n.ClockOffset}, pass...)...)
	}
	return t
}

// notShown stands for a figure a tenant's status leaves out (null in its
// JSON): counted per node across every tenant, it is not the tenant's.
const notShown = "- (not shown to a tenant: counted across every tenant)"

// lagTable is the lags' percentiles. A tenant's status has none: a
// terminal says so, other output has no lag rows.
func lagTable(f *cmdutil.Factory, st *api.Status) *cmdutil.Table {
	if st.ScheduleLag == nil || st.DeliveryLag == nil {
		if !f.IsTTY {
			return nil
		}
		t := cmdutil.NewTable(f)
		t.Row("lag", notShown)
		return t
	}
	t := cmdutil.NewTable(f, "LAG", "WINDOW", "SAMPLES", "P50", "P95", "P99").Tag("lag")
	for _, l := range []struct {
		name string
		w    *api.LagWindows
	}{{"schedule", st.ScheduleLag}, {"delivery", st.DeliveryLag}} {
		for _, w := range []struct {
			name string
			p    api.Percentiles
		}{{"last_minute", l.w.LastMinute}, {"last_hour", l.w.LastHour}} {
			window := w.name
			if f.IsTTY {
				window = strings.ReplaceAll(window, "_", " ")
			}
			t.Row(l.name, window, strconv.FormatInt(w.p.Count, 10), cmdutil.ShortDur(w.p.P50), cmdutil.ShortDur(w.p.P95), cmdutil.ShortDur(w.p.P99))
		}
	}
	return t
}

// dueTable sums the due backlog over the next 1, 5, 15 and 60 minutes and
// draws every minute of the hour: a sparkline on a terminal, the counts
// comma-separated elsewhere.
func dueTable(f *cmdutil.Factory, st *api.Status) *cmdutil.Table {
	var sums [4]int64
	counts := make([]int64, len(st.DueBacklog))
	for i, m := range st.DueBacklog {
		counts[i] = m.Due
		for j, n := range []int{1, 5, 15, 60} {
			if i < n {
				sums[j] += m.Due
			}
		}
	}
	perMinute := "PER MINUTE"
	if len(st.DueBacklog) > 0 {
		first, last := st.DueBacklog[0].Minute, st.DueBacklog[len(st.DueBacklog)-1].Minute
		perMinute = fmt.Sprintf("PER MINUTE, %s TO %s", first.UTC().Format("15:04Z"), last.UTC().Format("15:04Z"))
		if peak := peakMinute(st.DueBacklog); peak != nil {
			perMinute += fmt.Sprintf(" (PEAK %d AT %s)", peak.Due, peak.Minute.UTC().Format("15:04Z"))
		}
	}
	t := cmdutil.NewTable(f, "DUE IN", "1 MIN", "5 MIN", "15 MIN", "60 MIN", perMinute)
	var line string
	if f.IsTTY {
		line = sparkline(counts)
	} else {
		parts := make([]string, len(counts))
		for i, n := range counts {
			parts[i] = strconv.FormatInt(n, 10)
		}
		line = strings.Join(parts, ",")
	}
	label := "firings"
	if !f.IsTTY {
		label = "due"
	}
	t.Row(label, strconv.FormatInt(sums[0], 10), strconv.FormatInt(sums[1], 10), strconv.FormatInt(sums[2], 10), strconv.FormatInt(sums[3], 10), line)
	return t
}

func peakMinute(ms []api.BacklogMinute) *api.BacklogMinute {
	var peak *api.BacklogMinute
	for i := range ms {
		if ms[i].Due > 0 && (peak == nil || ms[i].Due > peak.Due) {
			peak = &ms[i]
		}
	}
	return peak
}

// sparkBlocks are the eight heights of a sparkline bar.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws counts as one character each, scaled to the largest:
// "·" for none, and at least the lowest bar for any, so one firing in a
// quiet hour still shows.
func sparkline(counts []int64) string {
	var top int64
	for _, n := range counts {
		top = max(top, n)
	}
	var b strings.Builder
	for _, n := range counts {
		if n <= 0 {
			b.WriteRune('·')
			continue
		}
		level := (n*int64(len(sparkBlocks)) + top - 1) / top // 1..8, rounded up
		b.WriteRune(sparkBlocks[level-1])
	}
	return b.String()
}

func queuesTable(f *cmdutil.Factory, st *api.Status) *cmdutil.Table {
	if len(st.Queues) == 0 {
		if f.IsTTY {
			t := cmdutil.NewTable(f)
			t.Row("queues", "empty: no open occurrences")
			return t
		}
		return nil
	}
	t := cmdutil.NewTable(f, "TENANT", "QUEUE", "LANE", "STATE", "COUNT", "READY").Tag("queue")
	for _, q := range st.Queues {
		ready := "-"
		if q.State == "ENQUEUED" || q.State == "RETRY_WAIT" {
			ready = strconv.FormatInt(q.Ready, 10)
		}
		t.Row(q.Tenant, q.Queue, q.Lane, q.State, strconv.FormatInt(q.Count, 10), ready)
	}
	if st.QueuesOmitted > 0 {
		// schedd sends the largest rows only; say how many smaller ones
		// it left out.
		t.Row("...", fmt.Sprintf("%d smaller rows not shown", st.QueuesOmitted), "", "", "", "")
	}
	return t
}
