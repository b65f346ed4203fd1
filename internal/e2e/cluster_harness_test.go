package e2e

// The harness of the multi-node fault tests (cluster_test.go): several
// schedd processes on one PostgreSQL schema, in-process workers (the public
// client package's Worker) connected to different nodes, a monitor of the
// shard leases, and the checks every fault test ends with: RECON (the
// expected firings recomputed by plain arithmetic, against the stored
// occurrences), DELIV (the workers' log), FENCE (the epochs the stored
// occurrences carry) and LAG (how late firings were enqueued).
//
// The tests read the store's tables directly (occurrences, schedules,
// shard_leases) through pgx: what they check is what the database holds,
// not what a node says it holds.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/testdaemon"
)

// pgDSNVar names the variable that holds the test database's DSN (the same
// one the store's own tests read). Unset, the cluster tests skip; set, a
// failure to connect fails them.
const pgDSNVar = "SCHED_TEST_POSTGRES_DSN"

// pgDSN returns the test database's DSN, or skips the test with one line.
func pgDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(pgDSNVar)
	if dsn == "" {
		t.Skip("PostgreSQL cluster tests skipped: set " + pgDSNVar + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run them")
	}
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		t.Fatalf("%s: schedd takes a postgres:// URL as its --store; got a DSN that is not one", pgDSNVar)
	}
	return dsn
}

// Timings of the cluster tests: short, so that faults bite within seconds.
const (
	clusterLease   = 3 * time.Second        // --shard-lease
	clusterHorizon = 2 * time.Second        // --horizon: shorter than the lease, so a takeover leaves firings to plan
	handlerWork    = 300 * time.Millisecond // each delivery's work, so that faults catch some in flight
	workerLease    = 4 * time.Second        // the workers' visibility lease
	clusterWait    = 30 * time.Second
	loadQueue      = "load"
)

// waitFor calls cond every pollStep until it reports true, and fails the
// test after d with what it waited for and cond's last word. It returns
// how long the wait took.
func waitFor(t *testing.T, what string, d time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	began := time.Now()
	end := began.Add(d)
	for {
		ok, last := cond()
		if ok {
			return time.Since(began)
		}
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s; last: %s", d, what, last)
		}
		time.Sleep(pollStep)
	}
}

// ---------------------------------------------------------------- schemas

// withParam returns the URL dsn with the query parameter k set to v:
// search_path tells a schedd on a shared database which schema is its
// store; application_name names a node's sessions in pg_stat_activity.
func withParam(t *testing.T, dsn, k, v string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("the DSN does not parse as a URL")
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

// newClusterSchema creates a fresh schema on dsn's database, and drops it
// when the test ends (after everything registered later, the nodes among
// them, has stopped). It returns the schema's name.
func newClusterSchema(t *testing.T, dsn string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "t_e2e_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test database (%s): %v", pgDSNVar, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// ---------------------------------------------------------------- a throwaway PostgreSQL

// throwawayPG is a PostgreSQL cluster of the test's own, on a free port, so
// that it can be restarted without touching the machine's shared one.
type throwawayPG struct {
	dir, data, port, bin string
	asPostgres           bool // root runs the tools as the postgres user
}

// startThrowawayPG initdb's a cluster in a private directory and starts it
// on a free loopback port with trust authentication; it is stopped and
// removed when the test ends. It skips the test, saying why, when the
// PostgreSQL server tools are missing or cannot be run here.
func startThrowawayPG(t *testing.T) *throwawayPG {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		t.Skip("no PostgreSQL server tools (initdb, pg_ctl) found in /usr/lib/postgresql/*/bin or PATH: cannot run a throwaway cluster to restart")
	}
	pg := &throwawayPG{bin: bin}
	dir, err := os.MkdirTemp("", "e2e-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg.dir, pg.data = dir, filepath.Join(dir, "data")
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: run the tools as postgres, in a
		// directory postgres owns.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root and there is no postgres user to run initdb as: cannot run a throwaway cluster")
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			t.Skip("running as root without runuser to run initdb as postgres: cannot run a throwaway cluster")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Skipf("cannot hand %s to the postgres user: %v", dir, err)
		}
		pg.asPostgres = true
	}
	if out, err := pg.run("initdb", "-D", pg.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Skipf("initdb of a throwaway cluster failed (%v): %s", err, out)
	}
	pg.port = strconv.Itoa(freePort(t))
	t.Cleanup(func() {
		if out, err := pg.run("pg_ctl", "-D", pg.data, "-m", "immediate", "-w", "-t", "30", "stop"); err != nil {
			t.Logf("stop the throwaway PostgreSQL: %v: %s", err, out)
		}
		if t.Failed() {
			raw, _ := os.ReadFile(filepath.Join(pg.dir, "log"))
			t.Logf("--- throwaway PostgreSQL log:\n%s", raw)
		}
	})
	if out, err := pg.ctl("start"); err != nil {
		raw, _ := os.ReadFile(filepath.Join(pg.dir, "log"))
		t.Fatalf("start the throwaway PostgreSQL: %v: %s\n%s", err, out, raw)
	}
	return pg
}

// DSN is the throwaway cluster's postgres database.
func (pg *throwawayPG) DSN() string {
	return "postgres://postgres@127.0.0.1:" + pg.port + "/postgres?sslmode=disable"
}

