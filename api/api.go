// Package api holds the wire types of schedd's HTTP/JSON API (/v1): the
// request and response bodies and the catalogue of error codes. The daemon
// (internal/server) and the client package share them, so the two cannot
// drift apart. docs/api.md lists every route with these bodies.
//
// Conventions: times are RFC 3339 strings in UTC ("2027-03-14T07:00:00Z");
// durations are Go duration strings ("90s", "1m30s", "24h"); an absent
// optional time is null. Field names are snake_case and stable: scripts
// depend on them.
package api

import (
	"encoding/json"
	"time"
)

// Version is the API version in every path (/v1/...).
const Version = "v1"

// ScheduleRequest creates or updates a schedule. Exactly one of Cron, At
// and Every is set. Empty optional fields take the defaults docs/api.md lists;
// an update replaces every field (it is a PUT), so send the whole
// schedule.
type ScheduleRequest struct {
	Name  string `json:"name" yaml:"name"`
	Queue string `json:"queue" yaml:"queue"`
	// Target names one of the tenant's targets (docs/api.md, targets):
	// the firings are delivered there instead of a queue. A schedule has
	// a queue or a target, not both.
	Target string `json:"target,omitempty" yaml:"target,omitempty"`

	Cron     string `json:"cron,omitempty" yaml:"cron,omitempty"`
	At       string `json:"at,omitempty" yaml:"at,omitempty"`       // RFC 3339, any offset
	Every    string `json:"every,omitempty" yaml:"every,omitempty"` // Go duration, whole seconds
	TimeZone string `json:"time_zone,omitempty" yaml:"time_zone,omitempty"`
	Anchor   string `json:"anchor,omitempty" yaml:"anchor,omitempty"` // every only, RFC 3339

	DSTGap    string `json:"dst_gap,omitempty" yaml:"dst_gap,omitempty"`       // skip | shift
	DSTRepeat string `json:"dst_repeat,omitempty" yaml:"dst_repeat,omitempty"` // first | last | all

	// Payload is any JSON value, handed to the worker as is.
	Payload json.RawMessage `json:"payload,omitempty" yaml:"-"`

	MisfirePolicy  string `json:"misfire_policy,omitempty" yaml:"misfire_policy,omitempty"` // skip | fire_once | catch_up:K
	MaxLateness    string `json:"max_lateness,omitempty" yaml:"max_lateness,omitempty"`
	OverlapPolicy  string `json:"overlap_policy,omitempty" yaml:"overlap_policy,omitempty"` // allow | skip_if_running | queue_one
	FlexibleWindow string `json:"flexible_window,omitempty" yaml:"flexible_window,omitempty"`

	MaxAttempts   int    `json:"max_attempts,omitempty" yaml:"max_attempts,omitempty"`
	RetryBase     string `json:"retry_base,omitempty" yaml:"retry_base,omitempty"`
	RetryCap      string `json:"retry_cap,omitempty" yaml:"retry_cap,omitempty"`
	RetryDeadline string `json:"retry_deadline,omitempty" yaml:"retry_deadline,omitempty"`

	// IdempotencyKey makes a create safe to retry: the same key and body
	// return the first schedule; the same key with another body is a
	// conflict. Ignored by update.
	IdempotencyKey string `json:"idempotency_key,omitempty" yaml:"-"`
}

