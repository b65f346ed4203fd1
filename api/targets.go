package api

import (
	"encoding/json"
	"time"
)

// Target is one of a tenant's targets as shown: never its secret.
type Target struct {
	Name   string          `json:"name"`
	Tenant string          `json:"tenant"`
	Kind   string          `json:"kind"`   // nats | webhook
	Config json.RawMessage `json:"config"` // the kind's settings (docs/api.md, targets)
	// SecretSet says the target has a secret (a webhook's signing key),
	// which is shown once, when it is made, and never again.
	SecretSet bool      `json:"secret_set"`
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TargetList is every target of the caller's tenant, by name.
type TargetList struct {
	Targets []Target `json:"targets"`
}

// TargetRequest creates a target (POST /v1/targets: Name required) or
// replaces one's settings (PUT /v1/targets/{name}: Name empty or the
// same). Config is the kind's settings, a JSON object. Secret, when
// given, is the signing key to use (a webhook's whsec_…); a create
// without one makes one, an update without one keeps the stored one
// unless RotateSecret asks for a new one.
type TargetRequest struct {
	Name         string          `json:"name,omitempty"`
	Kind         string          `json:"kind"`
	Config       json.RawMessage `json:"config"`
	Secret       string          `json:"secret,omitempty"`
	RotateSecret bool            `json:"rotate_secret,omitempty"`
}

// TargetSaved answers a create or an update. Secret is the target's
// secret when this change made or took a new one: shown this once.
type TargetSaved struct {
	Target Target `json:"target"`
	Secret string `json:"secret,omitempty"`
}

// TargetTest answers POST /v1/targets/{name}/test: how one test firing's
// delivery went.
type TargetTest struct {
	Delivered bool `json:"delivered"`
	// Permanent says the target refused it for good (a webhook's 4xx);
	// otherwise a failure would be retried.
	Permanent bool   `json:"permanent"`
	Error     string `json:"error,omitempty"`
	// RetryAfterSeconds is the wait the target asked for, 0 for none.
	RetryAfterSeconds float64 `json:"retry_after_seconds,omitempty"`
	OccurrenceID      string  `json:"occurrence_id"` // the test firing's id
}
