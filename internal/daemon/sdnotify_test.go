package daemon

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sdNotify: nothing without $NOTIFY_SOCKET, an error for a value that is
// no socket name, one datagram with the state otherwise. (cmd/schedd's
// TestNotifySocket runs the real daemon under a notify socket.)
func TestSdNotify(t *testing.T) {
	t.Parallel()
	if err := sdNotify(envOf(), "READY=1"); err != nil {
		t.Errorf("NOTIFY_SOCKET unset: %v", err)
	}
	if err := sdNotify(envOf("NOTIFY_SOCKET", ""), "READY=1"); err != nil {
		t.Errorf("NOTIFY_SOCKET empty: %v", err)
	}
	if err := sdNotify(envOf("NOTIFY_SOCKET", "relative/notify"), "READY=1"); err == nil {
		t.Error("NOTIFY_SOCKET=relative/notify: no error")
	}

	dir, err := os.MkdirTemp("", "sdn")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "notify")
	if err := sdNotify(envOf("NOTIFY_SOCKET", name), "READY=1"); err == nil {
		t.Error("no socket there: no error")
	}
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := sdNotify(envOf("NOTIFY_SOCKET", name), "STOPPING=1"); err != nil {
		t.Fatal(err)
	}
	ln.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := ln.Read(buf)
	if err != nil || string(buf[:n]) != "STOPPING=1" {
		t.Errorf("received %q, %v; want STOPPING=1", buf[:n], err)
	}
}
