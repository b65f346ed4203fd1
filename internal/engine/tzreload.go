package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// When the tz database changes.
//
// A cron schedule's cursor and the occurrences materialized ahead of it
// are instants computed from its zone's rules. The store records, per
// zone, the rules they were computed under (store.ZoneRule: the tz
// version and timetable.ZoneFingerprint). When a node starts on another
// tz version than the one recorded, or reloads its tz database (SIGHUP,
// `schedctl admin reload-tz`: TZ.Reload), the zones whose fingerprint
// changed are rezoned: every ACTIVE cron schedule in them, shard by shard
// and only on the shards this node holds, gets its pending firings
// (SCHEDULED or ENQUEUED, never claimed, scheduled after now) checked
// against the new rules, in one transaction per page of schedules that
// first checks the shard's lease (the planner's fence):
//
//   - a pending occurrence whose instant is still a firing stays, under
//     its id (the id hashes the instant, so it is the id the new rules
//     would give it);
//   - one whose instant no longer is a firing becomes CANCELED
//     (finished_at = now): nothing is deleted, so the history shows the
//     firing that was withdrawn, and a worker that deduplicates on ids
//     never sees one id at two instants;
//   - the cursor moves to the earliest new firing not yet materialized,
//     so the planner's next pass materializes the moved firings under
//     their new ids (its inserts of the kept ones are duplicates, no-ops);
//     a new firing whose row an earlier rezone canceled (a release that
//     reverts a change) has that row put back on the queue, under its id.
//
// at and every schedules are instants whatever their zone and are never
// touched; PAUSED schedules get their cursor from the time of their
// resume. The planner's passes and a rezone never overlap (the planner's
// passMu), and the planner's parsed definitions are dropped at a reload.

// TZ reloads the tz database and moves the firings whose zone's rules
// changed (tzreload.go).
type TZ struct {
	store   store.Store
	log     *slog.Logger
	planner *planner
	member  *member
	shards  int

	mu sync.Mutex // one reload at a time
}

// TZZoneMoves counts what a rezone did to one zone's schedules.
type TZZoneMoves struct {
	Zone string
	// Schedules is how many ACTIVE cron schedules of the zone were
	// examined; Moved how many of them had a firing move (a pending
	// occurrence canceled or the cursor moved).
	Schedules, Moved int
	// Canceled pending occurrences whose instant is no longer a firing;
	// Kept pending occurrences whose instant still is (ids unchanged);
	// Replanned firings of the new rules between now and the old cursor
	// that are not materialized, which the planner materializes from the
	// moved cursor as they come within its horizon.
	Canceled, Kept, Replanned int
}

// TZReloadResult is what TZ.Reload (and a start on a new tz version) did.
type TZReloadResult struct {
	// PreviousVersion is the tz version in use before (at a start: the
	// one recorded in the store); Version the one now in use.
	PreviousVersion, Version string
	// Changed lists the zones of ACTIVE cron schedules whose rules
	// changed, with what moved in each, in zone order.
	Changed []TZZoneMoves
	// Shards is how many shards this node rezoned; Pending how many it
	// did not hold, which it rezones when it takes them (each node
	// reloads its own tz database: reload every node).
	Shards, Pending int
	// Fenced is how many shards' rezone a lost lease stopped.
	Fenced int
}

// rezoneJob is a change of zone rules not yet applied to every shard.
type rezoneJob struct {
	prev, version string
	zones         []string
	rules         []store.ZoneRule // to record once the shards held are done
	recorded      bool
	todo          map[int]bool
	moves         map[string]*TZZoneMoves
}

