package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sched-dev/sched/internal/store"
)

// SQLSTATE codes translate recognises (PostgreSQL, Appendix A).
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeSerialization       = "40001"
	codeDeadlock            = "40P01"
	codeLockNotAvailable    = "55P03"
	codeDiskFull            = "53100"
	codeDataCorrupted       = "XX001"
	codeIndexCorrupted      = "XX002"
)

// translate is the one place where PostgreSQL's native errors become the
// store's sentinel errors. The result wraps both, so errors.Is finds the
// sentinel and errors.As still finds the *pgconn.PgError with its code.
// Errors without a sentinel (a CHECK constraint, a closed pool, a dropped
// connection) are returned unchanged: they are bugs or outages, not
// outcomes the engine handles as such.
//
// Serialization failures cannot happen under the READ COMMITTED this store
// runs at (correctness rests on conditional writes and row locks, not on
// isolation), but a database whose default is SERIALIZABLE, or a
// future statement, must still surface them as retryable.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	var sentinel error
	switch pe.Code {
	case codeUniqueViolation:
		sentinel = store.ErrConflict
	case codeForeignKeyViolation:
		// The referenced parent does not exist for this tenant.
		sentinel = store.ErrNotFound
	case codeSerialization, codeDeadlock, codeLockNotAvailable:
		sentinel = store.ErrBusy
	case codeDiskFull:
		sentinel = store.ErrStoreFull
	case codeDataCorrupted, codeIndexCorrupted:
		sentinel = store.ErrCorrupt
	}
	if sentinel == nil {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}
