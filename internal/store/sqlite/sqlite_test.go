package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"go.uber.org/goleak"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(powerLossEnvDB) != "" {
		os.Exit(powerLossChild()) // a child process of TestPowerLoss
	}
	goleak.VerifyTestMain(m)
}

// openTest opens a Store on a fresh file in a temporary directory: a real
// file in WAL mode, as in production, never :memory:.
func openTest(t *testing.T, opts ...Option) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sched.db")
	s, err := Open(t.Context(), path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) storetest.Store {
		s, _ := openTest(t)
		return s
	})
}

// TestSQLiteVersion fails the build if the bundled SQLite has the WAL-reset
// bug (two connections checkpointing at once could corrupt the database),
// fixed in 3.51.3. The store's writer and checkpointer may checkpoint at
// once.
func TestSQLiteVersion(t *testing.T) {
	s, _ := openTest(t)
	var v string
	if err := s.r.QueryRowContext(t.Context(), "select sqlite_version()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		t.Fatalf("sqlite_version() = %q: not major.minor.patch", v)
	}
	var got [3]int
	for i := range got {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			t.Fatalf("sqlite_version() = %q: %v", v, err)
		}
		got[i] = n
	}
	fixed := [3]int{3, 51, 3}
	for i := range got {
		if got[i] != fixed[i] {
			if got[i] < fixed[i] {
				t.Fatalf("bundled SQLite %s < 3.51.3: it has the WAL-reset corruption bug; upgrade modernc.org/sqlite", v)
			}
			break
		}
	}
	t.Logf("SQLite %s", v)
}

// TestPragmasOnEveryConnection holds every connection of every pool at once
// and reads the per-connection settings on each: a pragma run once on one
// connection would leave the others at SQLite's defaults, and a connection
// that is not at synchronous=FULL may lose acknowledged commits on power
// loss.
func TestPragmasOnEveryConnection(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	type held struct {
		name string
		conn *sql.Conn
		role role
	}
	var conns []held
	defer func() {
		for _, c := range conns {
			c.conn.Close()
		}
	}()
	w, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, held{"writer", w, roleWriter})
	for i := range DefaultReadConns {
		c, err := s.r.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, held{fmt.Sprintf("reader %d", i), c, roleReader})
	}
	ck, err := s.ckpt.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, held{"checkpointer", ck, roleCheckpointer})
	if len(conns) < 10 {
		t.Fatalf("held %d connections, want at least 10", len(conns))
	}

	for _, c := range conns {
		var syncMode, fk, busy, queryOnly int
		var mode string
		for _, p := range []struct {
			pragma string
			dst    any
		}{
			{"synchronous", &syncMode}, {"journal_mode", &mode}, {"foreign_keys", &fk},
			{"busy_timeout", &busy}, {"query_only", &queryOnly},
		} {
			if err := c.conn.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(p.dst); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", c.name, p.pragma, err)
			}
		}
		if syncMode != 2 || mode != "wal" || fk != 1 || busy != 5000 {
			t.Errorf("%s: synchronous=%d journal_mode=%s foreign_keys=%d busy_timeout=%d; want 2 (FULL), wal, 1, 5000",
				c.name, syncMode, mode, fk, busy)
		}
		if want := map[role]int{roleReader: 1}[c.role]; queryOnly != want {
			t.Errorf("%s: query_only=%d, want %d", c.name, queryOnly, want)
		}
		var tempStore, cacheSize, autoCheckpoint int
		for p, dst := range map[string]*int{"temp_store": &tempStore, "cache_size": &cacheSize, "wal_autocheckpoint": &autoCheckpoint} {
			if err := c.conn.QueryRowContext(ctx, "PRAGMA "+p).Scan(dst); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", c.name, p, err)
			}
		}
		if tempStore != 2 {
			t.Errorf("%s: temp_store=%d, want 2 (MEMORY)", c.name, tempStore)
		}
		// Only the checkpointer checkpoints; the writer's threshold is a
		// safety net (checkpoint.go).
		if c.role == roleWriter && (cacheSize != -65536 || autoCheckpoint != writerCheckpointPages) {
			t.Errorf("%s: cache_size=%d wal_autocheckpoint=%d, want -65536 and %d", c.name, cacheSize, autoCheckpoint, writerCheckpointPages)
		}
		if c.role == roleCheckpointer && autoCheckpoint != 0 {
			t.Errorf("%s: wal_autocheckpoint=%d, want 0", c.name, autoCheckpoint)
		}
		if c.role == roleReader {
			_, err := c.conn.ExecContext(ctx, "DELETE FROM shard_leases")
			if err == nil {
				t.Errorf("%s: a write succeeded on a read-only connection", c.name)
			}
		}
	}
}

