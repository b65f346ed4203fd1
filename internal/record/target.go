package record

import (
	"strings"
	"time"
)

// TargetKind names the system a target delivers into.
type TargetKind string

// Target kinds. Each has its own package under internal/target.
const (
	TargetNATS    TargetKind = "nats"    // a NATS JetStream subject
	TargetWebhook TargetKind = "webhook" // an HTTP endpoint, Standard Webhooks
)

// Target is a tenant's named place outside sched that its schedules'
// firings are delivered into, instead of the built-in queue: the
// credentials live here once, not in every schedule that names it.
type Target struct {
	TenantID string
	Name     string // unique within the tenant
	Kind     TargetKind
	// Config is the kind's settings as a JSON object (a subject, a URL,
	// headers): what the kind's package reads, never a secret.
	Config []byte
	// Secret is the target's signing key or password ("" for none). It
	// leaves schedd once, in the answer to the create that made it, and
	// is never shown again.
	Secret    string
	Version   int64 // 1 at create, one more at each update
	CreatedAt time.Time
	UpdatedAt time.Time
}

// targetQueuePrefix starts the queue of a target's firings. No queue a
// caller names can start with it (schedule.CheckNewQueue takes letters,
// digits and . _ - : only), so a worker can never claim a target's
// firings, and no user queue can be mistaken for a target's.
const targetQueuePrefix = "@"

// TargetQueue is the queue the firings of a schedule that names target
// wait in for the relay: each target's firings are a queue of their own,
// claimed, retried and dead-lettered by the queue's rules.
func TargetQueue(target string) string { return targetQueuePrefix + target }

// QueueTarget is the target whose firings queue holds, and whether it is
// a target's queue at all.
func QueueTarget(queue string) (string, bool) {
	if name, ok := strings.CutPrefix(queue, targetQueuePrefix); ok && name != "" {
		return name, true
	}
	return "", false
}
