package sqlite

import (
	"database/sql"
	"os"
	"path/filepath"
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
			t.Fatalf("the commit is not in the database file after 10 s (checkpoints run: %d, last error: %v)",
				s.ckpt.runs.Load(), s.ckpt.lastError())
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
