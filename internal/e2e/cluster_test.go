package e2e

// Multi-node fault tests: a node that dies or stalls, or a database that
// restarts, must neither lose a firing nor store one twice. Three schedd
// processes on one PostgreSQL schema under a steady load of firings, with a
// worker connected to each node, and one fault each: a node killed; a node
// paused past its shard lease, at a random moment, between its read and its
// write, or inside its plan transaction; PostgreSQL restarted, and down past
// the lease. After the fault the test picks a cut-off, drains, and requires
// that every firing up to it, recomputed by arithmetic, was stored once and
// SUCCEEDED (RECON), that the workers saw one occurrence id per firing
// (DELIV), that no occurrence carries an epoch older than one already
// accepted for its shard (FENCE), and that the shard leases' epochs only
// grew. See cluster_harness_test.go.
//
// They need SCHED_TEST_POSTGRES_DSN; without it they skip. The restart
// runs a throwaway PostgreSQL of its own (initdb, as the postgres user when
// run as root), never the shared server.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const loadSchedules = 20 // 10 every 1s + 10 at */2 s: 15 firings a second

// startLoad creates the load on the first node and a worker on each node,
// and waits until every schedule has reached a worker. It returns each
// node's worker's stop function.
func (c *pgCluster) startLoad() map[*pgNode]func() {
	c.t.Helper()
	c.createLoad(c.nodes[0], loadSchedules)
	stops := map[*pgNode]func(){}
	for i, nd := range c.nodes {
		stops[nd] = c.startWorker(nd, fmt.Sprintf("w%d", i+1))
	}
	c.waitDelivered(time.Now(), len(c.scheds), "every schedule of the load to reach a worker")
	return stops
}

// busiest returns the node whose live shard leases hold the most load
// schedules (so that its fault leaves the most to take over), and them.
func (c *pgCluster) busiest() (*pgNode, map[int64]leaseRow) {
	c.t.Helper()
	ls, err := c.leases()
	if err != nil {
		c.t.Fatalf("shard leases: %v", err)
	}
	per := c.scheduleShards()
	var best *pgNode
	var held map[int64]leaseRow
	most := -1
	for _, nd := range c.nodes {
		o := owned(ls, nd.id)
		n := 0
		for s := range o {
			n += per[s]
		}
		if n > most {
			best, held, most = nd, o, n
		}
	}
	if most <= 0 {
		c.t.Fatalf("no node holds a shard with schedules: %s", leaseSummary(ls))
	}
	return best, held
}

// takenOver logs how many occurrences up to the cut-off the new owners of
// held's shards wrote under their new epochs: the fault's share of the
// load, which RECON has just accounted for.
func takenOver(t *testing.T, rows []occRow, held map[int64]leaseRow, cutoff time.Time) {
	t.Helper()
	n := 0
	for _, r := range rows {
		if l, ok := held[r.shard]; ok && r.epoch > l.epoch && r.sf <= cutoff.UnixMilli() {
			n++
		}
	}
	if n == 0 {
		t.Errorf("no occurrence of the moved shards was written under a new epoch up to the cut-off: the fault did not bite")
	}
	t.Logf("%d occurrences of the moved shards written by their new owners up to the cut-off", n)
}

// waitMoved waits until each shard of held has a live lease of another
// node under a higher epoch, and returns how long that took from since.
func (c *pgCluster) waitMoved(victim *pgNode, held map[int64]leaseRow, since time.Time) time.Duration {
	c.t.Helper()
	waitFor(c.t, fmt.Sprintf("the %d shards of %s to move to other nodes", len(held), victim.id), clusterWait, func() (bool, string) {
		ls, err := c.leases()
		if err != nil {
			return false, err.Error()
		}
		for _, l := range ls {
			if old, ok := held[l.shard]; ok && (!l.live || l.owner == victim.id || l.epoch <= old.epoch) {
				return false, leaseSummary(ls) + "\nsessions idle in a transaction or waiting on a lock:\n  " + strings.Join(c.stuckSessions(), "\n  ")
			}
		}
		return true, ""
	})
	return time.Since(since)
}

func (c *pgCluster) others(victim *pgNode) []*pgNode {
	var out []*pgNode
	for _, nd := range c.nodes {
		if nd != victim {
			out = append(out, nd)
		}
	}
	return out
}

