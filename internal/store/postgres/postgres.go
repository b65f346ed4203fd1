// Package postgres is sched's multi-node store: the store contract on a
// PostgreSQL database, through github.com/jackc/pgx/v5 (pgxpool), passing
// the same conformance suite as the SQLite store (store/storetest).
//
// It mirrors the SQLite store's semantics exactly: the same tables and
// columns (times as BIGINT unix milliseconds), the same conditional writes,
// and Now taken from the engine. What differs is concurrency: SQLite has one
// writer, while here transactions of any number of nodes run at once, under
// READ COMMITTED. Correctness rests on unique keys, conditional UPDATEs
// (which PostgreSQL re-checks against the row a concurrent writer
// committed), FOR UPDATE SKIP LOCKED on claims of rows, FOR SHARE on the
// shard lease a plan commits under, per-schedule advisory locks for overlap
// decisions, and per-queue advisory locks for leased runs (a claim holds
// its queue's exclusively, a write that makes a row claimable shared; see
// tx_runs.go), never on SERIALIZABLE. queries.go and queries_runs.go say,
// statement by statement, which of these holds what.
//
// All statements with values run on the extended protocol (pgx's default
// statement cache mode): a DSN that asks for the simple protocol is refused
// (so no value is ever spliced into SQL text; pgx is at v5.13.0, past the
// fixes of CVE-2024-27289 and CVE-2024-27304).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sched-dev/sched/internal/store"
)

// Option changes how Open opens a store.
type Option func(*options)

type options struct {
	schema   string
	maxConns int32
}

// WithSchema puts the store in the named schema: Open creates it if
// missing and every connection of the pool uses it alone as its
// search_path. Several independent stores can so share one database (tests
// use a schema each, to run in parallel). Without it the store uses the
// connection's current schema (the DSN's search_path; by default public).
func WithSchema(name string) Option {
	return func(o *options) { o.schema = name }
}

// WithMaxConns sets the size of the connection pool (default pgxpool's:
// the larger of 4 and the number of CPUs, unless the DSN sets
// pool_max_conns).
func WithMaxConns(n int32) Option {
	return func(o *options) { o.maxConns = n }
}

// Store is a sched store on a PostgreSQL schema. It is safe for concurrent
// use, and any number of Stores, in one process or many, may share a
// schema.
type Store struct {
	pool   *pgxpool.Pool
	schema string
	// lockPrefix prefixes the advisory lock keys of overlap decisions
	// (qTryLockSchedules): schedule ids are unique within a schema only.
	lockPrefix string

	// applied lists the migrations applied by this Open (empty when the
	// schema was already current).
	applied []int

	// listenCfg is the connection configuration Subscribe's dedicated
	// LISTEN connections use (notify.go).
	listenCfg *pgx.ConnConfig

	// stats refreshes the occurrences table's statistics after large
	// inserts (analyze.go).
	stats statsKeeper

	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// maxIdentifier is PostgreSQL's limit on an identifier, in bytes
// (NAMEDATALEN-1); a longer one is silently truncated, so it is refused.
const maxIdentifier = 63

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string, as pgx takes them), applies pending migrations under an advisory
// lock (several nodes may start at once), and returns the store. A schema
// written by a newer release is refused. Close the Store to close its
// connections.
func Open(ctx context.Context, dsn string, opts ...Option) (_ *Store, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included: say only
		// that it did not parse.
		return nil, errors.New("open store: the PostgreSQL DSN does not parse")
	}
	where := cfg.ConnConfig.Host + "/" + cfg.ConnConfig.Database
	if cfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		return nil, fmt.Errorf("open store %s: default_query_exec_mode=simple_protocol is refused: the store binds values on the extended protocol only", where)
	}
	if o.schema != "" {
		if len(o.schema) > maxIdentifier || !utf8.ValidString(o.schema) || containsNUL(o.schema) {
			return nil, fmt.Errorf("open store %s: schema name %q: want valid UTF-8 of at most %d bytes", where, o.schema, maxIdentifier)
		}
		// Sent at connection start-up, so every connection of the pool
		// uses the schema from its first statement on. The schema alone:
		// nothing of the store's resolves anywhere else (pg_catalog is
		// always searched).
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.schema}.Sanitize()
		where += "?schema=" + o.schema
	}
	if _, set := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set {
		// pgx prepares each statement once per connection, and after five
		// runs PostgreSQL may switch a prepared statement to a generic plan,
		// made without the values. For the batch statements that is a
		// cliff: not knowing an array's length (it guesses 10 rows), it
		// plans the join of a 1,000-item plan to the schedules as a hash
		// join over a sequential scan of every schedule, and CommitPlan
		// went from 35 ms to 340 ms per batch at the sixth run (at 1,000
		// schedules; it grows with the table). Custom plans cost a
		// planning per execution, small beside any statement's work here.
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	}
	// A node paused (SIGSTOP, a GC pause, a frozen VM) or cut off inside a
	// transaction keeps its session, and the row locks it took, open; the
	// next node to take the shard would wait on them forever and, with it,
	// its whole planner loop. So no statement waits long for a lock (it
	// fails as busy and is retried on the next pass), and the server ends a
	// session idle in a transaction well before a shard lease could run out
	// twice. The DSN may set either one itself.
	for param, value := range map[string]string{
		"lock_timeout":                        "2s",
		"idle_in_transaction_session_timeout": "5s",
	} {
		if _, set := cfg.ConnConfig.RuntimeParams[param]; !set {
			cfg.ConnConfig.RuntimeParams[param] = value
		}
	}
	if o.maxConns < 0 {
		return nil, fmt.Errorf("open store %s: bad option: %d max connections", where, o.maxConns)
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", where, translate(err))
	}
	s := &Store{pool: pool, listenCfg: cfg.ConnConfig.Copy()}
	s.stats.every = analyzeEvery
	s.stats.stop, s.stats.cancel = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := pool.Ping(ctx); err != nil {
		return nil, fmt.Errorf("open store %s: %w", where, translate(err))
	}
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	if s.schema, s.applied, err = migrate(ctx, pool, o.schema, ms, time.Now()); err != nil {
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	s.lockPrefix = "sched/overlap/" + s.schema + "/"
	return s, nil
}

