//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package daemon

import "syscall"

// raiseFileLimit raises the soft limit on open files to the hard limit, as
// far as the system lets it, and returns the soft limit then in force.
// Every connection takes a descriptor; a default soft limit (often 1024)
// is below what --max-connections allows.
func raiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = want.Max
		// macOS refuses a soft limit over its per-process maximum (as when
		// the hard limit is unlimited); the current limit then stays.
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return uint64(lim.Cur), err
		}
		lim = want
	}
	return uint64(lim.Cur), nil
}