// Reload reads the tz database again (timetable.ReloadZones: a new
// ZONEINFO, a new system tz package), and rezones the schedules of the
// zones whose rules changed on the shards this node holds. It returns
// what moved, which it also logs.
func (z *TZ) Reload(ctx context.Context) (TZReloadResult, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	zones, err := recordedZones(ctx, z.store)
	if err != nil {
		return TZReloadResult{}, fmt.Errorf("reload tz: %w", err)
	}
	stored, err := z.storedRules(ctx)
	if err != nil {
		return TZReloadResult{}, fmt.Errorf("reload tz: %w", err)
	}
	p := z.planner
	p.rules.Lock()
	defer p.rules.Unlock()
	p.passMu.Lock()
	defer p.passMu.Unlock()
	prev := timetable.TZVersion()
	before := fingerprints(zones)
	version := timetable.ReloadZones()
	p.dropSpecs()
	after := fingerprints(zones)
	var changed []string
	for _, zone := range zones {
		s, ok := stored[zone]
		if before[zone] != after[zone] || ok && s.Fingerprint != after[zone] {
			changed = append(changed, zone)
		}
	}
	if old := p.rezone; old != nil && len(old.todo) > 0 {
		// Shards the previous change has not reached yet still need its
		// zones too.
		for _, zone := range old.zones {
			if !slices.Contains(changed, zone) {
				changed = append(changed, zone)
			}
		}
		slices.Sort(changed)
	}
	p.rezone = z.newJob(prev, version, changed, after)
	local, now := p.clock.Now(), p.member.now()
	res := p.runRezone(ctx, p.member.trusted(local), now)
	p.wake()
	return res, nil
}

// checkAtStart compares the tz rules in use with the ones recorded in the
// store (New): with none recorded (a new store, or one from before they
// were), the rules in use are recorded; when another tz version is
// recorded, the zones whose fingerprint differs are rezoned, shard by
// shard, by the planner's passes.
func (z *TZ) checkAtStart(ctx context.Context) error {
	rules, err := z.store.ZoneRules(ctx)
	if err != nil {
		return err
	}
	version := timetable.TZVersion()
	prev := ""
	for _, r := range rules {
		if r.TZVersion != version {
			prev = r.TZVersion
		}
	}
	z.planner.knowZones(rules)
	if len(rules) > 0 && prev == "" {
		return nil // recorded under the version in use
	}
	zones, err := recordedZones(ctx, z.store)
	if err != nil {
		return err
	}
	after := fingerprints(zones)
	if len(rules) == 0 {
		baseline := zoneRules(zones, version, after)
		if err := z.store.SaveZoneRules(ctx, baseline); err != nil {
			return err
		}
		z.planner.knowZones(baseline)
		z.log.Info("tz rules recorded", "tz_version", version, "zones", len(zones))
		return nil
	}
	stored := map[string]store.ZoneRule{}
	for _, r := range rules {
		stored[r.Zone] = r
	}
	var changed []string
	for _, zone := range zones {
		if s, ok := stored[zone]; !ok || s.Fingerprint != after[zone] {
			// A zone without a row was first used under some version
			// since the last record: its firings are checked too (a
			// rezone moves only what the rules in use move).
			changed = append(changed, zone)
		}
	}
	z.planner.passMu.Lock()
	z.planner.rezone = z.newJob(prev, version, changed, after)
	z.planner.passMu.Unlock()
	z.log.Info("tz database version differs from the one the schedules were planned under; rezoning",
		"tz_version", version, "recorded_tz_version", prev, "zones_changed", len(changed))
	return nil
}

func (z *TZ) storedRules(ctx context.Context) (map[string]store.ZoneRule, error) {
	rules, err := z.store.ZoneRules(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.ZoneRule, len(rules))
	for _, r := range rules {
		out[r.Zone] = r
	}
	return out, nil
}

