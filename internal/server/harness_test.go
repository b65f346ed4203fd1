package server

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start is the virtual clock's reading in every test: the engine, the
// previews and the queue all read it, so answers are deterministic.
var start = time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)

// harness is the API on a real engine on a real store (a SQLite file, or
// a schema of the real PostgreSQL: newPGHarness), served by a real HTTP
// server on loopback. The engine's planner does not run in the background;
// tests move the virtual clock and call plan.
type harness struct {
	t      testing.TB
	srv    *Server
	eng    *engine.Engine
	clk    *clock.Virtual
	st     store.Store
	path   string // the SQLite file; "" on PostgreSQL
	ts     *httptest.Server
	client *http.Client
	token  string // sent as the bearer token when set
}

type option func(*Config, *[]sqlite.Option)

func withLogger(l *slog.Logger) option { return func(c *Config, _ *[]sqlite.Option) { c.Logger = l } }

func withToken(tok string) option { return func(c *Config, _ *[]sqlite.Option) { c.Token = tok } }

func withMaxWaitingClaims(n int) option {
	return func(c *Config, _ *[]sqlite.Option) { c.MaxWaitingClaims = n }
}

func newHarness(t testing.TB, opts ...option) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sched.db")
	cfg := Config{StoreDriver: "sqlite"}
	var sopts []sqlite.Option
	for _, o := range opts {
		o(&cfg, &sopts)
	}
	st, err := sqlite.Open(t.Context(), path, sopts...)
	if err != nil {
		t.Fatal(err)
	}
	h := serveHarness(t, cfg, st)
	h.path = path
	return h
}

// newPGHarness is newHarness on a fresh schema of the PostgreSQL at dsn
// (pgtest.DSN), dropped when the test ends.
func newPGHarness(t testing.TB, dsn string, opts ...option) *harness {
	t.Helper()
	cfg := Config{StoreDriver: "postgres"}
	var sqliteOnly []sqlite.Option
	for _, o := range opts {
		o(&cfg, &sqliteOnly)
	}
	return serveHarness(t, cfg, pgtest.Open(t, dsn, pgtest.Schema(t, dsn)))
}

// serveHarness starts the engine on st and serves the API with cfg; both
// are closed when the test ends.
func serveHarness(t testing.TB, cfg Config, st store.Store) *harness {
	t.Helper()
	cfg.Version, cfg.NodeID, cfg.Shards = "test-1", "node-a", 4
	clk := clock.NewVirtual(start)
	cfg.Metrics = metrics.New()
	// The engine stays on the virtual clock even on PostgreSQL, whose
	// clock it would otherwise add its measured offset from: a claim at
	// the virtual minute could then fall a fraction of a millisecond
	// before the occurrence it is meant to find, and sleep on a virtual
	// timer that never fires.
	eng, err := engine.New(t.Context(), engine.Config{Store: st, Clock: clk, Shards: 4, NodeID: "node-a", Metrics: cfg.Metrics, IgnoreStoreClock: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Engine = eng
	cfg.Ready = func(ctx context.Context) error { _, err := st.ListShardLeases(ctx); return err }
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Without a token the harness stands for the daemon's Unix socket,
	// whose requests without a token act as the default tenant's admin;
	// with one, for a TCP listener, where every request needs a token.
	handler := srv.Handler()
	if cfg.Token == "" {
		handler = Local(handler)
	}
	ts := httptest.NewServer(handler)
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	h := &harness{t: t, srv: srv, eng: eng, clk: clk, st: st, ts: ts, client: client, token: cfg.Token}
	t.Cleanup(func() {
		srv.Drain()
		client.CloseIdleConnections()
		ts.Close()
		st.Close()
	})
	return h
}

// plan moves the clock by d and runs one planner pass.
func (h *harness) plan(d time.Duration) {
	h.t.Helper()
	h.clk.Advance(d)
	if _, err := h.eng.PlanOnce(h.t.Context()); err != nil {
		h.t.Fatalf("plan: %v", err)
	}
}

// do sends a request. body is sent as is when it is a string or []byte,
// else as JSON; nil sends none.
func (h *harness) do(method, path string, body any, hdr ...string) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, h.ts.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.Header.Get("Sched-Version") != "test-1" {
		h.t.Errorf("%s %s: Sched-Version %q, want test-1", method, path, resp.Header.Get("Sched-Version"))
	}
	checkErrorKind(h.t, method+" "+path, resp.StatusCode, raw)
	return resp.StatusCode, raw
}

// checkErrorKind fails the test when an error answer's status and code
// are not among the documented ones (api.Errors), so that a new answer
// cannot reach clients without reaching the docs first. Answers that are
// not JSON error bodies (metrics, a 431 from net/http) are left alone.
func checkErrorKind(t testing.TB, what string, status int, raw []byte) {
	t.Helper()
	var eb api.ErrorBody
	if status < 400 || json.Unmarshal(raw, &eb) != nil || eb.Error.Code == "" {
		return
	}
	if !slices.Contains(api.Errors, api.ErrorKind{Status: status, Code: eb.Error.Code}) {
		t.Errorf("%s: %d %s is not among the documented errors (api.Errors)", what, status, eb.Error.Code)
	}
}

// ok sends a request, requires status want, and decodes the answer into out.
func (h *harness) ok(want int, out any, method, path string, body any, hdr ...string) {
	h.t.Helper()
	code, raw := h.do(method, path, body, hdr...)
	if code != want {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			h.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// fails sends a request and requires an error answer with this status and
// code (and field, when given).
func (h *harness) fails(status int, code, field, method, path string, body any, hdr ...string) api.ErrorDetail {
	h.t.Helper()
	got, raw := h.do(method, path, body, hdr...)
	var eb api.ErrorBody
	if err := json.Unmarshal(raw, &eb); err != nil {
		h.t.Fatalf("%s %s: not an error body (%d): %s", method, path, got, raw)
	}
	if got != status || eb.Error.Code != code || (field != "" && eb.Error.Field != field) {
		h.t.Fatalf("%s %s: %d %+v, want %d %s field %q", method, path, got, eb.Error, status, code, field)
	}
	if eb.Error.Message == "" {
		h.t.Fatalf("%s %s: error without a message", method, path)
	}
	return eb.Error
}

// create makes a schedule and returns it.
func (h *harness) create(req api.ScheduleRequest) api.CreateResult {
	h.t.Helper()
	var res api.CreateResult
	h.ok(http.StatusCreated, &res, "POST", "/v1/schedules", req)
	return res
}

func everyMinute(name string) api.ScheduleRequest {
	return api.ScheduleRequest{Name: name, Queue: "q", Every: "1m", Payload: json.RawMessage(`{"n":1}`)}
}

// snapshot is everything the API shows of the store, to check that an
// error answer changed nothing.
func (h *harness) snapshot() string {
	h.t.Helper()
	var b strings.Builder
	for _, p := range []string{"/v1/schedules?limit=1000", "/v1/occurrences?limit=1000", "/v1/dlq"} {
		code, raw := h.do("GET", p, nil)
		if code != http.StatusOK {
			h.t.Fatalf("GET %s: %d %s", p, code, raw)
		}
		b.Write(raw)
	}
	return b.String()
}

// lockExclusive holds an exclusive lock on the database at path from a
// connection outside the store, as another process would (sqlite3 db
// 'BEGIN EXCLUSIVE;'), until the returned func is called.
func lockExclusive(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), "ROLLBACK")
			conn.Close()
			db.Close()
		})
	}
	t.Cleanup(release)
	return release
}
