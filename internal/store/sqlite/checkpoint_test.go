package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckpointerCopiesCommitsBack: a committed write reaches the
// database file itself, with no checkpoint by the writer (whose threshold
// of writerCheckpointPages is far off) and no close: the checkpointer
// copied it back. The file is read on its own, as a copy without its WAL.
func TestCheckpointerCopiesCommitsBack(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('probe', 'committed')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// The copy is taken while the checkpointer may be writing the file: a
	// torn copy reads as an error, and is taken again.
	dir := t.TempDir()
	var got string
	deadline := time.Now().Add(10 * time.Second)
	for got != "committed" {
		if time.Now().After(deadline) {
			t.Fatalf("the commit is not in the database file after 10 s (last checkpoint's error: %v)", s.ckpt.lastError())
		}
		time.Sleep(20 * time.Millisecond)
		got = readWithoutWAL(t, path, filepath.Join(dir, "copy.db"))
	}
	if err := s.ckpt.lastError(); err != nil {
		t.Errorf("last checkpoint: %v", err)
	}
}

// readWithoutWAL copies the database file at path alone to dst and reads
// the probe row from the copy; "" when it cannot.
func readWithoutWAL(t *testing.T, path, dst string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dst, dst + "-wal", dst + "-shm"} {
		os.Remove(p)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(t.Context(), `SELECT value FROM meta WHERE key = 'probe'`).Scan(&v); err != nil {
		return ""
	}
	return v
}

// TestWALStaysBounded: under steady writes the WAL file stays near the
// writer's threshold (writerCheckpointPages): the writer still starts the
// WAL over. Without the writer's checkpoint, the WAL grew with every write
// and never started over. The test lowers the threshold to 8 MiB on the
// writer's one connection, so that it writes four thresholds in seconds;
// the mechanism does not depend on the value.
func TestWALStaysBounded(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	const threshold = 2048 // pages: 8 MiB
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", threshold)); err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("x", 64<<10)
	const total = 4 * threshold * 4096 // 32 MiB written, four thresholds
	for i := range total / (16 * len(value)) {
		err := s.writeTx(ctx, func(tx *sql.Tx) error {
			for j := range 16 {
				if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`,
					fmt.Sprintf("load-%d", (i*16+j)%64), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if limit := int64(threshold*4096) + 4<<20; fi.Size() > limit {
		t.Errorf("WAL is %d MiB after writing %d MiB, want at most %d MiB", fi.Size()>>20, total>>20, limit>>20)
	}
}