// A node killed with SIGKILL under load: its shards move to the other
// nodes within about the shard lease, and no firing is lost.
func TestClusterKilledNodeShardsMoveNothingLost(t *testing.T) {
	dsn := pgDSN(t)
	t.Parallel()
	began := time.Now()
	c := newPGCluster(t, dsn, 3)
	t.Logf("3 nodes serving, %d shards balanced, after %v", c.shards, time.Since(began).Round(time.Millisecond))
	c.waitClusterView(c.nodes[1], c.nodes, "3 live nodes sharing every shard")
	c.startLoad()

	victim, held := c.busiest()
	code, _ := victim.proc.signal(t, syscall.SIGKILL, 5*time.Second)
	killed := time.Now()
	moved := c.waitMoved(victim, held, killed)
	t.Logf("SIGKILL %s (exit %d) holding %d shards; they moved %v later (shard lease %v)", victim.id, code, len(held), moved.Round(time.Millisecond), clusterLease)
	if limit := clusterLease + 4*time.Second; moved > limit {
		t.Errorf("the shards of the killed node moved %v after the kill, more than the lease %v plus 4s", moved, clusterLease)
	}
	rest := c.others(victim)
	alive(t, rest...)
	c.waitBalanced(rest, "the two remaining nodes to share every shard")
	c.waitClusterView(rest[0], rest, "the killed node not live, the other two holding every shard")

	cutoff := time.Now().Add(2 * time.Second).Truncate(time.Second)
	c.waitDelivered(cutoff, len(c.scheds), "deliveries after the cut-off from every schedule")
	rows := c.drainAndReconcile(cutoff)
	takenOver(t, rows, held, cutoff)
	alive(t, rest...)
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}

// A node paused with SIGSTOP past its shard lease, then resumed: its shards
// move while it sleeps; once awake, nothing it writes under the epochs it
// held is accepted; every firing runs under one occurrence id (duplicates
// only under the same id), and none is lost. The stop lands wherever the
// node happens to be.
func TestClusterStoppedNodeIsFenced(t *testing.T) {
	dsn := pgDSN(t)
	t.Parallel()
	stoppedNodeScenario(t, dsn, false)
}

// The same, with the stop placed where it hurts: the node has read its
// shard's due schedules and not yet written their firings (the test holds
// an ACCESS EXCLUSIVE lock on schedules until the node's planner waits on
// it in that read, stops the node, and lets go). Awake, the node holds a
// batch computed under a lease that has since moved: it must drop it (its
// own clock says the lease is no longer trusted) or the store must refuse
// it (the epoch moved on), and nothing of it may be stored.
func TestClusterNodeStoppedBeforeItsWriteIsFenced(t *testing.T) {
	dsn := pgDSN(t)
	t.Parallel()
	stoppedNodeScenario(t, dsn, true)
}

// The text of the planner's read of a shard's due schedules (store/postgres,
// qDueSchedules).
const dueSchedulesSQL = "FROM schedules\nWHERE shard = $1 AND state = 'ACTIVE' AND next_run_at <= $2"

