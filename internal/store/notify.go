package store

// Channels of the notifications a store may send between nodes that share
// a database (the PostgreSQL store's LISTEN/NOTIFY), declared here so the
// engine can act on them without importing a driver.
const (
	// NotifyWork: occurrences may have become claimable sooner than a
	// waiting claim would know.
	NotifyWork = "sched_work"
	// NotifyPlan: a schedule was created or changed; planners should run a
	// pass now rather than at their next tick.
	NotifyPlan = "sched_plan"
)

// Notification is one notification from a store's subscription. Channel
// is NotifyWork or NotifyPlan, or "" after the subscription (re)connected:
// notifications sent while it was down are lost, so the receiver acts as
// if both channels had fired.
type Notification struct {
	Channel string
}