// Schedule is a schedule as stored.
type Schedule struct {
	ScheduleID string `json:"schedule_id"`
	Name       string `json:"name"`
	Version    int64  `json:"version"`
	State      string `json:"state"` // ACTIVE | PAUSED | CANCELED | COMPLETED
	// NextFireAt is the next firing not yet delivered: the earliest
	// occurrence of the current version still waiting for its first claim
	// (it may be overdue), else the planner's cursor. Null when the
	// schedule will not fire again. Preview starts with it.
	NextFireAt *time.Time `json:"next_fire_at"`
	// NextRunAt is the planner's cursor: the next firing not yet
	// materialized. The planner materializes up to a horizon ahead, so it
	// is usually past NextFireAt.
	NextRunAt *time.Time `json:"next_run_at"`

	Kind       string `json:"kind"`       // cron | at | every
	Expression string `json:"expression"` // the cron expression, instant or interval
	TimeZone   string `json:"time_zone"`
	Anchor     string `json:"anchor,omitempty"`
	DSTGap     string `json:"dst_gap"`
	DSTRepeat  string `json:"dst_repeat"`

	Queue   string          `json:"queue"`            // "" when Target is set
	Target  string          `json:"target,omitempty"` // the target its firings are delivered into
	Payload json.RawMessage `json:"payload,omitempty"`

	MisfirePolicy  string `json:"misfire_policy"` // catch_up:K spelled out
	MaxLateness    string `json:"max_lateness"`
	OverlapPolicy  string `json:"overlap_policy"`
	FlexibleWindow string `json:"flexible_window"`
	MaxAttempts    int    `json:"max_attempts"`
	RetryBase      string `json:"retry_base"`
	RetryCap       string `json:"retry_cap"`
	RetryDeadline  string `json:"retry_deadline"`

	MissedCount int64     `json:"missed_count"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`

	// Preview is the next firings (5 by default) from now, with local
	// times and DST notes; empty for a schedule that will not fire.
	Preview []Firing `json:"preview"`
}

// Firing is one previewed firing.
type Firing struct {
	ScheduledFor time.Time `json:"scheduled_for"`
	Local        string    `json:"local"` // RFC 3339 with the zone's offset
	Note         string    `json:"note,omitempty"`
}

// ScheduleList is a page of schedules. NextPage is the token for the next
// page (the page query parameter); empty on the last page.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
	NextPage  string     `json:"next_page,omitempty"`
}

// ChangeResult answers pause, resume, update and cancel: the schedule's
// new version and the true counts of older-version occurrences canceled
// and still in flight (claimed ones cannot be recalled).
type ChangeResult struct {
	Schedule Schedule `json:"schedule"`
	Canceled int      `json:"canceled"`
	InFlight int      `json:"in_flight"`
	// DryRun is true in the answer to ?dry_run=true: the change as it
	// would have been made (the new version, what it would cancel), none
	// of it kept.
	DryRun bool `json:"dry_run,omitempty"`
}

// CreateResult answers a create: the schedule, and whether this request
// created it (false when an idempotency key returned an earlier one).
type CreateResult struct {
	Schedule
	Created bool `json:"created"`
	// DryRun is true in the answer to ?dry_run=true: Created then says
	// whether the create would have created the schedule; nothing was
	// kept, and the schedule id shown is not reserved.
	DryRun bool `json:"dry_run,omitempty"`
}

// Occurrence is one scheduled time of one schedule version.
type Occurrence struct {
	OccurrenceID    string     `json:"occurrence_id"`
	ScheduleID      string     `json:"schedule_id"`
	ScheduleVersion int64      `json:"schedule_version"`
	ScheduledFor    time.Time  `json:"scheduled_for"`
	AvailableAt     time.Time  `json:"available_at"`
	EnqueuedAt      *time.Time `json:"enqueued_at"`
	State           string     `json:"state"`
	Lane            string     `json:"lane"`
	Queue           string     `json:"queue"`
	AttemptCount    int        `json:"attempt_count"`
	FirstClaimedAt  *time.Time `json:"first_claimed_at"`
	FinishedAt      *time.Time `json:"finished_at"`

	// Due is false while available_at is still in the future: the
	// occurrence is on the queue but no worker may take it yet.
	Due bool `json:"due"`
	// ScheduleLag is enqueued_at - scheduled_for: how late the planner
	// put it on the queue (negative when it was enqueued ahead of its
	// time, as the planner does within its horizon). Null until enqueued.
	ScheduleLag *string `json:"schedule_lag"`
	// DeliveryLag is first_claimed_at - scheduled_for: how late a worker
	// first had it. Null until first claimed.
	DeliveryLag *string `json:"delivery_lag"`
	// ClaimLag is first_claimed_at - available_at: how long it waited for
	// a worker once it could be taken. Null until first claimed.
	ClaimLag *string `json:"claim_lag"`
	// Waiting is now - available_at for a due occurrence no worker has
	// claimed yet (ENQUEUED, never claimed): how long it has been waiting
	// so far. Null otherwise.
	Waiting *string `json:"waiting"`

	// Manual is true for an occurrence fired by hand (trigger), outside
	// the schedule's timetable.
	Manual bool `json:"manual"`
	// DeadReason says why a DEAD occurrence died: permanent_failure,
	// attempts_exhausted, deadline_passed or retry_budget_exhausted.
	// Empty otherwise (a purged one keeps it).
	DeadReason string `json:"dead_reason,omitempty"`
	// LastError is the error of the latest attempt, as the worker sent it.
	LastError string `json:"last_error,omitempty"`
}

