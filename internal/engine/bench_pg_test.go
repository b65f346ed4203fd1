package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres"
)

// The benchmarks of bench_test.go on the PostgreSQL store: the same
// workloads (20,000 hourly schedules firing at one second, planned 30 s
// ahead; claim batches acked in batches), on a schema of their own in the
// database named by SCHED_TEST_POSTGRES_DSN. They skip without it.

// pgEngineDSNVar names the test database's DSN (as in the store's tests).
const pgEngineDSNVar = "SCHED_TEST_POSTGRES_DSN"

// pgEngineDSN returns the test database's DSN, or skips.
func pgEngineDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(pgEngineDSNVar)
	if dsn == "" {
		tb.Skip("PostgreSQL tests skipped: set " + pgEngineDSNVar + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run them")
	}
	return dsn
}

// pgEngineSchema returns a fresh schema name, dropped when the test ends
// (after the stores opened on it are closed: cleanups run last first).
func pgEngineSchema(tb testing.TB, dsn string) string {
	tb.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	schema := "e_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), dsn, schema); err != nil {
			tb.Errorf("DropSchema: %v", err)
		}
	})
	return schema
}

// pgEngineStore opens a store on schema, closed when the test ends.
func pgEngineStore(tb testing.TB, dsn, schema string) *postgres.Store {
	tb.Helper()
	st, err := postgres.Open(tb.Context(), dsn, postgres.WithSchema(schema))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// pgBench is a PostgreSQL store on a schema of its own (one per
// sub-benchmark), inserting from several goroutines (one insert is a round
// trip to the server).
var pgBench = benchBackend{
	open: func(b *testing.B) store.Store {
		b.Helper()
		dsn := pgEngineDSN(b)
		return pgEngineStore(b, dsn, pgEngineSchema(b, dsn))
	},
	insertWorkers:    16,
	shards:           16,
	ignoreStoreClock: true,
}

// BenchmarkMaterializePG is BenchmarkMaterialize on PostgreSQL.
func BenchmarkMaterializePG(b *testing.B) {
	pgEngineDSN(b)
	benchMaterialize(b, pgBench, false)
}

// BenchmarkClaimAckPG is BenchmarkClaimAck on PostgreSQL.
func BenchmarkClaimAckPG(b *testing.B) {
	pgEngineDSN(b)
	benchClaimAck(b, pgBench, false)
}

// BenchmarkAckAndClaimPG is BenchmarkAckAndClaim on PostgreSQL.
func BenchmarkAckAndClaimPG(b *testing.B) {
	pgEngineDSN(b)
	benchClaimAck(b, pgBench, true)
}
