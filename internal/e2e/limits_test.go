package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/testdaemon"
)

// idleChildEnv, when set to "ADDR LOCAL_IP N", makes this test binary a
// child that opens N connections from LOCAL_IP to the daemon at ADDR (one
// /healthz request on each, then idle keep-alive), prints "held H refused
// R" and holds them until its stdin closes. A process may open only so
// many files; two children open more connections than the test alone
// could.
const idleChildEnv = "SCHED_E2E_IDLE_CHILD"

func init() {
	if spec := os.Getenv(idleChildEnv); spec != "" {
		os.Exit(idleChild(spec))
	}
}

// idleChild is the child's whole run (see idleChildEnv); its exit status.
func idleChild(spec string) int {
	f := strings.Fields(spec)
	n, err := 0, error(nil)
	if len(f) == 3 {
		n, err = strconv.Atoi(f[2])
	}
	if len(f) != 3 || err != nil {
		fmt.Fprintf(os.Stderr, "%s: want ADDR LOCAL_IP N, got %q\n", idleChildEnv, spec)
		return 2
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(f[1])}, Timeout: 20 * time.Second}
	var (
		mu      sync.Mutex
		held    []net.Conn
		refused atomic.Int64
		next    atomic.Int64
		wg      sync.WaitGroup
	)
	for range 32 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				c, err := openIdle(&d, f[0])
				if err != nil {
					refused.Add(1)
					continue
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Printf("held %d refused %d\n", len(held), refused.Load())
	io.Copy(io.Discard, os.Stdin) // until the test closes it
	for _, c := range held {
		c.Close()
	}
	return 0
}

