package api

// The what-if simulator (POST /v1/simulate): schedd runs its real engine on
// a virtual clock against a private throwaway store and answers what the
// given schedules would have done between From and To, with outages,
// slow or failing workers and nodes down as asked. Nothing touches the
// daemon's own store. docs/simulate.md describes the model.

// SimulateRequest asks for one simulation.
type SimulateRequest struct {
	// Schedules are the schedules to simulate, as a schedules file lists
	// them (a schedule's payload is never delivered and may be left out).
	Schedules []ScheduleRequest `json:"schedules"`
	// From and To bound the simulated time, RFC 3339.
	From string `json:"from"`
	To   string `json:"to"`
	// Outages are windows in which no node plans or hands out work, as if
	// schedd were down.
	Outages []SimWindow `json:"outages,omitempty"`
	// WorkerDuration is how long each attempt takes, a Go duration; 1s
	// when empty. WorkerFailRate is the probability (0 to 1) that an
	// attempt fails with a retryable error.
	WorkerDuration string  `json:"worker_duration,omitempty"`
	WorkerFailRate float64 `json:"worker_fail_rate,omitempty"`
	// Nodes is how many schedd nodes share the store (1 when zero); they
	// are named node-1 to node-N. NodeDown stops one in a window.
	Nodes    int           `json:"nodes,omitempty"`
	NodeDown []SimNodeDown `json:"node_down,omitempty"`
	// Seed seeds every random choice of the simulation (ids, worker
	// failures); the same request with the same seed gives the same
	// answer. 1 when zero.
	Seed int64 `json:"seed,omitempty"`
}

// SimWindow is a window of simulated time, RFC 3339, Start before End.
type SimWindow struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// SimNodeDown stops one node (node-1 to node-N) between Start and End:
// it neither plans, renews its shard leases nor hands out work.
type SimNodeDown struct {
	Node  string `json:"node"`
	Start string `json:"start"`
	End   string `json:"end"`
}

// SimulateResult is what a simulation found.
type SimulateResult struct {
	From           string        `json:"from"`
	To             string        `json:"to"`
	Nodes          int           `json:"nodes"`
	WorkerDuration string        `json:"worker_duration"`
	WorkerFailRate float64       `json:"worker_fail_rate"`
	Seed           int64         `json:"seed"`
	Outages        []SimWindow   `json:"outages"`
	NodeDown       []SimNodeDown `json:"node_down"`
	// Schedules are in the request's order, each with its timeline.
	Schedules []SimSchedule `json:"schedules"`
	// Shards is each shard's lease when the simulation ended, with
	// several nodes (empty with one): an epoch above 1 means the shard
	// changed hands.
	Shards []SimShard `json:"shards"`
	// Summary covers every schedule.
	Summary SimSummary `json:"summary"`
}

// SimSchedule is one schedule's timeline.
type SimSchedule struct {
	Name          string `json:"name"`
	ScheduleID    string `json:"schedule_id"`
	Queue         string `json:"queue"`
	MisfirePolicy string `json:"misfire_policy"`
	OverlapPolicy string `json:"overlap_policy"`
	// Firings are the firings scheduled between From and To, in order.
	Firings []SimFiring `json:"firings"`
	// DSTSkipped lists the wall times of the timetable that a daylight
	// saving gap swallowed (dst_gap skip): they never fire, so they have
	// no firing above.
	DSTSkipped []SimSkipped `json:"dst_skipped"`
	// MissedUncounted is how many more firings were missed than have a
	// MISSED row: the engine writes at most 100 rows per recovery.
	MissedUncounted int64      `json:"missed_uncounted"`
	Summary         SimSummary `json:"summary"`
}

// Outcomes of a simulated firing.
const (
	SimOnTime         = "ON_TIME"         // delivered when due (within the flexible window, if any) and succeeded first time
	SimLate           = "LATE"            // delivered after it was due, in the normal lane, and succeeded first time
	SimCaughtUp       = "CAUGHT_UP"       // missed its time and fired later in the catch-up lane (misfire policy)
	SimMissed         = "MISSED"          // not fired: too late under the misfire policy
	SimSkippedOverlap = "SKIPPED_OVERLAP" // not fired: the previous firing still ran (overlap policy)
	SimRetried        = "RETRIED"         // failed, was retried, and succeeded
	SimDead           = "DEAD"            // failed for good (out of attempts or past its retry deadline)
	SimCanceled       = "CANCELED"        // its schedule moved on before it ran
	SimPending        = "PENDING"         // still open when the simulation ended
)

// SimOutcomes lists every outcome, in the order summaries show them.
var SimOutcomes = []string{SimOnTime, SimLate, SimCaughtUp, SimRetried, SimMissed, SimSkippedOverlap, SimDead, SimCanceled, SimPending}

// SimFiring is one firing of a schedule and what became of it.
type SimFiring struct {
	ScheduledFor string `json:"scheduled_for"`
	Outcome      string `json:"outcome"`
	// Lane is strict, flexible or catchup (a firing fired late by the
	// misfire policy).
	Lane string `json:"lane"`
	// Attempts is how many attempts ran; Retries is Attempts - 1.
	Attempts int `json:"attempts"`
	Retries  int `json:"retries"`
	// FirstClaimedAt is when a worker first got it, FinishedAt when it
	// ended; null when it never was, or has not.
	FirstClaimedAt *string `json:"first_claimed_at"`
	FinishedAt     *string `json:"finished_at"`
	// LagMS is the delivery lag, FirstClaimedAt - ScheduledFor in
	// milliseconds; null when it was never delivered. LatenessMS is the
	// part of it beyond the schedule's flexible window (0 when on time).
	LagMS      *int64 `json:"lag_ms"`
	LatenessMS *int64 `json:"lateness_ms"`
	// DeadReason says why a DEAD firing is dead.
	DeadReason string `json:"dead_reason,omitempty"`
	// Note is the time engine's note on a firing moved or doubled by a
	// daylight saving change (gap_shifted, repeat_first, repeat_last,
	// repeat_all, offset_changed); empty for an ordinary one.
	Note string `json:"note,omitempty"`
	// Cause is, for a gap or repeat note, what moved the clock: "dst", or
	// "zone_change" when the zone's offset moved for another reason (a new
	// standard offset, a jump across the date line).
	Cause string `json:"cause,omitempty"`
}

// SimSkipped is a wall time that did not exist: Wall is local, without an
// offset; GapEnd is the first instant after the gap; Cause is "dst" or
// "zone_change", as SimFiring's.
type SimSkipped struct {
	Wall   string `json:"wall_time"`
	GapEnd string `json:"gap_end"`
	Cause  string `json:"cause,omitempty"`
}

// SimSummary counts outcomes and measures delivery lag.
type SimSummary struct {
	Firings int `json:"firings"`
	// Outcomes counts firings by outcome; every outcome is listed, zero
	// or not.
	Outcomes map[string]int `json:"outcomes"`
	// Lag is the delivery lag of the firings delivered, in milliseconds
	// (nearest-rank percentiles; all 0 when none was).
	Lag SimLag `json:"lag_ms"`
}

// SimLag is a distribution of delivery lags, in milliseconds.
type SimLag struct {
	P50 int64 `json:"p50"`
	P95 int64 `json:"p95"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// SimShard is a shard's lease at the end of a simulation.
type SimShard struct {
	Shard int    `json:"shard"`
	Owner string `json:"owner"`
	Epoch int64  `json:"epoch"`
}
