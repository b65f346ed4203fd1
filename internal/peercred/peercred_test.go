//go:build linux || darwin || freebsd

package peercred_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sched-dev/sched/internal/peercred"
)

// Both ends of a real Unix socket connection see this process's uid as
// their peer's.
func TestUIDBothEnds(t *testing.T) {
	dir, err := os.MkdirTemp("", "pc") // short: a socket path must fit in about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "s.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *net.UnixConn, 1)
	go func() {
		c, err := ln.AcceptUnix()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer server.Close()

	for name, c := range map[string]*net.UnixConn{"dialed end": client, "accepted end": server} {
		uid, err := peercred.UID(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if uid != os.Geteuid() {
			t.Errorf("%s: peer uid %d, want %d", name, uid, os.Geteuid())
		}
	}
}

// A closed connection has no peer to ask about: an error, not a uid.
func TestUIDClosed(t *testing.T) {
	a, b, err := pair()
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	a.Close()
	uid, err := peercred.UID(a)
	if err == nil {
		t.Fatalf("closed connection: uid %d, want an error", uid)
	}
	if errors.Is(err, peercred.ErrUnsupported) {
		t.Fatalf("closed connection: %v, want an error other than ErrUnsupported", err)
	}
}

// pair is a connected pair of Unix stream sockets (socketpair(2)).
func pair() (*net.UnixConn, *net.UnixConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		conns[i] = c.(*net.UnixConn)
	}
	return conns[0], conns[1], nil
}

// A socketpair's ends see each other as this process too.
func TestUIDSocketpair(t *testing.T) {
	a, b, err := pair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	for _, c := range []*net.UnixConn{a, b} {
		uid, err := peercred.UID(c)
		if err != nil {
			t.Fatal(err)
		}
		if uid != os.Geteuid() {
			t.Errorf("peer uid %d, want %d", uid, os.Geteuid())
		}
	}
}
