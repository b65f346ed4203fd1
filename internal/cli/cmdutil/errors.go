package cmdutil

import (
	"errors"
	"fmt"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/timetable"
)

// Exit statuses: a contract for scripts.
const (
	ExitOK      = 0
	ExitFailure = 1 // anything that is not the caller's fault
	ExitInvalid = 2 // invalid input: a bad flag, field, zone or expression
	// ExitTrouble is the status of diff and reconcile for an error that
	// is not invalid input (schedd unreachable, a refused request): they
	// give 1 its diff(1) meaning, "differences found", so their other
	// failures need another number (FindingsError). Every other command
	// says 1 for those.
	ExitTrouble = 3
)

// UsageError is invalid input: exit status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// UsageErrorf formats invalid input as a UsageError (exit status 2).
func UsageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// StatusError ends schedctl with exit status Status. A Silent one prints
// no error line: the command's output already said what happened (diff's
// "differences found" is a result, not an error).
type StatusError struct {
	Status int
	Err    error
	Silent bool
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// FindingsError is the error of a command whose exit status 1 is a
// result, as diff(1)'s "differences found" is (diff, reconcile): invalid
// input keeps status 2, a StatusError its own, and every other error
// (schedd unreachable, a refused request) gets ExitTrouble, so that a
// script can tell "it found something" from "it could not look".
func FindingsError(err error) error {
	var se *StatusError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return err
	case ExitCode(err) == ExitInvalid:
		return &StatusError{Status: ExitInvalid, Err: err}
	}
	return &StatusError{Status: ExitTrouble, Err: err}
}

// ExitCode maps an error to schedctl's exit status, in one place. A
// StatusError says its own status (diff's 1 and 3). schedd's 400 answers
// (invalid_argument, cron_never_fires, invalid_time_zone, bad_request) are
// invalid input too; every other answer, 404 and 409 (conflict, stale
// attempt) included, is a failure.
func ExitCode(err error) int {
	var se *StatusError
	var ue *UsageError
	var ie *timetable.InvalidError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.Status
	case errors.As(err, &ue), errors.As(err, &ie), client.IsInvalid(err):
		return ExitInvalid
	}
	return ExitFailure
}
