package api

import "time"

// SimulateOutageRequest starts a simulated outage (POST
// /v1/simulate/outage): every node stops planning and answers claims with
// nothing for For, then resumes as after a real outage, so that the
// schedules' misfire policies can be rehearsed.
type SimulateOutageRequest struct {
	// For is how long it lasts, a duration such as "10m": 1s to 24h.
	For string `json:"for"`
	// Shards limits it to these shards' planning and claims; empty or
	// absent: every shard.
	Shards []int `json:"shards,omitempty"`
}

// SimulatedOutage is one simulated outage.
type SimulatedOutage struct {
	ID int64 `json:"id"`
	// Shards are the shards it stops, ascending; empty: every shard.
	Shards    []int     `json:"shards"`
	StartedAt time.Time `json:"started_at"`
	EndsAt    time.Time `json:"ends_at"`
	// CanceledAt is when it was ended early (a cancel, or a node that
	// started); null while not.
	CanceledAt *time.Time `json:"canceled_at"`
	// CreatedBy is the node that took the request.
	CreatedBy string `json:"created_by"`
	// Active is whether it is in progress at the answer's now; Remaining
	// is how long it still lasts then ("0s" when not active).
	Active    bool   `json:"active"`
	Remaining string `json:"remaining"`
}

// SimulatedOutageStatus answers every /v1/simulate/outage route: the
// daemon's now and the outage the request concerns (the one in progress,
// the one just started, or the one just canceled); null when there is
// none.
type SimulatedOutageStatus struct {
	Now    time.Time        `json:"now"`
	Outage *SimulatedOutage `json:"outage"`
}