// OccurrenceList is a page of occurrences. NextPage is the token for the
// next page (the page query parameter); empty on the last page.
type OccurrenceList struct {
	Occurrences []Occurrence `json:"occurrences"`
	NextPage    string       `json:"next_page,omitempty"`
}

// AttemptList is a page of an occurrence's attempts, first first.
type AttemptList struct {
	Attempts []Attempt `json:"attempts"`
	NextPage string    `json:"next_page,omitempty"`
}

// TriggerRequest fires a schedule now, once, outside its timetable. The
// same IdempotencyKey (or Idempotency-Key header) makes a retried trigger
// the same occurrence; without one, every trigger is a new occurrence.
type TriggerRequest struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// TriggerResult answers a trigger: the manual occurrence, and whether
// this request created it (false when its key named an earlier one).
type TriggerResult struct {
	Occurrence Occurrence `json:"occurrence"`
	Created    bool       `json:"created"`
}

// DLQFilter selects dead-letter entries for a bulk replay or a purge.
// Both fields are optional; empty matches all.
type DLQFilter struct {
	Schedule string `json:"schedule,omitempty"` // a schedule id or name
	Queue    string `json:"queue,omitempty"`
}

// DLQResult answers a bulk replay or a purge: how many entries it moved,
// and for a replay their ids (each kept its occurrence id). One request
// moves at most MaxDLQBatch entries; More says that the filter may match
// more, and the caller sends the same request again.
type DLQResult struct {
	Count         int      `json:"count"`
	OccurrenceIDs []string `json:"occurrence_ids,omitempty"`
	More          bool     `json:"more"`
}

// MaxDLQBatch is the most entries one bulk replay or purge request moves,
// so that each request is short and its answer small.
const MaxDLQBatch = 1000

// Attempt is one delivery of an occurrence.
type Attempt struct {
	Attempt        int64      `json:"attempt"`
	WorkerID       string     `json:"worker_id"`
	ClaimedAt      time.Time  `json:"claimed_at"`
	LeaseExpiresAt time.Time  `json:"lease_expires_at"`
	FinishedAt     *time.Time `json:"finished_at"`
	Result         string     `json:"result,omitempty"`
	Error          string     `json:"error,omitempty"`
}

// ClaimRequest takes up to Limit occurrences of a queue. Wait makes it a
// long poll: it returns as soon as one is available, or empty after Wait.
//
// Acks acknowledges attempts the worker finished, each as an AckRequest
// would, in the same transaction as the claim: a worker draining a queue
// pays one round trip and one commit per batch instead of one per ack.
// They are committed before a long poll starts waiting, and each has its
// own answer in ClaimResult.Acks: an ack refused (a stale attempt) does
// not refuse the claim, nor the other acks.
type ClaimRequest struct {
	Queue    string    `json:"queue"`
	WorkerID string    `json:"worker_id"`
	Limit    int       `json:"limit,omitempty"` // 1 by default, at most 1000
	Lease    string    `json:"lease,omitempty"` // 30s by default
	Wait     string    `json:"wait,omitempty"`  // 0 by default, at most 5m
	Acks     []AckItem `json:"acks,omitempty"`  // at most 1000
	// AllTenants claims the queue's work of every tenant, shared by
	// their weights (a worker pool serving every tenant); admins only,
	// 403 forbidden otherwise. Each Claimed says its Tenant.
	AllTenants bool `json:"all_tenants,omitempty"`
}

// AckItem names one attempt to acknowledge with a claim.
type AckItem struct {
	OccurrenceID string `json:"occurrence_id"`
	Attempt      int64  `json:"attempt"`
	// Tenant is the occurrence's tenant when it is not the caller's own
	// (a pool worker's acks); only an admin may name another tenant.
	Tenant string `json:"tenant,omitempty"`
}

