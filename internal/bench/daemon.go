package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sched-dev/sched/client"
)

// FindSchedd returns the schedd binary to run: path when given, else
// schedd next to the running executable (schedctl and schedd ship side by
// side), else schedd in PATH. The error names every place it looked.
func FindSchedd(path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("--schedd %s: %w", path, err)
		}
		return path, nil
	}
	var beside string
	if exe, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(exe), "schedd")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("schedd"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("schedd not found: neither %s (next to this executable) nor schedd in PATH exists; give --schedd PATH", beside)
}

// store is the fresh store one run uses: a SQLite file in the run's
// directory, or a schema of its own on a PostgreSQL database.
type store struct {
	kind   string // sqlite | postgres
	file   string // sqlite: the database file
	dsn    string // postgres: the DSN as given
	schema string // postgres: the run's schema
}

// newStore chooses the run's store from --store: "sqlite" or a postgres://
// DSN, whose fresh schema schedd creates (its schema=NAME parameter).
func newStore(spec, dir string) (*store, error) {
	switch {
	case spec == "" || spec == "sqlite":
		return &store{kind: "sqlite", file: filepath.Join(dir, "sched.db")}, nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("schema name: %w", err)
		}
		return &store{kind: "postgres", dsn: spec, schema: "bench_" + hex.EncodeToString(b[:])}, nil
	}
	return nil, fmt.Errorf("--store %q: want sqlite or a postgres:// DSN", spec)
}

// scheddStore is the value of schedd's --store flag.
func (s *store) scheddStore() (string, error) {
	if s.kind == "sqlite" {
		return "sqlite:" + s.file, nil
	}
	u, err := url.Parse(s.dsn)
	if err != nil {
		return "", fmt.Errorf("--store: %w", err)
	}
	q := u.Query()
	q.Set("schema", s.schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// psql runs one statement with psql (schedctl links no database driver)
// and returns its unaligned output.
func (s *store) psql(ctx context.Context, sql string) (string, error) {
	bin, err := exec.LookPath("psql")
	if err != nil {
		return "", errors.New("psql not found in PATH")
	}
	out, err := exec.CommandContext(ctx, bin, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql, s.dsn).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("psql: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// bytes is the store's size on disk: the SQLite file and its WAL, or the
// total size (indexes and TOAST included) of the schema's tables.
func (s *store) bytes(ctx context.Context) (int64, error) {
	if s.kind == "sqlite" {
		var n int64
		for _, f := range []string{s.file, s.file + "-wal"} {
			if st, err := os.Stat(f); err == nil {
				n += st.Size()
			}
		}
		return n, nil
	}
	out, err := s.psql(ctx, "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)),0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '"+s.schema+"' AND c.relkind IN ('r','m','p')")
	if err != nil {
		return 0, fmt.Errorf("store size: %w", err)
	}
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("store size: %q: %w", out, err)
	}
	return n, nil
}

// drop removes the run's PostgreSQL schema; a SQLite file goes with the
// run's directory.
func (s *store) drop(ctx context.Context) error {
	if s.kind != "postgres" {
		return nil
	}
	if _, err := s.psql(ctx, `DROP SCHEMA IF EXISTS "`+s.schema+`" CASCADE`); err != nil {
		return fmt.Errorf("drop schema %s: %w", s.schema, err)
	}
	return nil
}

// daemon is the schedd process under test.
type daemon struct {
	cmd  *exec.Cmd
	sock string
	log  *os.File
	done chan struct{}

	mu     sync.Mutex
	rssMax int64 // sampled VmRSS, kB
	stop   chan struct{}
}

// startDaemon starts schedd on the store and a Unix socket in dir, with
// its environment's XDG paths inside dir, and waits until it is ready.
func startDaemon(ctx context.Context, bin, dir string, st *store) (*daemon, *client.Client, error) {
	storeArg, err := st.scheddStore()
	if err != nil {
		return nil, nil, err
	}
	sock := filepath.Join(dir, "schedd.sock")
	logf, err := os.Create(filepath.Join(dir, "schedd.log"))
	if err != nil {
		return nil, nil, fmt.Errorf("schedd log: %w", err)
	}
	cmd := exec.Command(bin, "--store", storeArg, "--listen", "unix:"+sock)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SCHED_") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, fmt.Errorf("start %s: %w", bin, err)
	}
	d := &daemon{cmd: cmd, sock: sock, log: logf, done: make(chan struct{}), stop: make(chan struct{})}
	go func() { cmd.Wait(); close(d.done) }()
	c, err := client.New("unix:"+sock, "", client.WithVersion("schedctl-bench"))
	if err != nil {
		d.terminate()
		return nil, nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = c.Ready(rctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-d.done:
			return nil, nil, fmt.Errorf("schedd exited at start: %s", d.tail())
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			d.terminate()
			return nil, nil, fmt.Errorf("schedd not ready after 30s: %v: %s", err, d.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	go d.sample()
	return d, c, nil
}

// tail is the end of schedd's output, for an error.
func (d *daemon) tail() string {
	b, _ := os.ReadFile(d.log.Name())
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// sample records the largest VmRSS seen every 200 ms until terminate.
func (d *daemon) sample() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		d.sampleOnce()
		select {
		case <-t.C:
		case <-d.stop:
			return
		case <-d.done:
			return
		}
	}
}

func (d *daemon) sampleOnce() int64 {
	rss, _ := procStatus(d.cmd.Process.Pid, "VmRSS")
	d.mu.Lock()
	d.rssMax = max(d.rssMax, rss)
	d.mu.Unlock()
	return rss
}

// resetRSSMax starts a new window of sampled VmRSS and returns the
// largest of the last one, in MB.
func (d *daemon) resetRSSMax() float64 {
	d.sampleOnce()
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.rssMax
	d.rssMax = 0
	return mb(m)
}

func (d *daemon) sampledMaxMB() float64 {
	d.sampleOnce()
	d.mu.Lock()
	defer d.mu.Unlock()
	return mb(d.rssMax)
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// procStatus reads one kB field of /proc/PID/status (Linux; 0 elsewhere).
func procStatus(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == field {
			fs := strings.Fields(v)
			if len(fs) > 0 {
				return strconv.ParseInt(fs[0], 10, 64)
			}
		}
	}
	return 0, sc.Err()
}

// terminate stops schedd: SIGTERM, then SIGKILL after 10 s.
func (d *daemon) terminate() {
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	select {
	case <-d.done:
	default:
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			d.cmd.Process.Kill()
			<-d.done
		}
	}
	d.log.Close()
}