func stoppedNodeScenario(t *testing.T, dsn string, beforeWrite bool) {
	began := time.Now()
	var extra []string
	if beforeWrite {
		// Few shards, so that few schedules cover the victim's.
		extra = []string{"--shards", "8"}
	}
	c := newPGCluster(t, dsn, 3, extra...)
	workers := c.startLoad()

	victim, held := c.busiest()
	firstHeld := held
	if beforeWrite {
		// The read should be caught on a connection that has run it before:
		// on a new one, pgx first prepares it (a Parse, which waits on the
		// lock just the same) and runs it only once the node wakes up, on
		// fresh data, leaving nothing stale to drop or refuse (seen on a
		// pool connection the API had just used). So no API traffic on the
		// victim from now on: its worker stops, the schedules added below
		// are created through another node, and the catch waits for two
		// planner passes first. Should the read still run after the wake-up,
		// the stop is tried again.
		workers[victim]()
	}
	type stop struct {
		seq int64             // the last occurrence stored before the wake-up
		old map[int64][]int64 // epochs the victim held before the stop, by shard
	}
	var stops []stop
	var logAt int
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			c.waitBalanced(c.nodes, "the woken node to take shards again")
			ls, err := c.leases()
			if err != nil {
				t.Fatal(err)
			}
			held = owned(ls, victim.id)
		}
		var stopped time.Time
		if beforeWrite {
			// Every shard of the victim then has firings to write at each
			// pass, whichever of them its planner is caught reading.
			n := c.coverShards(c.others(victim)[0], held)
			t.Logf("%d schedules added so that each of %s's %d shards has an every-1s schedule", n, victim.id, len(held))
			victim.waitPasses(2)
			c.catch(victim, "LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE", dueSchedulesSQL, func() {
				victim.stop()
				stopped = time.Now()
			})
			t.Logf("SIGSTOP %s in its planner's read of due schedules, holding %d shards", victim.id, len(held))
		} else {
			victim.stop()
			stopped = time.Now()
			t.Logf("SIGSTOP %s holding %d shards", victim.id, len(held))
		}
		moved := c.waitMoved(victim, held, stopped)
		t.Logf("its shards moved %v after the stop (shard lease %v)", moved.Round(time.Millisecond), clusterLease)
		if limit := clusterLease + 4*time.Second; moved > limit {
			t.Errorf("the shards of the stopped node moved %v after the stop, more than the lease %v plus 4s", moved, clusterLease)
		}
		// Stay stopped well past the lease (a condition on the clock, not a
		// synchronization), so that the node wakes up with leases long gone.
		waitFor(t, "the stop to outlast the lease by 2s", clusterWait, func() (bool, string) {
			return time.Since(stopped) > clusterLease+2*time.Second, ""
		})
		old := c.mon.epochsBefore(victim.id, stopped)
		for shard, l := range held {
			if !slices.Contains(old[shard], l.epoch) {
				old[shard] = append(old[shard], l.epoch)
			}
		}
		stops = append(stops, stop{c.maxSeq(), old})
		logAt = len(victim.log.String())
		victim.cont()
		t.Logf("SIGCONT %s after %v stopped", victim.id, time.Since(stopped).Round(time.Millisecond))
		if !beforeWrite {
			break
		}
		// The batch it read before the stop must not be written: the node
		// drops it itself (the store refused to renew its lease before the
		// write, or its own clock no longer trusts the lease) or the store
		// refuses the write (the epoch moved on). What it stored, if
		// anything, the checks below find.
		refused := func() bool {
			l := victim.log.String()[logAt:]
			return strings.Contains(l, `msg="planner write fenced`) || strings.Contains(l, "; dropping the batch")
		}
		for end := time.Now().Add(5 * time.Second); !refused() && time.Now().Before(end); {
			time.Sleep(pollStep)
		}
		if refused() {
			break
		}
		if attempt == 3 {
			t.Errorf("%s never logged that it dropped, or had refused, the batch it read before a stop (3 stops)", victim.id)
			break
		}
		t.Logf("%s did not say it dropped or had refused a batch: its read probably ran only after the wake-up; stopping it again", victim.id)
	}

	alive(t, c.nodes...)
	rejoin := c.waitBalanced(c.nodes, "the woken node to take shards again, under new epochs")
	t.Logf("the woken node holds shards again %v after SIGCONT", rejoin.Round(time.Millisecond))

	cutoff := time.Now().Add(2 * time.Second).Truncate(time.Second)
	c.waitDelivered(cutoff, len(c.scheds), "deliveries after the cut-off from every schedule")
	rows := c.drainAndReconcile(cutoff)
	for _, st := range stops {
		staleAfter(t, rows, st.seq, victim.id, st.old)
	}
	takenOver(t, rows, firstHeld, cutoff)
	alive(t, c.nodes...)

	// What the woken node said about its lost leases and dropped or refused
	// writes.
	var fenced []string
	for _, l := range strings.Split(victim.log.String()[logAt:], "\n") {
		if strings.Contains(l, "fenced") || strings.Contains(l, "lease lost") || strings.Contains(l, "stale") || strings.Contains(l, "no longer trusted") {
			fenced = append(fenced, l)
		}
	}
	t.Logf("the woken node logged %d lines about lost leases or dropped or fenced writes:\n  %s", len(fenced), strings.Join(first(fenced, 10), "\n  "))
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}

