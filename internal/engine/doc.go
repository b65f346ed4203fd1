// Package engine is sched's scheduler: the control plane that creates and
// changes schedules, the planner that turns schedules into occurrences, and
// the queue that hands occurrences to workers, at least once. It runs on any
// store.Store (SQLite on one node, PostgreSQL on several) and reads time
// only from an injected clock.Clock, so tests drive days of schedule time in
// milliseconds.
//
// The planner. Schedules are spread over N logical shards
// (shard = fnv32a(schedule_id) mod N). A node leases shards (lease with
// owner, expiry and an epoch that grows on every change of owner) and, for
// each shard it holds, reads the ACTIVE schedules whose cursor
// (next_run_at) falls within the horizon, computes their firings with the
// time engine, and commits a batch in one transaction: occurrences
// inserted and enqueued, cursors advanced only if unchanged since read, and
// the whole batch refused if the shard's epoch moved on. Memory holds one
// batch, never all schedules.
//
// Its parts. Engine builds a node in New and runs its background work
// between Start and Stop (PlanOnce runs one planner pass, for tests); the
// API server calls its exported parts:
//
//   - Control, the control plane: create, get, list, pause, resume,
//     update, cancel, trigger, next firing (control.go, manual.go,
//     version.go);
//   - Queue, the queue: claim, ack and claim, heartbeat, ack, nack,
//     replay, the dead-letter queue's replay and purge, and reads of
//     occurrences and attempts (queue.go, ackclaim.go, queuerules.go);
//   - Cluster, this node's view of the cluster and its health: the time
//     it acts on, its clock offset, the node registry, the shard leases,
//     the store errors behind readiness (clusterview.go);
//   - Stats, the cluster-wide figures: the queue's snapshot and the
//     status summed over every node's per-minute figures (stats.go).
//   - Outages, simulated outages: start, cancel and read the one in
//     progress, which pauses planning, claims and the lease sweep on
//     every node (outage.go).
//
// Behind them are the planner (planner.go), the node's membership of the
// cluster (member, cluster.go: registry heartbeat, shard leases and how
// long they are trusted, the clock offset to the store, the store-error
// health), the claim-lease sweeper, the notifier that wakes waiting
// claims, and the observer that counts every event (observe.go). Every
// part holds the store, clock, settings, logger and other parts it uses
// and no pointer back to the Engine.
//
// Changing a schedule. Every update, pause, resume and cancel is one
// transaction that WriteVersion composes from the store's small
// statements (store.ControlTx): lock the version read, cancel the older
// versions' pending occurrences, find the last firing kept, write the new
// version with its cursor, or COMPLETED when nothing is left to fire.
//
// Lateness. A firing found more than max_lateness after its time is a
// misfire and gets the schedule's policy: skip (MISSED), fire_once (the most
// recent fires, in the catch-up lane) or catch_up:K (the most recent K fire,
// oldest first, paced by the tenant's catch-up rate). At most MaxMissedRows
// MISSED rows are written per recovery; the rest are counted on the
// schedule (missed_count), so the reconciler can account for every firing.
//
// The queue. Occurrences live in the store. A claim takes available
// occurrences of a tenant's queue (lanes strict, flexible, catch-up in that
// order) under a visibility lease and starts an Attempt whose number is the
// fencing token; ack and nack must present it. A retryable nack waits with
// exponential backoff and full jitter, bounded by max attempts, the
// occurrence deadline and the tenant's retry budget; past any of them the
// occurrence is DEAD, the dead-letter queue, from which a replay puts it
// back under the same occurrence_id.
//
//	SCHEDULED -> ENQUEUED -> RUNNING -> SUCCEEDED
//	                ^          |  |
//	                |          |  +-> RETRY_WAIT -> (claimable again)
//	                |          +----> DEAD
//	                +---- replay of a DEAD one, same occurrence_id
//	side states: MISSED, CANCELED, SKIPPED_OVERLAP
//
// The built-in queue enqueues at materialization: the planner writes
// occurrences ENQUEUED with available_at in the future (up to the horizon),
// so a top-of-the-hour burst is on the durable queue before its time.
// SCHEDULED is reserved for external targets fed by an outbox.
//
// Retention (retention.go). A loop of its own removes each tenant's
// finished occurrences (not DEAD) scheduled longer ago than its retention,
// in batches, after recording the tenant's history horizon, where the
// reconciler starts its audit (docs/retention.md).
package engine
