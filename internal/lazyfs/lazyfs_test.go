package lazyfs

import (
	"os"
	"path/filepath"
	"testing"
)

// mount mounts a lazyfs over a new backing directory and returns it with
// its backing directory and mountpoint.
func mount(t *testing.T) (*FS, string, string) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("lazyfs cannot run here: %v", err)
	}
	backing, mnt := t.TempDir(), t.TempDir()
	l, err := Mount(backing, mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !l.lost {
			l.Unmount()
		}
	})
	return l, backing, mnt
}

func TestPowerLossKeepsOnlySyncedData(t *testing.T) {
	l, backing, mnt := mount(t)

	// synced: written and fsynced, then changed (overwritten, extended,
	// then truncated below its synced size) without a sync.
	f, err := os.OpenFile(filepath.Join(mnt, "synced"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	write := func(s string, off int64) {
		t.Helper()
		if _, err := f.WriteAt([]byte(s), off); err != nil {
			t.Fatal(err)
		}
	}
	write("hello, world", 0)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	write("HELLO", 0)
	write(" and more", 12)
	if err := f.Truncate(3); err != nil {
		t.Fatal(err)
	}
	write("p!", 3)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// never: written, never synced.
	if err := os.WriteFile(filepath.Join(mnt, "never"), []byte("gone"), 0o644); err != nil {
		t.Fatal(err)
	}
	// durable: written and synced through a second handle.
	g, err := os.Create(filepath.Join(mnt, "durable"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteString("kept"); err != nil {
		t.Fatal(err)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	g.Close()

	// Through the mount, everything written reads back.
	if got, err := os.ReadFile(filepath.Join(mnt, "synced")); err != nil || string(got) != "HELp!" {
		t.Fatalf("before the power loss: %q, %v; want %q", got, err, "HELp!")
	}
	if n := l.Unsynced(); n == 0 {
		t.Fatal("no unsynced writes recorded")
	}

	undone, err := l.PowerLoss()
	if err != nil {
		t.Fatal(err)
	}
	if undone == 0 {
		t.Error("the power loss undid nothing")
	}
	for name, want := range map[string]string{"synced": "hello, world", "never": "", "durable": "kept"} {
		got, err := os.ReadFile(filepath.Join(backing, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != want {
			t.Errorf("%s after the power loss: %q, want %q", name, got, want)
		}
	}
}
