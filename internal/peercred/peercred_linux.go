package peercred

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// peerUID reads SO_PEERCRED, which Linux fills in at connect time.
func peerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}

// peerCreds reads SO_PEERCRED (uid, gid, pid) and SO_PEERGROUPS (the
// supplementary groups), both recorded at connect time. A kernel older
// than 4.13 has no SO_PEERGROUPS: then only the primary group is known.
func peerCreds(fd int) (Creds, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Creds{}, err
	}
	c := Creds{UID: int(cred.Uid), GID: int(cred.Gid), PID: int(cred.Pid)}
	groups, err := peerGroups(fd)
	if err != nil && !errors.Is(err, unix.ENOPROTOOPT) {
		return Creds{}, err
	}
	c.Groups = groups
	return c, nil
}

// peerGroups reads SO_PEERGROUPS, growing the buffer when the kernel says
// it is too small (ERANGE, with the size it needs).
func peerGroups(fd int) ([]int, error) {
	buf := make([]uint32, 32)
	for {
		size := uint32(len(buf) * 4)
		_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERGROUPS,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0)
		if errno == unix.ERANGE && int(size/4) > len(buf) && size <= 65536*4 {
			buf = make([]uint32, size/4)
			continue
		}
		if errno != 0 {
			return nil, errno
		}
		out := make([]int, 0, size/4)
		for _, g := range buf[:size/4] {
			out = append(out, int(g))
		}
		return out, nil
	}
}
