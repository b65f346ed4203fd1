package api

import "time"

// ReconcileCounts counts the firings and occurrences of a reconcile by
// class (docs/api.md, reconcile, says what each class means). Absent and
// Unexpected are the problems.
type ReconcileCounts struct {
	Succeeded        int `json:"succeeded"`
	Dead             int `json:"dead"`
	Canceled         int `json:"canceled"`
	Missed           int `json:"missed"`
	MissedCounted    int `json:"missed_counted"`
	SkippedOverlap   int `json:"skipped_overlap"`
	Pending          int `json:"pending"`
	Absent           int `json:"absent"`
	CanceledByChange int `json:"canceled_by_change"`
	Manual           int `json:"manual"`
	Unexpected       int `json:"unexpected"`
	// Unverifiable counts the firings and occurrences that would have
	// been absent or unexpected, of a cron schedule whose zone's rules
	// under the tz database its shard was planned with differ from the
	// reconciler's (see ReconcileTZWarning): not a problem, not verified.
	Unverifiable int `json:"unverifiable"`
}

// ReconcileSchedule is one schedule's summary.
type ReconcileSchedule struct {
	TenantID   string `json:"tenant_id"`
	ScheduleID string `json:"schedule_id"`
	Name       string `json:"name"`
	Versions   int    `json:"versions"` // version rows read
	ReconcileCounts
}

// ReconcileFinding is one firing or occurrence worth naming: an absent
// firing, an unexpected occurrence, or a manual one.
type ReconcileFinding struct {
	TenantID     string    `json:"tenant_id"`
	ScheduleID   string    `json:"schedule_id"`
	Name         string    `json:"name"`
	Version      int64     `json:"version"`
	ScheduledFor time.Time `json:"scheduled_for"`
	// OccurrenceID is the row's id, or for an absent firing the id its
	// row would have had.
	OccurrenceID string `json:"occurrence_id"`
	State        string `json:"state"` // the row's state; "" when there is no row
	Reason       string `json:"reason"`
}

// ReconcileReport is the answer of GET /v1/reconcile and the JSON of
// `schedd reconcile` and `schedctl reconcile`: what each schedule's
// timetable promised in [From, To] against what its occurrences record.
type ReconcileReport struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// CompleteFrom, when set, is after From: retention may have removed
	// finished occurrences before it (it is the latest history horizon of
	// the tenants audited, plus an hour's slack), so the audit looked at
	// each tenant from its own horizon (plus the slack) on, and the
	// history is complete from CompleteFrom.
	CompleteFrom *time.Time          `json:"complete_from,omitempty"`
	Totals       ReconcileCounts     `json:"totals"`
	Schedules    []ReconcileSchedule `json:"schedules"`
	Absent       []ReconcileFinding  `json:"absent"`
	// Unexpected holds the occurrences no version explains, and the
	// firings of a late run that broke its misfire policy.
	Unexpected []ReconcileFinding `json:"unexpected"`
	Manual     []ReconcileFinding `json:"manual"`
	// Problem is true when anything is absent or unexpected.
	Problem bool `json:"problem"`
	// TZVersion is the tz database version the reconciler computed the
	// expected firings under.
	TZVersion string `json:"tz_version"`
	// TZWarnings name the zones whose rules differ between the tz version
	// the store's shards were planned under and TZVersion; their
	// schedules' would-be findings are in Unverifiable.
	TZWarnings []ReconcileTZWarning `json:"tz_warnings"`
	// Unverifiable holds the firings and occurrences that would have been
	// absent or unexpected, of a schedule in a zone of TZWarnings: they
	// may be the rules' difference rather than a lost or stray firing.
	Unverifiable []ReconcileFinding `json:"unverifiable"`
}

// ReconcileTZWarning is one zone whose rules the reconciler cannot check
// a store's firings against: the store's shards were planned under tz
// database version StoreTZVersion, the reconciler has TZVersion loaded,
// and the zone's rules differ between the two (or the store recorded none
// of the zone for StoreTZVersion).
type ReconcileTZWarning struct {
	Zone           string `json:"zone"`
	StoreTZVersion string `json:"store_tz_version"`
	TZVersion      string `json:"tz_version"`
	Shards         []int  `json:"shards"`       // the shards recorded under StoreTZVersion that hold such schedules
	Schedules      int    `json:"schedules"`    // the zone's cron schedules audited on those shards
	Unverifiable   int    `json:"unverifiable"` // their firings and occurrences counted unverifiable
	Message        string `json:"message"`      // a sentence for people; not a contract
}
