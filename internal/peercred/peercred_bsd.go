//go:build darwin || freebsd

package peercred

import "golang.org/x/sys/unix"

// peerUID reads LOCAL_PEERCRED (the struct xucred that getpeereid(3) also
// reads), which macOS and FreeBSD fill in at connect time.
func peerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
