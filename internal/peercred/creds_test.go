//go:build linux || darwin || freebsd

package peercred_test

import (
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/sched-dev/sched/internal/peercred"
)

// TestGetOwnCreds: a socketpair's ends see this process: its uid, its
// effective group and (on Linux, SO_PEERGROUPS) its supplementary groups.
func TestGetOwnCreds(t *testing.T) {
	a, b, err := pair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	cr, err := peercred.Get(a)
	if err != nil {
		t.Fatal(err)
	}
	if cr.UID != os.Geteuid() || cr.GID != os.Getegid() {
		t.Errorf("creds %+v, want uid %d gid %d", cr, os.Geteuid(), os.Getegid())
	}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if !cr.InGroup(g) {
			t.Errorf("creds %+v lack this process's group %d", cr, g)
		}
	}
	if runtime.GOOS == "linux" {
		got := slices.Sorted(slices.Values(cr.Groups))
		if want := slices.Sorted(slices.Values(groups)); !slices.Equal(got, want) {
			t.Errorf("supplementary groups %v, want %v", got, want)
		}
		if cr.PID != os.Getpid() {
			t.Errorf("pid %d, want %d", cr.PID, os.Getpid())
		}
	}
}

// TestInGroup: the primary group or a supplementary one.
func TestInGroup(t *testing.T) {
	cr := peercred.Creds{UID: 1000, GID: 100, Groups: []int{27, 998}}
	for gid, want := range map[int]bool{100: true, 27: true, 998: true, 1000: false, 0: false, 999: false} {
		if cr.InGroup(gid) != want {
			t.Errorf("InGroup(%d) = %v, want %v", gid, !want, want)
		}
	}
	if (peercred.Creds{GID: 5}).InGroup(6) {
		t.Error("no supplementary groups: InGroup(6)")
	}
}
