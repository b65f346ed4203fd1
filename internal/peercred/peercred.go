// Package peercred reads who is at the other end of a Unix socket
// connection: the user id the kernel recorded for the peer process when the
// connection was made, which the peer cannot fake.
//
// schedd uses it to accept only connections from its own user, and the
// client to send a request (and its token) only to a daemon of its own user.
// It works on Linux (SO_PEERCRED), macOS and FreeBSD (LOCAL_PEERCRED); on
// other systems UID returns an error that wraps ErrUnsupported.
package peercred

import (
	"errors"
	"fmt"
	"net"
	"runtime"
)

// ErrUnsupported is wrapped by UID's error on an operating system where
// the kernel does not tell a socket's peer credentials (or this package
// does not know how to ask).
var ErrUnsupported = errors.New("peer credentials are not available on " + runtime.GOOS)

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