// AckOutcome is the answer to one AckItem. Error is nil when the ack was
// taken, or had been (a repeated ack succeeds again); otherwise it is what
// POST /v1/occurrences/{id}/ack would have answered (stale_attempt,
// not_found).
type AckOutcome struct {
	OccurrenceID string       `json:"occurrence_id"`
	Attempt      int64        `json:"attempt"`
	Error        *ErrorDetail `json:"error,omitempty"`
}

// Claimed is one delivery to a worker. Attempt is the fencing token to
// present with heartbeat, ack and nack.
type Claimed struct {
	OccurrenceID    string          `json:"occurrence_id"`
	ScheduleID      string          `json:"schedule_id"`
	ScheduleVersion int64           `json:"schedule_version"`
	ScheduledFor    time.Time       `json:"scheduled_for"`
	Attempt         int64           `json:"attempt"`
	LeaseExpiresAt  time.Time       `json:"lease_expires_at"`
	Queue           string          `json:"queue"`
	Payload         json.RawMessage `json:"payload"`
	// Tenant is the occurrence's tenant: the one to name in a pool
	// worker's ack (AckItem.Tenant) and in the HeaderTenant of its
	// heartbeat, ack and nack.
	Tenant string `json:"tenant"`
}

// ClaimResult is the answer to a claim: possibly empty. Acks answers the
// request's Acks, one for each, in their order.
type ClaimResult struct {
	Claimed []Claimed    `json:"claimed"`
	Acks    []AckOutcome `json:"acks,omitempty"`
}

// HeartbeatRequest extends the lease of attempt Attempt.
type HeartbeatRequest struct {
	Attempt int64  `json:"attempt"`
	Lease   string `json:"lease,omitempty"` // 30s by default
}

// HeartbeatResult says until when the lease runs and whether the worker
// should stop: the schedule got a newer version or was canceled.
type HeartbeatResult struct {
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
	Superseded     bool      `json:"superseded"`
	Canceled       bool      `json:"canceled"`
}

// AckRequest acknowledges attempt Attempt.
type AckRequest struct {
	Attempt int64 `json:"attempt"`
}

// NackRequest reports attempt Attempt failed. Class is retryable or
// permanent.
type NackRequest struct {
	Attempt int64  `json:"attempt"`
	Class   string `json:"class"`
	Error   string `json:"error,omitempty"`
}

// Status describes the daemon and, computed from the store, the whole
// cluster's work: any node gives the same figures. Durations are Go
// duration strings; a percentile of a window with no samples is null.
type Status struct {
	Version   string    `json:"version"`
	TZVersion string    `json:"tz_version"`
	NodeID    string    `json:"node_id"`
	Store     string    `json:"store"` // the driver: sqlite or postgres
	Shards    int       `json:"shards"`
	Now       time.Time `json:"now"`

	// StatsAt is when the queue figures were read from the store (they
	// are cached for a few seconds).
	StatsAt time.Time `json:"stats_at"`
	// Nodes are the registered nodes, with the shards each holds.
	Nodes []StatusNode `json:"nodes"`
	// ShardsOwned counts shards with a live lease; the rest wait for a
	// node to take them.
	ShardsOwned int `json:"shards_owned"`

	// Tenant is the tenant whose figures these are, when a tenant asked:
	// then Queues, DueBacklog, OldestReady and DLQSize count the tenant's
	// rows alone, and the figures counted per node across every tenant
	// (ScheduleLag, DeliveryLag, LastHour, Throughput, each node's
	// LastPass) are null. Absent when an admin asked: every figure is the
	// whole cluster's.
	Tenant string `json:"tenant,omitempty"`

	// The lags' percentiles; null for a tenant (see Tenant).
	ScheduleLag *LagWindows `json:"schedule_lag"` // enqueued_at - scheduled_for
	DeliveryLag *LagWindows `json:"delivery_lag"` // first claim - scheduled_for

	// DueBacklog is the firings due in each of 60 clock minutes, the
	// first the current one (its unclaimed firings already due included).
	DueBacklog []BacklogMinute `json:"due_backlog"`
	// Queues is the depth of every queue by lane and state (open states
	// and DEAD), largest first, at most MaxStatusQueues rows;
	// QueuesOmitted counts the smaller ones left out.
	Queues        []QueueDepth `json:"queues"`
	QueuesOmitted int          `json:"queues_omitted"`
	// OldestReady is the ready occurrence that has waited longest for a
	// worker; null when nothing is ready.
	OldestReady *OldestReady `json:"oldest_ready"`
	DLQSize     int64        `json:"dlq_size"`
	// LastHour counts events across the cluster in the last 60 minutes;
	// null for a tenant (see Tenant).
	LastHour *EventCounts `json:"last_hour"`
	// Throughput is claims and acks per second over the last minute;
	// null for a tenant (see Tenant).
	Throughput *Throughput `json:"throughput"`
	// Outage is the simulated outage in progress (schedctl simulate
	// outage); null when none is.
	Outage *SimulatedOutage `json:"outage"`
}