func (z *TZ) newJob(prev, version string, changed []string, prints map[string]string) *rezoneJob {
	job := &rezoneJob{prev: prev, version: version, zones: changed, todo: map[int]bool{}, moves: map[string]*TZZoneMoves{},
		rules: zoneRules(slices.Sorted(mapKeys(prints)), version, prints)}
	for _, zone := range changed {
		job.moves[zone] = &TZZoneMoves{Zone: zone}
	}
	if len(changed) > 0 {
		for shard := range z.shards {
			job.todo[shard] = true
		}
	}
	// Their rows are the job's to write, once it has moved the firings.
	z.planner.knowZones(job.rules)
	return job
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// recordedZones are the zones whose rules the store records: those of the
// ACTIVE cron schedules, and UTC, whose rules never change, so that a
// store with no cron schedule records the version too (and a start under
// the same version need not look for zones again).
func recordedZones(ctx context.Context, st store.Store) ([]string, error) {
	zones, err := st.CronZones(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(zones, "UTC") {
		zones = append(zones, "UTC")
		slices.Sort(zones)
	}
	return zones, nil
}

// fingerprints are the zones' fingerprints under the rules loaded now; a
// zone that no longer loads (a release that dropped it) gets none, so it
// counts as changed, and its schedules fail to plan as before.
func fingerprints(zones []string) map[string]string {
	out := make(map[string]string, len(zones))
	for _, zone := range zones {
		fp, err := timetable.ZoneFingerprint(zone)
		if err != nil {
			fp = "unloadable"
		}
		out[zone] = fp
	}
	return out
}

func zoneRules(zones []string, version string, prints map[string]string) []store.ZoneRule {
	out := make([]store.ZoneRule, 0, len(zones))
	for _, zone := range zones {
		out = append(out, store.ZoneRule{Zone: zone, TZVersion: version, Fingerprint: prints[zone]})
	}
	return out
}

// runRezone applies the pending change of zone rules (p.rezone) to the
// shards held that it has not reached yet, records the rules once it has
// run, and logs what moved. The caller holds passMu.
func (p *planner) runRezone(ctx context.Context, held []*heldShard, now time.Time) TZReloadResult {
	job := p.rezone
	if job == nil {
		return TZReloadResult{}
	}
	res := TZReloadResult{PreviousVersion: job.prev, Version: job.version}
	ran, failed := false, false
	for _, h := range held {
		if !job.todo[h.lease.Shard] {
			continue
		}
		ran = true
		err := p.rezoneShard(ctx, h, now, job)
		switch {
		case errors.Is(err, store.ErrStaleEpoch):
			res.Fenced++
			p.member.drop(h.lease.Shard)
			p.log.Warn("tz rezone fenced: shard lease lost", "shard", h.lease.Shard, "epoch", h.lease.Epoch)
		case err != nil:
			failed = true
			p.log.Error("tz rezone of a shard failed; retrying next pass", "shard", h.lease.Shard, "err", err)
		default:
			delete(job.todo, h.lease.Shard)
			res.Shards++
		}
	}
	res.Pending = len(job.todo)
	moved := false
	for _, zone := range job.zones {
		if m := job.moves[zone]; m != nil {
			res.Changed = append(res.Changed, *m)
			moved = moved || m.Moved > 0
		}
	}
	if moved {
		p.notify.broadcast() // waiting claims look again (a firing restored, one withdrawn)
	}
	if !job.recorded && (ran || len(job.zones) == 0) && res.Fenced == 0 && !failed {
		if err := p.store.SaveZoneRules(ctx, job.rules); err != nil {
			p.log.Error("cannot record the tz rules; the next start compares again", "err", err)
		} else {
			job.recorded = true
		}
	}
	if ran || len(job.zones) == 0 {
		p.logRezone(res)
	}
	if len(job.todo) == 0 {
		p.rezone = nil
	}
	return res
}

func (p *planner) logRezone(res TZReloadResult) {
	if len(res.Changed) == 0 {
		p.log.Info("tz database loaded; no zone of a cron schedule changed its rules",
			"tz_version", res.Version, "previous_tz_version", res.PreviousVersion)
		return
	}
	for _, m := range res.Changed {
		p.log.Info("tz rules changed: firings moved", "zone", m.Zone, "tz_version", res.Version,
			"previous_tz_version", res.PreviousVersion, "schedules", m.Schedules, "moved", m.Moved,
			"canceled", m.Canceled, "kept", m.Kept, "replanned", m.Replanned)
	}
	p.log.Info("tz rezone done", "tz_version", res.Version, "zones_changed", len(res.Changed),
		"shards", res.Shards, "shards_pending", res.Pending, "fenced", res.Fenced)
}

// rezonePage is how many schedules one rezone transaction reads.
const rezonePage = 500

// rezoneShard rezones the job's zones' schedules of one shard held, a page
// per transaction, each fenced by the shard's lease.
func (p *planner) rezoneShard(ctx context.Context, h *heldShard, now time.Time, job *rezoneJob) error {
	after := ""
	for {
		var page []record.Schedule
		counts := map[string]TZZoneMoves{}
		err := store.InTx(ctx, p.store, func(tx store.Tx) error {
			clear(counts)
			cur, ok, err := tx.LockShardLease(ctx, h.lease.Shard)
			if err != nil {
				return err
			}
			if !ok || !sameLease(cur, h.lease) || !cur.ExpiresAt.After(now) {
				return fmt.Errorf("%w: epoch %d of %s is no longer live", store.ErrStaleEpoch, h.lease.Epoch, h.lease.Owner)
			}
			page, err = tx.ZoneSchedules(ctx, h.lease.Shard, job.zones, after, rezonePage)
			if err != nil {
				return err
			}
			for i := range page {
				m := counts[page[i].TimeZone]
				if err := p.rezoneSchedule(ctx, tx, &page[i], now, job, &m); err != nil {
					return err
				}
				counts[page[i].TimeZone] = m
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("rezone shard %d: %w", h.lease.Shard, err)
		}
		for zone, c := range counts {
			if m := job.moves[zone]; m != nil {
				m.Schedules += c.Schedules
				m.Moved += c.Moved
				m.Canceled += c.Canceled
				m.Kept += c.Kept
				m.Replanned += c.Replanned
			}
		}
		if len(page) < rezonePage {
			return nil
		}
		after = page[len(page)-1].ScheduleID
	}
}

// maxRezoneFirings bounds the new firings one schedule's rezone lists
// between now and its old cursor (the horizon's worth: an every-second
// cron over a day's horizon is 86,400).
const maxRezoneFirings = 1_000_000

// rezoneSchedule decides, under the rules loaded now, what becomes of one
// schedule's pending firings and cursor, and writes it in tx.
func (p *planner) rezoneSchedule(ctx context.Context, tx store.Tx, sc *record.Schedule, now time.Time, job *rezoneJob, m *TZZoneMoves) error {
	m.Schedules++
	sp, err := p.parse(sc.Definition())
	if err != nil {
		// A zone the new release dropped: the planner logs it at every
		// pass, and nothing here can place its firings.
		p.log.Error("tz rezone: cannot parse schedule", "schedule_id", sc.ScheduleID, "err", err)
		return nil
	}
	old := sc.NextRunAt
	if old.IsZero() {
		return nil
	}
	pending, err := tx.PendingFirings(ctx, sc.ScheduleID, sc.Version, now)
	if err != nil {
		return err
	}
	// The new rules' firings after now and before the old cursor: what
	// should have been materialized ahead. The planner materializes no
	// further than its horizon, so the old cursor is near; a cursor
	// further ahead than maxRezoneFirings firings is left alone (and
	// logged) rather than judged on part of its firings.
	fresh := map[int64]bool{}
	for f, ok := sp.Next(now); ok && f.At.Before(old); f, ok = sp.Next(f.At) {
		if len(fresh) == maxRezoneFirings {
			p.log.Error("tz rezone: cursor too far ahead; schedule left as it was", "schedule_id", sc.ScheduleID,
				"cursor", old, "firings", maxRezoneFirings)
			return nil
		}
		fresh[f.At.Unix()] = true
	}
	var cancel []string
	have := map[int64]bool{}
	for _, pf := range pending {
		if fresh[pf.ScheduledFor.Unix()] {
			have[pf.ScheduledFor.Unix()] = true
			m.Kept++
		} else {
			cancel = append(cancel, pf.OccurrenceID)
		}
	}
	// The cursor: the earliest new firing not materialized, or, when every
	// one before the old cursor is, the first new firing at or after it.
	next, ok := sp.Next(old.Add(-time.Second))
	cursor := next.At
	if !ok {
		cursor = time.Time{}
	}
	var missing []time.Time
	for u := range fresh {
		if !have[u] {
			at := time.Unix(u, 0).UTC()
			missing = append(missing, at)
			if cursor.IsZero() || at.Before(cursor) {
				cursor = at
			}
		}
	}
	replanned := len(missing)
	if len(cancel) == 0 && cursor.Equal(old) {
		return nil
	}
	if cursor.IsZero() {
		// No firing left under the new rules (a cron that can never
		// fire again is refused at create; a zone's end of time): leave
		// the cursor, and the planner completes the schedule.
		cursor = old
	}
	if !cursor.Equal(old) {
		err := tx.MoveCursor(ctx, sc.Shard, sc.ScheduleID, sc.Version, old, cursor)
		if errors.Is(err, store.ErrConflict) {
			return nil // changed since it was read: its new version was placed under the new rules
		}
		if err != nil {
			return err
		}
	}
	n, err := tx.CancelFirings(ctx, sc.ScheduleID, cancel, now)
	if err != nil {
		return err
	}
	// A firing a rezone withdrew comes back when a later release brings
	// its instant back (a change reverted): its id names that instant, so
	// its CANCELED row goes back on the queue, where the planner's insert
	// would only find it taken. The planner inserts the others.
	slices.SortFunc(missing, time.Time.Compare)
	if _, err := tx.RestoreFirings(ctx, sc.ScheduleID, sc.Version, missing); err != nil {
		return err
	}
	// The tenant's audit log says why its occurrences were canceled and
	// its cursor moved, in the same transaction.
	err = appendAudit(ctx, tx, now, auditEntry{tenantID: sc.TenantID, action: AuditScheduleRezone, target: sc.ScheduleID,
		oldVer: sc.Version, newVer: sc.Version, detail: fmt.Sprintf("tz %s -> %s (%s): %d occurrence(s) canceled, cursor %s -> %s",
			job.prev, job.version, sc.TimeZone, n, old.UTC().Format(time.RFC3339), cursor.UTC().Format(time.RFC3339))})
	if err != nil {
		return err
	}
	m.Moved++
	m.Canceled += n
	m.Replanned += replanned
	return nil
}

// zoneNotes are the zones whose rules the store records, and the ones
// first seen since (a new schedule's, or a changed one's), which the
// planner's next pass records: so a node started on another tz database
// later knows what every zone's cursors were computed under.
type zoneNotes struct {
	mu    sync.Mutex
	known map[string]bool
	fresh []string
}

// noteZone notes the zone of a cron schedule about to be planned.
func (p *planner) noteZone(kind timetable.Kind, zone string) {
	if kind != timetable.KindCron {
		return
	}
	n := &p.zones
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.known == nil {
		n.known = map[string]bool{}
	}
	if !n.known[zone] {
		n.known[zone] = true
		n.fresh = append(n.fresh, zone)
	}
}

// knowZones marks zones as recorded.
func (p *planner) knowZones(rules []store.ZoneRule) {
	n := &p.zones
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.known == nil {
		n.known = map[string]bool{}
	}
	for _, r := range rules {
		n.known[r.Zone] = true
	}
}

// recordZones records the rules of the zones first seen since the last
// pass, under the tz database in use. A zone known to have a row is not
// written here: only a rezone replaces a row, after it moved the firings.
// The caller holds passMu.
func (p *planner) recordZones(ctx context.Context) error {
	n := &p.zones
	n.mu.Lock()
	fresh := n.fresh
	n.fresh = nil
	n.mu.Unlock()
	if len(fresh) == 0 {
		return nil
	}
	slices.Sort(fresh)
	version := timetable.TZVersion()
	if err := p.store.SaveZoneRules(ctx, zoneRules(fresh, version, fingerprints(fresh))); err != nil {
		n.mu.Lock()
		n.fresh = append(n.fresh, fresh...) // the next pass tries again
		n.mu.Unlock()
		return fmt.Errorf("record tz rules: %w", err)
	}
	return nil
}

// dropSpecs forgets the parsed definitions: each holds its zone's rules as
// they were loaded.
func (p *planner) dropSpecs() {
	p.specsMu.Lock()
	clear(p.specs)
	p.specsMu.Unlock()
}
