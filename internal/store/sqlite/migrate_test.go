package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/migration"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestPlannerTableMigratedOnOpen: a database made before the planner's
// table was clustered by due time (migrated to 0006) keeps its schedules'
// cursors, the planner's advanced ones included, and the planner reads
// the same schedules from the new table, with every field it needs.
func TestPlannerTableMigratedOnOpen(t *testing.T) {
	ctx := t.Context()
	migs, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(migs, func(m migration.Migration) bool { return m.Version == 7 })
	if i < 0 {
		t.Fatal("no migration 0007")
	}
	path := filepath.Join(t.TempDir(), "sched.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate(ctx, db, migs[:i], time.Now()); err != nil {
		t.Fatalf("migrate to 0006: %v", err)
	}
	if _, err := db.ExecContext(ctx, qInitShards, "8"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 2, 2, 7, 30, 0, 0, time.UTC)
	advanced := t0.Add(24 * time.Hour)
	var want []record.Schedule // what DueSchedules must return, in order
	for _, tc := range []struct {
		id     string
		state  record.ScheduleState
		next   time.Time
		cursor time.Time // the planner's cursor, when it advanced it
		due    bool
	}{
		{id: "sch_a", state: record.ScheduleActive, next: t0, due: true},
		{id: "sch_b", state: record.ScheduleActive, next: t0, cursor: advanced, due: true},
		{id: "sch_c", state: record.SchedulePaused, next: t0},
		{id: "sch_d", state: record.ScheduleActive, next: t0.Add(time.Minute), due: true},
		{id: "sch_e", state: record.ScheduleCanceled, next: t0},
	} {
		sc := storetest.NewSchedule("tenant-a", tc.id)
		sc.State, sc.NextRunAt = tc.state, tc.next
		if _, err := db.ExecContext(ctx, qInsertSchedule, scheduleArgs(sc)...); err != nil {
			t.Fatalf("insert %s: %v", tc.id, err)
		}
		if !tc.cursor.IsZero() {
			if _, err := db.ExecContext(ctx, `UPDATE schedule_cursors SET next_run_at = ? WHERE schedule_id = ?`, ms(tc.cursor), tc.id); err != nil {
				t.Fatal(err)
			}
			sc.NextRunAt = tc.cursor
		}
		if tc.due {
			want = append(want, sc.PlannerFields())
		}
	}
	slices.SortFunc(want, func(a, b record.Schedule) int { return a.NextRunAt.Compare(b.NextRunAt) })
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a database at 0006: %v", err)
	}
	defer s.Close()
	if !slices.Contains(s.applied, 7) {
		t.Errorf("Open applied %v, want 0007", s.applied)
	}
	got, err := s.DueSchedules(ctx, store.DueSchedulesParams{Shard: 7, Until: advanced})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := plannerText(got), plannerText(want); g != w {
		t.Errorf("DueSchedules after the migration:\n got %s\nwant %s", g, w)
	}
	sc, err := s.GetSchedule(ctx, "tenant-a", "sch_b")
	if err != nil || !sc.NextRunAt.Equal(advanced) {
		t.Errorf("sch_b after the migration: %v, %v; want the planner's cursor %s", sc, err, advanced)
	}
}

// plannerText prints the planner's fields of schedules, their times in
// UTC, for comparing them.
func plannerText(scs []record.Schedule) string {
	var out string
	for _, sc := range scs {
		p := sc.PlannerFields()
		p.Anchor, p.NextRunAt = p.Anchor.UTC(), p.NextRunAt.UTC()
		out += fmt.Sprintf("%+v\n", p)
	}
	return out
}
