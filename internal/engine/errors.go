package engine

import (
	"errors"
	"fmt"

	"github.com/sched-dev/sched/internal/spec"
	"github.com/sched-dev/sched/internal/store"
)

// Errors the engine returns; test with errors.Is. The API maps each to a
// stable code.
var (
	ErrNotFound     = store.ErrNotFound     // no such schedule or occurrence for this tenant
	ErrConflict     = store.ErrConflict     // idempotency key reused with another body, a name taken, a state that forbids the change
	ErrStaleAttempt = store.ErrStaleAttempt // an ack, nack or heartbeat with an old attempt number
)

// ValidationError is bad input: Field names the part that is wrong, in
// the API's spelling (cron, time_zone, payload, ...), and Message is the
// whole sentence, naming it too.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Message }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// fromSpec turns the time engine's InvalidError into a ValidationError.
func fromSpec(err error) error {
	var ie *spec.InvalidError
	if errors.As(err, &ie) {
		return &ValidationError{Field: ie.Field, Message: ie.Msg}
	}
	return err
}
