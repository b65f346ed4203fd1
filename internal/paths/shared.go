package paths

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// A socket shared with a group (schedd --socket-group): another user's
// daemon, whose socket is group-owned by a group of this user. Whether a
// client may trust it comes down to who could have put it at its path:
// no one but its owner and root, when its directory and every directory
// above it are theirs alone.

// CheckSharedSocket reports an error unless the socket at path, owned by
// another user, is one that user shares with a group of this process: a
// socket (not a symlink) whose group is this process's group or one of
// its supplementary groups, with no access for others, in a directory
// that passes CheckSharedDir for its owner. It returns the owner's uid:
// the daemon that answers must run as it.
func CheckSharedSocket(path string) (owner int, err error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return -1, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, fmt.Errorf("%s: cannot read its owner", path)
	}
	switch {
	case fi.Mode()&os.ModeSocket == 0:
		return -1, fmt.Errorf("%s is not a socket (%v)", path, fi.Mode().Type())
	case fi.Mode().Perm()&0o007 != 0:
		return -1, fmt.Errorf("%s has mode %04o, open to others, not to a group alone", path, fi.Mode().Perm())
	case !InGroup(int(st.Gid)):
		return -1, fmt.Errorf("its group (gid %d) is not one of yours", st.Gid)
	}
	if err := CheckSharedDir(filepath.Dir(path), int(st.Uid)); err != nil {
		return -1, err
	}
	return int(st.Uid), nil
}

// CheckSharedDir reports an error unless no one but root and the user
// owner could have put a file in dir: dir (its symlinks resolved) is
// owned by one of them and writable by no one else, and so is every
// directory above it, but that one above may be writable by all when it
// is sticky (as /tmp is, where no one may rename another's directory).
func CheckSharedDir(dir string, owner int) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for d, first := real, true; ; d, first = filepath.Dir(d), false {
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: cannot read its owner", d)
		}
		perm := fi.Mode().Perm()
		switch {
		case int(st.Uid) != 0 && int(st.Uid) != owner:
			return fmt.Errorf("%s is owned by uid %d, neither root nor the socket's owner (uid %d): that user could have put the socket there", d, st.Uid, owner)
		case perm&0o022 != 0 && (first || fi.Mode()&os.ModeSticky == 0):
			return fmt.Errorf("%s has mode %04o: group or others may write in it, so anyone of them could have put the socket there", d, perm)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// InGroup reports whether gid is this process's effective group or one of
// its supplementary groups.
func InGroup(gid int) bool {
	if gid == os.Getegid() {
		return true
	}
	groups, err := os.Getgroups()
	return err == nil && slices.Contains(groups, gid)
}
