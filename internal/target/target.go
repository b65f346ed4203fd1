// Package target is the seam between the relay and the systems a firing
// can be delivered into besides the built-in queue: a NATS JetStream
// stream (target/nats), an HTTP endpoint (target/webhook). The relay
// (engine) claims the firings of a target's schedules from the queue like
// any worker, hands them to the target's Sender in bulk, and records each
// Outcome as an ack or a nack, so retries, the dead-letter queue, replay,
// overlap, fairness and quotas are the queue's rules, written once.
//
// A Sender knows nothing of the store: it delivers and says how it went.
// Delivery is at least once: after a crash between a target's acceptance
// and the relay's ack, the same firing is sent again under the same
// OccurrenceID, which each target turns into its own deduplication key
// (JetStream's Nats-Msg-Id, a webhook's webhook-id).
package target

import (
	"context"
	"time"
)

// Firing is one occurrence as a target receives it.
type Firing struct {
	OccurrenceID    string // the deduplication key, stable across redeliveries
	TenantID        string
	ScheduleID      string
	ScheduleVersion int64
	ScheduledFor    time.Time // the firing's instant, UTC
	Attempt         int64     // the delivery attempt, from 1
	Payload         []byte    // the schedule's payload, as given (JSON)
}

// Outcome is how one firing's delivery went. The zero Outcome is
// delivered: the target accepted the firing durably.
type Outcome struct {
	// Err is why the firing was not delivered; nil when it was.
	Err error
	// Permanent says the target refused the firing for good (a webhook's
	// 4xx other than 408 and 429): the occurrence goes to the dead-letter
	// queue with Err as its reason, instead of being retried.
	Permanent bool
	// RetryAfter is the least wait the target asked for before the next
	// attempt (a webhook's Retry-After), zero when it asked for none.
	RetryAfter time.Duration
}

// Delivered reports whether the target accepted the firing.
func (o Outcome) Delivered() bool { return o.Err == nil }

// Sender delivers firings to one target.
type Sender interface {
	// Send delivers fs, in bulk where the target allows it, and returns
	// one Outcome per firing, in the order of fs. It returns once every
	// firing has an outcome; when ctx ends first, the firings without one
	// get a retryable Outcome saying so. Send may be called from several
	// goroutines at once.
	Send(ctx context.Context, fs []Firing) []Outcome
	// Close releases the sender's connections. Sends after Close fail.
	Close() error
}
