// Package sqlite is sched's single-node store: the store contract on one
// SQLite file in WAL mode, through modernc.org/sqlite (pure Go, no cgo).
//
// Connections are on modernc's standard "unix" VFS. The pinned
// modernc.org/sqlite bundles SQLite 3.54.1. Anything before 3.51.3 has the
// WAL-reset bug that corrupts WAL databases written by two connections that
// checkpoint at the same moment, as this store's writer and checkpointer
// may; TestSQLiteVersion fails the build if the bundled version regresses.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/sched-dev/sched/internal/store"
)

// Defaults for Open.
const (
	DefaultBusyTimeout = 5 * time.Second
	DefaultReadConns   = 8
)

// Option changes how Open opens a store.
type Option func(*options)

type options struct {
	busyTimeout time.Duration
	readConns   int
	// synchronous is the synchronous pragma of every connection: FULL,
	// always, outside the power-loss test's control run
	// (powerloss_test.go), which sets NORMAL to show that the test can
	// tell a store that loses acknowledged commits, and a scratch store
	// (WithScratch), which sets OFF.
	synchronous string
}

// WithBusyTimeout sets how long a statement waits for a lock held by
// another process before it fails with store.ErrBusy (default 5 s).
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busyTimeout = d }
}

// WithReadConns sets the size of the read-only connection pool (default 8).
func WithReadConns(n int) Option {
	return func(o *options) { o.readConns = n }
}

// WithScratch opens a throwaway store: synchronous=OFF, so no commit
// waits for the disk at all and a crash of the machine may corrupt the
// file. Only for a store nobody keeps, such as the what-if simulator's
// private one, which is removed when the simulation ends; never for
// schedd's store.
func WithScratch() Option {
	return func(o *options) { o.synchronous = "OFF" }
}

