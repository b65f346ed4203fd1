package sqlite

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The WAL write buffer: a SQLite VFS ("schedwal") that is the default
// "unix" VFS in every respect but one. Writes to a WAL file are gathered
// in memory and reach the file in large writes, at the latest when SQLite
// syncs the WAL.
//
// Why: SQLite appends a commit's pages to the WAL one frame at a time, two
// pwrite calls a frame (its 24-byte header, then the page). On the
// development machine a system call costs about 2 µs, so a planner batch of
// 5,000 occurrences, which writes a few thousand frames, spent a fifth of
// its commit in pwrite (docs/engine.md, speed). Gathered, the same bytes
// cost about a seventh as much.
//
// Why it is safe: with synchronous=FULL SQLite syncs the WAL before it
// makes a commit visible (it syncs, then appends the frames to the
// wal-index), so every frame of every commit is in the file before any
// reader or checkpointer can look for it. A frame still in the buffer
// belongs to a transaction not yet committed; losing it in a crash loses
// nothing SQLite counted on, as a crash before the sync would. Every other
// use of the file (a read, its size, a truncation, a sync, a file control,
// its close) first writes the buffer out, so SQLite never sees the file
// without its own writes. Under synchronous=NORMAL SQLite commits without
// a sync, so a store opened that way (only the power-loss test's control
// run) uses the plain "unix" VFS.
//
// A write the buffer cannot take (not contiguous with it, or larger than
// it) first writes the buffer out, so the file receives the writes in
// SQLite's order. An error writing the buffer out is returned by the call
// that caused the write-out (for a commit, its sync), and the buffer is
// dropped: its frames belong to a transaction that then fails.
const (
	walVFSName = "schedwal"
	// walBufSize is the buffer of each WAL file, about 30 frames of 4 KiB:
	// the unix VFS writes at most 128 KiB - 1 bytes a call (seekAndWriteFd
	// masks the length with 0x1ffff), and on the development machine 32
	// frames a call already cost 0.6 µs a frame against 4.3.
	walBufSize = 124 << 10
)

// walStats counts the writes SQLite made to WAL files through the buffer
// (taken) and the writes the buffer made to the files (written), for the
// tests.
var walStats struct{ taken, written atomic.Int64 }

// walFile is the sqlite3_file of a WAL file opened through walVFS: the
// buffer's state, followed in the same allocation by the "unix" VFS's own
// file. It lives in SQLite's (C) memory, so it holds no Go pointers.
type walFile struct {
	base sqlite3.Tsqlite3_file // pMethods: walMethods
	buf  uintptr               // walBufSize bytes of C memory
	n    int64                 // bytes in buf
	off  int64                 // the file offset of buf's first byte
}

// walFileSize is sizeof(walFile), rounded up to 8 bytes: the unix file
// follows it.
const walFileSize = (unsafe.Sizeof(walFile{}) + 7) &^ 7

var (
	walVFS     sqlite3.Tsqlite3_vfs
	walMethods sqlite3.Tsqlite3_io_methods
	unixVFS    uintptr // the "unix" VFS, which walVFS wraps
	walVFSErr  error
	walVFSOnce sync.Once
	walVFSZ    = [...]byte{'s', 'c', 'h', 'e', 'd', 'w', 'a', 'l', 0}
)

// registerWALVFS registers walVFS with SQLite, once per process.
func registerWALVFS() error {
	walVFSOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		unixVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
		if unixVFS == 0 {
			walVFSErr = fmt.Errorf("register the %s VFS: SQLite has no default VFS", walVFSName)
			return
		}
		walVFS = *(*sqlite3.Tsqlite3_vfs)(cptr(unixVFS))
		walVFS.FszOsFile += int32(walFileSize)
		walVFS.FpNext = 0
		walVFS.FzName = uintptr(unsafe.Pointer(&walVFSZ[0]))
		walVFS.FxOpen = cfunc(walOpen)
		walMethods = sqlite3.Tsqlite3_io_methods{
			FiVersion:               3,
			FxClose:                 cfunc(walClose),
			FxRead:                  cfunc(walRead),
			FxWrite:                 cfunc(walWrite),
			FxTruncate:              cfunc(walTruncate),
			FxSync:                  cfunc(walSync),
			FxFileSize:              cfunc(walFileSizeOf),
			FxLock:                  cfunc(walLock),
			FxUnlock:                cfunc(walUnlock),
			FxCheckReservedLock:     cfunc(walCheckReservedLock),
			FxFileControl:           cfunc(walFileControl),
			FxSectorSize:            cfunc(walSectorSize),
			FxDeviceCharacteristics: cfunc(walDeviceCharacteristics),
			FxShmMap:                cfunc(walShmMap),
			FxShmLock:               cfunc(walShmLock),
			FxShmBarrier:            cfunc(walShmBarrier),
			FxShmUnmap:              cfunc(walShmUnmap),
			FxFetch:                 cfunc(walFetch),
			FxUnfetch:               cfunc(walUnfetch),
		}
		if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&walVFS)), 0); rc != sqlite3.SQLITE_OK {
			walVFSErr = fmt.Errorf("register the %s VFS: SQLite error %d", walVFSName, rc)
		}
	})
	return walVFSErr
}

