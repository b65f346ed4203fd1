package paths

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func envOf(m map[string]string) Env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		env      map[string]string
		db, sock string
	}{
		{map[string]string{"XDG_DATA_HOME": "/d", "XDG_RUNTIME_DIR": "/run/user/7", "HOME": "/h"}, "/d/sched/sched.db", "/run/user/7/sched/schedd.sock"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/sched/sched.db", filepath.Join(os.TempDir(), "sched-"+itoa(os.Geteuid()), "schedd.sock")},
		{map[string]string{"HOME": "/h", "XDG_DATA_HOME": "relative"}, "/h/.local/share/sched/sched.db", ""},
	}
	for _, tt := range tests {
		db, err := Database(envOf(tt.env))
		if err != nil || db != tt.db {
			t.Errorf("Database(%v) = %q, %v; want %q", tt.env, db, err, tt.db)
		}
		if tt.sock != "" {
			if got := Socket(envOf(tt.env)); got != tt.sock {
				t.Errorf("Socket(%v) = %q, want %q", tt.env, got, tt.sock)
			}
		}
	}
	if _, err := Database(envOf(nil)); err == nil {
		t.Error("Database with no HOME: no error")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestPrivateDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "sched")
	if err := EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivateDir(dir); err == nil || !strings.Contains(err.Error(), "private") {
		t.Errorf("a 0755 directory: %v", err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivateDir(link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlink: %v", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	if err := CheckSocket(file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a file as socket: %v", err)
	}
}
