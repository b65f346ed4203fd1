package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// The audit computes a cron schedule's expected firings under the tz
// database this process has loaded. The engine that planned them computed
// them under the tz version its store records for the schedule's shard
// (store.ZoneStore), and when a zone's rules differ between the two, the
// audit would take every firing the difference moved for a lost one and
// every row at the old instant for a stray one. So before it walks a
// schedule, the audit compares, for each cron version of it, the zone's
// fingerprint recorded for the shard's version with its own
// (timetable.ZoneFingerprint). When they differ, or the store recorded
// none for that version, what the walk would have found absent or
// unexpected of that version is counted Unverifiable instead (never a
// problem), and one TZWarning per zone and store version says so. The
// firings both rules agree on are still checked: a row where the
// reconciler expects one, in the state it expects, is evidence either way.
// A shard with no recorded version (a store from before versions were
// recorded) is taken to be on the reconciler's version, as the engine
// takes it to be on its own.
//
// What a shard records is the engine's tz label (engine/tzreload.go): the
// version, or the version with a "+local." digest for a tz database
// rebuilt with other rules under the same version line. So the
// fingerprints are compared whatever the label says, even when it is the
// reconciler's version: a reconciler on a patched 2026a audits shards
// recorded under the release's 2026a, and the other way round. Only a
// zone with no rules recorded under the reconciler's own version is taken
// to have its rules there, for want of evidence either way.

// TZWarning is one zone whose schedules' firings the audit could not check
// against the rules they were planned under.
type TZWarning struct {
	Zone         string
	StoreVersion string // the tz label the store's shards were planned under (engine/tzreload.go)
	Version      string // the reconciler's tz version
	Shards       []int  // the shards recorded under StoreVersion that hold such schedules, in order
	Schedules    int    // the zone's cron schedules audited on them
	Unverifiable int    // their firings and occurrences counted unverifiable
	// Unknown is true when the store recorded no rules of the zone for
	// StoreVersion, so the rules could not be compared at all.
	Unknown bool
}

// Message says what w means, for people.
func (w TZWarning) Message() string {
	why := "the zone's rules differ between the two"
	if w.StoreVersion == w.Version {
		why = "the zone's rules differ between the two builds of that version (one was rebuilt with other rules)"
	}
	if w.Unknown {
		why = fmt.Sprintf("the store recorded no rules of the zone for %s to compare", w.StoreVersion)
	}
	shards := "shard " + joinInts(w.Shards) + " was"
	if len(w.Shards) > 1 {
		shards = "shards " + joinInts(w.Shards) + " were"
	}
	schedules := "its cron schedule"
	if w.Schedules > 1 {
		schedules = fmt.Sprintf("its %d cron schedules", w.Schedules)
	}
	return fmt.Sprintf("zone %s: the store's %s planned under tz database %s, this reconciler has %s loaded, and %s; "+
		"%d firings and occurrences of %s that would be absent or unexpected are counted unverifiable, "+
		"not as problems: audit with %s loaded (or once the nodes have loaded %s) to check them",
		w.Zone, shards, w.StoreVersion, w.Version, why, w.Unverifiable, schedules, w.StoreVersion, w.Version)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// tzCheck compares the store's recorded tz rules with the loaded ones.
type tzCheck struct {
	version  string
	shards   map[int]string // shard -> recorded tz version
	stored   store.RecordedRules
	own      map[string]string // zone -> fingerprint under the loaded rules
	warnings map[[2]string]*TZWarning
}

func newTZCheck(ctx context.Context, st store.ZoneStore, rules []store.ZoneRule) (*tzCheck, error) {
	shards, err := st.ShardTZVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	return &tzCheck{version: timetable.TZVersion(), shards: shards, stored: store.IndexZoneRules(rules),
		own: map[string]string{}, warnings: map[[2]string]*TZWarning{}}, nil
}

// differs reports whether a cron schedule of zone on shard was planned
// under rules other than the loaded ones: the shard's recorded tz label,
// and whether the store knew the zone's rules for it. The fingerprints
// are compared even when the label is the loaded version: a database
// rebuilt under the same version line has other rules.
func (k *tzCheck) differs(shard int, zone string) (was string, unknown, differs bool) {
	was, ok := k.shards[shard]
	if !ok {
		return "", false, false
	}
	own, ok := k.own[zone]
	if !ok {
		own = timetable.LoadedFingerprint(zone)
		k.own[zone] = own
	}
	changed, known := k.stored.Changed(zone, was, own)
	if !known && was == k.version {
		return "", false, false // nothing says the same version's rules differ
	}
	return was, !known, changed
}

// warn notes a schedule of zone on shard, planned under tz version was,
// and returns its warning.
func (k *tzCheck) warn(zone, was string, shard int, unknown bool) *TZWarning {
	key := [2]string{zone, was}
	w := k.warnings[key]
	if w == nil {
		w = &TZWarning{Zone: zone, StoreVersion: was, Version: k.version, Unknown: unknown}
		k.warnings[key] = w
	}
	if !slices.Contains(w.Shards, shard) {
		w.Shards = append(w.Shards, shard)
		slices.Sort(w.Shards)
	}
	w.Schedules++
	return w
}

// list returns the warnings by zone, then store version.
func (k *tzCheck) list() []TZWarning {
	keys := slices.SortedFunc(maps.Keys(k.warnings), func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	out := make([]TZWarning, len(keys))
	for i, key := range keys {
		out[i] = *k.warnings[key]
	}
	return out
}
