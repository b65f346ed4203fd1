// Package limits holds the defaults and limits of a schedule's settings
// (SPEC §9) in one place: the engine applies them, and schedctl checks files
// offline against the same numbers without linking the engine.
package limits

import "time"

// Defaults of a schedule's settings.
const (
	DefaultMaxLateness   = 60 * time.Second
	DefaultMaxAttempts   = 10
	DefaultRetryBase     = time.Second
	DefaultRetryCap      = 5 * time.Minute
	DefaultRetryDeadline = 24 * time.Hour
)

// Limits of a schedule's settings and names.
const (
	MaxCatchUpK        = 1000
	MaxNameLen         = 128
	MaxQueueLen        = 64
	MaxIdempotencyKey  = 256
	MaxSettingDuration = 30 * 24 * time.Hour
	MaxFlexibleWindow  = 24 * time.Hour
	MaxAttempts        = 1000
	MaxPayload         = 256 << 10
)
