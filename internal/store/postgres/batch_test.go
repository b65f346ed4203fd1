package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestBulkCreateRows: a bulk create keeps a first version as written at
// the schedule's creation in the schedule's row, writing no row of
// schedule_versions, and one written otherwise apart; the write of the
// second version moves the first out (0006_bulk_create.sql) and closes
// it. One COPY of schedules of two tenants, several shards and states
// counts each tenant's live ones per shard, once per statement. The
// conformance suite pins what the listings answer; this pins where the
// rows are.
func TestBulkCreateRows(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := t.Context()
	var news []store.NewSchedule
	live := map[string]map[int]int64{}
	for i := range 40 {
		tenant := []string{"tenant-a", "tenant-b"}[i%2]
		sc := storetest.NewSchedule(tenant, fmt.Sprintf("sch_row_%02d", i))
		sc.Name, sc.IdempotencyKey, sc.Shard = sc.ScheduleID, "", i%5
		switch i % 4 {
		case 1:
			sc.State = record.SchedulePaused
		case 2:
			sc.State, sc.NextRunAt = record.ScheduleCompleted, time.Time{}
		}
		if sc.State != record.ScheduleCompleted {
			if live[tenant] == nil {
				live[tenant] = map[int]int64{}
			}
			live[tenant][sc.Shard]++
		}
		first := store.NewScheduleVersion(sc, sc.CreatedAt, sc.CreatedAt)
		if i == 3 {
			first.WrittenAt = sc.CreatedAt.Add(time.Second)
		}
		news = append(news, store.NewSchedule{Schedule: sc, First: first})
	}
	if err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.InsertSchedules(ctx, news) }); err != nil {
		t.Fatal(err)
	}
	count := func(q string) (n int) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if apart, inRow := count(`SELECT count(*) FROM schedule_versions`), count(`SELECT count(*) FROM schedules WHERE first_state IS NOT NULL`); apart != 1 || inRow != 39 {
		t.Fatalf("after the create: %d version rows, %d first versions in schedules rows; want 1 and 39", apart, inRow)
	}
	rows, err := s.pool.Query(ctx, `SELECT tenant_id, shard, live FROM tenant_live_schedules`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[int]int64{}
	for rows.Next() {
		var tenant string
		var shard int
		var n int64
		if err := rows.Scan(&tenant, &shard, &n); err != nil {
			t.Fatal(err)
		}
		if got[tenant] == nil {
			got[tenant] = map[int]int64{}
		}
		got[tenant][shard] = n
	}
	if rows.Err() != nil || fmt.Sprint(got) != fmt.Sprint(live) {
		t.Fatalf("live counts %v (%v), want %v", got, rows.Err(), live)
	}

	paused := *news[0].Schedule
	paused.State, paused.NextRunAt = record.SchedulePaused, time.Time{}
	now := paused.CreatedAt.Add(time.Hour)
	if _, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &paused, PrevVersion: 1, Now: now}); err != nil {
		t.Fatal(err)
	}
	if apart := count(`SELECT count(*) FROM schedule_versions`); apart != 3 {
		t.Fatalf("after a second version: %d version rows, want 3 (the first moved out, the second)", apart)
	}
	vs, err := s.ListScheduleVersions(ctx, store.ListScheduleVersionsParams{ScheduleID: news[0].Schedule.ScheduleID})
	if err != nil {
		t.Fatal(err)
	}
	want := news[0].First
	want.SupersededAt, want.PlannedUntil = now, news[0].Schedule.NextRunAt
	if len(vs) != 2 || vs[0] != want || vs[1].Version != 2 || vs[1].State != record.SchedulePaused {
		t.Fatalf("versions: %+v; want the first closed (%+v), then the pause", vs, want)
	}
}
