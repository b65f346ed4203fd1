package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// processLock is an exclusive flock(2) on DBPATH.lock, held for the life of
// a Store so that a second Store on the same database, in this process or
// another, fails fast rather than sharing the file. A separate file rather
// than the database itself, because SQLite manages its own POSIX locks on
// the database and on NFS flock is emulated with them. flock locks belong to
// the open file description, so two opens in one process conflict too, and
// the kernel drops the lock when the process dies: no stale lock after
// kill -9. The file is never removed (removing it would let a waiter lock
// an unlinked inode); it holds the pid of the last holder for the error
// message.
type processLock struct {
	f *os.File
}

// lockPath names the lock file of the database at dbPath. The path is made
// absolute and symlinks are resolved, so two spellings of one file share a
// lock.
func lockPath(dbPath string) (string, error) {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs)) // the file does not exist yet
	}
	return abs + ".lock", nil
}

// acquireLock takes the lock at path without waiting.
func acquireLock(path string) (*processLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = "process " + strconv.Itoa(pid)
			}
		}
		f.Close()
		return nil, fmt.Errorf("%w: %s holds %s; stop it first, or use another database file", ErrInUse, holder, path)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// Best effort: the pid only makes the error above clearer.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &processLock{f: f}, nil
}

// release drops the lock. Closing the file releases the flock.
func (l *processLock) release() error {
	return l.f.Close()
}
