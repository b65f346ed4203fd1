// Package peercred reads who is at the other end of a Unix socket
// connection: the user id the kernel recorded for the peer process when the
// connection was made, which the peer cannot fake.
//
// schedd uses it to accept only connections from its own user (and, with
// --socket-group, from members of that group: Get), and the client to send
// a request (and its token) only to a daemon of its own user.
// It works on Linux (SO_PEERCRED), macOS and FreeBSD (LOCAL_PEERCRED); on
// other systems UID returns an error that wraps ErrUnsupported.
package peercred

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
)

// ErrUnsupported is wrapped by UID's error on an operating system where
// the kernel does not tell a socket's peer credentials (or this package
// does not know how to ask).
var ErrUnsupported = errors.New("peer credentials are not available on " + runtime.GOOS)

// Creds are the credentials of a socket's peer process as the kernel
// recorded them when the connection was made: they say who connected,
// whatever the process did since (changed its groups, exited and had its
// pid reused), unlike a later look at /proc/PID.
type Creds struct {
	UID int // effective user id
	GID int // effective (primary) group id
	// Groups are the supplementary groups (SO_PEERGROUPS on Linux 4.13
	// and later; on earlier kernels, none; on macOS and FreeBSD, up to
	// the 15 that LOCAL_PEERCRED carries).
	Groups []int
	PID    int // 0 where the kernel does not tell (macOS, FreeBSD)
}

// InGroup reports whether gid is the peer's primary group or one of its
// supplementary groups.
func (c Creds) InGroup(gid int) bool {
	return c.GID == gid || slices.Contains(c.Groups, gid)
}

// Get returns the credentials of the process at the other end of c
// (UID's, with its groups and pid).
func Get(c *net.UnixConn) (Creds, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Creds{}, fmt.Errorf("peer credentials: %w", err)
	}
	var (
		cr   Creds
		cerr error
	)
	if err := raw.Control(func(fd uintptr) { cr, cerr = peerCreds(int(fd)) }); err != nil {
		return Creds{}, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return Creds{}, fmt.Errorf("peer credentials: %w", cerr)
	}
	return cr, nil
}

// UID returns the effective user id of the process at the other end of c,
// as the kernel recorded it when the connection was made.
func UID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	uid, cerr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { uid, cerr = peerUID(int(fd)) }); err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return -1, fmt.Errorf("peer credentials: %w", cerr)
	}
	return uid, nil
}