// MaxStatusQueues bounds Status.Queues, so that a status stays small
// however many queues users make.
const MaxStatusQueues = 200

// StatusNode is one registered node and its last planner pass.
type StatusNode struct {
	NodeID        string    `json:"node_id"`
	Address       string    `json:"address"`
	Live          bool      `json:"live"`
	ShardsOwned   int       `json:"shards_owned"`
	ClockOffset   string    `json:"clock_offset"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// LastPass is the node's last planner pass; null before its first,
	// and in a tenant's status (its counts are of every tenant's
	// schedules).
	LastPass *PlannerPass `json:"last_pass"`
}

// PlannerPass is the figures of one planner pass.
type PlannerPass struct {
	At           time.Time `json:"at"`
	Duration     string    `json:"duration"`
	Shards       int       `json:"shards"`       // shards planned
	Schedules    int       `json:"schedules"`    // schedules advanced
	Materialized int       `json:"materialized"` // occurrences written
	Missed       int       `json:"missed"`       // firings found too late (rows and counted)
	// HorizonSlack is how far ahead of its time the latest firing the
	// pass wrote is: near the horizon when the planner keeps up, near or
	// below zero when it falls behind.
	HorizonSlack string `json:"horizon_slack"`
}

// LagWindows is a lag's percentiles over the last minute and hour.
type LagWindows struct {
	LastMinute Percentiles `json:"last_minute"`
	LastHour   Percentiles `json:"last_hour"`
}

// Percentiles summarises a lag histogram: Count samples, and p50, p95
// and p99 read from its buckets (null with no samples).
type Percentiles struct {
	Count int64   `json:"count"`
	P50   *string `json:"p50"`
	P95   *string `json:"p95"`
	P99   *string `json:"p99"`
}

// BacklogMinute is the firings due in one minute.
type BacklogMinute struct {
	Minute time.Time `json:"minute"`
	Due    int64     `json:"due"`
}

// QueueDepth is one queue's occurrences in one lane and state. Ready is,
// of ENQUEUED and RETRY_WAIT ones, those a worker may take now.
type QueueDepth struct {
	Tenant string `json:"tenant"`
	Queue  string `json:"queue"`
	Lane   string `json:"lane"`
	State  string `json:"state"`
	Count  int64  `json:"count"`
	Ready  int64  `json:"ready"`
}

// OldestReady is the ready occurrence that has waited longest.
type OldestReady struct {
	OccurrenceID string    `json:"occurrence_id"`
	ScheduleID   string    `json:"schedule_id"`
	Queue        string    `json:"queue"`
	AvailableAt  time.Time `json:"available_at"`
	Age          string    `json:"age"`
}

// EventCounts counts events over a window.
type EventCounts struct {
	Materialized   int64 `json:"materialized"`
	Missed         int64 `json:"missed"`
	SkippedOverlap int64 `json:"skipped_overlap"`
	Claims         int64 `json:"claims"`
	Acks           int64 `json:"acks"`
	Dead           int64 `json:"dead"`
	Redeliveries   int64 `json:"redeliveries"`
}

// Throughput is per-second rates over the last minute.
type Throughput struct {
	ClaimsPerSecond float64 `json:"claims_per_second"`
	AcksPerSecond   float64 `json:"acks_per_second"`
}

// Cluster is GET /v1/cluster: the nodes registered in the store and who
// holds each shard, as the answering node sees them.
type Cluster struct {
	// NodeID is the node that answered; Now its time (its clock plus its
	// offset to the store's), which Live and Expired are judged at.
	NodeID string        `json:"node_id"`
	Now    time.Time     `json:"now"`
	Nodes  []ClusterNode `json:"nodes"`
	Shards []ShardOwner  `json:"shards"`
}

// ClusterNode is one registered node.
type ClusterNode struct {
	NodeID        string    `json:"node_id"`
	Address       string    `json:"address"` // where it serves the API, as it reported it
	StartedAt     time.Time `json:"started_at"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	ExpiresAt     time.Time `json:"expires_at"`
	Live          bool      `json:"live"`         // its registration has not expired
	ShardsOwned   int       `json:"shards_owned"` // live shard leases it holds
	// ClockOffset is the store's clock minus the node's, as the node last
	// measured it (Go duration; "0s" on SQLite).
	ClockOffset string `json:"clock_offset"`
}

