package main

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Under systemd (Type=notify, packaging/systemd/schedd.service) schedd
// sends READY=1 to $NOTIFY_SOCKET once it serves, and STOPPING=1 when a
// SIGTERM begins its shutdown: the real binary, a real datagram socket, as
// a path and as an abstract name.
func TestNotifySocket(t *testing.T) {
	t.Parallel()
	t.Run("path", func(t *testing.T) {
		t.Parallel()
		dir, err := os.MkdirTemp("", "sdn") // short: a socket path has about 100 bytes
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		name := filepath.Join(dir, "notify")
		testNotify(t, name, name)
	})
	t.Run("abstract", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("abstract Unix sockets are Linux's")
		}
		t.Parallel()
		var b [8]byte
		rand.Read(b[:])
		name := "sched-test-notify-" + hex.EncodeToString(b[:])
		// Go's "@name" is the abstract name "\x00name", as systemd's.
		testNotify(t, "@"+name, "@"+name)
	})
}

// testNotify listens on the datagram socket listen, runs schedd with
// NOTIFY_SOCKET=env and checks what it sends and when.
func testNotify(t *testing.T, listen, env string) {
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: listen, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	e := newEnv(t)
	p := start(t, append(e.vars(), "NOTIFY_SOCKET="+env))
	if got := readNotify(t, ln, p); got != "READY=1" {
		t.Fatalf("first notification %q, want READY=1", got)
	}
	// Ready means serving: the API answers at once, without waiting.
	c := unixClient(t, e.socket())
	if code, raw, err := c.do("GET", "/healthz", nil); err != nil || code != 200 {
		t.Fatalf("/healthz right after READY=1: %d %s %v", code, raw, err)
	}

	p.cmd.Process.Signal(syscall.SIGTERM)
	if got := readNotify(t, ln, p); got != "STOPPING=1" {
		t.Fatalf("notification after SIGTERM %q, want STOPPING=1", got)
	}
	if code, _ := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
	if err := ln.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n, _, err := ln.ReadFromUnix(make([]byte, 4096)); err == nil {
		t.Errorf("a notification after STOPPING=1 (%d bytes)", n)
	}
	if !strings.Contains(p.stderr.String(), "schedd stopped") {
		t.Errorf("no clean stop in the log:\n%s", p.stderr.String())
	}
}

// readNotify reads one datagram, failing the test if none comes within 15
// seconds.
func readNotify(t *testing.T, ln *net.UnixConn, p *proc) string {
	t.Helper()
	if err := ln.SetReadDeadline(time.Now().Add(15 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _, err := ln.ReadFromUnix(buf)
	if err != nil {
		t.Fatalf("no notification from schedd: %v; its stderr:\n%s", err, p.stderr.String())
	}
	return string(buf[:n])
}
