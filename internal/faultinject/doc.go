// Package faultinject holds the crash points of sched's crash tests, which
// kill a process between two durable steps, restart it on the same database
// and check that no firing is lost, none is stored twice, and each is
// delivered under one occurrence id. Code between two durable steps calls
// Crash with the point's name. In a normal build Crash does nothing and
// costs nothing. In a build with the tag faultinject, the environment
// variable SCHED_CRASH_AT (a comma list of POINT:N) makes the process kill
// itself with SIGKILL the Nth time it reaches POINT, so a test can stop a
// real process at an exact place between two writes and then restart it on
// the same database.
package faultinject

// Crash points. Each names the moment just after the step it is named for
// (or just before, for the "before" ones).
const (
	PlanBeforeInsert  = "plan.before-insert"  // planner: firings computed, nothing written
	PlanAfterCommit   = "plan.after-commit"   // planner: occurrences and cursor committed
	PlanAfterEnqueue  = "plan.after-enqueue"  // planner: committed, waiting claims woken
	ClaimAfterCommit  = "claim.after-commit"  // queue: claim committed, not yet returned
	LeaseRenew        = "lease.renew"         // planner: shard lease renewed, not yet used
	WorkerAfterEffect = "worker.after-effect" // a worker: effect done, not yet acked

	RunBeforeCommit = "run.before-commit" // queue: a run's lease row written, its claim not committed
	AckAfterAppend  = "ack.after-append"  // queue: acks appended to a run's log, not committed
	AckAfterCommit  = "ack.after-commit"  // queue: a batch of acks committed, not yet answered
	FoldMiddle      = "fold.middle"       // fold: part of a run's rows written, the run not deleted
	FoldAfterCommit = "fold.after-commit" // fold: a background fold committed

	RelayAfterSend = "relay.after-send" // relay: a batch accepted by its target, not yet acked

	RetentionAfterHorizon = "retention.after-horizon" // retention: a tenant's horizon written, nothing deleted
	RetentionAfterBatch   = "retention.after-batch"   // retention: one batch of deletes committed
)
