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

// peerCreds reads LOCAL_PEERCRED: the uid and the groups, the first of
// which is the effective group.
func peerCreds(fd int) (Creds, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Creds{}, err
	}
	c := Creds{UID: int(cred.Uid), GID: -1}
	n := min(int(cred.Ngroups), len(cred.Groups))
	for i, g := range cred.Groups[:max(n, 0)] {
		if i == 0 {
			c.GID = int(g)
			continue
		}
		c.Groups = append(c.Groups, int(g))
	}
	return c, nil
}