// PostgreSQL restarted mid-run under three nodes and load, twice: `pg_ctl
// restart -m immediate` (a crash and recovery, down a fraction of a
// second), then down past the shard lease (stop -m immediate, start): the
// nodes stay up, reconnect and go on, and no firing is lost. It runs on a
// throwaway cluster of its own, never the machine's shared server.
func TestClusterPostgresRestart(t *testing.T) {
	pgDSN(t) // the switch for PostgreSQL tests; the server restarted is a throwaway one
	t.Parallel()
	began := time.Now()
	pg := startThrowawayPG(t)
	t.Logf("throwaway PostgreSQL on port %s (%s) after %v", pg.port, pg.bin, time.Since(began).Round(time.Millisecond))
	c := newPGCluster(t, pg.DSN(), 3)
	c.startLoad()

	// recovered waits until every node reads from the store again, every
	// shard is leased and balanced, and every schedule fires after since.
	recovered := func(since time.Time) {
		t.Helper()
		for _, nd := range c.nodes {
			waitFor(t, nd.id+" to read from the store again", clusterWait, func() (bool, string) {
				alive(t, c.nodes...)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				if _, err := nd.cl.GetSchedule(ctx, c.scheds[0].id); err != nil {
					return false, err.Error()
				}
				return true, ""
			})
		}
		took := c.waitBalanced(c.nodes, "every shard leased again, balanced")
		c.waitDelivered(since, len(c.scheds), "deliveries of firings after the outage from every schedule")
		t.Logf("  the nodes read from the store, hold every shard (%v) and deliver again, %v after the server came back",
			took.Round(time.Millisecond), time.Since(since).Round(time.Millisecond))
	}
	offsets := make([]int, len(c.nodes))
	for i, nd := range c.nodes {
		offsets[i] = len(nd.log.String())
	}

	restarting := time.Now()
	if out, err := pg.ctl("restart"); err != nil {
		t.Fatalf("pg_ctl restart -m immediate: %v: %s", err, out)
	}
	restarted := time.Now()
	t.Logf("pg_ctl restart -m immediate: down and up again in %v", restarted.Sub(restarting).Round(time.Millisecond))
	recovered(restarted)

	if out, err := pg.ctl("stop"); err != nil {
		t.Fatalf("pg_ctl stop -m immediate: %v: %s", err, out)
	}
	down := time.Now()
	// Down past the shard lease, by the clock (a fault's length, not a
	// synchronization): every lease has run out when it comes back.
	waitFor(t, "the outage to outlast the shard lease by 1s", clusterWait, func() (bool, string) {
		alive(t, c.nodes...)
		return time.Since(down) > clusterLease+time.Second, ""
	})
	if out, err := pg.ctl("start"); err != nil {
		t.Fatalf("pg_ctl start: %v: %s", err, out)
	}
	up := time.Now()
	t.Logf("PostgreSQL down (stop -m immediate) for %v, past the %v shard lease", up.Sub(down).Round(time.Millisecond), clusterLease)
	recovered(up)

	cutoff := time.Now().Add(2 * time.Second).Truncate(time.Second)
	c.waitDelivered(cutoff, len(c.scheds), "deliveries after the cut-off from every schedule")
	c.drainAndReconcile(cutoff)
	alive(t, c.nodes...)
	for i, nd := range c.nodes {
		w := nd.warnings(offsets[i])
		t.Logf("%s logged %d warnings and errors over the outages, e.g.:\n  %s", nd.id, len(w), strings.Join(first(w, 3), "\n  "))
	}
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}

// A node paused inside a planner transaction, after its lease check and
// before its commit (a GC pause, a frozen VM, SIGSTOP at the wrong moment):
// its database session stays open, idle in transaction, holding what it
// locked. Its shards must still move within about the lease, and the other
// nodes must go on planning; once it wakes, nothing stale is accepted and
// no firing is lost.
//
// The test makes the moment exact: it locks the schedules of one of the
// victim's shards, waits until the victim's plan of that shard waits on the
// lock (inside its transaction), SIGSTOPs the victim, and lets the lock go.
func TestClusterNodeStoppedInsideTransaction(t *testing.T) {
	dsn := pgDSN(t)
	t.Parallel()
	began := time.Now()
	c := newPGCluster(t, dsn, 3)
	c.startLoad()

	victim, held := c.busiest()
	per := c.scheduleShards()
	shard := int64(-1)
	for s := range held {
		if per[s] > 0 && (shard < 0 || s < shard) {
			shard = s
		}
	}
	var stopped time.Time
	c.catch(victim, fmt.Sprintf("SELECT 1 FROM schedules WHERE shard = %d FOR UPDATE", shard), "UPDATE schedules AS s SET", func() {
		victim.stop()
		stopped = time.Now()
	})
	t.Logf("SIGSTOP %s inside its plan of shard %d; it holds %d shards", victim.id, shard, len(held))

	moved := c.waitMoved(victim, held, stopped)
	t.Logf("its shards moved %v after the stop (shard lease %v)", moved.Round(time.Millisecond), clusterLease)
	if limit := clusterLease + 4*time.Second; moved > limit {
		t.Errorf("the shards of the stopped node moved %v after the stop, more than the lease %v plus 4s", moved, clusterLease)
	}
	rest := c.others(victim)
	c.waitBalanced(rest, "the two other nodes to share every shard")
	waitFor(t, "the stop to outlast the lease by 2s", clusterWait, func() (bool, string) {
		return time.Since(stopped) > clusterLease+2*time.Second, ""
	})
	oldEpochs := c.mon.epochsBefore(victim.id, stopped)
	for s, l := range held {
		if !slices.Contains(oldEpochs[s], l.epoch) {
			oldEpochs[s] = append(oldEpochs[s], l.epoch)
		}
	}
	seq := c.maxSeq()
	victim.cont()
	t.Logf("SIGCONT %s after %v stopped", victim.id, time.Since(stopped).Round(time.Millisecond))
	alive(t, c.nodes...)
	c.waitBalanced(c.nodes, "the woken node to take shards again, under new epochs")

	cutoff := time.Now().Add(2 * time.Second).Truncate(time.Second)
	c.waitDelivered(cutoff, len(c.scheds), "deliveries after the cut-off from every schedule")
	rows := c.drainAndReconcile(cutoff)
	staleAfter(t, rows, seq, victim.id, oldEpochs)
	takenOver(t, rows, held, cutoff)
	alive(t, c.nodes...)
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}
