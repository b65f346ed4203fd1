package client_test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/testdaemon"
)

// TestSharedSocket: a socket another user's daemon shares with a group of
// this user (schedd --socket-group: mode 0660, group-owned) is trusted at
// an address given, and only while no one but its owner and root could
// have put it there; never at the default socket's path. Needs root, to
// run that daemon as another user (nobody, in root's group 0).
func TestSharedSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a server as another user needs root")
	}
	dir := privateDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// nobody's directory, where only nobody (and root) may write.
	sockDir := filepath.Join(dir, "run")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sockDir, 65534, 0); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "helper")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s.sock")
	cmd := exec.Command(bin, "-test.run=^TestSharedSocketHelper$")
	cmd.Env = append(os.Environ(), "SCHED_TEST_SHARED_SOCKET="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: uint32(os.Getegid())}}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run a helper as another user: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	testdaemon.WaitServing(t, testdaemon.Proc{Name: "the helper server", Done: done, Code: func() int { return cmd.ProcessState.ExitCode() }},
		10*time.Second, func() error {
			fi, err := os.Stat(sock)
			if err == nil && fi.Mode().Perm() != 0o660 {
				return os.ErrNotExist // not shared yet
			}
			return err
		})

	status := func(addr string, opts ...client.Option) error {
		c, err := client.New(addr, "secret", opts...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Status(ctx)
		return err
	}
	if err := status("unix:" + sock); err != nil {
		t.Fatalf("a socket shared with root's group: %v", err)
	}
	// Where it is the default socket, another user's socket is never
	// trusted: that path may have been taken first.
	if err := os.Symlink(sockDir, filepath.Join(dir, "sched")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sock, filepath.Join(sockDir, "schedd.sock")); err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(sockDir, "schedd.sock")
	err = status("", client.WithEnv(env(map[string]string{"XDG_RUNTIME_DIR": dir})))
	if err == nil || !strings.Contains(err.Error(), "owned by uid 65534, not by you") {
		t.Errorf("another user's socket at the default path: %v", err)
	}
	if err := status("unix:" + sock); err != nil {
		t.Fatalf("the socket at its new name: %v", err)
	}

	for _, tc := range []struct {
		name  string
		apply func() error
		undo  func() error
		want  string
	}{
		{"a directory others may write in", func() error { return os.Chmod(sockDir, 0o777) }, func() error { return os.Chmod(sockDir, 0o755) },
			"may write in it"},
		{"a directory of a third user", func() error { return os.Chown(sockDir, 65533, 0) }, func() error { return os.Chown(sockDir, 65534, 0) },
			"owned by uid 65533, neither root nor the socket's owner"},
		{"a socket open to others", func() error { return os.Chmod(sock, 0o666) }, func() error { return os.Chmod(sock, 0o660) },
			"open to others"},
		{"a socket of a group not root's", func() error { return os.Chown(sock, -1, 65534) }, func() error { return os.Chown(sock, -1, os.Getegid()) },
			"(gid 65534) is not one of yours"},
	} {
		if err := tc.apply(); err != nil {
			t.Fatal(err)
		}
		err := status("unix:" + sock)
		if err == nil || !strings.Contains(err.Error(), "refusing to talk to") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
		}
		if err := tc.undo(); err != nil {
			t.Fatal(err)
		}
	}
	if err := status("unix:" + sock); err != nil {
		t.Fatalf("after the changes were undone: %v", err)
	}
}

// TestSharedSocketHelper is the other user's daemon of TestSharedSocket:
// its socket mode 0660, of its (root's) group.
func TestSharedSocketHelper(t *testing.T) {
	sock := os.Getenv("SCHED_TEST_SHARED_SOCKET")
	if sock == "" {
		t.Skip("helper process only")
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(sock, 0o660); err != nil {
		t.Fatal(err)
	}
	http.Serve(ln, statusHandler(nil))
}
