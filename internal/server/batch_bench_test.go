package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// BenchmarkCreateBatchAPI: cron schedules created per second through POST
// /v1/schedules:batch on loopback TCP, batches of 1,000, a few requests in
// flight (as schedctl import sends them), on a SQLite file and on
// PostgreSQL (a schema of its own; skipped without
// SCHED_TEST_POSTGRES_DSN).
func BenchmarkCreateBatchAPI(b *testing.B) {
	const inFlight = 4
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run("store="+kind, func(b *testing.B) {
			c := batchBenchServer(b, kind)
			n := 0
			cpu0 := processCPU(b)
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
		})
	}
}

// batchBenchServer serves the API on a real engine and store of kind on
// loopback TCP and returns a client of it.
func batchBenchServer(b *testing.B, kind string) *client.Client {
	b.Helper()
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
		s, err := postgres.Open(b.Context(), dsn, postgres.WithSchema(schema))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		st, shards = s, 16
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
	return c
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
