package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// testZones: the tz rules recorded per zone, the zones of the ACTIVE cron
// schedules, and the statements that move the firings of a zone's
// schedules (store.ZoneStore, store.ZoneTx).
func testZones(t *testing.T, open func(t *testing.T) Store) {
	t.Run("ZoneRules", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		got, err := s.ZoneRules(ctx)
		if err != nil || len(got) != 0 {
			t.Fatalf("ZoneRules of a new store: %v, %v; want none", got, err)
		}
		first := []store.ZoneRule{
			{Zone: "Europe/Berlin", TZVersion: "2026a", Fingerprint: "b1"},
			{Zone: "America/Havana", TZVersion: "2026a", Fingerprint: "h1"},
		}
		if err := s.SaveZoneRules(ctx, first); err != nil {
			t.Fatalf("SaveZoneRules: %v", err)
		}
		// Another version's row is added; a row written again with
		// another fingerprint (a tz database rebuilt under the same
		// version) keeps the first one, and so does one written twice in
		// one call.
		if err := s.SaveZoneRules(ctx, []store.ZoneRule{
			{Zone: "America/Havana", TZVersion: "2026b", Fingerprint: "h2"},
			{Zone: "Europe/Berlin", TZVersion: "2026a", Fingerprint: "b1x"},
			{Zone: "Europe/Paris", TZVersion: "2026a", Fingerprint: "p1"},
			{Zone: "Europe/Paris", TZVersion: "2026a", Fingerprint: "p1x"},
		}); err != nil {
			t.Fatalf("SaveZoneRules again: %v", err)
		}
		got, err = s.ZoneRules(ctx)
		if err != nil {
			t.Fatalf("ZoneRules: %v", err)
		}
		want := []store.ZoneRule{
			{Zone: "America/Havana", TZVersion: "2026a", Fingerprint: "h1"},
			{Zone: "America/Havana", TZVersion: "2026b", Fingerprint: "h2"},
			{Zone: "Europe/Berlin", TZVersion: "2026a", Fingerprint: "b1"},
			{Zone: "Europe/Paris", TZVersion: "2026a", Fingerprint: "p1"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ZoneRules = %+v, want %+v", got, want)
		}
	})

	t.Run("ShardTZVersions", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		got, err := s.ShardTZVersions(ctx)
		if err != nil || len(got) != 0 {
			t.Fatalf("ShardTZVersions of a new store: %v, %v; want none", got, err)
		}
		for _, w := range []struct {
			shard   int
			version string
		}{{0, "2026a"}, {3, "2026a"}, {0, "2026b"}} {
			err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.SetShardTZVersion(ctx, w.shard, w.version) })
			if err != nil {
				t.Fatalf("SetShardTZVersion(%d, %s): %v", w.shard, w.version, err)
			}
		}
		got, err = s.ShardTZVersions(ctx)
		if want := map[int]string{0: "2026b", 3: "2026a"}; err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ShardTZVersions = %v, %v; want %v", got, err, want)
		}
		// The shards not recorded get a version; the recorded keep theirs.
		for range 2 {
			if err := s.RecordNewShardsTZ(ctx, 5, "2026c"); err != nil {
				t.Fatalf("RecordNewShardsTZ: %v", err)
			}
		}
		got, err = s.ShardTZVersions(ctx)
		if want := map[int]string{0: "2026b", 1: "2026c", 2: "2026c", 3: "2026a", 4: "2026c"}; err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ShardTZVersions after RecordNewShardsTZ = %v, %v; want %v", got, err, want)
		}
	})

	t.Run("CronZones", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		for i, c := range []struct {
			zone  string
			kind  timetable.Kind
			state record.ScheduleState
		}{
			{"Europe/Berlin", timetable.KindCron, record.ScheduleActive},
			{"Europe/Berlin", timetable.KindCron, record.ScheduleActive},
			{"America/Havana", timetable.KindCron, record.ScheduleActive},
			{"Asia/Tokyo", timetable.KindCron, record.SchedulePaused},    // not planned
			{"Asia/Kolkata", timetable.KindEvery, record.ScheduleActive}, // instants, whatever the zone
			{"Africa/Casablanca", timetable.KindAt, record.ScheduleActive},
		} {
			sc := NewSchedule("tenant-a", "sch_zone_"+string(rune('a'+i)))
			sc.TimeZone, sc.Kind, sc.State = c.zone, c.kind, c.state
			mustInsertSchedule(t, s, sc)
		}
		got, err := s.CronZones(ctx)
		if err != nil {
			t.Fatalf("CronZones: %v", err)
		}
		if want := []string{"America/Havana", "Europe/Berlin"}; !reflect.DeepEqual(got, want) {
			t.Errorf("CronZones = %v, want %v", got, want)
		}
	})

	t.Run("ZoneSchedules", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		mk := func(id, zone string, shard int, kind timetable.Kind, state record.ScheduleState) {
			sc := NewSchedule("tenant-a", id)
			sc.TimeZone, sc.Shard, sc.Kind, sc.State = zone, shard, kind, state
			mustInsertSchedule(t, s, sc)
		}
		mk("sch_z1", "America/Havana", 3, timetable.KindCron, record.ScheduleActive)
		mk("sch_z2", "Europe/Berlin", 3, timetable.KindCron, record.ScheduleActive)
		mk("sch_z3", "America/Havana", 3, timetable.KindCron, record.ScheduleActive)
		mk("sch_z4", "America/Havana", 4, timetable.KindCron, record.ScheduleActive) // another shard
		mk("sch_z5", "America/Havana", 3, timetable.KindEvery, record.ScheduleActive)
		mk("sch_z6", "America/Havana", 3, timetable.KindCron, record.SchedulePaused)
		mk("sch_z7", "Asia/Tokyo", 3, timetable.KindCron, record.ScheduleActive)
		var ids []string
		after := ""
		for range 10 {
			var page []record.Schedule
			err := store.InTx(ctx, s, func(tx store.Tx) error {
				var err error
				page, err = tx.ZoneSchedules(ctx, 3, []string{"America/Havana", "Asia/Tokyo"}, after, 2)
				return err
			})
			if err != nil {
				t.Fatalf("ZoneSchedules: %v", err)
			}
			for _, sc := range page {
				ids = append(ids, sc.ScheduleID)
				if sc.NextRunAt.IsZero() || sc.TimeZone == "" || sc.Version != 1 {
					t.Errorf("ZoneSchedules: %s read without its cursor, zone or version: %+v", sc.ScheduleID, sc)
				}
			}
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1].ScheduleID
		}
		if want := []string{"sch_z1", "sch_z3", "sch_z7"}; !reflect.DeepEqual(ids, want) {
			t.Errorf("ZoneSchedules pages = %v, want %v", ids, want)
		}
	})

	t.Run("PendingCancelMove", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_rezone")
		sc.Queue, sc.OverlapPolicy, sc.FlexibleWindow, sc.Version, sc.NextRunAt = jobsQueue, record.OverlapAllow, 0, 2, at(time.Hour)
		mustInsertSchedule(t, s, sc)
		occ := func(min int, st record.OccurrenceState) record.Occurrence {
			o := NewOccurrence(sc, at(time.Duration(min)*time.Minute))
			o.State = st
			if st == record.OccurrenceEnqueued {
				o.EnqueuedAt = at(-time.Hour)
			}
			return o
		}
		before := occ(-1, record.OccurrenceScheduled) // not after the bound
		claimed := occ(1, record.OccurrenceEnqueued)  // claimed below
		p5 := occ(5, record.OccurrenceEnqueued)
		p6 := occ(6, record.OccurrenceScheduled)
		p7 := occ(7, record.OccurrenceEnqueued)
		manual := occ(8, record.OccurrenceEnqueued)
		manual.OccurrenceID, manual.TriggerKey = "", "trigger-1"
		old := occ(9, record.OccurrenceEnqueued)
		old.ScheduleVersion = 1
		old.OccurrenceID = record.OccurrenceID(sc.ScheduleID, 1, old.ScheduledFor)
		mustInsertOccurrences(t, s, 7, before, claimed, p5, p6, p7, manual, old)
		// Another schedule's, read in the same statement.
		other := NewSchedule("tenant-a", "sch_rezone_other")
		other.Queue, other.NextRunAt = jobsQueue, at(time.Hour)
		mustInsertSchedule(t, s, other)
		theirs := NewOccurrence(other, at(4*time.Minute))
		mustInsertOccurrences(t, s, 1, theirs)
		if c := mustClaim(t, s, "tenant-a", 1, at(2*time.Minute)); len(c) != 1 || c[0].Occurrence.OccurrenceID != claimed.OccurrenceID {
			t.Fatalf("claim: %+v, want the occurrence at +1m", c)
		}

		var pending []store.PendingFiring
		err := store.InTx(ctx, s, func(tx store.Tx) error {
			var err error
			pending, err = tx.PendingFirings(ctx, []string{sc.ScheduleID, other.ScheduleID, "sch_nosuch"}, at(0))
			return err
		})
		if err != nil {
			t.Fatalf("PendingFirings: %v", err)
		}
		pf := func(o record.Occurrence) store.PendingFiring {
			return store.PendingFiring{ScheduleID: o.ScheduleID, Version: o.ScheduleVersion, OccurrenceID: o.OccurrenceID, ScheduledFor: o.ScheduledFor}
		}
		// By schedule id, then time; the older version's too.
		want := []store.PendingFiring{pf(p5), pf(p6), pf(p7), pf(old), pf(theirs)}
		if !reflect.DeepEqual(pending, want) {
			t.Errorf("PendingFirings = %+v, want %+v", pending, want)
		}

		// Cancel two of them, plus ids it must leave: the claimed one, the
		// manual one, one of another schedule's.
		var canceled int
		err = store.InTx(ctx, s, func(tx store.Tx) error {
			var err error
			canceled, err = tx.CancelFirings(ctx, sc.ScheduleID, []string{p5.OccurrenceID, p6.OccurrenceID, claimed.OccurrenceID, "occ_nosuch"}, at(3*time.Minute))
			return err
		})
		if err != nil || canceled != 2 {
			t.Fatalf("CancelFirings: %d, %v; want 2", canceled, err)
		}
		for _, c := range []struct {
			id   string
			want record.OccurrenceState
		}{
			{p5.OccurrenceID, record.OccurrenceCanceled},
			{p6.OccurrenceID, record.OccurrenceCanceled},
			{p7.OccurrenceID, record.OccurrenceEnqueued},
			{claimed.OccurrenceID, record.OccurrenceRunning},
		} {
			o := mustGetOccurrence(t, s, "tenant-a", c.id)
			if o.State != c.want {
				t.Errorf("occurrence at %s: %s, want %s", o.ScheduledFor, o.State, c.want)
			}
			if c.want == record.OccurrenceCanceled && !o.FinishedAt.Equal(at(3*time.Minute)) {
				t.Errorf("canceled occurrence at %s: finished_at %s, want %s", o.ScheduledFor, o.FinishedAt, at(3*time.Minute))
			}
		}

		// A canceled firing comes back (its instant a firing again); one
		// never canceled, or of another version, does not change.
		var restored int
		err = store.InTx(ctx, s, func(tx store.Tx) error {
			var err error
			restored, err = tx.RestoreFirings(ctx, sc.ScheduleID, 2, []time.Time{p5.ScheduledFor, p7.ScheduledFor, old.ScheduledFor, at(42 * time.Minute)})
			return err
		})
		if err != nil || restored != 1 {
			t.Fatalf("RestoreFirings: %d, %v; want 1", restored, err)
		}
		if o := mustGetOccurrence(t, s, "tenant-a", p5.OccurrenceID); o.State != record.OccurrenceEnqueued || !o.FinishedAt.IsZero() {
			t.Errorf("restored occurrence: %s finished %s, want ENQUEUED, not finished", o.State, o.FinishedAt)
		}
		if o := mustGetOccurrence(t, s, "tenant-a", p6.OccurrenceID); o.State != record.OccurrenceCanceled {
			t.Errorf("occurrence not named by RestoreFirings: %s, want CANCELED still", o.State)
		}
		// Restored, it is pending again.
		err = store.InTx(ctx, s, func(tx store.Tx) error {
			var err error
			pending, err = tx.PendingFirings(ctx, []string{sc.ScheduleID}, at(0))
			return err
		})
		if want := []store.PendingFiring{pf(p5), pf(p7), pf(old)}; err != nil || !reflect.DeepEqual(pending, want) {
			t.Errorf("PendingFirings after the restore: %+v, %v; want %+v", pending, err, want)
		}

		// The cursor moves only from the one read, at the version read, in
		// its shard.
		move := func(shard int, version int64, prev, next time.Time) error {
			return store.InTx(ctx, s, func(tx store.Tx) error {
				return tx.MoveCursor(ctx, shard, sc.ScheduleID, version, prev, next)
			})
		}
		wantErr(t, "MoveCursor from another cursor", move(sc.Shard, 2, at(30*time.Minute), at(10*time.Minute)), store.ErrConflict)
		wantErr(t, "MoveCursor at another version", move(sc.Shard, 1, at(time.Hour), at(10*time.Minute)), store.ErrConflict)
		wantErr(t, "MoveCursor in another shard", move(sc.Shard+1, 2, at(time.Hour), at(10*time.Minute)), store.ErrConflict)
		wantErr(t, "MoveCursor", move(sc.Shard, 2, at(time.Hour), at(10*time.Minute)), nil)
		if got := mustGetSchedule(t, s, "tenant-a", sc.ScheduleID); !got.NextRunAt.Equal(at(10 * time.Minute)) {
			t.Errorf("cursor after MoveCursor: %s, want %s", got.NextRunAt, at(10*time.Minute))
		}
		// The planner sees the moved cursor.
		due, err := s.DueSchedules(ctx, store.DueSchedulesParams{Shard: sc.Shard, Until: at(10 * time.Minute), Limit: 10})
		if err != nil || len(due) != 1 || !due[0].NextRunAt.Equal(at(10*time.Minute)) {
			t.Errorf("DueSchedules after MoveCursor: %+v, %v; want the schedule at its new cursor", due, err)
		}
	})
}

// ZoneTablesFresh checks, on a store whose zone tables a migration has
// just made, that they start empty of shard versions and take a rule:
// each driver's migration test ends with it.
func ZoneTablesFresh(t *testing.T, s store.ZoneStore) {
	t.Helper()
	ctx := t.Context()
	rule := store.ZoneRule{Zone: "America/Havana", TZVersion: "2026f", Fingerprint: "f"}
	if err := s.SaveZoneRules(ctx, []store.ZoneRule{rule}); err != nil {
		t.Fatalf("SaveZoneRules after the migration: %v", err)
	}
	if got, err := s.ZoneRules(ctx); err != nil || len(got) != 1 || got[0] != rule {
		t.Errorf("ZoneRules after the migration: %+v, %v", got, err)
	}
	if got, err := s.ShardTZVersions(ctx); err != nil || len(got) != 0 {
		t.Errorf("ShardTZVersions after the migration: %v, %v; want none", got, err)
	}
}
