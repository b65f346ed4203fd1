//go:build !linux

package client

import (
	"errors"
	"net"
	"runtime"
)

// peerUID is not implemented here: without it the client cannot tell whose
// daemon answers, so it refuses Unix sockets (use tcp: or https:).
func peerUID(*net.UnixConn) (int, error) {
	return 0, errors.New("cannot verify the server's credentials on " + runtime.GOOS)
}
