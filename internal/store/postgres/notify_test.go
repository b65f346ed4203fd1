package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/timetable"
)

// TestSubscribeReconnects: a subscription hears this schema's
// notifications, and after its connection is killed (as by a server
// restart) it reconnects, says so, and hears them again.
func TestSubscribeReconnects(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	st := openSchema(t, dsn, schema)
	other := openTest(t) // another schema on the same database: not heard

	ctx, cancel := context.WithCancel(t.Context())
	ch, err := st.Subscribe(ctx)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer func() {
		cancel()
		for range ch { // closed once the listener has let go
		}
	}()
	next := func(want string) {
		t.Helper()
		select {
		case n, ok := <-ch:
			if !ok {
				t.Fatal("subscription closed")
			}
			if n.Channel != want {
				t.Fatalf("notification on %q, want %q", n.Channel, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification on %q within 10s", want)
		}
	}
	insert := func(s *Store, id string) {
		t.Helper()
		now := time.Now().UTC().Truncate(time.Millisecond)
		sc := &record.Schedule{
			TenantID: "t", ScheduleID: id, Name: id, Kind: timetable.KindEvery, Expr: "1m", TimeZone: "UTC",
			DSTGap: timetable.GapSkip, DSTRepeat: timetable.RepeatFirst, Version: 1, State: record.ScheduleActive,
			NextRunAt: now.Add(time.Hour), Queue: "q", MisfirePolicy: record.MisfireFireOnce, MaxLateness: time.Minute,
			OverlapPolicy: record.OverlapAllow, Retry: record.RetryPolicy{MaxAttempts: 1, BackoffBase: time.Second, BackoffCap: time.Second, Deadline: time.Hour},
			CreatedAt: now, UpdatedAt: now,
		}
		if err := s.InsertSchedule(t.Context(), sc); err != nil {
			t.Fatalf("InsertSchedule: %v", err)
		}
	}

	insert(other, "sch_other")
	insert(st, "sch_1")
	next(ChannelPlan) // and not the other schema's first

	var killed int
	if err := st.pool.QueryRow(t.Context(),
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
		listenAppName(schema)).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminate the listener: %d terminated, %v", killed, err)
	}
	next("") // reconnected
	insert(st, "sch_2")
	next(ChannelPlan)
}
