// Package paths knows where sched keeps things by default, so that schedd
// and schedctl agree without configuration: the database under the XDG
// data directory, and the socket in a private directory under the XDG
// runtime directory (never a guessable path in a shared /tmp that another
// user could plant first).
package paths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Env is the environment lookup; os.LookupEnv in production.
type Env func(string) (string, bool)

// Database is the default SQLite file: $XDG_DATA_HOME/sched/sched.db, else
// ~/.local/share/sched/sched.db.
func Database(env Env) (string, error) {
	if d, ok := env("XDG_DATA_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "sched", "sched.db"), nil
	}
	home, ok := env("HOME")
	if !ok || !filepath.IsAbs(home) {
		return "", errors.New("cannot find a data directory: set XDG_DATA_HOME or HOME, or pass --store sqlite:PATH")
	}
	return filepath.Join(home, ".local", "share", "sched", "sched.db"), nil
}

// SocketDir is the private directory of the default socket:
// $XDG_RUNTIME_DIR/sched, else /tmp/sched-$UID.
func SocketDir(env Env) string {
	if d, ok := env("XDG_RUNTIME_DIR"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "sched")
	}
	return filepath.Join(os.TempDir(), "sched-"+strconv.Itoa(os.Geteuid()))
}

// Socket is the default socket path, SocketDir/schedd.sock.
func Socket(env Env) string { return filepath.Join(SocketDir(env), "schedd.sock") }

// CheckPrivateDir reports an error unless dir is a real directory (not a
// symlink) owned by this user with no access for group or others.
func CheckPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink or a file was planted there?)", dir)
	}
	if err := checkOwner(dir, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %v; it must be private (0700)", dir, fi.Mode().Perm())
	}
	return nil
}

// EnsurePrivateDir creates dir (mode 0700, parents as needed) if missing
// and then checks it with CheckPrivateDir.
func EnsurePrivateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return CheckPrivateDir(dir)
}

// CheckSocket reports an error unless path is a Unix socket (not a
// symlink) owned by this user. A client runs it before it sends a token.
func CheckSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s is not a socket (%v)", path, fi.Mode().Type())
	}
	return checkOwner(path, fi)
}

func checkOwner(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot read its owner", path)
	}
	if int(st.Uid) != os.Geteuid() {
		return &NotOwnerError{Path: path, UID: int(st.Uid)}
	}
	return nil
}

// NotOwnerError is CheckPrivateDir's and CheckSocket's error for a file
// another user owns.
type NotOwnerError struct {
	Path string
	UID  int // the owner's
}

func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("%s is owned by uid %d, not by you (uid %d); refusing to use it", e.Path, e.UID, os.Geteuid())
}