// ShardOwner is one shard's lease. An expired lease keeps its last owner
// and epoch; Owner is empty for a shard never leased.
type ShardOwner struct {
	Shard     int        `json:"shard"`
	Owner     string     `json:"owner"`
	Epoch     int64      `json:"epoch"`
	ExpiresAt *time.Time `json:"expires_at"`
	Live      bool       `json:"live"`
}

// ErrorBody is every error answer: {"error": {...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is a stable code, a message for people, and for validation
// errors the field at fault.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Error codes. Scripts match on these, never on messages.
const (
	CodeInvalidArgument = "invalid_argument"  // 400: a field is wrong (Field names it)
	CodeCronNeverFires  = "cron_never_fires"  // 400: a valid cron expression that can never fire
	CodeInvalidTimeZone = "invalid_time_zone" // 400: not an IANA zone sched accepts
	CodeBadRequest      = "bad_request"       // 400: the body is not the JSON expected
	CodeUnauthorized    = "unauthorized"      // 401: missing or wrong token
	CodeForbidden       = "forbidden"         // 403: the token's role may not do this (an admin's may)
	CodeNotFound        = "not_found"         // 404: no such schedule or occurrence (or not yours)
	CodeConflict        = "conflict"          // 409: a name or idempotency key taken, a state that forbids the change
	CodeStaleAttempt    = "stale_attempt"     // 409: the attempt is not the occurrence's current one
	CodeTooLarge        = "payload_too_large" // 413: body or payload over the limit
	CodeTooManyWaiting  = "too_many_waiting"  // 429: the daemon's cap on waiting claims is reached; retry after Retry-After
	CodeStoreBusy       = "store_busy"        // 503: the store is locked; retry
	CodeStoreDown       = "store_unavailable" // 503: the database cannot be reached or the connection was lost; retry
	CodeUnavailable     = "unavailable"       // 503: shutting down or not ready
	CodeStoreFull       = "store_full"        // 507: the store is out of space; nothing was written
	CodeInternal        = "internal"          // 500
	CodeRateLimited     = "rate_limited"      // 429: the tenant's API request rate quota is spent; retry after Retry-After
	CodeQuotaExceeded   = "quota_exceeded"    // 429: a tenant's quota refused the request (the message names it and its value); retry after Retry-After when given
)

// ErrorKind is one error answer: its HTTP status and its stable code.
type ErrorKind struct {
	Status int
	Code   string
}

// Errors is every error answer schedd gives, status and code. A code
// keeps its status; the two 400s of a method or a body (405 bad_request)
// are the one code answered with two statuses. docs/api.md's table of
// errors lists exactly these, and the server's tests refuse an answer not
// among them.
var Errors = []ErrorKind{
	{400, CodeInvalidArgument},
	{400, CodeCronNeverFires},
	{400, CodeInvalidTimeZone},
	{400, CodeBadRequest},
	{401, CodeUnauthorized},
	{403, CodeForbidden},
	{404, CodeNotFound},
	{405, CodeBadRequest},
	{409, CodeConflict},
	{409, CodeStaleAttempt},
	{413, CodeTooLarge},
	{429, CodeTooManyWaiting},
	{429, CodeRateLimited},
	{429, CodeQuotaExceeded},
	{500, CodeInternal},
	{503, CodeStoreBusy},
	{503, CodeStoreDown},
	{503, CodeUnavailable},
	{507, CodeStoreFull},
}

// HeaderTenant names the tenant an admin acts as on an occurrence's routes
// (heartbeat, ack, nack, ...): a pool worker finishing another tenant's
// occurrence. Honoured for admins only; anyone else naming a tenant not
// their own is refused 403 forbidden.
const HeaderTenant = "Sched-Tenant"
