package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// walWrites returns walStats' counts.
func walWrites() (taken, written int64) {
	return walStats.taken.Load(), walStats.written.Load()
}

// TestWALBufferGathersWrites: a store's commit of thousands of occurrences
// reaches its WAL in a few large writes, and what it wrote reads back from
// the reader pool at once and from the file after a reopen.
func TestWALBufferGathersWrites(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	sc := storetest.NewSchedule("tenant-a", "sch_walbuf")
	if err := s.InsertSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const n = 3000
	occs := make([]store.Occurrence, n)
	for i := range occs {
		at := t0.Add(time.Duration(i) * time.Minute)
		occs[i] = store.Occurrence{TenantID: "tenant-a", ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
			ScheduledFor: at, AvailableAt: at, State: store.OccurrenceEnqueued, EnqueuedAt: at,
			Lane: store.LaneStrict, Queue: sc.Queue}
	}
	taken0, written0 := walWrites()
	got, err := s.InsertOccurrences(ctx, occs)
	if err != nil || got != n {
		t.Fatalf("InsertOccurrences: %d, %v; want %d", got, err, n)
	}
	taken, written := walWrites()
	taken, written = taken-taken0, written-written0
	t.Logf("one commit of %d occurrences: %d WAL writes by SQLite, %d writes to the file", n, taken, written)
	if taken < 100 {
		t.Fatalf("the store's commit made %d writes through the WAL buffer: is the store on the %s VFS?", taken, walVFSName)
	}
	if written*10 > taken {
		t.Errorf("%d writes to the file for %d by SQLite: want at least 10 gathered in each", written, taken)
	}

	last := store.OccurrenceID(sc.ScheduleID, sc.Version, occs[n-1].ScheduledFor)
	if _, err := s.GetOccurrence(ctx, "tenant-a", last); err != nil {
		t.Fatalf("read back at once: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.GetOccurrence(ctx, "tenant-a", last); err != nil {
		t.Fatalf("read back after a reopen: %v", err)
	}
}

// TestWALBufferOnlyUnderFULL: a store opened with synchronous=NORMAL, which
// commits without a sync, writes its WAL directly.
func TestWALBufferOnlyUnderFULL(t *testing.T) {
	s, _ := openTest(t, func(o *options) { o.synchronous = "NORMAL" })
	taken0, _ := walWrites()
	if err := s.InsertSchedule(t.Context(), storetest.NewSchedule("tenant-a", "sch_normal")); err != nil {
		t.Fatal(err)
	}
	if taken, _ := walWrites(); taken != taken0 {
		t.Errorf("synchronous=NORMAL: %d writes went through the WAL buffer, want none", taken-taken0)
	}
}

// TestWALBufferWriteError: when the WAL's file refuses a write the buffer
// makes (here the disk is full: its descriptor is swapped for /dev/full),
// the commit fails, nothing of it is seen, and the next commit, on a
// working file, succeeds and survives a reopen.
func TestWALBufferWriteError(t *testing.T) {
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "walerr.db")
	open := func() *sql.DB {
		t.Helper()
		db, err := sql.Open("sqlite", path+"?vfs="+walVFSName+"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open()
	exec := func(q string) error {
		_, err := db.ExecContext(t.Context(), q)
		return err
	}
	count := func() int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A commit of about 500 pages: more than the buffer holds.
	const insert = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO t SELECT randomblob(2000) FROM n`
	if err := exec(`CREATE TABLE t (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if err := exec(insert); err != nil {
		t.Fatal(err)
	}

	fd := walFD(t, path+"-wal")
	saved, err := syscall.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(saved)
	full, err := syscall.Open("/dev/full", syscall.O_RDWR, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer syscall.Close(full)
	if err := syscall.Dup2(full, fd); err != nil {
		t.Fatal(err)
	}
	err = exec(insert)
	if err := syscall.Dup2(saved, fd); err != nil {
		t.Fatal(err)
	}
	if err == nil || !strings.Contains(err.Error(), "full") {
		t.Fatalf("a commit on a full disk: %v, want SQLITE_FULL", err)
	}
	if n := count(); n != 1000 {
		t.Fatalf("after the failed commit: %d rows, want the first commit's 1000", n)
	}
	var ok string
	if err := db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check after the failed commit: %q, %v", ok, err)
	}
	if err := exec(insert); err != nil {
		t.Fatalf("the next commit, with space: %v", err)
	}
	db.Close()
	db = open()
	if n := count(); n != 2000 {
		t.Fatalf("after a reopen: %d rows, want 2000", n)
	}
}

// walFD is this process's one descriptor of the file at path.
func walFD(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	fd := -1
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			if fd >= 0 {
				t.Fatalf("two descriptors of %s", path)
			}
			fmt.Sscan(e.Name(), &fd)
		}
	}
	if fd < 0 {
		t.Fatalf("no descriptor of %s", path)
	}
	return fd
}
