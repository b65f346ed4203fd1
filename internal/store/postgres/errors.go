package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
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
	codeAdminShutdown       = "57P01"
	codeCrashShutdown       = "57P02"
	codeCannotConnectNow    = "57P03"
	codeTooManyConnections  = "53300"
	classConnection         = "08" // connection exception: the whole class
)

// translate is the one place where PostgreSQL's native errors become the
// store's sentinel errors. The result wraps both, so errors.Is finds the
// sentinel and errors.As still finds the *pgconn.PgError with its code.
// A connection that cannot be made or was lost (refused, reset, closed,
// the server shutting down) is ErrUnavailable, unless the caller's context
// ended first: that is the context's error, left as it is. Other errors
// without a sentinel (a CHECK constraint, a closed pool) are returned
// unchanged: they are bugs, not outcomes the engine handles as such.
//
// Serialization failures cannot happen under the READ COMMITTED this store
// runs at, but a database whose default is SERIALIZABLE, or a
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
		if connectionLost(err) {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		return err
	}
	var sentinel error
	switch pe.Code {
	case codeAdminShutdown, codeCrashShutdown, codeCannotConnectNow, codeTooManyConnections:
		sentinel = store.ErrUnavailable
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
	if sentinel == nil && strings.HasPrefix(pe.Code, classConnection) {
		sentinel = store.ErrUnavailable
	}
	if sentinel == nil {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

// connectionLost reports whether err, not a server's error, says that no
// connection could be had or that the one in use went away: pgx's connect
// and closed-connection errors, and the network's (reset, refused, broken
// pipe, end of stream). An error caused by the caller's context is not:
// the request was given up, the store did not fail it.
func connectionLost(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.Is(err, pgconn.ErrConnClosed) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// codec is what the drivers' shared code (rowcodec) knows of this one's
// errors.
var codec = rowcodec.Codec{NoRows: pgx.ErrNoRows, Translate: translate}
