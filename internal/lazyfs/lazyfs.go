// Package lazyfs mounts a directory through FUSE and can lose, on demand,
// every write that was not fsynced: a power loss, for tests that a
// committed write survives one.
//
// A kill -9 cannot tell a store that fsyncs its commits from one that does
// not: the kernel keeps the process's writes either way. A power loss keeps
// only what was synced. The FS passes every call through to a backing
// directory and remembers, per file, how to undo each write and truncate
// made since that file's last fsync. PowerLoss unmounts the FS and applies
// those undos, so that the backing directory holds what a disk would hold
// after the power came back: the file as of its last fsync.
//
// It models the data of files, the part a database's durability rests on.
// Metadata (creating, renaming and removing files) is kept as done, as if
// each directory change were synced at once; a test that needs a lost
// directory entry needs another tool.
package lazyfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Available reports why this process cannot mount a lazyfs, or nil when it
// can: FUSE needs /dev/fuse, and a mount without fusermount needs root.
func Available() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("no FUSE device: %w", err)
	}
	if os.Geteuid() != 0 {
		return errors.New("mounting FUSE directly needs root")
	}
	return nil
}

// FS is a mounted lazy file system.
type FS struct {
	backing, mountpoint string
	server              *fuse.Server

	mu   sync.Mutex
	undo map[string][]undo // by the backing file's path, oldest first
	lost bool
}

// undo restores a file as it was before one write or truncate: the bytes
// old at off, then the size.
type undo struct {
	off  int64
	old  []byte
	size int64
}

// Mount serves backing at mountpoint (both existing directories).
func Mount(backing, mountpoint string) (*FS, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: %w", err)
	}
	l := &FS{backing: backing, mountpoint: mountpoint, undo: map[string][]undo{}}
	root, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: %s: %w", backing, err)
	}
	server, err := fs.Mount(mountpoint, &node{LoopbackNode: root.(*fs.LoopbackNode), fs: l}, &fs.Options{
		MountOptions: fuse.MountOptions{DirectMountStrict: true, FsName: "lazyfs", Name: "lazyfs"},
	})
	if err != nil {
		return nil, fmt.Errorf("lazyfs: mount %s: %w", mountpoint, err)
	}
	l.server = server
	return l, nil
}

// Unsynced is the number of writes and truncates not yet made durable by
// an fsync.
func (l *FS) Unsynced() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, u := range l.undo {
		n += len(u)
	}
	return n
}

// PowerLoss unmounts the FS (its files must be closed: kill the processes
// using it first) and undoes every write not yet fsynced, newest first. It
// returns how many it undid. The backing directory then holds what
// survived.
func (l *FS) PowerLoss() (int, error) {
	if err := l.server.Unmount(); err != nil {
		return 0, fmt.Errorf("lazyfs: unmount %s: %w", l.mountpoint, err)
	}
	l.server.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = true
	n := 0
	for path, us := range l.undo {
		if err := revert(path, us); err != nil {
			return n, fmt.Errorf("lazyfs: power loss of %s: %w", path, err)
		}
		n += len(us)
	}
	clear(l.undo)
	return n, nil
}

// Unmount unmounts the FS and keeps every write.
func (l *FS) Unmount() error {
	if err := l.server.Unmount(); err != nil {
		return fmt.Errorf("lazyfs: unmount %s: %w", l.mountpoint, err)
	}
	l.server.Wait()
	return nil
}

func revert(path string, us []undo) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // removed since: metadata is kept as done
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for i := len(us) - 1; i >= 0; i-- {
		u := us[i]
		if len(u.old) > 0 {
			if _, err := f.WriteAt(u.old, u.off); err != nil {
				return err
			}
		}
		if err := f.Truncate(u.size); err != nil {
			return err
		}
	}
	return f.Sync()
}

// record remembers how to undo a change of [off, end) of the file at path
// (end < 0: to its end), read through f before the change.
func (l *FS) record(f *os.File, path string, off, end int64) syscall.Errno {
	st, err := f.Stat()
	if err != nil {
		return fs.ToErrno(err)
	}
	size := st.Size()
	if end < 0 || end > size {
		end = size
	}
	var old []byte
	if off < end {
		old = make([]byte, end-off)
		if _, err := f.ReadAt(old, off); err != nil && !errors.Is(err, io.EOF) {
			return fs.ToErrno(err)
		}
	}
	l.undo[path] = append(l.undo[path], undo{off: off, old: old, size: size})
	return 0
}

