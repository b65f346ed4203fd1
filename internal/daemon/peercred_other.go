//go:build !linux && !darwin && !freebsd

package daemon

import "net"

func peerUID(*net.UnixConn) (int, error) { return -1, errNoPeerCred }
