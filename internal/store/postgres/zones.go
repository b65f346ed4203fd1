package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// ZoneRules returns every zone's recorded rules (see store.ZoneStore).
func (s *Store) ZoneRules(ctx context.Context) ([]store.ZoneRule, error) {
	return readAll(ctx, s, "zone rules", scanZoneRule, qZoneRules)
}

func scanZoneRule(row scanner) (*store.ZoneRule, error) {
	var r store.ZoneRule
	if err := row.Scan(&r.Zone, &r.TZVersion, &r.Fingerprint); err != nil {
		return nil, err
	}
	return &r, nil
}

// SaveZoneRules records rules, one row per zone, in one statement (see
// store.ZoneStore).
func (s *Store) SaveZoneRules(ctx context.Context, rules []store.ZoneRule) error {
	if len(rules) == 0 {
		return nil
	}
	zones := make([]string, len(rules))
	versions := make([]string, len(rules))
	prints := make([]string, len(rules))
	for i, r := range rules {
		if !storable(r.Zone, r.TZVersion, r.Fingerprint) {
			return fmt.Errorf("save zone rules: zone %q: not valid text", r.Zone)
		}
		zones[i], versions[i], prints[i] = r.Zone, r.TZVersion, r.Fingerprint
	}
	if _, err := s.pool.Exec(ctx, qSaveZoneRules, zones, versions, prints); err != nil {
		return fmt.Errorf("save zone rules: %w", translate(err))
	}
	return nil
}

// CronZones returns each zone an ACTIVE cron schedule is in (see
// store.ZoneStore).
func (s *Store) CronZones(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, qCronZones)
	if err != nil {
		return nil, fmt.Errorf("cron schedules' zones: %w", translate(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var z string
		if err := rows.Scan(&z); err != nil {
			return nil, fmt.Errorf("cron schedules' zones: %w", translate(err))
		}
		out = append(out, z)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cron schedules' zones: %w", translate(err))
	}
	return out, nil
}

// ZoneSchedules reads a page of the shard's ACTIVE cron schedules in zones
// (see store.ZoneTx).
func (t *tx) ZoneSchedules(ctx context.Context, shard int, zones []string, after string, limit int) ([]record.Schedule, error) {
	if !storable(after) {
		return nil, fmt.Errorf("schedules in zones: after %q: not valid text", after)
	}
	rows, err := t.tx.Query(ctx, qZoneSchedules, shard, storableOnly(zones), after, limit)
	if err != nil {
		return nil, fmt.Errorf("schedules in zones: %w", translate(err))
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("schedules in zones: %w", err)
	}
	return out, nil
}

// PendingFirings reads the untouched occurrences materialized ahead of a
// page of schedules (see store.ZoneTx).
func (t *tx) PendingFirings(ctx context.Context, scheduleIDs []string, after time.Time) ([]store.PendingFiring, error) {
	ids := storableOnly(scheduleIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, qPendingFirings, ids, ms(after))
	if err != nil {
		return nil, fmt.Errorf("pending firings: %w", translate(err))
	}
	defer rows.Close()
	var out []store.PendingFiring
	for rows.Next() {
		var (
			f  store.PendingFiring
			at int64
		)
		if err := rows.Scan(&f.ScheduleID, &f.Version, &f.OccurrenceID, &at); err != nil {
			return nil, fmt.Errorf("pending firings: %w", translate(err))
		}
		f.ScheduledFor = fromMS(at)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending firings: %w", translate(err))
	}
	return out, nil
}

// CancelFirings cancels the named occurrences still untouched (see
// store.ZoneTx).
func (t *tx) CancelFirings(ctx context.Context, scheduleID string, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 || !storable(scheduleID) {
		return 0, nil
	}
	// No claim of the schedule's queues runs from here until the commit,
	// and the cancel reads which rows runs hold after it (tx_runs.go).
	if err := t.lockScheduleQueues(ctx, scheduleID); err != nil {
		return 0, fmt.Errorf("cancel firings of %s: %w", scheduleID, err)
	}
	tag, err := t.tx.Exec(ctx, qCancelFirings, ms(now), scheduleID, storableOnly(ids))
	if err != nil {
		return 0, fmt.Errorf("cancel firings of %s: %w", scheduleID, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// RestoreFirings puts the schedule's canceled, never claimed firings at
// the instants at back on the queue (see store.ZoneTx).
func (t *tx) RestoreFirings(ctx context.Context, scheduleID string, version int64, at []time.Time) (int, error) {
	if len(at) == 0 || !storable(scheduleID) {
		return 0, nil
	}
	msAt := make([]int64, len(at))
	for i, a := range at {
		msAt[i] = ms(a)
	}
	t.shared = true // the floor's trigger locks their queues
	tag, err := t.tx.Exec(ctx, qRestoreFirings, scheduleID, version, msAt)
	if err != nil {
		return 0, fmt.Errorf("restore firings of %s: %w", scheduleID, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// MoveCursor moves the schedule's cursor from prev to next (see
// store.ZoneTx).
func (t *tx) MoveCursor(ctx context.Context, shard int, scheduleID string, version int64, prev, next time.Time) error {
	if !storable(scheduleID) {
		return fmt.Errorf("move cursor of %q: %w", scheduleID, notStorable())
	}
	tag, err := t.tx.Exec(ctx, qMoveCursor, ms(next), scheduleID, shard, version, ms(prev))
	if err != nil {
		return fmt.Errorf("move cursor of %s: %w", scheduleID, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("move cursor of %s: not ACTIVE at version %d with cursor %s in shard %d: %w",
			scheduleID, version, prev.UTC().Format(time.RFC3339), shard, store.ErrConflict)
	}
	return nil
}

// ShardTZVersions returns each recorded shard's tz version (see
// store.ZoneStore).
func (s *Store) ShardTZVersions(ctx context.Context) (map[int]string, error) {
	rows, err := s.pool.Query(ctx, qShardTZVersions)
	if err != nil {
		return nil, fmt.Errorf("shards' tz versions: %w", translate(err))
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var (
			shard int
			v     string
		)
		if err := rows.Scan(&shard, &v); err != nil {
			return nil, fmt.Errorf("shards' tz versions: %w", translate(err))
		}
		out[shard] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shards' tz versions: %w", translate(err))
	}
	return out, nil
}

// RecordNewShardsTZ records version for the shards with none recorded
// (see store.ZoneStore).
func (s *Store) RecordNewShardsTZ(ctx context.Context, shards int, version string) error {
	if !storable(version) {
		return fmt.Errorf("tz version of new shards: %q: not valid text", version)
	}
	if _, err := s.pool.Exec(ctx, qRecordNewShardsTZ, shards, version); err != nil {
		return fmt.Errorf("tz version of new shards: %w", translate(err))
	}
	return nil
}

// SetShardTZVersion records the shard's tz version (see store.ZoneTx).
func (t *tx) SetShardTZVersion(ctx context.Context, shard int, version string) error {
	if !storable(version) {
		return fmt.Errorf("tz version of shard %d: %q: not valid text", shard, version)
	}
	if _, err := t.tx.Exec(ctx, qSetShardTZVersion, shard, version); err != nil {
		return fmt.Errorf("tz version of shard %d: %w", shard, translate(err))
	}
	return nil
}
