package engine

import "github.com/sched-dev/sched/internal/store"

// Errors the engine returns; test with errors.Is. The API maps each to a
// stable code. Bad input is a *schedule.ValidationError naming the field.
var (
	ErrNotFound     = store.ErrNotFound     // no such schedule or occurrence for this tenant
	ErrConflict     = store.ErrConflict     // idempotency key reused with another body, a name taken, a state that forbids the change
	ErrStaleAttempt = store.ErrStaleAttempt // an ack, nack or heartbeat with an old attempt number
)
