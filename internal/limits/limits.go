// Package limits is the old home of a schedule's defaults and limits,
// which now live in package schedule with the rules that apply them.
//
// Deprecated: use package schedule. This package only forwards its
// numbers, so that schedctl's checks keep building until they use package
// schedule too; then it is deleted.
package limits

import "github.com/sched-dev/sched/internal/schedule"

// Defaults of a schedule's settings.
const (
	DefaultMaxLateness   = schedule.DefaultMaxLateness
	DefaultMaxAttempts   = schedule.DefaultMaxAttempts
	DefaultRetryBase     = schedule.DefaultRetryBase
	DefaultRetryCap      = schedule.DefaultRetryCap
	DefaultRetryDeadline = schedule.DefaultRetryDeadline
)

// Limits of a schedule's settings and names.
const (
	MaxCatchUpK        = schedule.MaxCatchUpK
	MaxNameLen         = schedule.MaxNameLen
	MaxQueueLen        = schedule.MaxQueueLen
	MaxIdempotencyKey  = schedule.MaxIdempotencyKey
	MaxSettingDuration = schedule.MaxSettingDuration
	MaxFlexibleWindow  = schedule.MaxFlexibleWindow
	MaxAttempts        = schedule.MaxAttempts
	MaxPayload         = schedule.MaxPayload
)