// ctl runs pg_ctl start, stop or restart with the cluster's options. stop
// and restart use -m immediate: the postmaster and every backend are
// killed at once, as in a crash, and the server recovers from its WAL on
// the way up.
func (pg *throwawayPG) ctl(verb string) (string, error) {
	opts := "-p " + pg.port + " -k " + pg.dir + " -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
	args := []string{"-D", pg.data, "-l", filepath.Join(pg.dir, "log"), "-w", "-t", "30", "-o", opts}
	if verb != "start" {
		args = append(args, "-m", "immediate")
	}
	return pg.run("pg_ctl", append(args, verb)...)
}

func (pg *throwawayPG) run(tool string, args ...string) (string, error) {
	bin := filepath.Join(pg.bin, tool)
	var cmd *exec.Cmd
	if pg.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Dir = pg.dir
	// pg_ctl start leaves the postmaster running with its output in the
	// log file; the pipe must not keep this call waiting for it.
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// pgBinDir finds the directory of initdb and pg_ctl: the newest
// /usr/lib/postgresql/N/bin, else PATH.
func pgBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "pg_ctl")) {
			return d
		}
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ---------------------------------------------------------------- the cluster

// pgCluster is n schedd nodes on one PostgreSQL schema, the test's view of
// the schema (db), the workers' deliveries and the shard lease monitor.
type pgCluster struct {
	t        *testing.T
	dir      string   // private, short: the nodes' sockets
	storeURL string   // the nodes' --store, but for application_name
	extra    []string // more flags of every node
	env      []string
	db       *pgxpool.Pool
	nodes    []*pgNode
	shards   int
	mon      *leaseMonitor
	dels     deliveryLog
	scheds   []loadSchedule
}

// pgNode is one schedd of the cluster.
type pgNode struct {
	c       *pgCluster
	id      string
	sock    string
	log     *syncBuffer
	proc    *proc
	cl      *client.Client
	stopped atomic.Bool // SIGSTOPped and not yet SIGCONTinued
}

// newPGCluster starts n schedd nodes (with the extra flags) on a new schema
// of dsn's database and waits until every node serves and the shards are
// leased by live nodes, balanced.
func newPGCluster(t *testing.T, dsn string, n int, extra ...string) *pgCluster {
	t.Helper()
	schema := newClusterSchema(t, dsn)
	dir, err := os.MkdirTemp("", "e2e-cl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &pgCluster{t: t, dir: dir, storeURL: withParam(t, dsn, "search_path", schema), env: hermeticEnv(dir), extra: extra}

	pcfg, err := pgxpool.ParseConfig(c.storeURL)
	if err != nil {
		t.Fatalf("parse the store URL: %v", err)
	}
	pcfg.MaxConns = 4
	if c.db, err = pgxpool.NewWithConfig(context.Background(), pcfg); err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	t.Cleanup(c.db.Close)

	for i := range n {
		c.nodes = append(c.nodes, c.startNode(fmt.Sprintf("n%d", i+1)))
	}
	// Every node stopped at once at the end (SIGCONT first for a stopped
	// one), so a clean handover does not wait for the others' shutdowns.
	// Registered after the nodes' own cleanups, so it runs before them.
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, nd := range c.nodes {
			nd.cont()
			wg.Go(nd.proc.terminate)
		}
		wg.Wait()
	})
	for _, nd := range c.nodes {
		nd.waitServing()
	}
	st, err := c.nodes[0].cl.Status(context.Background())
	if err != nil {
		t.Fatalf("status of %s: %v", c.nodes[0].id, err)
	}
	c.shards = st.Shards
	c.mon = startLeaseMonitor(t, c.db)
	c.waitBalanced(c.nodes, "every shard leased and each node holding some")
	return c
}

// startNode starts one schedd on the cluster's schema and Unix socket
// DIR/ID.sock. Its output is logged if the test fails.
func (c *pgCluster) startNode(id string) *pgNode {
	t := c.t
	t.Helper()
	nd := &pgNode{c: c, id: id, sock: filepath.Join(c.dir, id+".sock"), log: &syncBuffer{}}
	args := append([]string{"--store", withParam(t, c.storeURL, "application_name", id), "--listen", "unix:" + nd.sock, "--node-id", id,
		"--shard-lease", clusterLease.String(), "--horizon", clusterHorizon.String()}, c.extra...)
	nd.proc = startProc(t, "schedd "+id, nd.log, false, c.env, scheddBin, args...)
	// Runs before startProc's own cleanup (SIGTERM, then SIGKILL), which a
	// stopped process would not act on.
	t.Cleanup(nd.cont)
	var err error
	if nd.cl, err = client.New("unix:"+nd.sock, ""); err != nil {
		t.Fatal(err)
	}
	return nd
}

// waitServing waits until the node answers status as a postgres store.
func (nd *pgNode) waitServing() {
	t := nd.c.t
	t.Helper()
	testdaemon.WaitServing(t, nd.proc.watch(nd.log), clusterWait, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := nd.cl.Status(ctx)
		if err != nil {
			return err
		}
		if st.Store != "postgres" || st.NodeID != nd.id {
			t.Fatalf("schedd %s: status says store %q, node %q", nd.id, st.Store, st.NodeID)
		}
		return nil
	})
}

// stop sends SIGSTOP; cont sends SIGCONT to a stopped node.
func (nd *pgNode) stop() {
	nd.c.t.Helper()
	nd.stopped.Store(true)
	if err := nd.proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		nd.c.t.Fatalf("SIGSTOP %s: %v", nd.id, err)
	}
}