// Schema returns the schema the store lives in.
func (s *Store) Schema() string { return s.schema }

// Close closes the pool, waiting for connections in use to be returned.
// It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stats.cancel()
		s.waitStats()
		s.pool.Close()
	})
	return nil
}

// ClockOffset measures the database's clock against this process's: the
// database's clock_timestamp() minus the local time at the midpoint of the
// round trip, so the error is at most half the round trip.
//
// The store methods take Now from the engine, as the SQLite store does, so
// that both drivers pass one conformance suite. The engine adds this offset
// to its own clock for every comparison the store makes (shard leases,
// plan commits, claims), so that a node with a skewed clock can neither
// fire early nor steal a live lease, and exports it as a metric.
//
// Only the query is timed, not the wait for a connection: with every
// connection of the pool busy (the top of the hour) that wait took
// seconds, and half of it went into the offset, which moved the node's
// clock for the store seconds ahead. A round trip longer than
// maxClockRoundTrip is not a measurement: it fails, and the engine keeps
// the last offset.
func (s *Store) ClockOffset(ctx context.Context) (time.Duration, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("clock offset: %w", translate(err))
	}
	defer conn.Release()
	var db time.Time
	before := time.Now()
	if err := conn.QueryRow(ctx, qClock).Scan(&db); err != nil {
		return 0, fmt.Errorf("clock offset: %w", translate(err))
	}
	after := time.Now()
	if rtt := after.Sub(before); rtt > maxClockRoundTrip {
		return 0, fmt.Errorf("clock offset: a round trip of %s is too slow to measure by (at most %s)", rtt, maxClockRoundTrip)
	}
	local := before.Add(after.Sub(before) / 2)
	return db.Sub(local), nil
}

// maxClockRoundTrip bounds the error of a clock offset measurement (half
// the round trip).
const maxClockRoundTrip = 500 * time.Millisecond

// DropSchema drops the named schema and everything in it, for tests that
// opened a store WithSchema. It opens and closes a connection of its own.
func DropSchema(ctx context.Context, dsn, schema string) error {
	if schema == "" {
		return errors.New("drop schema: no schema named")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return errors.New("drop schema: the PostgreSQL DSN does not parse")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, translate(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, qDropSchemaPrefix+pgx.Identifier{schema}.Sanitize()+qDropSchemaSuffix); err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, translate(err))
	}
	return nil
}

// inTx runs fn in a READ COMMITTED transaction and commits it; an error or
// a panic of fn rolls it back. fn's errors come back as they are (fn
// translates them); begin and commit errors are translated here. The level
// is explicit, so that a database whose default is SERIALIZABLE still runs
// the store as designed.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	done := false
	defer func() {
		if !done {
			// The caller's context may be what ended the transaction.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	done = true
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	return nil
}

// readTx runs fn in a read-only REPEATABLE READ transaction: every
// statement of fn reads one snapshot of the database, and none takes a
// row lock or writes. It is for reads that must agree with one another
// (Snapshot), never for the writes, whose correctness rests on conditional
// statements at READ COMMITTED (inTx). fn's errors come back as they are.
func (s *Store) readTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	// Nothing to commit: the rollback ends the snapshot.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	return fn(tx)
}

// storable reports whether PostgreSQL text can hold s: valid UTF-8 without
// NUL. The engine validates what it stores; a lookup by a key that is not
// storable (an id from a URL, say) cannot match anything, and is answered
// as not found without asking the database, which would refuse the value.
func storable(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) || containsNUL(s) {
			return false
		}
	}
	return true
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// notStorable is the error of a lookup by a key PostgreSQL cannot hold.
func notStorable() error {
	return fmt.Errorf("%w: the key is not valid text", store.ErrNotFound)
}