// openIdle opens a connection, has one /healthz answered on it (so it is
// accepted and served, not merely queued), and leaves it idle.
func openIdle(d *net.Dialer, addr string) (net.Conn, error) {
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			err = errors.New(resp.Status)
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// memFigures is what the daemon holds, from /proc and its /metrics.
type memFigures struct {
	rss, heapInuse, stackInuse, heapReleased, otherSys, goroutines float64
	sys, mspanSys, gcSys, threads                                  float64
}

func (m memFigures) String() string {
	return fmt.Sprintf("RSS %.1f MB, heap in use %.1f MB, stacks %.1f MB, heap released %.1f MB, runtime other %.1f MB, sys %.1f MB, mspan %.1f MB, gc %.1f MB, goroutines %.0f, threads %.0f",
		m.rss/1e6, m.heapInuse/1e6, m.stackInuse/1e6, m.heapReleased/1e6, m.otherSys/1e6, m.sys/1e6, m.mspanSys/1e6, m.gcSys/1e6, m.goroutines, m.threads)
}

// limitsDaemon is a schedd on a Unix socket and a loopback TCP port.
type limitsDaemon struct {
	t    *testing.T
	proc *proc
	sock string
	tcp  string // HOST:PORT
	unix *http.Client
}

func startLimitsDaemon(t *testing.T, extra ...string) *limitsDaemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "e2el") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &limitsDaemon{t: t, sock: filepath.Join(dir, "s.sock")}
	// Generous: 5,000 claims arriving at once queue on SQLite's one
	// writer, seconds of work on a busy machine, before others are served.
	d.unix = &http.Client{Timeout: 40 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, // a new connection per request, as a probe makes
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", d.sock)
		},
	}}
	log := &syncBuffer{}
	args := append([]string{"--store", "sqlite:" + filepath.Join(dir, "s.db"), "--listen", "unix:" + d.sock + ",tcp:127.0.0.1:0"}, extra...)
	// The operator's token: over TCP every request needs one.
	d.proc = startProc(t, "schedd", log, false, append(hermeticEnv(dir), "SCHED_TOKEN="+limitsToken), scheddBin, args...)
	testdaemon.WaitServing(t, d.proc.watch(log), deadline, func() error {
		_, err := d.get("/healthz")
		return err
	})
	m := regexp.MustCompile(`listen=\S*tcp:(127\.0\.0\.1:\d+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("schedd did not log its TCP address:\n%s", log.String())
	}
	d.tcp = m[1]
	return d
}

// get fetches path over a new Unix socket connection and returns the body
// of a 200.
func (d *limitsDaemon) get(path string) (string, error) {
	resp, err := d.unix.Get("http://sched" + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return string(b), err
}

// mem reads the daemon's figures: RSS from /proc, the rest from /metrics.
func (d *limitsDaemon) mem() memFigures {
	d.t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.proc.cmd.Process.Pid))
	if err != nil {
		d.t.Fatal(err)
	}
	var m memFigures
	rss := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(status)
	if rss == nil {
		d.t.Fatalf("no VmRSS in /proc/PID/status:\n%s", status)
	}
	kb, _ := strconv.ParseFloat(string(rss[1]), 64)
	m.rss = kb * 1024
	body, err := d.get("/metrics")
	if err != nil {
		d.t.Fatal(err)
	}
	for name, p := range map[string]*float64{
		"go_memstats_heap_inuse_bytes":    &m.heapInuse,
		"go_memstats_stack_inuse_bytes":   &m.stackInuse,
		"go_memstats_heap_released_bytes": &m.heapReleased,
		"go_memstats_other_sys_bytes":     &m.otherSys,
		"go_goroutines":                   &m.goroutines,
		"go_memstats_sys_bytes":           &m.sys,
		"go_memstats_mspan_sys_bytes":     &m.mspanSys,
		"go_memstats_gc_sys_bytes":        &m.gcSys,
		"go_threads":                      &m.threads,
	} {
		v := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
		if v == nil {
			d.t.Fatalf("/metrics has no %s", name)
		}
		*p, _ = strconv.ParseFloat(v[1], 64)
	}
	return m
}

// claimRequest is a claim with a wait, as a raw HTTP/1.1 request.
func claimRequest(queue, wait string) string {
	body := fmt.Sprintf(`{"queue":%q,"worker_id":"w","wait":%q}`, queue, wait)
	return fmt.Sprintf("POST /v1/claims HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		limitsToken, len(body), body)
}

// limitsToken is the daemon's operator token in these tests.
const limitsToken = "e2e-limits-token"

// 20,000 idle connections (from two child processes, 10,000 each: one
// process may open only 20,000 files here, the daemon included) and 5,000
// claims waiting in long polls leave /healthz answering within 100 ms, and
// once they close the daemon's memory comes back near where it started.
// The daemon can hold only so many of the connections: --max-connections
// 19000 on its TCP listener keeps it under its own limit on open files;
// the idle connections past it are closed on accept.
func TestIdleConnectionsAndWaitingClaims(t *testing.T) {
	const (
		claims   = 5000
		idlePer  = 10_000
		maxConns = 19_000
		// After they close, RSS <= baseline + rssMargin. Not all of it
		// can come back: the Go runtime keeps a descriptor for every
		// goroutine it ever ran and a poll descriptor for every
		// connection it ever held at once (some 25 MB for 24,000 of
		// each here), its span and collector metadata grow with the
		// peak, and the probes leave some garbage. The peak is near
		// 500 MB; measured after: baseline + 40 to 63 MB.
		rssMargin = 80 << 20
	)
	// The share per client address is lifted to the whole cap: this test
	// is of the listener's cap, with 5,000 claims from one address
	// (TestMaxConnectionsPerClient holds the share).
	d := startLimitsDaemon(t, "--max-connections", strconv.Itoa(maxConns), "--max-connections-per-client", strconv.Itoa(maxConns),
		"--max-waiting-claims", "6000", "--max-waiting-claims-per-tenant", strconv.Itoa(claims), "--api-burst", "10000")

	// A keep-alive probe connection opened before the flood, so that it
	// holds a slot when the listener is full.
	probe, err := net.Dial("tcp", d.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probeR := bufio.NewReader(probe)
	probeTCP := func() time.Duration {
		t.Helper()
		began := time.Now()
		_ = probe.SetDeadline(began.Add(10 * time.Second))
		if _, err := io.WriteString(probe, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(probeR, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/healthz over TCP: %s", resp.Status)
		}
		return time.Since(began)
	}
	probeUnix := func() time.Duration {
		t.Helper()
		began := time.Now()
		if _, err := d.get("/healthz"); err != nil {
			t.Fatal(err)
		}
		return time.Since(began)
	}
	// A warm-up, so that the baseline is of a daemon that has served.
	for range 20 {
		probeTCP()
		probeUnix()
	}
	time.Sleep(time.Second)
	base := d.mem()
	t.Logf("baseline: %s", base)

	// The waiting claims, one connection each. A claim answered early
	// (the store busy under the burst) is sent again, as a worker would.
	var (
		mu     sync.Mutex
		waits  []net.Conn
		next   atomic.Int64
		early  atomic.Int64
		why    atomic.Value
		wg     sync.WaitGroup
		failed atomic.Value
	)
	hold := func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			if _, err := io.WriteString(c, claimRequest("idle", "2m")); err != nil {
				return
			}
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				return // closed by the test
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			early.Add(1)
			why.Store(resp.Status + " " + string(b))
			time.Sleep(100 * time.Millisecond)
		}
	}
	for range 16 {
		wg.Go(func() {
			for next.Add(1) <= claims {
				c, err := net.Dial("tcp", d.tcp)
				if err != nil {
					failed.Store(err)
					return
				}
				mu.Lock()
				waits = append(waits, c)
				mu.Unlock()
				go hold(c)
			}
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range waits {
			c.Close()
		}
	}()
	if err := failed.Load(); err != nil {
		t.Fatalf("open the waiting claims: %v", err)
	}
	// All of them wait once one more is refused at the tenant's cap.
	began := time.Now()
	var last string
	for {
		resp, err := d.unix.Post("http://sched/v1/claims", "application/json", strings.NewReader(`{"queue":"idle","worker_id":"w","wait":"1ms"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%s %s", resp.Status, b)
		if resp.StatusCode == 429 {
			if !strings.Contains(last, "too_many_waiting") || !strings.Contains(last, strconv.Itoa(claims)) {
				t.Fatalf("claim over the tenant's cap: %s, want 429 too_many_waiting naming %d", last, claims)
			}
			break
		}
		if time.Since(began) > 2*deadline {
			t.Fatalf("%d claims not all waiting after %s; last extra claim: %s", claims, 2*deadline, last)
		}
		time.Sleep(pollStep)
	}
	t.Logf("%d claims waiting after %s (%d answered early and sent again; last: %v)", claims, time.Since(began).Round(time.Millisecond), early.Load(), why.Load())

	// The idle connections, from two children.
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	var children []child
	began = time.Now()
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s 127.0.0.%d %d", idleChildEnv, d.tcp, 2+i, idlePer))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, child{cmd, stdin, bufio.NewReader(stdout)})
	}
	closeChildren := func() {
		for _, c := range children {
			c.stdin.Close()
		}
		for _, c := range children {
			c.cmd.Wait()
		}
		children = nil
	}
	defer func() { closeChildren() }()
	held, refused := 0, 0
	for _, c := range children {
		line, err := c.out.ReadString('\n')
		var h, r int
		if _, serr := fmt.Sscanf(line, "held %d refused %d", &h, &r); err != nil || serr != nil {
			t.Fatalf("idle child: %q: %v %v", line, err, serr)
		}
		held, refused = held+h, refused+r
	}
	t.Logf("idle connections: %d opened in %s, %d held, %d closed on accept (--max-connections %d)",
		2*idlePer, time.Since(began).Round(time.Millisecond), held, refused, maxConns)
	if held+refused != 2*idlePer || refused == 0 || held < maxConns-claims-200 {
		t.Fatalf("held %d, refused %d: want about %d held and the rest refused", held, refused, maxConns-claims)
	}

	// /healthz answers within 100 ms, over the kept connection and over
	// new Unix socket connections, once the flood of connections has
	// been taken in (a moment to settle: the collection it set off).
	// The machine is shared (other tests run beside this one): a round
	// of ten samples that meets a hiccup of the machine is sampled again,
	// up to three rounds; a daemon that cannot answer in time (as one
	// out of file descriptors could not, for seconds) fails every round.
	time.Sleep(time.Second)
	var worst time.Duration
	for round := 1; round <= 3; round++ {
		worst = 0
		var samples []string
		for range 10 {
			a, b := probeTCP(), probeUnix()
			worst = max(worst, a, b)
			samples = append(samples, fmt.Sprintf("%s/%s", a.Round(10*time.Microsecond), b.Round(10*time.Microsecond)))
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("/healthz under load, round %d (tcp/unix): %s; max %s", round, strings.Join(samples, " "), worst.Round(10*time.Microsecond))
		if worst < 100*time.Millisecond {
			break
		}
		time.Sleep(time.Second)
	}
	during := d.mem()
	t.Logf("during: %s", during)
	if worst >= 100*time.Millisecond {
		t.Errorf("/healthz took %s under load in each of three rounds, want under 100ms", worst)
	}

	// Everything closes; the memory comes back.
	for _, c := range waits {
		c.Close()
	}
	waits = nil
	closeChildren()
	began = time.Now()
	var after memFigures
	for {
		after = d.mem()
		if after.goroutines <= base.goroutines+20 && after.rss <= base.rss+rssMargin {
			break
		}
		if time.Since(began) > deadline {
			t.Fatalf("after %s: %s; baseline %s; want RSS at most %.1f MB", deadline, after, base, (base.rss+rssMargin)/1e6)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("after, %s later: %s (baseline + %.1f MB RSS; %.0f%% of the rise returned)", time.Since(began).Round(time.Millisecond), after,
		(after.rss-base.rss)/1e6, 100*(during.rss-after.rss)/(during.rss-base.rss))
	// A claim with a wait is taken again.
	resp, err := d.unix.Post("http://sched/v1/claims", "application/json", strings.NewReader(`{"queue":"idle","worker_id":"w","wait":"1ms"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a claim after the others ended: %s", resp.Status)
	}
}