// cptr turns an address in SQLite's memory into a pointer (the conversion
// of a pointer's bits, which go vet would flag as a uintptr conversion).
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// cfunc is the C function pointer of a Go function, in the representation
// modernc.org/sqlite's translated C calls (a pointer to the func value; see
// its cFuncPointer).
func cfunc[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f})) }

// gofunc is the Go function a C function pointer of the translated code
// stands for: the inverse of cfunc.
func gofunc[T any](fp uintptr) T { return *(*T)(unsafe.Pointer(&struct{ fp uintptr }{fp})) }

// wf is the walFile at p; unixFile is the unix file inside it, and
// unixMethods the unix file's methods.
func wf(p uintptr) *walFile { return (*walFile)(cptr(p)) }

func unixFile(p uintptr) uintptr { return p + walFileSize }

func unixMethods(p uintptr) *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(cptr((*sqlite3.Tsqlite3_file)(cptr(unixFile(p))).FpMethods))
}

// walOpen opens a file the "unix" way; a WAL file gets a buffer in front of
// it, any other file is the unix file itself.
func walOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	open := gofunc[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32]((*sqlite3.Tsqlite3_vfs)(cptr(unixVFS)).FxOpen)
	if flags&sqlite3.SQLITE_OPEN_WAL == 0 {
		return open(tls, unixVFS, zName, pFile, flags, pOutFlags)
	}
	f := wf(pFile)
	*f = walFile{}
	if rc := open(tls, unixVFS, zName, unixFile(pFile), flags, pOutFlags); rc != sqlite3.SQLITE_OK {
		return rc // f.base.FpMethods is 0: SQLite does not close it
	}
	if (*sqlite3.Tsqlite3_file)(cptr(unixFile(pFile))).FpMethods == 0 {
		return sqlite3.SQLITE_CANTOPEN
	}
	f.buf = libc.Xmalloc(tls, walBufSize)
	if f.buf == 0 {
		gofunc[func(*libc.TLS, uintptr) int32](unixMethods(pFile).FxClose)(tls, unixFile(pFile))
		return sqlite3.SQLITE_NOMEM
	}
	f.base.FpMethods = uintptr(unsafe.Pointer(&walMethods))
	return sqlite3.SQLITE_OK
}

// flush writes the buffer out to the file and empties it, also when the
// write fails.
func flush(tls *libc.TLS, p uintptr) int32 {
	f := wf(p)
	if f.n == 0 {
		return sqlite3.SQLITE_OK
	}
	n, off := f.n, f.off
	f.n = 0
	walStats.written.Add(1)
	return gofunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](unixMethods(p).FxWrite)(tls, unixFile(p), f.buf, int32(n), off)
}

func walWrite(tls *libc.TLS, p, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := wf(p)
	amt := int64(iAmt)
	if f.n > 0 && (iOfst != f.off+f.n || f.n+amt > walBufSize) {
		if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	walStats.taken.Add(1)
	if amt > walBufSize {
		walStats.written.Add(1)
		return gofunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](unixMethods(p).FxWrite)(tls, unixFile(p), zBuf, iAmt, iOfst)
	}
	if f.n == 0 {
		f.off = iOfst
	}
	dst := unsafe.Slice((*byte)(cptr(f.buf)), walBufSize)
	copy(dst[f.n:], unsafe.Slice((*byte)(cptr(zBuf)), amt))
	f.n += amt
	return sqlite3.SQLITE_OK
}

func walClose(tls *libc.TLS, p uintptr) int32 {
	rc := flush(tls, p)
	libc.Xfree(tls, wf(p).buf)
	wf(p).buf = 0
	if rc2 := gofunc[func(*libc.TLS, uintptr) int32](unixMethods(p).FxClose)(tls, unixFile(p)); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	return rc
}

func walRead(tls *libc.TLS, p, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](unixMethods(p).FxRead)(tls, unixFile(p), zBuf, iAmt, iOfst)
}

