package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
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
// shard, the tz database version its cursors were last computed under
// (store.ZoneStore's shard versions), and per zone and version the rules'
// fingerprint (timetable.ZoneFingerprint). Each planner pass, before it
// plans a shard it holds, a node compares the shard's recorded version
// with the one it has loaded; when they differ, it rezones the shard: every
// ACTIVE cron schedule of the shard in a zone whose fingerprint differs
// between the two versions (or is not known for the recorded one) gets its
// pending firings (SCHEDULED or ENQUEUED, never claimed, scheduled after
// now) checked against the rules loaded, in one transaction per page of
// schedules that first checks the shard's lease (the planner's fence):
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
// Then the shard's version is recorded, under its lease. So a start on a
// new tz database, a reload (SIGHUP, `schedctl admin reload-tz`:
// TZ.Reload) and a shard taken over from a node that ran another tz
// version all lead to the same rezone, and a rolling upgrade of a cluster
// moves every shard's firings once its new owner runs the new version. A
// shard never recorded (a new store, or one from before versions were
// recorded) is taken to be computed under the version of the first node
// that opens it: New records it (recordNewShards) before anything can
// compute a cursor there.
//
// at and every schedules are instants whatever their zone and are never
// touched; PAUSED schedules get their cursor from the time of their
// resume. A rezone runs inside the planner's pass lock (passMu), so no pass
// plans with rules a reload is replacing, and a reload holds the rules
// lock the control plane reads under, so no cursor computed under the old
// rules is written after the reload moved the others.
//
// What is recorded and compared is not the bare version string but the
// node's tz label (tzLabel): the version string names a release, and an
// operator who patches a zone with zic ahead of a release (a government
// moving its DST dates days ahead) rebuilds the database with other rules
// under the same version line. The label is the version when, for every
// zone the store records under that version, the loaded rules have the
// recorded fingerprint; otherwise the version plus "+local." and a digest
// of the differing zones' loaded fingerprints (2026a+local.1f0c9e2b), so
// that nodes patched alike share a label and a patched node rezones the
// shards recorded under the official release (and back, when the official
// rules are installed again). A recorded fingerprint is never replaced
// (store.ZoneStore.SaveZoneRules keeps the first), so the evidence of the
// rules cursors were computed under stays. A zone first recorded after the
// label was computed can show that another node recorded other rules
// under the same label first (a database patched otherwise, in a zone the
// store knew nothing of): the node reads its rows back after recording
// them (recordRules), and then takes another label, computed with those
// rows, and rezones its shards to it. The label is computed at New, at a
// reload, and after such a conflict, and kept in the planner's tz state.

// recordNewShards records the node's tz label for the shards that have
// none. It must happen before the first cursor is written: the control
// plane computes a new schedule's cursor under the rules loaded on the
// node that takes the request, and a shard left unrecorded until its
// first pass would be taken, by a node that reloaded a new release in
// between, to be computed under that release, so the cursors and the
// firings planned from them would keep the old rules.
func (p *planner) recordNewShards(ctx context.Context) error {
	p.passMu.Lock()
	defer p.passMu.Unlock()
	label, err := p.label(ctx)
	if err != nil {
		return fmt.Errorf("record the tz label of new shards: %w", err)
	}
	if err := p.store.RecordNewShardsTZ(ctx, p.cfg.Shards, label); err != nil {
		return fmt.Errorf("record the tz label of new shards: %w", err)
	}
	return nil
}

// localLabel joins a tz version and the digest of the zones whose loaded
// rules differ from the ones recorded under it.
const localLabel = "+local."

// tzLabel names the rules loaded, given the rules the store records
// (stored) and the loaded fingerprint of a zone: version (the tz
// database's version string) when every zone recorded under version has
// its recorded fingerprint, else version + "+local." + the first 8 hex
// digits of the sha256 of the sorted "zone=fingerprint" lines of the
// zones that differ. When the store records, under that label, other
// rules than the loaded ones for a zone (another node's database, patched
// otherwise, recorded it first), the zone joins the digest, until the
// label names no rules but the loaded ones: one label, one set of rules.
func tzLabel(version string, stored store.RecordedRules, fingerprint func(zone string) string) string {
	var differ []string
	for _, zone := range stored.Zones(version) {
		if changed, _ := stored.Changed(zone, version, fingerprint(zone)); changed {
			differ = append(differ, zone)
		}
	}
	for len(differ) > 0 {
		slices.Sort(differ)
		h := sha256.New()
		for _, zone := range differ {
			fmt.Fprintf(h, "%s=%s\n", zone, fingerprint(zone))
		}
		label := version + localLabel + hex.EncodeToString(h.Sum(nil))[:8]
		var more []string
		for _, zone := range stored.Zones(label) {
			if changed, _ := stored.Changed(zone, label, fingerprint(zone)); changed && !slices.Contains(differ, zone) {
				more = append(more, zone)
			}
		}
		if len(more) == 0 {
			return label
		}
		differ = append(differ, more...)
	}
	return version
}

