package engine

import (
	"testing"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
)

// The benchmarks of bench_test.go on the PostgreSQL store: the same
// workloads (20,000 hourly schedules firing at one second, planned 30 s
// ahead; claim batches acked in batches), on a schema of their own in the
// database named by SCHED_TEST_POSTGRES_DSN. They skip without it.

// pgBench is a PostgreSQL store on a schema of its own (one per
// sub-benchmark), inserting from several goroutines (one insert is a round
// trip to the server).
var pgBench = benchBackend{
	open: func(b *testing.B) store.Store {
		b.Helper()
		dsn := pgtest.DSN(b)
		return pgtest.Open(b, dsn, pgtest.Schema(b, dsn))
	},
	insertWorkers:    16,
	shards:           16,
	ignoreStoreClock: true,
}

// BenchmarkMaterializePG is BenchmarkMaterialize on PostgreSQL.
func BenchmarkMaterializePG(b *testing.B) {
	pgtest.DSN(b)
	benchMaterialize(b, pgBench, false)
}

// BenchmarkClaimAckPG is BenchmarkClaimAck on PostgreSQL.
func BenchmarkClaimAckPG(b *testing.B) {
	pgtest.DSN(b)
	benchClaimAck(b, pgBench, false)
}

// BenchmarkAckAndClaimPG is BenchmarkAckAndClaim on PostgreSQL.
func BenchmarkAckAndClaimPG(b *testing.B) {
	pgtest.DSN(b)
	benchClaimAck(b, pgBench, true)
}
