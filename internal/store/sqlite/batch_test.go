package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestFirstVersionKeptInRow: a bulk create keeps a first version as
// written at the schedule's creation in the schedule's row, writing no
// row of schedule_versions, and one written otherwise apart; the write of
// the second version moves the first out (the trigger of
// 0006_bulk_create.sql) and closes it. The conformance suite pins what
// the listing answers; this pins where the rows are.
func TestFirstVersionKeptInRow(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := t.Context()
	var news []store.NewSchedule
	for i := range 3 {
		sc := storetest.NewSchedule("tenant-a", fmt.Sprintf("sch_row_%d", i))
		sc.Name, sc.IdempotencyKey = sc.ScheduleID, ""
		first := store.NewScheduleVersion(sc, sc.CreatedAt, sc.CreatedAt)
		if i == 2 {
			first.WrittenAt = sc.CreatedAt.Add(time.Second)
		}
		news = append(news, store.NewSchedule{Schedule: sc, First: first})
	}
	if err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.InsertSchedules(ctx, news) }); err != nil {
		t.Fatal(err)
	}
	rows := func() (apart, inRow int) {
		t.Helper()
		err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM schedule_versions),
    (SELECT count(*) FROM schedules WHERE first_state IS NOT NULL)`).Scan(&apart, &inRow)
		if err != nil {
			t.Fatal(err)
		}
		return apart, inRow
	}
	if apart, inRow := rows(); apart != 1 || inRow != 2 {
		t.Fatalf("after the create: %d version rows, %d first versions in schedules rows; want 1 and 2", apart, inRow)
	}

	paused := *news[0].Schedule
	paused.State, paused.NextRunAt = record.SchedulePaused, time.Time{}
	now := paused.CreatedAt.Add(time.Hour)
	if _, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &paused, PrevVersion: 1, Now: now}); err != nil {
		t.Fatal(err)
	}
	if apart, _ := rows(); apart != 3 {
		t.Fatalf("after a second version: %d version rows, want 3 (the first moved out, the second)", apart)
	}
	got, err := s.ListScheduleVersions(ctx, store.ListScheduleVersionsParams{ScheduleID: "sch_row_0"})
	if err != nil {
		t.Fatal(err)
	}
	want := news[0].First
	want.SupersededAt, want.PlannedUntil = now, news[0].Schedule.NextRunAt
	if len(got) != 2 || got[0] != want || got[1].Version != 2 || got[1].State != record.SchedulePaused {
		t.Fatalf("versions of sch_row_0: %+v; want the first closed (%+v), then the pause", got, want)
	}
}
