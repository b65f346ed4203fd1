package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// BenchmarkCreateBatchAPI: cron schedules created per second through POST
// /v1/schedules:batch on loopback TCP, batches of 1,000, four requests in
// flight (as schedctl import and schedctl bench's loader send them), on a
// SQLite file and on PostgreSQL (a schema of its own; skipped without
// SCHED_TEST_POSTGRES_DSN). Besides the rate it reports the CPU of this
// process per schedule and, on PostgreSQL, the CPU of the server's
// backends that served the store (Linux).
func BenchmarkCreateBatchAPI(b *testing.B) {
	const inFlight = 4
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run("store="+kind, func(b *testing.B) {
			c, backends := batchBenchServer(b, kind)
			n := 0
			cpu0 := processCPU(b)
			var pg0 map[int]time.Duration
			if backends != nil {
				pg0 = backends()
			}
			var mu sync.Mutex
			var firstErr error
			for b.Loop() {
				var wg sync.WaitGroup
				for range inFlight {
					items := make([]api.BatchItem, api.MaxBatchItems)
					for i := range items {
						items[i] = api.BatchItem{IdempotencyKey: fmt.Sprintf("k-%d", n), Schedule: api.ScheduleRequest{
							Name: fmt.Sprintf("s-%08d", n), Queue: "q", Cron: fmt.Sprintf("%d %d * * *", n%60, n%24), TimeZone: "Europe/Berlin",
							Payload: []byte(`{"report":"nightly","n":1}`)}}
						n++
					}
					wg.Go(func() {
						res, err := c.CreateSchedules(context.Background(), items)
						if err == nil && res.Created != len(items) {
							err = fmt.Errorf("%d created, %d existing, %d failed; first: %+v", res.Created, res.Existing, res.Failed, res.Items[0].Error)
						}
						if err != nil {
							mu.Lock()
							firstErr = err
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				if firstErr != nil {
					b.Fatal(firstErr)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "schedules/s")
			// The CPU of this process (client, server and, on SQLite, the
			// store) per schedule: steadier than the rate on a shared
			// machine. PostgreSQL's own CPU is not in it.
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(n), "µs-CPU/schedule")
			if backends != nil {
				var pg time.Duration
				for pid, t := range backends() {
					pg += t - pg0[pid]
				}
				b.ReportMetric(float64(pg.Microseconds())/float64(n), "µs-pgCPU/schedule")
			}
		})
	}
}

// batchBenchServer serves the API on a real engine and store of kind on
// loopback TCP and returns a client of it. On PostgreSQL it also returns
// a function reading the CPU each backend of the store's pool has used so
// far, by process id (the store's connections carry the schema's name as
// their application_name, so that other sessions on the server, such as
// other tests', are not counted); nil on SQLite, whose CPU is this
// process's.
func batchBenchServer(b *testing.B, kind string) (*client.Client, func() map[int]time.Duration) {
	b.Helper()
	var backends func() map[int]time.Duration
	var st store.Store
	shards := 1
	switch kind {
	case "sqlite":
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "sched.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		st = s
	case "postgres":
		dsn := os.Getenv("SCHED_TEST_POSTGRES_DSN")
		if dsn == "" {
			b.Skip("set SCHED_TEST_POSTGRES_DSN to run on PostgreSQL")
		}
		var r [8]byte
		rand.Read(r[:])
		schema := "bb_" + hex.EncodeToString(r[:])
		b.Cleanup(func() {
			if err := postgres.DropSchema(context.Background(), dsn, schema); err != nil {
				b.Errorf("DropSchema: %v", err)
			}
		})
		s, err := postgres.Open(b.Context(), withApplicationName(b, dsn, schema), postgres.WithSchema(schema))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		st, shards = s, 16
		backends = func() map[int]time.Duration { return backendCPU(b, dsn, schema) }
	}
	eng, err := engine.New(b.Context(), engine.Config{Store: st, Clock: clock.NewVirtual(start), Shards: shards, NodeID: "node-a"})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Config{Version: "bench", NodeID: "node-a", Shards: shards, StoreDriver: kind, Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(Local(srv.Handler()))
	b.Cleanup(ts.Close)
	c, err := client.New("tcp:"+strings.TrimPrefix(ts.URL, "http://"), "")
	if err != nil {
		b.Fatal(err)
	}
	return c, backends
}

// withApplicationName is dsn (a URL) with application_name set to name.
func withApplicationName(b *testing.B, dsn, name string) string {
	b.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatalf("SCHED_TEST_POSTGRES_DSN is not a URL: %v", err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// backendCPU reads the CPU time, user and system, of each PostgreSQL
// backend whose application_name is name, from /proc (the server runs on
// this machine), by process id. A backend gone since the last read is not
// in it; the benchmark's pool keeps its connections open.
func backendCPU(b *testing.B, dsn, name string) map[int]time.Duration {
	b.Helper()
	conn, err := pgx.Connect(b.Context(), dsn)
	if err != nil {
		b.Fatalf("connect to read backends: %v", err)
	}
	defer conn.Close(context.WithoutCancel(b.Context()))
	rows, err := conn.Query(b.Context(), `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, name)
	if err != nil {
		b.Fatalf("read backends: %v", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatalf("read backends: %v", err)
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatalf("backend CPU (PostgreSQL must run on this machine): %v", err)
		}
		// Fields after the command's closing parenthesis: utime and stime
		// are the 14th and 15th of the whole line, in clock ticks.
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		utime, err1 := strconv.ParseInt(f[11], 10, 64)
		stime, err2 := strconv.ParseInt(f[12], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			b.Fatalf("backend CPU of %d: %v", pid, err)
		}
		out[int(pid)] = time.Duration(utime+stime) * time.Second / clockTicks
	}
	return out
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ), 100 on
// every Linux this runs on.
const clockTicks = 100

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
