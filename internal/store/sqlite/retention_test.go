package sqlite

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store/storetest"
)

// Statements of these tests alone: an ack's columns on the rows
// FillHistory wrote, and the file's figures.
const (
	qTestAckAll = `UPDATE occurrences SET worker_id = 'worker-' || (row % 64), claimed_at = scheduled_for + 1000,
    lease_expires_at = scheduled_for + 31000, att_finished_at = scheduled_for + 2000, att_result = 'SUCCEEDED'`
	qTestCountAttempts = `SELECT count(*) FROM attempts`
)

// fileBytes is the database file's size after a checkpoint that empties
// the WAL into it.
func fileBytes(t *testing.T, s *Store, path string) int64 {
	t.Helper()
	// A TRUNCATE checkpoint that meets a reader or the background
	// checkpointer answers busy instead of failing; the file has its size
	// only once one went through.
	for try := 0; ; try++ {
		var busy, logFrames, done int
		if err := s.w.QueryRowContext(t.Context(), qWALCheckpoint).Scan(&busy, &logFrames, &done); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		if busy == 0 {
			break
		}
		if try == 100 {
			t.Fatalf("checkpoint: still busy after %d tries", try)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestRetentionReclaimsSpace: a new file is auto_vacuum=INCREMENTAL; a
// purge frees pages (PRAGMA freelist_count grows) and ReclaimSpace gives
// them back: the free list empties and the file shrinks.
func TestRetentionReclaimsSpace(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	var mode int
	if err := s.w.QueryRowContext(ctx, qAutoVacuum).Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum = %d, %v; want 2 (INCREMENTAL)", mode, err)
	}
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	end := storetest.FillHistory(t, s, 40_000, 100, start)
	full := fileBytes(t, s, path)
	for {
		n, err := s.PurgeHistory(ctx, storetest.HistoryTenant, end, 5000)
		if err != nil {
			t.Fatal(err)
		}
		if n < 5000 {
			break
		}
	}
	free, err := s.freePages(ctx)
	if err != nil || free == 0 {
		t.Fatalf("free pages after the purge: %d, %v; want many", free, err)
	}
	total := 0
	for {
		n, err := s.ReclaimSpace(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if n < 1000 {
			break
		}
	}
	after, err := s.freePages(ctx)
	if err != nil || after != 0 || total != free {
		t.Errorf("free pages: %d before, %d given back, %d after (%v); want all given back", free, total, after, err)
	}
	if shrunk := fileBytes(t, s, path); shrunk >= full/4 {
		t.Errorf("file %d bytes after the purge and vacuum, %d before: want it under a quarter", shrunk, full)
	}
}

// TestAutoVacuumOnExistingFile: a small file made without auto_vacuum is
// turned INCREMENTAL at open (a one-time VACUUM).
func TestAutoVacuumOnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE before_auto_vacuum (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode int
	if err := s.w.QueryRowContext(t.Context(), qAutoVacuum).Scan(&mode); err != nil || mode != 2 || !s.incrementalVacuum {
		t.Errorf("auto_vacuum = %d, %v (store says %v); want 2", mode, err, s.incrementalVacuum)
	}
}

// TestMeasureHistorySize measures the file's bytes per finished firing
// (an acked occurrence, its latest attempt in its row) and what a
// retention of seven days at a million firings a day makes of it. Slow:
// it runs only with SCHED_MEASURE_SIZE set (the number of firings,
// 1000000 for the figures in docs/retention.md).
func TestMeasureHistorySize(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SCHED_MEASURE_SIZE"))
	if testing.Short() || n <= 0 {
		t.Skip("set SCHED_MEASURE_SIZE to a number of firings")
	}
	s, path := openTest(t)
	ctx := t.Context()
	empty := fileBytes(t, s, path)
	startAt := time.Now()
	end := storetest.FillHistory(t, s, n, 1000, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := s.w.ExecContext(ctx, qTestAckAll); err != nil {
		t.Fatal(err)
	}
	var attempts int
	if err := s.w.QueryRowContext(ctx, qTestCountAttempts).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	size := fileBytes(t, s, path) - empty
	t.Logf("sqlite: filled in %s (%d rows in attempts)", time.Since(startAt).Round(time.Second), attempts)
	storetest.ReportHistorySize(t, "sqlite", n, size)
	storetest.ReportPurgeSpeed(t, s, "sqlite", end, 5, 5_000)
	began := time.Now()
	pages, err := s.ReclaimSpace(ctx, 4096)
	t.Logf("sqlite: incremental_vacuum gave back %d pages in %s (%v)", pages, time.Since(began).Round(time.Millisecond), err)
}
