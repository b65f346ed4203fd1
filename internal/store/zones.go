package store

import (
	"context"
	"slices"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// ZoneRule is one time zone's rules in one tz database version: their
// fingerprint (timetable.ZoneFingerprint). TZVersion is the label the
// engine gives the rules a node loaded (engine/tzreload.go): the tz
// database's version string, or that string with a suffix when the
// node's database was rebuilt with other rules under the same version, so
// that one label names one set of rules on every node.
type ZoneRule struct {
	Zone        string
	TZVersion   string
	Fingerprint string
}

// RecordedRules are recorded zone rules (ZoneStore.ZoneRules) by zone
// and tz version, for the one comparison every reader of them makes.
type RecordedRules map[[2]string]string

// IndexZoneRules indexes rules by zone and version.
func IndexZoneRules(rules []ZoneRule) RecordedRules {
	out := make(RecordedRules, len(rules))
	for _, r := range rules {
		out[[2]string{r.Zone, r.TZVersion}] = r.Fingerprint
	}
	return out
}

// Fingerprint returns the fingerprint recorded for zone under version.
func (r RecordedRules) Fingerprint(zone, version string) (string, bool) {
	fp, ok := r[[2]string{zone, version}]
	return fp, ok
}

// Zones returns, in order, the zones recorded under version.
func (r RecordedRules) Zones(version string) []string {
	var out []string
	for k := range r {
		if k[1] == version {
			out = append(out, k[0])
		}
	}
	slices.Sort(out)
	return out
}

// Changed reports whether zone's rules under version differ from loaded,
// its fingerprint under the rules in use. A zone with nothing recorded for
// version counts as changed: nothing says the two agree. known says
// whether anything was recorded.
func (r RecordedRules) Changed(zone, version, loaded string) (changed, known bool) {
	fp, known := r.Fingerprint(zone, version)
	return !known || fp != loaded, known
}

// ZoneStore records which tz rules the schedules' cursors were computed
// under: each zone's fingerprint per tz version seen, and each shard's tz
// version. It is part of the Store interface. The engine decides what a
// change leads to (engine/tzreload.go).
type ZoneStore interface {
	// ZoneRules returns every recorded rule, by zone, then version.
	ZoneRules(ctx context.Context) ([]ZoneRule, error)
	// SaveZoneRules records rules, one row per zone and version. A row
	// already there is kept as it is, whatever the fingerprint given: the
	// first rules recorded under a version are the ones cursors were
	// computed under, and a node that loaded other rules under the same
	// version must not erase that evidence (it reads the rows back to
	// notice, engine/tzreload.go).
	SaveZoneRules(ctx context.Context, rules []ZoneRule) error
	// CronZones returns, in order, each time zone that an ACTIVE cron
	// schedule reads its wall times in: the zones whose rules decide
	// where cursors are. (An at or every schedule's firings are instants,
	// whatever its zone.)
	CronZones(ctx context.Context) ([]string, error)
	// ShardTZVersions returns each shard's recorded tz version (see
	// ZoneTx.SetShardTZVersion); a shard never recorded is absent.
	ShardTZVersions(ctx context.Context) (map[int]string, error)
	// RecordNewShardsTZ records version for each shard in [0, shards)
	// that has none recorded, leaving the others as they are: the shards
	// of a new store are computed under the tz database of the first node
	// that opens it.
	RecordNewShardsTZ(ctx context.Context, shards int, version string) error
}

// ZoneTx holds the statements the engine composes, in one transaction per
// page of a shard's schedules, to move the firings of schedules whose
// zone's rules changed (see Tx). The shard lease is checked in the same
// transaction (PlannerTx.LockShardLease). Which firings move is the
// engine's decision; each statement only reads or writes what it says,
// under the condition it states.
type ZoneTx interface {
	// ZoneSchedules returns at most limit ACTIVE cron schedules of the
	// shard whose time zone is one of zones and whose id is greater than
	// after, in id order, each with its cursor.
	ZoneSchedules(ctx context.Context, shard int, zones []string, after string, limit int) ([]record.Schedule, error)

	// PendingFirings returns the occurrences of the schedules named by
	// scheduleIDs that are materialized ahead and untouched: timetable
	// firings (no trigger key), SCHEDULED or ENQUEUED, never claimed
	// (attempt count 0), and scheduled after after; of any version (the
	// caller keeps the current one's), by schedule id, then scheduled
	// time. One statement for a page of schedules.
	PendingFirings(ctx context.Context, scheduleIDs []string, after time.Time) ([]PendingFiring, error)

	// CancelFirings makes the schedule's occurrences named by ids
	// CANCELED (finished_at = now), each only while it is still
	// SCHEDULED or ENQUEUED and never claimed, and returns how many it
	// canceled.
	CancelFirings(ctx context.Context, scheduleID string, ids []string, now time.Time) (int, error)

	// RestoreFirings makes the schedule's timetable occurrences (no
	// trigger key) of version scheduled at one of at that are CANCELED
	// and were never claimed (attempt count 0) ENQUEUED again, with no
	// finished_at, and returns how many it restored: a firing whose
	// instant a rezone withdrew and a later tz release brought back. Its
	// id names that instant, so the row comes back rather than a new one.
	RestoreFirings(ctx context.Context, scheduleID string, version int64, at []time.Time) (int, error)

	// SetShardTZVersion records version as the tz database version the
	// shard's cursors were last computed under.
	SetShardTZVersion(ctx context.Context, shard int, version string) error

	// MoveCursor sets the schedule's cursor to next only while the
	// schedule is ACTIVE at version with cursor prev, in shard: ErrConflict
	// otherwise.
	MoveCursor(ctx context.Context, shard int, scheduleID string, version int64, prev, next time.Time) error
}

// PendingFiring is one occurrence that PendingFirings returns.
type PendingFiring struct {
	ScheduleID   string
	Version      int64
	OccurrenceID string
	ScheduledFor time.Time
}