// TestWriterPool: one writer connection, whose transactions take the write
// lock at BEGIN (BEGIN IMMEDIATE), so an outside writer is shut out from
// the start of a store transaction, not from its first write.
func TestWriterPool(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	if got := s.w.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer pool allows %d connections, want 1", got)
	}
	if got := s.r.Stats().MaxOpenConnections; got != DefaultReadConns {
		t.Errorf("reader pool allows %d connections, want %d", got, DefaultReadConns)
	}

	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.ExecContext(ctx, "DELETE FROM shard_leases")
	if !errors.Is(translate(err), store.ErrBusy) {
		t.Errorf("outside write during an empty store transaction: %v, want SQLITE_BUSY", err)
	}
}

func TestMigrationsApplyOnce(t *testing.T) {
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sched.db")
	ctx := t.Context()

	type row struct {
		Version   int
		Name      string
		AppliedAt int64
	}
	history := func(s *Store) []row {
		t.Helper()
		rows, err := s.r.QueryContext(ctx, "SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.Version, &r.Name, &r.AppliedAt); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for _, m := range ms {
		all = append(all, m.Version)
	}
	if !reflect.DeepEqual(s.applied, all) {
		t.Errorf("first open applied %v, want %v", s.applied, all)
	}
	first := history(s)
	if len(first) != len(ms) || first[0].Name != "0001_init.sql" {
		t.Errorf("schema_migrations = %+v, want one row per migration", first)
	}
	// Migrating an up-to-date database does nothing.
	again, err := migrate(ctx, s.w, ms, time.Now())
	if err != nil || len(again) != 0 {
		t.Errorf("migrate on a current database: applied %v, %v; want none", again, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if len(s.applied) != 0 {
		t.Errorf("reopen applied %v, want none", s.applied)
	}
	if got := history(s); !reflect.DeepEqual(got, first) {
		t.Errorf("reopen changed schema_migrations:\n got %+v\nwant %+v", got, first)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s, path := openTest(t)
	if _, err := s.w.ExecContext(t.Context(), qRecordMigration, 9999, "9999_future.sql", 0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "newer release") {
		t.Fatalf("Open of a database from a newer release: %v, want a refusal", err)
	}
}

// TestSecondOpenFails: a second Store on the same file is refused at once,
// under any spelling of the path, and allowed once the first is closed
// (two daemons on one file would each believe they own it).
func TestSecondOpenFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sched.db")
	ctx := t.Context()
	first, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, p := range []string{path, link, "sched.db", "./sched.db"} {
		start := time.Now()
		_, err := Open(ctx, p, WithBusyTimeout(10*time.Second))
		if !errors.Is(err, ErrInUse) {
			t.Fatalf("second Open(%s): %v, want ErrInUse", p, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("second Open(%s) took %v; it must fail fast, not wait for a lock", p, d)
		}
		if msg := err.Error(); !strings.Contains(msg, "process "+strconv.Itoa(os.Getpid())) || !strings.Contains(msg, path+".lock") {
			t.Errorf("error %q does not name the holder and the lock file", msg)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	second.Close()
}

// TestLockAcrossProcesses: a Store held by another process refuses this
// one and names the holder's pid; when the holder is killed with SIGKILL,
// the kernel drops its lock and the file opens again (no stale lock).
func TestLockAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sched.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldStore$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	// The helper holds the store until its stdin closes, so it cannot
	// outlive this test process even if the kill below never runs.
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	_, err = Open(t.Context(), path)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("Open while process %d holds the store: %v, want ErrInUse naming it", cmd.Process.Pid, err)
	}
	t.Logf("refused: %v", err)

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v", err)
	}
	s.Close()
}

const holdEnv = "SCHED_STORE_TEST_HOLD"

// TestHelperHoldStore is TestLockAcrossProcesses's other process: it opens
// the Store named by $SCHED_STORE_TEST_HOLD and holds it until killed or
// until its stdin closes.
func TestHelperHoldStore(t *testing.T) {
	path := os.Getenv(holdEnv)
	if path == "" {
		t.Skip("helper process for TestLockAcrossProcesses")
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestCorruptFileRefused flips bytes in a b-tree page of a closed database;
// Open must refuse it with a clear error and never repair it. A
// table's root page breaks reads outright; an index page shows up in
// quick_check's report.
func TestCorruptFileRefused(t *testing.T) {
	for _, target := range []string{"schedules", "schedules_due"} {
		t.Run(target, func(t *testing.T) {
			s, path := openTest(t)
			ctx := t.Context()
			for i := range 50 {
				sc := storetest.NewSchedule("tenant-a", fmt.Sprintf("sch_%03d", i))
				sc.Payload = make([]byte, 2000)
				if err := s.InsertSchedule(ctx, sc); err != nil {
					t.Fatal(err)
				}
			}
			var root, pageSize int64
			if err := s.r.QueryRowContext(ctx, "SELECT rootpage FROM sqlite_schema WHERE name = ?", target).Scan(&root); err != nil {
				t.Fatal(err)
			}
			if err := s.r.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the WAL is still there after Close (%v): the flip would miss the checkpointed page", err)
			}
			corrupted := flipBytes(t, path, (root-1)*pageSize, 8)

			for range 2 { // a refused Open releases its lock: a retry is refused for the same reason
				_, err := Open(ctx, path)
				if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "refusing to serve a corrupt database") {
					t.Fatalf("Open of a corrupt file: %v, want ErrCorrupt with a clear message", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q spans lines", err)
				}
				t.Logf("refused: %v", err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(after, corrupted) {
				t.Error("the refused Open changed the file")
			}
		})
	}
}

func TestNotADatabaseRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sched.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not an SQLite database\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), path)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "refusing to serve") {
		t.Fatalf("Open of a non-database: %v, want ErrCorrupt", err)
	}
}

// flipBytes inverts n bytes of the file at off and returns the file's new
// contents.
func flipBytes(t *testing.T, path string, off int64, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off+int64(n) > int64(len(b)) {
		t.Fatalf("flip at %d: file has %d bytes", off, len(b))
	}
	for i := range n {
		b[off+int64(i)] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBusyIsRetryable: while a process outside the Store holds the write
// lock, a write waits busy_timeout and fails with store.ErrBusy, reads go
// on, and the write succeeds once the lock is gone.
func TestBusyIsRetryable(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s, path := openTest(t, WithBusyTimeout(timeout))
	ctx := t.Context()

	// The outsider: plain database/sql with the same driver, no Store, no
	// process lock, as the sqlite3 shell would be.
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}

	sc := storetest.NewSchedule("tenant-a", "sch_busy")
	start := time.Now()
	err = s.InsertSchedule(ctx, sc)
	if waited := time.Since(start); waited < timeout {
		t.Errorf("failed after %v, before busy_timeout %v", waited, timeout)
	}
	if !errors.Is(err, store.ErrBusy) {
		t.Fatalf("InsertSchedule under an outside lock: %v, want ErrBusy", err)
	}
	if !strings.HasPrefix(err.Error(), "insert schedule sch_busy: ") {
		t.Errorf("error %q lacks its context", err)
	}
	_, err = s.InsertOccurrences(ctx, []record.Occurrence{storetest.NewOccurrence(sc, time.Unix(1_800_000_000, 0))})
	if !errors.Is(err, store.ErrBusy) {
		t.Errorf("InsertOccurrences under an outside lock: %v, want ErrBusy", err)
	}
	// WAL: readers are not blocked by the writer lock.
	if _, err := s.GetSchedule(ctx, "tenant-a", "sch_busy"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetSchedule under an outside lock: %v, want ErrNotFound", err)
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertSchedule(ctx, sc); err != nil {
		t.Fatalf("InsertSchedule after the lock is gone: %v", err)
	}
}

// TestStoreFull caps the file's size so that a write runs out of space:
// the write fails with store.ErrStoreFull and leaves nothing behind. (A
// full disk, on a small tmpfs, is the daemon's test.)
func TestStoreFull(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	// The writer pool is one long-lived connection, so a per-connection
	// pragma set through it applies to the Store's writes.
	var pages int64
	if err := s.w.QueryRowContext(ctx, "PRAGMA max_page_count = 1").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	sc := storetest.NewSchedule("tenant-a", "sch_full")
	sc.Payload = make([]byte, record.MaxPayload)
	if err := s.InsertSchedule(ctx, sc); !errors.Is(err, store.ErrStoreFull) {
		t.Fatalf("InsertSchedule with the file at its cap of %d pages: %v, want ErrStoreFull", pages, err)
	}
	if _, err := s.GetSchedule(ctx, "tenant-a", "sch_full"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after a full write: %v, want ErrNotFound", err)
	}
	if _, err := s.w.ExecContext(ctx, "PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertSchedule(ctx, sc); err != nil {
		t.Fatalf("InsertSchedule with space: %v", err)
	}
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", filepath.Join(t.TempDir(), "a?b.db")} {
		if s, err := Open(t.Context(), p); err == nil {
			s.Close()
			t.Errorf("Open(%q): no error", p)
		}
	}
}

func TestCloseTwice(t *testing.T) {
	s, _ := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.GetSchedule(t.Context(), "t", "s"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetSchedule after Close: %v, want a closed-database error", err)
	}
}