// labelVersion is the tz version string a label was made from.
func labelVersion(label string) string {
	v, _, _ := strings.Cut(label, localLabel)
	return v
}

// label returns the node's tz label, computed from the store's recorded
// rules when it is not known. The caller holds passMu.
func (p *planner) label(ctx context.Context) (string, error) {
	if p.tz.label == "" {
		rules, err := p.store.ZoneRules(ctx)
		if err != nil {
			return "", fmt.Errorf("recorded tz rules: %w", err)
		}
		p.relabel(store.IndexZoneRules(rules))
	}
	return p.tz.label, nil
}

// relabel computes the node's tz label from stored, and forgets which
// zones' rules are recorded under the label it had. The caller holds
// passMu.
func (p *planner) relabel(stored store.RecordedRules) {
	label := tzLabel(timetable.TZVersion(), stored, p.fingerprint)
	if label != p.tz.label {
		p.tz.zones.forget()
	}
	p.tz.label = label
}

// maxRecordRounds bounds recordRules' rounds of reading, relabeling and
// recording: two when it records, three when it also relabels; more only
// while other nodes record other rules under the labels it takes.
const maxRecordRounds = 6

// recordRules records the loaded fingerprints of zones under the node's
// tz label, where the store has none under it (a recorded one is never
// replaced), reads them back, and returns the rules recorded. When the
// store holds other rules under the label for one of zones (another
// node's database, rebuilt with other rules under the same version,
// recorded them first), the node takes another label, computed with
// those rules (relabel), and records the zones under it: its shards,
// recorded under the old label, are rezoned at the next syncTZ. The
// caller holds passMu.
func (p *planner) recordRules(ctx context.Context, zones []string) (store.RecordedRules, error) {
	for range maxRecordRounds {
		label, err := p.label(ctx)
		if err != nil {
			return nil, err
		}
		rules, err := p.store.ZoneRules(ctx)
		if err != nil {
			return nil, err
		}
		stored := store.IndexZoneRules(rules)
		var missing []store.ZoneRule
		conflict := false
		for _, zone := range zones {
			fp := p.fingerprint(zone)
			switch was, ok := stored.Fingerprint(zone, label); {
			case !ok:
				missing = append(missing, store.ZoneRule{Zone: zone, TZVersion: label, Fingerprint: fp})
			case was != fp:
				conflict = true
			}
		}
		if conflict {
			p.relabel(stored)
			p.log.Warn("tz rules: the store records other rules under this node's tz label; taking another",
				"tz_label", label, "new_tz_label", p.tz.label)
			continue
		}
		if len(missing) == 0 {
			p.tz.zones.know(zones)
			return stored, nil
		}
		if err := p.store.SaveZoneRules(ctx, missing); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("record tz rules: the rules under tz label %s kept changing", p.tz.label)
}

// TZ reloads the tz database and moves the firings whose zone's rules
// changed (tzreload.go).
type TZ struct {
	planner *planner
	mu      sync.Mutex // one reload at a time
}

// TZZoneMoves counts what a rezone did to one zone's schedules.
type TZZoneMoves struct {
	Zone string
	// Schedules is how many ACTIVE cron schedules of the zone were
	// examined; Moved how many of them had a firing move (a pending
	// occurrence canceled or restored, or the cursor moved).
	Schedules, Moved int
	// Canceled pending occurrences whose instant is no longer a firing;
	// Kept pending occurrences whose instant still is (ids unchanged);
	// Replanned firings of the new rules between now and the old cursor
	// that are not materialized, which the planner materializes from the
	// moved cursor as they come within its horizon (or, for one an
	// earlier rezone canceled, whose row is put back on the queue).
	Canceled, Kept, Replanned int
}

// TZReloadResult is what a reload (or a pass that found a shard recorded
// under another tz label) did.
type TZReloadResult struct {
	// PreviousVersion is the tz database version in use before a reload
	// (for a pass: the versions of the labels the rezoned shards were
	// recorded under); Version the one in use now (tzdata.zi's).
	PreviousVersion, Version string
	// PreviousLabel and Label name the same rules by their tz labels
	// (tzLabel), which tell a database rebuilt with other rules under
	// the same version from the release: what the store records per
	// shard.
	PreviousLabel, Label string
	// Changed lists the zones of ACTIVE cron schedules whose rules
	// changed, with what moved in each, in zone order.
	Changed []TZZoneMoves
	// Shards is how many shards this node rezoned; Pending how many shards
	// are recorded under another label than this node's (held by nodes
	// that have not loaded its rules: reload every node); Fenced how many
	// shards' rezone a lost lease stopped.
	Shards, Pending, Fenced int
}

// tzState is the planner's memory of the shards' tz labels, of the
// node's label and of the loaded rules' fingerprints (under passMu), and
// of the zones whose rules it has recorded under its label (zoneNotes,
// its own lock: the control plane notes zones too).
type tzState struct {
	shards map[int]shardTZ
	prints map[string]string // zone -> fingerprint under the loaded rules
	// label is the node's tz label (tzLabel); "" until computed, and
	// again after a reload.
	label string
	zones zoneNotes
	// metricVersion is the version the tz metrics last reported.
	metricVersion string
}

// shardTZ is a held shard's recorded tz label, as read or written under
// the lease of epoch.
type shardTZ struct {
	epoch int64
	label string
}

// Reload reads the tz database again (timetable.ReloadZones: a new
// ZONEINFO, a new system tz package), and rezones the shards this node
// holds. It returns what moved, which it also logs.
func (z *TZ) Reload(ctx context.Context) (TZReloadResult, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	p := z.planner
	p.rules.Lock()
	defer p.rules.Unlock()
	p.passMu.Lock()
	defer p.passMu.Unlock()
	prev := timetable.TZVersion()
	prevLabel, err := p.label(ctx)
	if err != nil {
		return TZReloadResult{PreviousVersion: prev}, fmt.Errorf("reload tz: %w", err)
	}
	timetable.ReloadZones()
	p.dropSpecs()
	p.tz.prints = nil
	p.tz.label = ""
	p.tz.zones.forget()
	local, now := p.clock.Now(), p.member.now()
	res, err := p.syncTZ(ctx, p.member.trusted(local), now, true)
	res.PreviousVersion, res.PreviousLabel = prev, prevLabel
	if err != nil {
		return res, fmt.Errorf("reload tz: %w", err)
	}
	recorded, err := p.store.ShardTZVersions(ctx)
	if err != nil {
		return res, fmt.Errorf("reload tz: %w", err)
	}
	for shard := range p.cfg.Shards {
		if recorded[shard] != res.Label {
			res.Pending++
		}
	}
	p.wake()
	return res, nil
}

// syncTZ rezones the held shards recorded under another tz label than the
// node's, records the node's label for them, and logs what moved (always,
// with logAll: a reload says so even when nothing changed). The caller
// holds passMu.
func (p *planner) syncTZ(ctx context.Context, held []*heldShard, now time.Time, logAll bool) (TZReloadResult, error) {
	version := timetable.TZVersion()
	res := TZReloadResult{Version: version}
	if p.tz.metricVersion != version {
		p.obs.metrics.TZ.SetTZVersion(version)
		p.tz.metricVersion = version
	}
	label, err := p.label(ctx)
	if err != nil {
		return res, err
	}
	res.Label = label
	if p.tz.shards == nil {
		p.tz.shards = map[int]shardTZ{}
	}
	var need []*heldShard
	for _, h := range held {
		if st, ok := p.tz.shards[h.lease.Shard]; !ok || st.epoch != h.lease.Epoch || st.label != label {
			need = append(need, h)
		}
	}
	if len(need) == 0 {
		if logAll {
			p.logRezone(res)
		}
		return res, nil
	}
	recorded, err := p.store.ShardTZVersions(ctx)
	if err != nil {
		return res, fmt.Errorf("shards' tz labels: %w", err)
	}
	var (
		zones  []string
		stored store.RecordedRules
	)
	// Once some shard is to be rezoned: the zones of the cron schedules,
	// whose loaded rules are first recorded under the node's label, for
	// the comparisons of later releases (which can give the node another
	// label, recordRules: so before any shard is judged), and the rules
	// recorded.
	if slices.ContainsFunc(need, func(h *heldShard) bool {
		was, ok := recorded[h.lease.Shard]
		return !ok || was != label
	}) {
		if zones, err = p.store.CronZones(ctx); err != nil {
			return res, fmt.Errorf("tz rules: %w", err)
		}
		if stored, err = p.recordRules(ctx, zones); err != nil {
			return res, fmt.Errorf("tz rules: %w", err)
		}
		if p.tz.label != label { // every held shard is judged again
			label, need = p.tz.label, held
			res.Label = label
		}
	}
	moves := map[string]*TZZoneMoves{}
	prevs := map[string]bool{}
	var errs []error
	for _, h := range need {
		shard := h.lease.Shard
		was, ok := recorded[shard]
		if ok && was == label {
			p.tz.shards[shard] = shardTZ{epoch: h.lease.Epoch, label: label}
			continue
		}
		var changed []string
		if ok { // never recorded: taken to be computed under the rules loaded
			for _, zone := range zones {
				if differ, _ := stored.Changed(zone, was, p.fingerprint(zone)); differ {
					changed = append(changed, zone)
				}
			}
		}
		for _, zone := range changed {
			if moves[zone] == nil {
				moves[zone] = &TZZoneMoves{Zone: zone}
			}
		}
		err := p.rezoneShard(ctx, h, now, changed, was, label, moves)
		switch {
		case errors.Is(err, store.ErrStaleEpoch):
			res.Fenced++
			p.member.drop(shard)
			delete(p.tz.shards, shard)
			p.log.Warn("tz rezone fenced: shard lease lost", "shard", shard, "epoch", h.lease.Epoch)
		case err != nil:
			errs = append(errs, err)
			p.log.Error("tz rezone of a shard failed; retrying next pass", "shard", shard, "err", err)
		default:
			p.tz.shards[shard] = shardTZ{epoch: h.lease.Epoch, label: label}
			if ok {
				res.Shards++
				prevs[was] = true
			}
		}
	}
	for _, m := range moves {
		res.Changed = append(res.Changed, *m)
		p.obs.metrics.TZ.Moved.WithLabelValues("canceled").Add(float64(m.Canceled))
		p.obs.metrics.TZ.Moved.WithLabelValues("kept").Add(float64(m.Kept))
		p.obs.metrics.TZ.Moved.WithLabelValues("replanned").Add(float64(m.Replanned))
	}
	slices.SortFunc(res.Changed, func(a, b TZZoneMoves) int { return strings.Compare(a.Zone, b.Zone) })
	res.PreviousLabel = strings.Join(slices.Sorted(maps.Keys(prevs)), ",")
	versions := map[string]bool{}
	for was := range prevs {
		versions[labelVersion(was)] = true
	}
	res.PreviousVersion = strings.Join(slices.Sorted(maps.Keys(versions)), ",")
	for _, m := range res.Changed {
		if m.Moved > 0 {
			p.notify.broadcast() // waiting claims look again (a firing restored, one withdrawn)
			break
		}
	}
	if logAll || res.Shards > 0 || res.Fenced > 0 {
		p.logRezone(res)
	}
	return res, errors.Join(errs...)
}

// fingerprint is the zone's fingerprint under the rules loaded, computed
// once per reading of the tz database. The caller holds passMu.
func (p *planner) fingerprint(zone string) string {
	if p.tz.prints == nil {
		p.tz.prints = map[string]string{}
	}
	fp, ok := p.tz.prints[zone]
	if !ok {
		// A zone the release dropped has rules that differ from any it
		// had; its schedules fail to plan, as before.
		fp = timetable.LoadedFingerprint(zone)
		p.tz.prints[zone] = fp
	}
	return fp
}

func (p *planner) logRezone(res TZReloadResult) {
	if len(res.Changed) == 0 {
		p.log.Info("tz database loaded; no zone of a cron schedule changed its rules",
			"tz_version", res.Version, "previous_tz_version", res.PreviousVersion, "shards", res.Shards,
			"tz_label", res.Label, "previous_tz_label", res.PreviousLabel)
		return
	}
	for _, m := range res.Changed {
		p.log.Info("tz rules changed: firings moved", "zone", m.Zone, "tz_version", res.Version,
			"previous_tz_version", res.PreviousVersion, "schedules", m.Schedules, "moved", m.Moved,
			"canceled", m.Canceled, "kept", m.Kept, "replanned", m.Replanned,
			"tz_label", res.Label, "previous_tz_label", res.PreviousLabel)
	}
	p.log.Info("tz rezone done", "tz_version", res.Version, "zones_changed", len(res.Changed),
		"shards", res.Shards, "fenced", res.Fenced, "tz_label", res.Label)
}

// rezonePage is how many schedules one rezone transaction reads.
const rezonePage = 500

// rezoneShard rezones the schedules of one shard held in zones (rules
// recorded under the tz label was, loaded under label), a page per
// transaction, then records label as the shard's; each transaction is
// fenced by the shard's lease. With no zone, it only records the label.
func (p *planner) rezoneShard(ctx context.Context, h *heldShard, now time.Time, zones []string, was, label string,
	moves map[string]*TZZoneMoves) error {
	fence := func(tx store.Tx) error {
		cur, ok, err := tx.LockShardLease(ctx, h.lease.Shard)
		if err != nil {
			return err
		}
		if !ok || !sameLease(cur, h.lease) || !cur.ExpiresAt.After(now) {
			return fmt.Errorf("%w: epoch %d of %s is no longer live", store.ErrStaleEpoch, h.lease.Epoch, h.lease.Owner)
		}
		return nil
	}
	after := ""
	for len(zones) > 0 {
		var page []record.Schedule
		counts := map[string]TZZoneMoves{}
		err := store.InTx(ctx, p.store, func(tx store.Tx) error {
			clear(counts)
			if err := fence(tx); err != nil {
				return err
			}
			var err error
			page, err = tx.ZoneSchedules(ctx, h.lease.Shard, zones, after, rezonePage)
			if err != nil {
				return err
			}
			// The page's pending firings, in one read.
			ids := make([]string, len(page))
			for i := range page {
				ids[i] = page[i].ScheduleID
			}
			all, err := tx.PendingFirings(ctx, ids, now)
			if err != nil {
				return err
			}
			pending := map[string][]store.PendingFiring{}
			for _, f := range all {
				pending[f.ScheduleID] = append(pending[f.ScheduleID], f)
			}
			for i := range page {
				m := counts[page[i].TimeZone]
				if err := p.rezoneSchedule(ctx, tx, &page[i], pending[page[i].ScheduleID], now, was, label, &m); err != nil {
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
			if m := moves[zone]; m != nil {
				m.Schedules += c.Schedules
				m.Moved += c.Moved
				m.Canceled += c.Canceled
				m.Kept += c.Kept
				m.Replanned += c.Replanned
			}
		}
		if len(page) < rezonePage {
			break
		}
		after = page[len(page)-1].ScheduleID
	}
	// The shard's cursors are now the loaded rules'.
	err := store.InTx(ctx, p.store, func(tx store.Tx) error {
		if err := fence(tx); err != nil {
			return err
		}
		return tx.SetShardTZVersion(ctx, h.lease.Shard, label)
	})
	if err != nil {
		return fmt.Errorf("rezone shard %d: %w", h.lease.Shard, err)
	}
	return nil
}

// maxRezoneFirings bounds the new firings one schedule's rezone lists
// between now and its old cursor (the horizon's worth: an every-second
// cron over a day's horizon is 86,400).
const maxRezoneFirings = 1_000_000

// rezoneSchedule decides, under the rules loaded now, what becomes of one
// schedule's pending firings and cursor, and writes it in tx.
func (p *planner) rezoneSchedule(ctx context.Context, tx store.Tx, sc *record.Schedule, pending []store.PendingFiring, now time.Time,
	was, label string, m *TZZoneMoves) error {
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
		if pf.Version != sc.Version {
			continue // an older version's: a change canceled or left it in flight
		}
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
			was, label, sc.TimeZone, n, old.UTC().Format(time.RFC3339), cursor.UTC().Format(time.RFC3339))})
	if err != nil {
		return err
	}
	m.Moved++
	m.Canceled += n
	m.Replanned += replanned
	return nil
}

// zoneNotes are the zones whose rules the store records under the node's
// tz label, and the ones first seen since (a new schedule's, or a changed
// one's), which the planner's next pass records: so that a later
// release's rules can be compared with them.
type zoneNotes struct {
	mu    sync.Mutex
	known map[string]bool
	fresh []string
}

func (n *zoneNotes) know(zones []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.known == nil {
		n.known = map[string]bool{}
	}
	for _, z := range zones {
		n.known[z] = true
	}
}

// forget drops what is known: a reload loaded other rules, or the node
// took another label.
func (n *zoneNotes) forget() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.known, n.fresh = nil, nil
}

// noteZone notes the zone of a cron schedule about to be planned.
func (p *planner) noteZone(kind timetable.Kind, zone string) {
	if kind != timetable.KindCron {
		return
	}
	n := &p.tz.zones
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

// recordZones records the fingerprints, under the node's tz label, of the
// zones first seen since the last pass (recordRules: when another node
// recorded other rules under the label first, the node takes another
// label, and its next pass rezones its shards to it). The caller holds
// passMu.
func (p *planner) recordZones(ctx context.Context) error {
	n := &p.tz.zones
	n.mu.Lock()
	fresh := n.fresh
	n.fresh = nil
	n.mu.Unlock()
	if len(fresh) == 0 {
		return nil
	}
	slices.Sort(fresh)
	if _, err := p.recordRules(ctx, slices.Compact(fresh)); err != nil {
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