func (nd *pgNode) cont() {
	if nd.stopped.Swap(false) {
		nd.proc.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// ---------------------------------------------------------------- shard leases

type leaseRow struct {
	shard   int64
	owner   string
	epoch   int64
	expires int64 // unix ms, by the store's clock
	live    bool  // expires after the database's clock now
}

func (l leaseRow) String() string {
	live := "expired"
	if l.live {
		live = "live"
	}
	return fmt.Sprintf("shard %d: %s epoch %d (%s)", l.shard, l.owner, l.epoch, live)
}

// The database's clock, in unix milliseconds, as the store keeps times.
const dbNowMS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`

func queryLeases(ctx context.Context, db *pgxpool.Pool) ([]leaseRow, error) {
	rows, err := db.Query(ctx, `SELECT shard, owner, epoch, expires_at, expires_at > `+dbNowMS+` FROM shard_leases ORDER BY shard`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (leaseRow, error) {
		var l leaseRow
		err := r.Scan(&l.shard, &l.owner, &l.epoch, &l.expires, &l.live)
		return l, err
	})
}

func (c *pgCluster) leases() ([]leaseRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return queryLeases(ctx, c.db)
}

// owned returns the live leases of node id, by shard.
func owned(ls []leaseRow, id string) map[int64]leaseRow {
	m := map[int64]leaseRow{}
	for _, l := range ls {
		if l.live && l.owner == id {
			m[l.shard] = l
		}
	}
	return m
}

// waitBalanced waits until every shard has a live lease held by one of
// nodes, each holding at least one and at most its share, ceil(shards /
// nodes).
func (c *pgCluster) waitBalanced(nodes []*pgNode, what string) time.Duration {
	c.t.Helper()
	return waitFor(c.t, what, clusterWait, func() (bool, string) {
		ls, err := c.leases()
		if err != nil {
			return false, err.Error()
		}
		return balanced(ls, c.shards, nodes), leaseSummary(ls)
	})
}

func balanced(ls []leaseRow, shards int, nodes []*pgNode) bool {
	if len(ls) != shards {
		return false
	}
	count := map[string]int{}
	for _, l := range ls {
		if !l.live {
			return false
		}
		count[l.owner]++
	}
	share := (shards + len(nodes) - 1) / len(nodes)
	for _, nd := range nodes {
		if count[nd.id] == 0 || count[nd.id] > share {
			return false
		}
	}
	return len(count) == len(nodes)
}

// leaseSummary says who holds what: "n1: 0 3 5 | n2: ... | expired: ...".
func leaseSummary(ls []leaseRow) string {
	by := map[string][]string{}
	for _, l := range ls {
		k := l.owner
		if !l.live {
			k = "expired(" + l.owner + ")"
		}
		by[k] = append(by[k], fmt.Sprintf("%d@%d", l.shard, l.epoch))
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s: %s", k, strings.Join(by[k], " "))
	}
	return fmt.Sprintf("%d leases: %s", len(ls), b.String())
}

// leaseObs is one (owner, epoch) of a shard, as first seen.
type leaseObs struct {
	owner string
	epoch int64
	seen  time.Time
}

// leaseMonitor reads shard_leases every pollStep while the test runs and
// keeps each shard's history of owners and epochs. An epoch that goes down,
// or an owner that changes with the epoch unchanged, is a violation.
type leaseMonitor struct {
	mu         sync.Mutex
	hist       map[int64][]leaseObs
	violations []string
	polls      int
	done       chan struct{}
}

func startLeaseMonitor(t *testing.T, db *pgxpool.Pool) *leaseMonitor {
	ctx, cancel := context.WithCancel(context.Background())
	m := &leaseMonitor{hist: map[int64][]leaseObs{}, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			qctx, c := context.WithTimeout(ctx, 2*time.Second)
			ls, err := queryLeases(qctx, db)
			c()
			if err == nil {
				m.observe(ls, time.Now())
			}
			select {
			case <-ctx.Done():
			case <-time.After(pollStep):
			}
		}
	}()
	// Before the pool closes (cleanups run last first).
	t.Cleanup(func() { cancel(); <-m.done })
	return m
}

func (m *leaseMonitor) observe(ls []leaseRow, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls++
	for _, l := range ls {
		h := m.hist[l.shard]
		if n := len(h); n > 0 {
			last := h[n-1]
			switch {
			case l.epoch == last.epoch && l.owner == last.owner:
				continue
			case l.epoch < last.epoch:
				m.violations = append(m.violations, fmt.Sprintf("shard %d: epoch went from %d (%s) down to %d (%s)", l.shard, last.epoch, last.owner, l.epoch, l.owner))
			case l.epoch == last.epoch:
				m.violations = append(m.violations, fmt.Sprintf("shard %d: owner changed from %s to %s under the same epoch %d", l.shard, last.owner, l.owner, l.epoch))
			}
		}
		m.hist[l.shard] = append(h, leaseObs{l.owner, l.epoch, now})
	}
}

// check fails the test on any violation and logs a summary.
func (m *leaseMonitor) check(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.violations {
		t.Errorf("shard lease history: %s", v)
	}
	changes := 0
	for _, h := range m.hist {
		changes += len(h) - 1
	}
	t.Logf("shard leases: %d polls, %d changes of owner or epoch seen", m.polls, changes)
}

// epochsBefore returns, per shard, the epochs the monitor saw owner hold,
// first seen before t.
func (m *leaseMonitor) epochsBefore(owner string, t time.Time) map[int64][]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[int64][]int64{}
	for s, h := range m.hist {
		for _, o := range h {
			if o.owner == owner && o.seen.Before(t) {
				out[s] = append(out[s], o.epoch)
			}
		}
	}
	return out
}

// ---------------------------------------------------------------- load and workers

// loadSchedule is one schedule of the steady load, with what the oracle
// needs: every `step` seconds from its first cursor (kind every), or on
// the seconds divisible by step (a 6-field cron, UTC).
type loadSchedule struct {
	id, name string
	kind     string // every | cron
	step     int64  // seconds
	first    int64  // unix seconds of its first firing (its cursor at creation)
}

// createLoad creates n schedules on node nd: half `every 1s`, half the
// 6-field cron `*/2 * * * * *` in UTC, all on one queue of one tenant.
func (c *pgCluster) createLoad(nd *pgNode, n int) {
	c.t.Helper()
	for i := range n {
		c.createOne(nd, i%2 == 0)
	}
}

// createOne creates one schedule of the load, `every 1s` or the cron, and
// returns it.
func (c *pgCluster) createOne(nd *pgNode, every bool) loadSchedule {
	t := c.t
	t.Helper()
	req := api.ScheduleRequest{Name: fmt.Sprintf("load-%02d", len(c.scheds)), Queue: loadQueue}
	ls := loadSchedule{name: req.Name}
	if every {
		req.Every, ls.kind, ls.step = "1s", "every", 1
	} else {
		req.Cron, req.TimeZone, ls.kind, ls.step = "*/2 * * * * *", "UTC", "cron", 2
	}
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	res, err := nd.cl.CreateSchedule(ctx, req)
	cancel()
	if err != nil {
		t.Fatalf("create %s on %s: %v", req.Name, nd.id, err)
	}
	if res.NextRunAt == nil || res.Version != 1 || res.State != "ACTIVE" {
		t.Fatalf("created %s: %+v", req.Name, res.Schedule)
	}
	ls.id, ls.first = res.ScheduleID, res.NextRunAt.Unix()
	// The cursor is the first firing after the create, on the rhythm: after
	// the node's created_at and at most one step after it. created_at is
	// the node's clock, which runs at the offset it measured to the
	// database's (tens of milliseconds off this process's clock on a busy
	// machine), so it is held to the request's span only within a second.
	created := res.CreatedAt.UnixMilli()
	if !res.NextRunAt.Equal(res.NextRunAt.Truncate(time.Second)) || ls.first%ls.step != 0 ||
		ls.first*1000 <= created || ls.first*1000 > created+ls.step*1000 ||
		res.CreatedAt.Before(sent.Add(-time.Second)) || res.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Fatalf("created %s at %s (node's created_at %s): first firing %s is not the next one on its rhythm", req.Name,
			sent.UTC().Format(time.RFC3339Nano), res.CreatedAt.UTC().Format(time.RFC3339Nano), res.NextRunAt.UTC().Format(time.RFC3339Nano))
	}
	c.scheds = append(c.scheds, ls)
	return ls
}

// coverShards creates `every 1s` schedules on nd until each of shards holds
// one: a planner pass of any of them then always has firings to write.
func (c *pgCluster) coverShards(nd *pgNode, shards map[int64]leaseRow) int {
	t := c.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	covered := map[int64]bool{}
	ids := []string{}
	for _, s := range c.scheds {
		if s.kind == "every" {
			ids = append(ids, s.id)
		}
	}
	rows, err := c.db.Query(ctx, `SELECT DISTINCT shard FROM schedules WHERE schedule_id = ANY($1)`, ids)
	if err != nil {
		t.Fatal(err)
	}
	var shard int64
	if _, err := pgx.ForEachRow(rows, []any{&shard}, func() error { covered[shard] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	created := 0
	for {
		missing := 0
		for s := range shards {
			if !covered[s] {
				missing++
			}
		}
		if missing == 0 {
			return created
		}
		if created == 100 {
			t.Fatalf("100 schedules created and %d shards of %v still without one", missing, slices.Sorted(maps.Keys(shards)))
		}
		ls := c.createOne(nd, true)
		created++
		if err := c.db.QueryRow(ctx, `SELECT shard FROM schedules WHERE schedule_id = $1`, ls.id).Scan(&shard); err != nil {
			t.Fatal(err)
		}
		covered[shard] = true
	}
}

// catch makes node nd wait inside a statement of its planner: it takes
// lock (a statement run in a transaction of the test's), waits until a
// session of nd (its application_name) waits on the test's lock in a
// statement whose text contains stmt, calls during, and lets the lock go.
// When nd is caught in another statement first, it lets go and tries
// again.
func (c *pgCluster) catch(nd *pgNode, lock, stmt string, during func()) {
	t := c.t
	t.Helper()
	var last string
	for try := 1; try <= 10; try++ {
		var ok bool
		if ok, last = c.tryCatch(nd, lock, stmt, during); ok {
			return
		}
		t.Logf("catch %s, try %d: %s; again", nd.id, try, last)
	}
	t.Fatalf("could not catch %s waiting in %q: %s", nd.id, stmt, last)
}

func (c *pgCluster) tryCatch(nd *pgNode, lock, stmt string, during func()) (bool, string) {
	t := c.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	conn, err := c.db.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var me int32
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&me); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, lock); err != nil {
		t.Fatalf("%s: %v", lock, err)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		var query string
		err := c.db.QueryRow(ctx, `SELECT query FROM pg_stat_activity
WHERE application_name = $1 AND $2 = ANY(pg_blocking_pids(pid)) LIMIT 1`, nd.id, me).Scan(&query)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(query, stmt) {
			return false, fmt.Sprintf("caught in another statement: %.70q", query)
		}
		during()
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		return true, ""
	}
	return false, "not caught within 5s"
}

// pgDelivery is one handler call of a worker.
type pgDelivery struct {
	worker       string
	occ, sched   string
	version      int64
	scheduledFor time.Time
	attempt      int64
	at           time.Time
}

func (d pgDelivery) String() string {
	return fmt.Sprintf("%s: %s %s v%d %s attempt %d at %s", d.worker, d.occ, d.sched, d.version,
		d.scheduledFor.UTC().Format(time.TimeOnly), d.attempt, d.at.UTC().Format("15:04:05.000"))
}

type deliveryLog struct {
	mu  sync.Mutex
	all []pgDelivery
}

func (l *deliveryLog) add(d pgDelivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
}

func (l *deliveryLog) snapshot() []pgDelivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all)
}

// startWorker runs a client.Worker on the load queue through node nd,
// recording every delivery and acking it. It stops (and drains) when the
// returned function is called or the test ends, before the nodes stop; its
// log is logged if the test fails.
func (c *pgCluster) startWorker(nd *pgNode, name string) (stop func()) {
	t := c.t
	t.Helper()
	logBuf := &syncBuffer{}
	w := &client.Worker{
		Client: nd.cl, Queue: loadQueue, WorkerID: name,
		Concurrency: 4, Lease: workerLease, Wait: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Handler: func(ctx context.Context, job *client.Job) error {
			c.dels.add(pgDelivery{worker: name, occ: job.OccurrenceID, sched: job.ScheduleID, version: job.ScheduleVersion,
				scheduledFor: job.ScheduledFor, attempt: job.Attempt, at: time.Now()})
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(handlerWork):
				return nil
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			// A handler's ack to a stopped node would hang the drain.
			for _, n := range c.nodes {
				n.cont()
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("worker %s: %v", name, err)
				}
			case <-time.After(40 * time.Second):
				t.Errorf("worker %s did not stop within 40s", name)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("--- worker %s (via %s) log:\n%s", name, nd.id, logBuf.String())
		}
	})
	return stop
}

// waitDelivered waits until the workers have been handed firings scheduled
// after `after`, from at least `n` distinct schedules.
func (c *pgCluster) waitDelivered(after time.Time, n int, what string) {
	c.t.Helper()
	waitFor(c.t, what, clusterWait, func() (bool, string) {
		seen := map[string]bool{}
		for _, d := range c.dels.snapshot() {
			if d.scheduledFor.After(after) {
				seen[d.sched] = true
			}
		}
		return len(seen) >= n, fmt.Sprintf("%d schedules delivered after %s", len(seen), after.UTC().Format(time.TimeOnly))
	})
}

// ---------------------------------------------------------------- the stored occurrences

type occRow struct {
	occ, sched   string
	version      int64
	sf           int64 // scheduled_for, unix ms
	state        string
	attempts     int64
	epoch        int64
	seq          int64
	enqueuedAt   *int64
	firstClaimed *int64
	shard        int64
}

func (r occRow) String() string {
	return fmt.Sprintf("%s %s v%d %s %s attempts=%d epoch=%d seq=%d shard=%d", r.occ, r.sched, r.version,
		time.UnixMilli(r.sf).UTC().Format(time.TimeOnly), r.state, r.attempts, r.epoch, r.seq, r.shard)
}

func (c *pgCluster) occurrences() ([]occRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT o.occurrence_id, o.schedule_id, o.schedule_version, o.scheduled_for, o.state,
       o.attempt_count, o.shard_epoch, o.seq, o.enqueued_at, o.first_claimed_at, s.shard
FROM occurrences o JOIN schedules s ON s.schedule_id = o.schedule_id
ORDER BY o.seq`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (occRow, error) {
		var o occRow
		err := r.Scan(&o.occ, &o.sched, &o.version, &o.sf, &o.state, &o.attempts, &o.epoch, &o.seq,
			&o.enqueuedAt, &o.firstClaimed, &o.shard)
		return o, err
	})
}

