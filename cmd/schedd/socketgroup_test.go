package main

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSocketGroupThroughTheBinary: --socket-group names a group the
// system does not know: refused at start (exit 2, one line naming it),
// nothing created. Named with this process's own group: the socket is
// that group's, mode 0660, and serves.
func TestSocketGroupThroughTheBinary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sock := filepath.Join(e.root, "shared", "s.sock")
	code, out := run(t, e.vars(), "--listen", "unix:"+sock, "--socket-group", "no-such-group-4c1d")
	if code != 2 || !strings.Contains(out, `--socket-group "no-such-group-4c1d": no such group`) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, out)
	}
	if _, err := os.Stat(e.data); !os.IsNotExist(err) {
		t.Fatalf("a refused start created %s", e.data)
	}

	g, err := user.LookupGroupId(strconv.Itoa(os.Getegid()))
	if err != nil {
		t.Skipf("this process's group has no name: %v", err)
	}
	p := start(t, e.vars(), "--listen", "unix:"+sock, "--socket-group", g.Name)
	unixClient(t, sock).ready(p)
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o660 || int(fi.Sys().(*syscall.Stat_t).Gid) != os.Getegid() {
		t.Errorf("socket mode %04o gid %d, want 0660 gid %d", fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Gid, os.Getegid())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code, _ := p.wait(t, 15*time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
}
