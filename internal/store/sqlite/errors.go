package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// ErrInUse is returned by Open when another Store, in this process or
// another, already has the database file open. SQLite itself would let a
// second daemon in; sched refuses it, because two daemons would each
// believe they own the schedules and the queue.
var ErrInUse = errors.New("database is in use by another sched process")

// translate is the one place where SQLite's native errors become the
// store's sentinel errors. The result wraps both, so errors.Is finds the
// sentinel and errors.As still finds the *sqlite.Error with its code.
// Errors without a sentinel (a CHECK constraint, a closed database) are
// returned unchanged: they are bugs or shutdowns, not outcomes the engine
// handles.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	var sentinel error
	switch code := se.Code(); code & 0xff { // primary code; Code is the extended one
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		sentinel = store.ErrBusy
	case sqlite3.SQLITE_FULL:
		sentinel = store.ErrStoreFull
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		sentinel = store.ErrCorrupt
	case sqlite3.SQLITE_CONSTRAINT:
		switch code {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			sentinel = store.ErrConflict
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			// The referenced parent does not exist for this tenant.
			sentinel = store.ErrNotFound
		}
	}
	if sentinel == nil {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

// codec is what the drivers' shared code (rowcodec) knows of this one's
// errors.
var codec = rowcodec.Codec{NoRows: sql.ErrNoRows, Translate: translate}