// Store is a sched store on one SQLite file. It is safe for concurrent use.
//
// It keeps three connection pools on the file:
//
//   - writer: exactly one connection (SetMaxOpenConns(1)). SQLite admits one
//     writer at a time anyway; with several writer connections in one
//     process they would queue inside SQLite's busy handler, which sleeps
//     and polls (unfair, with latency spikes and SQLITE_BUSY after the
//     timeout), where one connection makes them queue in database/sql,
//     in order and without polling. Its transactions are BEGIN IMMEDIATE
//     (_txlock=immediate): the write lock is taken at BEGIN, where the busy
//     timeout applies, never by an upgrade halfway through a transaction,
//     which fails at once with SQLITE_BUSY.
//   - readers: a pool of query_only connections with deferred (plain BEGIN)
//     transactions. Under WAL each read sees a consistent snapshot and
//     neither blocks nor is blocked by the writer, so a long read (a list,
//     the reconciler) never holds up enqueueing.
//   - checkpointer: one connection that copies the WAL back into the
//     database file beside the writer (checkpoint.go). The writer still
//     checkpoints when the WAL reaches 32 MiB, so two connections may
//     checkpoint at once, which only a SQLite with the WAL-reset bug's
//     fix (3.51.3; TestSQLiteVersion) makes safe.
//
// Every connection is opened from a DSN that sets journal_mode=WAL,
// synchronous=FULL, busy_timeout, foreign_keys and temp_store (the writer
// also its cache size, and both writer and checkpointer their automatic
// checkpoint threshold), because these are per-connection settings (except
// journal_mode) and database/sql opens connections whenever it likes: a
// pragma run once, on whichever connection happened to run it, would
// leave the pool's later connections at SQLite's defaults.
type Store struct {
	path string
	w    *sql.DB // the one writer connection
	r    *sql.DB // read-only connections
	lock *processLock
	now  func() time.Time

	// ckpt copies the WAL back into the database file beside the writer.
	ckpt *checkpointer

	// applied lists the migrations applied by this Open (empty when the
	// schema was already current).
	applied []int

	// hot holds the statements of the hot paths, prepared once on the
	// writer (see prepareHot).
	hot map[string]*sql.Stmt

	// hints remembers the rows of claimed occurrences for their acks.
	hints rowHints

	// incrementalVacuum is whether the file's auto_vacuum is INCREMENTAL,
	// so that ReclaimSpace gives freed pages back (retention.go).
	incrementalVacuum bool

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the store at path. It takes the process
// lock (a second Store on the same file fails with ErrInUse), checks the
// file's integrity with PRAGMA quick_check (a corrupt file fails with
// store.ErrCorrupt and is never repaired silently), and applies pending
// migrations. Close the Store to release the file.
//
// quick_check reads the whole file, so Open takes time proportional to the
// database's size.
func Open(ctx context.Context, path string, opts ...Option) (_ *Store, err error) {
	o := options{busyTimeout: DefaultBusyTimeout, readConns: DefaultReadConns, synchronous: "FULL"}
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open store: %q is not a database file path", path)
	}
	if strings.ContainsRune(path, '?') {
		// The driver splits its DSN at the first '?'.
		return nil, fmt.Errorf("open store %s: the path must not contain '?'", path)
	}
	if o.busyTimeout < 0 || o.readConns < 1 {
		return nil, fmt.Errorf("open store %s: bad options (busy timeout %v, read connections %d)", path, o.busyTimeout, o.readConns)
	}

	lp, err := lockPath(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	lock, err := acquireLock(lp)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{path: path, lock: lock, now: time.Now}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	s.w, err = sql.Open("sqlite", dsn(path, o, roleWriter))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	if err := s.w.PingContext(ctx); err != nil {
		err = translate(err)
		if errors.Is(err, store.ErrCorrupt) {
			return nil, fmt.Errorf("open store %s: refusing to serve a corrupt database: %w", path, err)
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := quickCheck(ctx, s.w); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	// Before the migrations: a new file's first table fixes its mode.
	if s.incrementalVacuum, err = setAutoVacuum(ctx, s.w); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if s.applied, err = migrate(ctx, s.w, ms, s.now()); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	if err := s.prepareHot(ctx); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	// The readers open after the writer has put the file in WAL mode.
	s.r, err = sql.Open("sqlite", dsn(path, o, roleReader))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.r.SetMaxOpenConns(o.readConns)
	s.r.SetMaxIdleConns(o.readConns)
	if err := s.r.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("open store %s: readers: %w", path, translate(err))
	}
	if s.ckpt, err = startCheckpointer(ctx, path, o); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// role is what a connection pool of the store is for.
type role int

const (
	roleWriter       role = iota // the one writer
	roleReader                   // the read-only pool
	roleCheckpointer             // the checkpoint connection (checkpoint.go)
)

// dsn is the driver's data source name for path. The _pragma parameters run
// on every new connection of the pool.
func dsn(path string, o options, r role) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(o.busyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	// FULL: in WAL mode SQLite then fsyncs the WAL at every commit, before
	// the commit returns, so an acknowledged commit survives a power loss.
	// Under NORMAL it syncs only at checkpoints, and a power loss may undo
	// the last commits (powerloss_test.go shows both).
	q.Add("_pragma", "synchronous("+o.synchronous+")")
	q.Add("_pragma", "foreign_keys(1)")
	// Statement journals and sorts in memory: a multi-row UPDATE of a
	// batch journals the pages it changes, and past 64 KiB a file-backed
	// statement journal spills to a temporary file.
	q.Add("_pragma", "temp_store(MEMORY)")
	switch r {
	case roleReader:
		// query_only rather than mode=ro: a mode=ro connection cannot open a
		// WAL database whose -shm file is missing. BEGIN stays deferred:
		// BEGIN IMMEDIATE would take the write lock for a read. No mmap:
		// SQLite empties a reader's cache and unmaps the file whenever the
		// database changed since its last read, and the planner's read of
		// the due schedules through mmap_size(2 GiB) took 14-20 µs per
		// schedule against 8-16 µs with plain reads
		// (BenchmarkPlanAtScale, 1 and 20 million).
		q.Add("_pragma", "query_only(1)")
	case roleWriter:
		q.Set("_txlock", "immediate")
		// The writer's page cache holds the hot parts of the queue's
		// indexes (64 MiB; the default 2 MiB spills dirty pages to the WAL
		// in the middle of a planner batch and rereads them). Measured with
		// bench_test.go, and left out: mmap_size(256 MiB) changed nothing
		// (the cache already holds the hot pages), and a 1 KiB page_size
		// (less WAL written per random index insert) made materializing
		// about a tenth slower (deeper b-trees). The WAL is checkpointed by
		// the checkpointer (checkpoint.go), and by the writer at 256 MiB,
		// which bounds the WAL.
		q.Add("_pragma", "cache_size(-65536)")
		q.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(writerCheckpointPages)+")")
	case roleCheckpointer:
		// It never commits, so it never checkpoints on its own.
		q.Add("_pragma", "wal_autocheckpoint(0)")
	}
	return path + "?" + q.Encode()
}

// hotQueries are prepared once, when the store opens. Preparing is SQLite
// parsing and planning the text (yy_reduce and friends showed up at about a
// tenth of a claim's CPU), and the planner and queue statements run once per
// batch, thousands of times a minute. They cannot be prepared lazily on the
// writer pool: its one connection is busy with the transaction that wants
// the statement.
var hotQueries = []string{
	qDueSchedules, qCheckLease, qAdvanceCursorsBrief, qAdvanceCursors, qAdvanceSchedulesState, qAddMissed, qInsertOccurrence, qInsertOccurrences,
	qClaimCandidates, qClaimRows, qArchiveAttempts, qSkipOverlap,
	qFinishGroup, qFinishGroupCount, qFinishedAttempt, qOccurrenceState, qGetOccurrence, qHeartbeat,
	qCountRunning,
}

// prepareHot prepares hotQueries on the writer.
func (s *Store) prepareHot(ctx context.Context) error {
	s.hot = make(map[string]*sql.Stmt, len(hotQueries))
	for _, q := range hotQueries {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare: %w", translate(err))
		}
		s.hot[q] = st
	}
	return nil
}

// txStmt returns query as a statement of tx: the one prepared when the
// store opened, reused (database/sql keeps it per connection, and the
// writer has one), or prepared now for a query that is not hot. The
// statement is closed with the transaction.
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st := s.hot[query]; st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", translate(err))
	}
	return st, nil
}

