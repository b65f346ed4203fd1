package storetest

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

// testIsolation: every method that takes a tenant answers another tenant's
// ids with store.ErrNotFound (or nothing, for lists and counts), never with
// data, and writes nothing for it.
func testIsolation(t *testing.T, open func(t *testing.T) Store) {
	t.Run("EveryMethod", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_private", record.OverlapAllow)
		sc.Name = "private"
		sc.State = record.ScheduleActive
		mustUpdate(t, s, sc, 1, at(0), nil)
		sc = mustGetSchedule(t, s, "tenant-a", sc.ScheduleID)
		running := readyOccurrence(sc, 0, record.LaneStrict)
		waiting := readyOccurrence(sc, 1, record.LaneStrict)
		dead := readyOccurrence(sc, 2, record.LaneStrict)
		dead.State = record.OccurrenceDead
		retry := readyOccurrence(sc, 3, record.LaneStrict)
		retry.State = record.OccurrenceRetryWait
		mustInsertOccurrences(t, s, 1, running)
		claimed := mustClaim(t, s, "tenant-a", 1, at(0))[0]
		mustInsertOccurrences(t, s, 3, waiting, dead, retry)
		// tenant-b has a queue of the same name, empty.
		queueSchedule(t, s, "tenant-b", "sch_b", record.OverlapAllow)

		const b = "tenant-b"
		check := func(what string, err error) {
			t.Helper()
			wantErr(t, what+" as another tenant", err, store.ErrNotFound)
		}
		_, err := s.GetSchedule(ctx, b, sc.ScheduleID)
		check("GetSchedule", err)
		_, err = s.GetScheduleByName(ctx, b, sc.Name)
		check("GetScheduleByName", err)
		_, err = s.GetScheduleByIdempotencyKey(ctx, b, sc.IdempotencyKey)
		check("GetScheduleByIdempotencyKey", err)
		foreign := *sc
		foreign.TenantID = b
		foreign.State = record.ScheduleCanceled
		_, err = engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &foreign, PrevVersion: sc.Version, Now: at(0)})
		check("WriteVersion", err)
		for _, id := range []string{running.OccurrenceID, waiting.OccurrenceID} {
			_, err = s.GetOccurrence(ctx, b, id)
			check("GetOccurrence", err)
			_, err = s.ListAttempts(ctx, store.ListAttemptsParams{TenantID: b, OccurrenceID: id, Limit: store.MaxListLimit})
			check("ListAttempts", err)
		}
		_, err = s.Heartbeat(ctx, store.HeartbeatParams{TenantID: b, OccurrenceID: running.OccurrenceID, Attempt: 1, Lease: time.Minute, Now: at(time.Second)})
		check("Heartbeat", err)
		res, err := s.FinishAttempts(ctx, []store.FinishParams{{TenantID: b, OccurrenceID: running.OccurrenceID, Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: at(time.Second)}})
		if err != nil {
			t.Fatal(err)
		}
		check("FinishAttempts", res[0].Err)
		_, err = engine.ReplayOccurrence(ctx, s, b, dead.OccurrenceID, at(time.Second))
		check("ReplayOccurrence", err)
		for _, p := range []store.PurgeDeadParams{
			{TenantID: b, Now: at(time.Second), Limit: 10},
			{TenantID: b, ScheduleID: sc.ScheduleID, Now: at(time.Second), Limit: 10},
			{TenantID: b, Queue: jobsQueue, Now: at(time.Second), Limit: 10},
		} {
			if n, err := engine.PurgeDead(ctx, s, p); err != nil || n != 0 {
				t.Errorf("PurgeDead(%+v) as another tenant: %d, %v; want 0", p, n, err)
			}
		}

		if got, err := s.ListSchedules(ctx, store.ListSchedulesParams{TenantID: b}); err != nil || len(got) != 1 || got[0].ScheduleID != "sch_b" {
			t.Errorf("ListSchedules as another tenant: %v, %v", got, err)
		}
		for _, p := range []store.ListOccurrencesParams{
			{TenantID: b}, {TenantID: b, ScheduleID: sc.ScheduleID}, {TenantID: b, State: record.OccurrenceDead},
			{TenantID: b, Queue: jobsQueue}, {TenantID: b, State: record.OccurrenceDead, Queue: jobsQueue},
		} {
			if got, err := s.ListOccurrences(ctx, p); err != nil || len(got) != 0 {
				t.Errorf("ListOccurrences(%+v): %d rows, %v; want none", p, len(got), err)
			}
		}
		for _, st := range []record.OccurrenceState{record.OccurrenceRunning, record.OccurrenceEnqueued, record.OccurrenceDead, record.OccurrenceRetryWait, ""} {
			if n, err := s.CountOccurrences(ctx, b, st); err != nil || n != 0 {
				t.Errorf("CountOccurrences(%q) as another tenant: %d, %v", st, n, err)
			}
		}
		if got, err := s.NextAvailable(ctx, b, jobsQueue); err != nil || !got.IsZero() {
			t.Errorf("NextAvailable as another tenant: %v, %v", got, err)
		}
		if got := mustClaim(t, s, b, 10, at(time.Hour)); len(got) != 0 {
			t.Errorf("another tenant claimed %d from a queue of the same name", len(got))
		}

		// Nothing of tenant-a's changed.
		assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", sc.ScheduleID), sc)
		assertOccurrence(t, "running occurrence", mustGetOccurrence(t, s, "tenant-a", running.OccurrenceID), claimed.Occurrence)
		assertAttempts(t, s, "tenant-a", running.OccurrenceID, claimed.Attempt)
		for _, o := range []record.Occurrence{waiting, dead, retry} {
			assertOccurrence(t, string(o.State)+" occurrence", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), o)
		}
	})
}