func (c *pgCluster) maxSeq() int64 {
	c.t.Helper()
	var seq int64
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.db.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM occurrences`).Scan(&seq); err != nil {
		c.t.Fatalf("max(seq): %v", err)
	}
	return seq
}

// ---------------------------------------------------------------- RECON

// recon compares the stored occurrences of the load with the firings
// expected by plain arithmetic, from each schedule's first cursor to
// cutoff (unix seconds, inclusive). It returns the violations, and how
// many expected firings are not SUCCEEDED yet (still pending or absent):
// those may resolve, the violations may not (a gap can still be filled by
// a late planner, so it counts as pending until the caller's deadline).
func (c *pgCluster) recon(rows []occRow, cutoff int64) (violations []string, pending []string) {
	type key struct {
		sched string
		sec   int64
	}
	by := map[key][]occRow{}
	known := map[string]bool{}
	for _, s := range c.scheds {
		known[s.id] = true
	}
	for _, r := range rows {
		if !known[r.sched] {
			violations = append(violations, "an occurrence of a schedule the test did not create: "+r.String())
			continue
		}
		if r.sf%1000 != 0 {
			violations = append(violations, "scheduled_for not on a whole second: "+r.String())
		}
		k := key{r.sched, r.sf / 1000}
		by[k] = append(by[k], r)
	}
	for _, s := range c.scheds {
		expected := func(sec int64) bool {
			if sec < s.first {
				return false
			}
			if s.kind == "every" {
				return (sec-s.first)%s.step == 0
			}
			return sec%s.step == 0
		}
		// Every expected firing up to the cut-off: one row, version 1,
		// SUCCEEDED once drained.
		for sec := s.first; sec <= cutoff; sec++ {
			if !expected(sec) {
				continue
			}
			got := by[key{s.id, sec}]
			when := time.Unix(sec, 0).UTC().Format(time.TimeOnly)
			switch {
			case len(got) == 0:
				pending = append(pending, fmt.Sprintf("gap: %s (%s) has no occurrence for %s", s.name, s.id, when))
			case len(got) > 1:
				violations = append(violations, fmt.Sprintf("%s for %s: %d occurrences: %v", s.name, when, len(got), got))
			case got[0].version != 1:
				violations = append(violations, fmt.Sprintf("%s for %s: version %d, want 1: %v", s.name, when, got[0].version, got[0]))
			case got[0].state == "SUCCEEDED":
			case slices.Contains([]string{"SCHEDULED", "ENQUEUED", "RUNNING", "RETRY_WAIT"}, got[0].state):
				pending = append(pending, fmt.Sprintf("%s for %s still %s: %v", s.name, when, got[0].state, got[0]))
			default:
				violations = append(violations, fmt.Sprintf("%s for %s ended %s, want SUCCEEDED: %v", s.name, when, got[0].state, got[0]))
			}
		}
		// Nothing that was not expected, before or after the cut-off.
		for k, got := range by {
			if k.sched != s.id {
				continue
			}
			if !expected(k.sec) {
				violations = append(violations, fmt.Sprintf("phantom: %s has occurrences for %s, not one of its firings: %v",
					s.name, time.Unix(k.sec, 0).UTC().Format(time.TimeOnly), got))
			} else if k.sec > cutoff && len(got) > 1 {
				violations = append(violations, fmt.Sprintf("%s for %s: %d occurrences: %v", s.name,
					time.Unix(k.sec, 0).UTC().Format(time.TimeOnly), len(got), got))
			}
		}
	}
	slices.Sort(violations)
	slices.Sort(pending)
	return violations, pending
}

// drainAndReconcile waits until every expected firing up to cutoff is
// SUCCEEDED, then checks RECON, DELIV and FENCE on the final state and
// returns the stored rows. It fails the test on a violation.
func (c *pgCluster) drainAndReconcile(cutoff time.Time) []occRow {
	t := c.t
	t.Helper()
	cut := cutoff.Unix()
	var rows []occRow
	var dels []pgDelivery
	waitFor(t, fmt.Sprintf("every firing up to the cut-off %s SUCCEEDED (RECON)", cutoff.UTC().Format(time.TimeOnly)), clusterWait,
		func() (bool, string) {
			// Deliveries first: every occurrence delivered is then in rows.
			dels = c.dels.snapshot()
			var err error
			if rows, err = c.occurrences(); err != nil {
				return false, err.Error()
			}
			v, p := c.recon(rows, cut)
			if len(v) > 0 {
				t.Fatalf("RECON: %d violations:\n  %s", len(v), strings.Join(first(v, 40), "\n  "))
			}
			return len(p) == 0, fmt.Sprintf("%d not done:\n  %s", len(p), strings.Join(first(p, 20), "\n  "))
		})
	expected := 0
	for _, s := range c.scheds {
		for sec := s.first; sec <= cut; sec++ {
			if (s.kind == "every" && (sec-s.first)%s.step == 0) || (s.kind == "cron" && sec%s.step == 0) {
				expected++
			}
		}
	}
	t.Logf("RECON: %d expected firings of %d schedules up to %s, each stored once and SUCCEEDED (drained %v after the cut-off; %d rows in all)",
		expected, len(c.scheds), cutoff.UTC().Format(time.TimeOnly), time.Since(cutoff).Round(time.Millisecond), len(rows))
	c.checkDeliveries(dels, rows, cut)
	checkFence(t, rows)
	c.mon.check(t)
	c.lag(rows, cut)
	c.scheddReconcile(cutoff)
	return rows
}

// scheddReconcile runs schedd reconcile on the cluster's schema, beside
// the running nodes, from the first schedule's first firing to the
// cut-off: the reconciler, which shares none of the planner's code, must
// explain every firing and occurrence (exit 0).
func (c *pgCluster) scheddReconcile(cutoff time.Time) {
	t := c.t
	t.Helper()
	from := cutoff.Unix()
	for _, s := range c.scheds {
		from = min(from, s.first)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(scheddBin, "reconcile", "--store", c.storeURL, "-o", "json",
		"--from", time.Unix(from, 0).UTC().Format(time.RFC3339), "--to", cutoff.UTC().Format(time.RFC3339))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("schedd reconcile: %v\nstdout: %s\nstderr: %s", err, first([]string{out.String()}, 1)[0], errOut.String())
	}
	var rep api.ReconcileReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("schedd reconcile: %v: %s", err, out.String())
	}
	if rep.Problem || len(rep.Schedules) != len(c.scheds) || rep.Totals.Succeeded == 0 {
		t.Fatalf("schedd reconcile: %d schedules, totals %+v, absent %v, unexpected %v", len(rep.Schedules), rep.Totals, rep.Absent, rep.Unexpected)
	}
	t.Logf("schedd reconcile: %d schedules, totals %+v: clean", len(rep.Schedules), rep.Totals)
}

func first(xs []string, n int) []string {
	if len(xs) > n {
		return append(xs[:n:n], fmt.Sprintf("... and %d more", len(xs)-n))
	}
	return xs
}

// ---------------------------------------------------------------- DELIV

// checkDeliveries checks the workers' log against the stored occurrences:
// each delivery is of a stored occurrence, as stored; one occurrence id per
// firing; no attempt of an occurrence handed out twice; and every
// SUCCEEDED occurrence up to the cut-off was handed to a worker under the
// attempt that succeeded. Duplicates (one id delivered more than once,
// under new attempts) are counted, not refused.
func (c *pgCluster) checkDeliveries(dels []pgDelivery, rows []occRow, cut int64) {
	t := c.t
	t.Helper()
	byOcc := map[string]occRow{}
	for _, r := range rows {
		byOcc[r.occ] = r
	}
	type firing struct {
		sched string
		sec   int64
	}
	ids := map[firing]map[string]bool{}
	attempts := map[string]map[int64]int{}
	var bad []string
	for _, d := range dels {
		r, ok := byOcc[d.occ]
		switch {
		case !ok:
			bad = append(bad, "delivered an occurrence that is not stored: "+d.String())
			continue
		case r.sched != d.sched || r.version != d.version || r.sf != d.scheduledFor.UnixMilli():
			bad = append(bad, fmt.Sprintf("delivered %v, stored as %v", d, r))
		}
		f := firing{d.sched, d.scheduledFor.Unix()}
		if ids[f] == nil {
			ids[f] = map[string]bool{}
		}
		ids[f][d.occ] = true
		if attempts[d.occ] == nil {
			attempts[d.occ] = map[int64]int{}
		}
		attempts[d.occ][d.attempt]++
		if attempts[d.occ][d.attempt] == 2 {
			bad = append(bad, fmt.Sprintf("attempt %d of %s handed out twice", d.attempt, d.occ))
		}
	}
	for f, set := range ids {
		if len(set) > 1 {
			bad = append(bad, fmt.Sprintf("firing %s of %s delivered under %d occurrence ids: %v", time.Unix(f.sec, 0).UTC().Format(time.TimeOnly),
				f.sched, len(set), slices.Sorted(maps.Keys(set))))
		}
	}
	for _, r := range rows {
		if r.state == "SUCCEEDED" && r.sf/1000 <= cut && attempts[r.occ][r.attempts] == 0 {
			bad = append(bad, fmt.Sprintf("SUCCEEDED under attempt %d, which no worker was handed: %v", r.attempts, r))
		}
	}
	redelivered := 0
	for _, as := range attempts {
		if len(as) > 1 {
			redelivered++
		}
	}
	for _, b := range first(bad, 40) {
		t.Errorf("DELIV: %s", b)
	}
	t.Logf("DELIV: %d deliveries of %d occurrences; %d occurrences delivered more than once (same id, new attempt)", len(dels), len(attempts), redelivered)
}

// ---------------------------------------------------------------- FENCE

// checkFence checks the epochs the planners wrote: every occurrence carries
// one (> 0), and per shard the epochs never go down in insertion order
// (seq). A transaction of epoch e commits before the lease moves to e+1 or
// is refused; so a row of an older epoch inserted after a row of a newer
// one is a stale write that was let through.
func checkFence(t *testing.T, rows []occRow) {
	t.Helper()
	byShard := map[int64][]occRow{}
	for _, r := range rows {
		if r.epoch <= 0 {
			t.Errorf("FENCE: an occurrence without the planner's epoch: %v", r)
			continue
		}
		byShard[r.shard] = append(byShard[r.shard], r)
	}
	epochs := 0
	for shard, rs := range byShard {
		slices.SortFunc(rs, func(a, b occRow) int { return int(a.seq - b.seq) })
		hi := rs[0]
		bad := 0
		for _, r := range rs {
			if r.epoch < hi.epoch {
				if bad++; bad <= 5 {
					t.Errorf("FENCE: shard %d: %v stored after %v: an older epoch's write accepted after a newer one's", shard, r, hi)
				}
			}
			if r.epoch > hi.epoch {
				hi = r
				epochs++
			}
		}
	}
	t.Logf("FENCE: %d rows over %d shards; epochs never go down in insertion order (%d epoch changes seen in the rows)", len(rows), len(byShard), epochs)
}

// staleAfter fails the test for rows inserted after seq that carry one of
// the epochs a node held before it lost its shards (old, by shard).
func staleAfter(t *testing.T, rows []occRow, seq int64, node string, old map[int64][]int64) {
	t.Helper()
	n := 0
	for _, r := range rows {
		if r.seq > seq && slices.Contains(old[r.shard], r.epoch) {
			if n++; n <= 5 {
				t.Errorf("FENCE: %v was stored after %s woke up, under an epoch %s held before it lost the shard", r, node, node)
			}
		}
	}
}

// lag logs how late the firings up to the cut-off were enqueued and first
// claimed, and fails when enqueueing was later than the lease plus a scan
// plus 5 s: after a fault a firing may wait for a dead node's shard lease to
// run out and for the next scan of its new owner, but no longer.
func (c *pgCluster) lag(rows []occRow, cut int64) {
	t := c.t
	t.Helper()
	var enq, claim time.Duration
	var enqRow occRow
	late := 0
	for _, r := range rows {
		if r.sf/1000 > cut {
			continue
		}
		if r.enqueuedAt != nil {
			d := time.Duration(*r.enqueuedAt-r.sf) * time.Millisecond
			if d > 0 {
				late++
			}
			if d > enq {
				enq, enqRow = d, r
			}
		}
		if r.firstClaimed != nil {
			claim = max(claim, time.Duration(*r.firstClaimed-r.sf)*time.Millisecond)
		}
	}
	t.Logf("LAG: %d firings enqueued after their time, the latest %v after; latest first claim %v after its firing", late, enq, claim)
	if limit := clusterLease + time.Second + 5*time.Second; enq > limit {
		t.Errorf("LAG: %v enqueued %v after its firing, more than lease + scan + 5s = %v", enqRow, enq, limit)
	}
}

// alive fails the test if any of nodes has exited.
func alive(t *testing.T, nodes ...*pgNode) {
	t.Helper()
	for _, nd := range nodes {
		if nd.proc.exited() {
			t.Fatalf("schedd %s exited with status %d", nd.id, nd.proc.code)
		}
	}
}

// ---------------------------------------------------------------- schedctl cluster

// clusterView is `schedctl cluster -o json` (api.Cluster), the test's own
// declaration of the fields it reads.
type clusterView struct {
	NodeID string `json:"node_id"`
	Nodes  []struct {
		NodeID      string `json:"node_id"`
		Live        bool   `json:"live"`
		ShardsOwned int    `json:"shards_owned"`
	} `json:"nodes"`
	Shards []struct {
		Shard int    `json:"shard"`
		Owner string `json:"owner"`
		Epoch int64  `json:"epoch"`
		Live  bool   `json:"live"`
	} `json:"shards"`
}

// waitClusterView waits until `schedctl cluster` on node via says that
// exactly the nodes live are live, and that each shard is held, live, by
// one of them.
func (c *pgCluster) waitClusterView(via *pgNode, live []*pgNode, what string) {
	t := c.t
	t.Helper()
	d := &daemon{t: t, sock: via.sock, env: c.env}
	want := map[string]bool{}
	for _, nd := range live {
		want[nd.id] = true
	}
	waitFor(t, "schedctl cluster to show "+what, clusterWait, func() (bool, string) {
		r := d.ctl("cluster")
		if r.code != 0 {
			return false, r.String()
		}
		var v clusterView
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("%s: not the JSON expected: %v", r, err)
		}
		if v.NodeID != via.id || len(v.Shards) != c.shards {
			return false, r.stdout
		}
		held := 0
		for _, n := range v.Nodes {
			if n.Live != want[n.NodeID] {
				return false, r.stdout
			}
			if n.Live {
				held += n.ShardsOwned
			}
		}
		for _, s := range v.Shards {
			if !s.Live || !want[s.Owner] {
				return false, r.stdout
			}
		}
		return held == c.shards, r.stdout
	})
}

// scheduleShards returns how many load schedules each shard holds.
func (c *pgCluster) scheduleShards() map[int64]int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT shard, count(*) FROM schedules GROUP BY shard`)
	if err != nil {
		c.t.Fatalf("schedules by shard: %v", err)
	}
	out := map[int64]int{}
	var shard, n int64
	if _, err := pgx.ForEachRow(rows, []any{&shard, &n}, func() error { out[shard] = int(n); return nil }); err != nil {
		c.t.Fatalf("schedules by shard: %v", err)
	}
	return out
}