func walTruncate(tls *libc.TLS, p uintptr, size int64) int32 {
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, int64) int32](unixMethods(p).FxTruncate)(tls, unixFile(p), size)
}

func walSync(tls *libc.TLS, p uintptr, flags int32) int32 {
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, int32) int32](unixMethods(p).FxSync)(tls, unixFile(p), flags)
}

func walFileSizeOf(tls *libc.TLS, p, pSize uintptr) int32 {
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, uintptr) int32](unixMethods(p).FxFileSize)(tls, unixFile(p), pSize)
}

func walLock(tls *libc.TLS, p uintptr, lock int32) int32 {
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, int32) int32](unixMethods(p).FxLock)(tls, unixFile(p), lock)
}

func walUnlock(tls *libc.TLS, p uintptr, lock int32) int32 {
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, int32) int32](unixMethods(p).FxUnlock)(tls, unixFile(p), lock)
}

func walCheckReservedLock(tls *libc.TLS, p, pResOut uintptr) int32 {
	return gofunc[func(*libc.TLS, uintptr, uintptr) int32](unixMethods(p).FxCheckReservedLock)(tls, unixFile(p), pResOut)
}

func walFileControl(tls *libc.TLS, p uintptr, op int32, pArg uintptr) int32 {
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, int32, uintptr) int32](unixMethods(p).FxFileControl)(tls, unixFile(p), op, pArg)
}

func walSectorSize(tls *libc.TLS, p uintptr) int32 {
	return gofunc[func(*libc.TLS, uintptr) int32](unixMethods(p).FxSectorSize)(tls, unixFile(p))
}

func walDeviceCharacteristics(tls *libc.TLS, p uintptr) int32 {
	return gofunc[func(*libc.TLS, uintptr) int32](unixMethods(p).FxDeviceCharacteristics)(tls, unixFile(p))
}

// The shared-memory and memory-map methods belong to database files; a WAL
// file has them only because its methods are a database file's. They pass
// through when the unix file has them.

func walShmMap(tls *libc.TLS, p uintptr, iRegion, szRegion, bExtend int32, pp uintptr) int32 {
	m := unixMethods(p)
	if m.FiVersion < 2 || m.FxShmMap == 0 {
		return sqlite3.SQLITE_IOERR
	}
	return gofunc[func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32](m.FxShmMap)(tls, unixFile(p), iRegion, szRegion, bExtend, pp)
}

func walShmLock(tls *libc.TLS, p uintptr, offset, n, flags int32) int32 {
	m := unixMethods(p)
	if m.FiVersion < 2 || m.FxShmLock == 0 {
		return sqlite3.SQLITE_IOERR
	}
	return gofunc[func(*libc.TLS, uintptr, int32, int32, int32) int32](m.FxShmLock)(tls, unixFile(p), offset, n, flags)
}

func walShmBarrier(tls *libc.TLS, p uintptr) {
	m := unixMethods(p)
	if m.FiVersion < 2 || m.FxShmBarrier == 0 {
		return
	}
	gofunc[func(*libc.TLS, uintptr)](m.FxShmBarrier)(tls, unixFile(p))
}

func walShmUnmap(tls *libc.TLS, p uintptr, deleteFlag int32) int32 {
	m := unixMethods(p)
	if m.FiVersion < 2 || m.FxShmUnmap == 0 {
		return sqlite3.SQLITE_OK
	}
	return gofunc[func(*libc.TLS, uintptr, int32) int32](m.FxShmUnmap)(tls, unixFile(p), deleteFlag)
}

func walFetch(tls *libc.TLS, p uintptr, iOfst int64, iAmt int32, pp uintptr) int32 {
	m := unixMethods(p)
	if m.FiVersion < 3 || m.FxFetch == 0 {
		*(*uintptr)(cptr(pp)) = 0
		return sqlite3.SQLITE_OK
	}
	if rc := flush(tls, p); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return gofunc[func(*libc.TLS, uintptr, int64, int32, uintptr) int32](m.FxFetch)(tls, unixFile(p), iOfst, iAmt, pp)
}

func walUnfetch(tls *libc.TLS, p uintptr, iOfst int64, pPage uintptr) int32 {
	m := unixMethods(p)
	if m.FiVersion < 3 || m.FxUnfetch == 0 {
		return sqlite3.SQLITE_OK
	}
	return gofunc[func(*libc.TLS, uintptr, int64, uintptr) int32](m.FxUnfetch)(tls, unixFile(p), iOfst, pPage)
}