// txStmtOnce returns *st, made the statement of query in tx (txStmt) the
// first time: a transaction that may not need a statement prepares it
// only when it does. The caller closes it with the transaction.
func (s *Store) txStmtOnce(ctx context.Context, tx *sql.Tx, st **sql.Stmt, query string) (*sql.Stmt, error) {
	if *st == nil {
		prepared, err := s.txStmt(ctx, tx, query)
		if err != nil {
			return nil, err
		}
		*st = prepared
	}
	return *st, nil
}

// briefWrite runs st, a write without RETURNING, with args in tx, under a
// savepoint, and reports whether it wrote want rows. When it did not,
// nothing it wrote remains: the caller then runs the form of the write
// that names its rows (qSavepoint says why both).
func briefWrite(ctx context.Context, tx *sql.Tx, st *sql.Stmt, want int, args ...any) (bool, error) {
	if _, err := tx.ExecContext(ctx, qSavepoint); err != nil {
		return false, translate(err)
	}
	r, err := st.ExecContext(ctx, args...)
	if err != nil {
		return false, translate(err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, translate(err)
	}
	if int(n) != want {
		if _, err := tx.ExecContext(ctx, qRollbackToSavepoint); err != nil {
			return false, translate(err)
		}
	}
	if _, err := tx.ExecContext(ctx, qReleaseSavepoint); err != nil {
		return false, translate(err)
	}
	return int(n) == want, nil
}

// quickCheck runs PRAGMA quick_check and fails with store.ErrCorrupt unless
// the answer is a single "ok".
func quickCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, qQuickCheck)
	if err != nil {
		return corrupt(translate(err))
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return corrupt(translate(err))
		}
		if line != "ok" {
			// One line per problem: the error may end up on one stderr line.
			problems = append(problems, strings.ReplaceAll(line, "\n", "; "))
		}
	}
	if err := rows.Err(); err != nil {
		return corrupt(translate(err))
	}
	if len(problems) > 0 {
		const show = 5
		more := ""
		if len(problems) > show {
			more = fmt.Sprintf("; and %d more", len(problems)-show)
			problems = problems[:show]
		}
		return fmt.Errorf("refusing to serve a corrupt database: %w: quick_check: %s%s",
			store.ErrCorrupt, strings.Join(problems, "; "), more)
	}
	return nil
}

// corrupt words an error of the integrity check. A check that failed for
// another reason (busy, canceled) is not evidence of corruption.
func corrupt(err error) error {
	if errors.Is(err, store.ErrCorrupt) {
		return fmt.Errorf("refusing to serve a corrupt database: %w", err)
	}
	return fmt.Errorf("integrity check: %w", err)
}

// Close closes the pools and releases the process lock. It is safe to
// call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.ckpt != nil {
			errs = append(errs, s.ckpt.close())
		}
		if s.r != nil {
			errs = append(errs, s.r.Close())
		}
		for _, st := range s.hot {
			errs = append(errs, st.Close())
		}
		// The writer closes last, so its close checkpoints the WAL.
		if s.w != nil {
			errs = append(errs, s.w.Close())
		}
		if s.lock != nil {
			errs = append(errs, s.lock.release())
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("close store %s: %w", s.path, err)
		}
	})
	return s.closeErr
}
