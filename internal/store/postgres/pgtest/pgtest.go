// Package pgtest is test support for tests that run on the real
// PostgreSQL: the test database's DSN from the environment (or a skip),
// a fresh schema per test, and a store opened on it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store/postgres"
)

// DSNVar names the environment variable that holds the test database's
// DSN. Unset, the PostgreSQL tests skip; set, a test that cannot connect
// fails.
const DSNVar = "SCHED_TEST_POSTGRES_DSN"

// DSN returns the test database's DSN, or skips the test.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(DSNVar)
	if dsn == "" {
		tb.Skip("PostgreSQL tests skipped: set " + DSNVar + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run them")
	}
	return dsn
}

// Schema returns a fresh schema name, dropped when the test ends, after
// the stores opened on it later are closed (cleanups run last first).
func Schema(tb testing.TB, dsn string) string {
	tb.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	schema := "t_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), dsn, schema); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// Open opens a store on schema of the database at dsn, closed when the
// test ends.
func Open(tb testing.TB, dsn, schema string) *postgres.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), 30*time.Second)
	defer cancel()
	st, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema))
	if err != nil {
		tb.Fatalf("open the store on schema %s: %v", schema, err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