// warnings returns the WARN and ERROR lines of a node's log from byte off.
func (nd *pgNode) warnings(off int) []string {
	var out []string
	for _, l := range strings.Split(nd.log.String()[off:], "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			out = append(out, l)
		}
	}
	return out
}

// stuckSessions describes the database's sessions that are idle inside a
// transaction or waiting on a lock: what holds a takeover back.
func (c *pgCluster) stuckSessions() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT pid, application_name, state, coalesce(wait_event_type, ''), pg_blocking_pids(pid)::text,
       round(extract(epoch from clock_timestamp() - xact_start)::numeric, 1)::text, left(regexp_replace(query, '\s+', ' ', 'g'), 70)
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
  AND (state = 'idle in transaction' OR wait_event_type = 'Lock')`)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	var pid int32
	var app, state, wait, blockers, age, query string
	_, err = pgx.ForEachRow(rows, []any{&pid, &app, &state, &wait, &blockers, &age, &query}, func() error {
		out = append(out, fmt.Sprintf("pid %d (%s) %s %s blocked by %s, in a transaction for %ss: %s", pid, app, state, wait, blockers, age, query))
		return nil
	})
	if err != nil {
		out = append(out, err.Error())
	}
	return out
}

// waitPasses waits until the node's planner has made n passes more: its
// registration's heartbeat, written once a pass, has moved n times.
func (nd *pgNode) waitPasses(n int) {
	c := nd.c
	c.t.Helper()
	var last int64 = -1
	seen := -1
	waitFor(c.t, fmt.Sprintf("%d planner passes of %s", n, nd.id), clusterWait, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		var hb int64
		if err := c.db.QueryRow(ctx, `SELECT last_heartbeat FROM nodes WHERE node_id = $1`, nd.id).Scan(&hb); err != nil {
			return false, err.Error()
		}
		if hb != last {
			last, seen = hb, seen+1
		}
		return seen >= n, fmt.Sprintf("%d passes seen", seen)
	})
}
