//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package daemon

import "errors"

// raiseFileLimit is not supported on this system.
func raiseFileLimit() (uint64, error) {
	return 0, errors.New("the limit on open files cannot be read on this system")
}
