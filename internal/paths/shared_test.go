package paths_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/paths"
)

// TestCheckSharedDir: a directory only its owner (or root) could have put
// a socket in passes, up to the root; one writable by group or others
// does not, but a sticky one above it (as /tmp) may be.
func TestCheckSharedDir(t *testing.T) {
	top, err := os.MkdirTemp("", "sh") // under /tmp, sticky
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	dir := filepath.Join(top, "run")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	me := os.Geteuid()
	cases := []struct {
		name          string
		topMode, mode os.FileMode
		owner         int
		want          string // "" for none
	}{
		{"private", 0o700, 0o750, me, ""},
		{"group may write", 0o700, 0o770, me, "has mode 0770: group or others may write in it"},
		{"others may write", 0o700, 0o757, me, "has mode 0757"},
		{"sticky, others may write: no", 0o700, os.ModeSticky | 0o777, me, "has mode 0777"},
		{"above it, sticky and open to all", os.ModeSticky | 0o777, 0o750, me, ""},
		{"above it, open to all", 0o777, 0o750, me, top + " has mode 0777"},
		{"owned by another user", 0o700, 0o750, me + 1, "neither root nor the socket's owner"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.Chmod(top, tc.topMode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			err := paths.CheckSharedDir(dir, tc.owner)
			if tc.owner != me && me == 0 {
				// root owns it: root is always trusted.
				tc.want = ""
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}

// TestCheckSharedSocket: a socket of one of this process's groups, mode
// 0660, passes and names its owner; one open to others does not.
func TestCheckSharedSocket(t *testing.T) {
	top, err := os.MkdirTemp("", "ss")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	sock := filepath.Join(top, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(sock, 0o660)
	if owner, err := paths.CheckSharedSocket(sock); err != nil || owner != os.Geteuid() {
		t.Fatalf("%d %v", owner, err)
	}
	os.Chmod(sock, 0o666)
	if _, err := paths.CheckSharedSocket(sock); err == nil || !strings.Contains(err.Error(), "open to others") {
		t.Fatalf("mode 0666: %v", err)
	}
	if !paths.InGroup(os.Getegid()) {
		t.Fatal("InGroup: not in its own group")
	}
}
