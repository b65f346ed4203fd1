//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package daemon

import (
	"syscall"
	"testing"
)

// schedd raises its soft limit on open files to the hard limit. Not
// parallel: it lowers the limit of the test process for a moment.
func TestRaiseFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	orig := lim
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	if lim.Max > 512 {
		lim.Cur = 512
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	n, err := raiseFileLimit()
	if err != nil {
		t.Skipf("this system keeps the soft limit: %v", err) // macOS with an unlimited hard limit
	}
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != lim.Max || uint64(lim.Cur) != n {
		t.Fatalf("soft limit %d (reported %d), want the hard limit %d", lim.Cur, n, lim.Max)
	}
}