// synced forgets the undos of path: the file is durable as it is.
func (l *FS) synced(path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.undo, path)
}

// node is a loopback node whose files are lazy.
type node struct {
	*fs.LoopbackNode
	fs *FS
}

// WrapChild makes every node under the root a lazy one.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), fs: n.fs}
}

func (n *node) backingPath() string {
	return filepath.Join(n.fs.backing, n.EmbeddedInode().Path(nil))
}

var (
	_ fs.NodeWrapChilder = (*node)(nil)
	_ fs.NodeOpener      = (*node)(nil)
	_ fs.NodeCreater     = (*node)(nil)
	_ fs.NodeSetattrer   = (*node)(nil)
	_ fs.NodeFsyncer     = (*node)(nil)
)

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return n.open(n.backingPath(), flags&^(syscall.O_APPEND|fuse.FMODE_EXEC), 0)
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	inode, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	// The loopback's handle is replaced by a lazy one on the same file.
	fh.(fs.FileReleaser).Release(ctx)
	lazy, _, errno := n.open(filepath.Join(n.backingPath(), name), flags&^(syscall.O_APPEND|syscall.O_CREAT|syscall.O_EXCL|syscall.O_TRUNC), mode)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return inode, lazy, fuseFlags, 0
}

func (n *node) open(path string, flags, mode uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_TRUNC != 0 {
		// Record the truncation before the open does it.
		if f, err := os.Open(path); err == nil {
			n.fs.mu.Lock()
			errno := n.fs.record(f, path, 0, -1)
			n.fs.mu.Unlock()
			f.Close()
			if errno != 0 {
				return nil, 0, errno
			}
		}
	}
	f, err := os.OpenFile(path, int(flags), os.FileMode(mode))
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	raw, err := os.Open(path) // the undo log's reader
	if err != nil {
		f.Close()
		return nil, 0, fs.ToErrno(err)
	}
	return &file{lb: fs.NewLoopbackFileFromOS(f), raw: raw, path: path, fs: n.fs}, 0, 0
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok {
		path := n.backingPath()
		if lf, ok := f.(*file); ok {
			path = lf.path
		}
		r, err := os.Open(path)
		if err != nil {
			return fs.ToErrno(err)
		}
		n.fs.mu.Lock()
		errno := n.fs.record(r, path, int64(sz), -1)
		n.fs.mu.Unlock()
		r.Close()
		if errno != 0 {
			return errno
		}
	}
	if lf, ok := f.(*file); ok {
		return lf.lb.Setattr(ctx, in, out)
	}
	return n.LoopbackNode.Setattr(ctx, nil, in, out)
}

func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if lf, ok := f.(*file); ok {
		return lf.Fsync(ctx, flags)
	}
	n.fs.synced(n.backingPath())
	return 0
}

// file is a lazy file handle: the loopback's, with each write recorded for
// PowerLoss until an fsync. It does not offer the loopback's passthrough
// (the kernel would write the backing file without asking) or its locks
// (the kernel keeps POSIX locks itself).
type file struct {
	lb   *fs.LoopbackFile
	raw  *os.File
	path string
	fs   *FS
}

var (
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileFlusher   = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileGetattrer = (*file)(nil)
	_ fs.FileLseeker   = (*file)(nil)
)

func (f *file) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return f.lb.Read(ctx, buf, off)
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if errno := f.fs.record(f.raw, f.path, off, off+int64(len(data))); errno != 0 {
		return 0, errno
	}
	return f.lb.Write(ctx, data, off)
}

func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if errno := f.lb.Fsync(ctx, flags); errno != 0 {
		return errno
	}
	f.fs.synced(f.path)
	return 0
}

func (f *file) Flush(ctx context.Context) syscall.Errno { return f.lb.Flush(ctx) }

func (f *file) Release(ctx context.Context) syscall.Errno {
	f.raw.Close()
	return f.lb.Release(ctx)
}

func (f *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.lb.Getattr(ctx, out)
}

func (f *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return f.lb.Lseek(ctx, off, whence)
}
