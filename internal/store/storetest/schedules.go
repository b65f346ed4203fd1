package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

// testSchedules checks the schedules' records. Its update tests run the
// engine's rule for a new version (engine.WriteVersion) on the store: the
// rule is written once in the engine, and what each store must get right
// is the statements it composes (store.ControlTx).
func testSchedules(t *testing.T, open func(t *testing.T) Store) {
	t.Run("NameLookup", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_named")
		sc.Name = "billing"
		mustInsertSchedule(t, s, sc)

		got, err := s.GetScheduleByName(ctx, "tenant-a", "billing")
		if err != nil {
			t.Fatalf("GetScheduleByName: %v", err)
		}
		assertScheduleEqual(t, got, sc)
		for _, tc := range []struct{ tenant, name string }{
			{"tenant-b", "billing"},   // another tenant's name
			{"tenant-a", "Billing"},   // names are exact
			{"tenant-a", "missing"},   // no such name
			{"tenant-a", ""},          // no name
			{"tenant-a", "sch_named"}, // an id is not a name
		} {
			_, err := s.GetScheduleByName(ctx, tc.tenant, tc.name)
			wantErr(t, fmt.Sprintf("GetScheduleByName(%s, %q)", tc.tenant, tc.name), err, store.ErrNotFound)
		}

		// A canceled schedule keeps its name as history and is still
		// found by it while no live schedule holds it; the name is free
		// for a new schedule, which is then the one found.
		sc.State, sc.UpdatedAt = record.ScheduleCanceled, at(time.Second)
		mustUpdate(t, s, sc, 1, at(time.Second), nil)
		got, err = s.GetScheduleByName(ctx, "tenant-a", "billing")
		if err != nil || got.ScheduleID != "sch_named" || got.State != record.ScheduleCanceled {
			t.Errorf("GetScheduleByName of a canceled schedule: %v, %v; want sch_named, CANCELED", got, err)
		}
		if got := mustGetSchedule(t, s, "tenant-a", "sch_named"); got.Name != "billing" {
			t.Errorf("canceled schedule's name is %q, want it kept", got.Name)
		}
		again := NewSchedule("tenant-a", "sch_named_again")
		again.Name = "billing"
		mustInsertSchedule(t, s, again)
		got, err = s.GetScheduleByName(ctx, "tenant-a", "billing")
		if err != nil || got.ScheduleID != "sch_named_again" {
			t.Errorf("GetScheduleByName after reuse: %v, %v; want sch_named_again", got, err)
		}
		// Two canceled: the one changed last answers.
		again.State, again.UpdatedAt = record.ScheduleCanceled, at(2*time.Second)
		mustUpdate(t, s, again, 1, at(2*time.Second), nil)
		got, err = s.GetScheduleByName(ctx, "tenant-a", "billing")
		if err != nil || got.ScheduleID != "sch_named_again" {
			t.Errorf("GetScheduleByName with two canceled: %v, %v; want the later, sch_named_again", got, err)
		}
		_, err = s.GetScheduleByName(ctx, "tenant-b", "billing")
		wantErr(t, "GetScheduleByName of another tenant's canceled name", err, store.ErrNotFound)
	})

	t.Run("NameRules", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		first := NewSchedule("tenant-a", "sch_n1")
		first.Name = "sync"
		mustInsertSchedule(t, s, first)

		for _, tc := range []struct {
			what   string
			tenant string
			name   string
			state  record.ScheduleState
			want   error
		}{
			{"same live name, same tenant", "tenant-a", "sync", record.ScheduleActive, store.ErrConflict},
			{"same name while paused", "tenant-a", "sync", record.SchedulePaused, store.ErrConflict},
			{"same name, other tenant", "tenant-b", "sync", record.ScheduleActive, nil},
			{"same name, canceled", "tenant-a", "sync", record.ScheduleCanceled, nil},
			{"another canceled with it", "tenant-a", "sync", record.ScheduleCanceled, nil},
			{"other name", "tenant-a", "sync2", record.ScheduleActive, nil},
		} {
			sc := NewSchedule(tc.tenant, "sch_"+tc.what)
			sc.Name, sc.State = tc.name, tc.state
			wantErr(t, "InsertSchedule: "+tc.what, s.InsertSchedule(ctx, sc), tc.want)
		}
		empty := NewSchedule("tenant-a", "sch_empty_name")
		empty.Name = ""
		if err := s.InsertSchedule(ctx, empty); err == nil {
			t.Error("InsertSchedule with an empty name: no error")
		}

		// An update to a taken name is a conflict and writes nothing.
		other := mustGetSchedule(t, s, "tenant-a", "sch_other name")
		other.Name = "sync"
		_, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: other, PrevVersion: 1, Now: at(0)})
		wantErr(t, "WriteVersion to a taken name", err, store.ErrConflict)
		if got := mustGetSchedule(t, s, "tenant-a", "sch_other name"); got.Name != "sync2" || got.Version != 1 {
			t.Errorf("after a refused rename: name %q version %d, want sync2 and 1", got.Name, got.Version)
		}
	})

	t.Run("IdempotencyKeyLookup", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_idem")
		sc.IdempotencyKey = "create-42"
		mustInsertSchedule(t, s, sc)
		bare := NewSchedule("tenant-a", "sch_nokey")
		bare.IdempotencyKey = ""
		mustInsertSchedule(t, s, bare)

		got, err := s.GetScheduleByIdempotencyKey(ctx, "tenant-a", "create-42")
		if err != nil {
			t.Fatalf("GetScheduleByIdempotencyKey: %v", err)
		}
		assertScheduleEqual(t, got, sc)
		for _, tc := range []struct{ tenant, key string }{
			{"tenant-b", "create-42"},
			{"tenant-a", "create-43"},
			{"tenant-a", ""}, // no key is no key, though a schedule has none
		} {
			_, err := s.GetScheduleByIdempotencyKey(ctx, tc.tenant, tc.key)
			wantErr(t, fmt.Sprintf("GetScheduleByIdempotencyKey(%s, %q)", tc.tenant, tc.key), err, store.ErrNotFound)
		}
		// The key answers for its schedule in any state: a retried create
		// after a cancel still finds what it created.
		sc.State = record.ScheduleCanceled
		mustUpdate(t, s, sc, 1, at(0), nil)
		got, err = s.GetScheduleByIdempotencyKey(ctx, "tenant-a", "create-42")
		if err != nil || got.ScheduleID != "sch_idem" || got.State != record.ScheduleCanceled {
			t.Errorf("GetScheduleByIdempotencyKey after cancel: %+v, %v", got, err)
		}
	})

	t.Run("ListSchedules", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		states := []record.ScheduleState{record.ScheduleActive, record.SchedulePaused, record.ScheduleActive,
			record.ScheduleCanceled, record.ScheduleActive, record.ScheduleCompleted, record.ScheduleActive}
		// Inserted out of order: the list is in id order regardless.
		for _, i := range []int{4, 0, 6, 2, 1, 5, 3} {
			sc := NewSchedule("tenant-a", fmt.Sprintf("sch_%02d", i))
			sc.State = states[i]
			mustInsertSchedule(t, s, sc)
		}
		for _, id := range []string{"sch_00b", "sch_99"} {
			mustInsertSchedule(t, s, NewSchedule("tenant-b", id))
		}
		ids := func(scs []record.Schedule) []string {
			out := []string{}
			for _, sc := range scs {
				out = append(out, sc.ScheduleID)
			}
			return out
		}
		for _, tc := range []struct {
			what string
			p    store.ListSchedulesParams
			want []string
		}{
			{"all", store.ListSchedulesParams{TenantID: "tenant-a"},
				[]string{"sch_00", "sch_01", "sch_02", "sch_03", "sch_04", "sch_05", "sch_06"}},
			{"first page", store.ListSchedulesParams{TenantID: "tenant-a", Limit: 3}, []string{"sch_00", "sch_01", "sch_02"}},
			{"second page", store.ListSchedulesParams{TenantID: "tenant-a", After: "sch_02", Limit: 3}, []string{"sch_03", "sch_04", "sch_05"}},
			{"last page", store.ListSchedulesParams{TenantID: "tenant-a", After: "sch_05", Limit: 3}, []string{"sch_06"}},
			{"past the end", store.ListSchedulesParams{TenantID: "tenant-a", After: "sch_06"}, []string{}},
			{"after an id that is not there", store.ListSchedulesParams{TenantID: "tenant-a", After: "sch_035"}, []string{"sch_04", "sch_05", "sch_06"}},
			{"active", store.ListSchedulesParams{TenantID: "tenant-a", State: record.ScheduleActive}, []string{"sch_00", "sch_02", "sch_04", "sch_06"}},
			{"active, paged", store.ListSchedulesParams{TenantID: "tenant-a", State: record.ScheduleActive, After: "sch_02", Limit: 1}, []string{"sch_04"}},
			{"canceled", store.ListSchedulesParams{TenantID: "tenant-a", State: record.ScheduleCanceled}, []string{"sch_03"}},
			{"other tenant", store.ListSchedulesParams{TenantID: "tenant-b"}, []string{"sch_00b", "sch_99"}},
			{"no tenant", store.ListSchedulesParams{TenantID: "tenant-c"}, []string{}},
			{"limit over the max", store.ListSchedulesParams{TenantID: "tenant-b", Limit: store.MaxListLimit + 1}, []string{"sch_00b", "sch_99"}},
		} {
			got, err := s.ListSchedules(ctx, tc.p)
			if err != nil {
				t.Fatalf("ListSchedules %s: %v", tc.what, err)
			}
			if g := ids(got); fmt.Sprint(g) != fmt.Sprint(tc.want) {
				t.Errorf("ListSchedules %s: %v, want %v", tc.what, g, tc.want)
			}
		}
		got, err := s.ListSchedules(ctx, store.ListSchedulesParams{TenantID: "tenant-a", Limit: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("ListSchedules: %v, %v", got, err)
		}
		want := NewSchedule("tenant-a", "sch_00")
		want.State = states[0]
		assertScheduleEqual(t, &got[0], want)
	})

	t.Run("UpdateConditionalOnVersion", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_upd")
		mustInsertSchedule(t, s, sc)
		pending := NewOccurrence(sc, at(time.Hour))
		pending.State = record.OccurrenceEnqueued
		mustInsertOccurrences(t, s, 1, pending)

		changed := *sc
		changed.Expr = "0 3 * * *"
		called := false
		next := func(time.Time) time.Time { called = true; return at(2 * time.Hour) }
		for _, tc := range []struct {
			what   string
			tenant string
			id     string
			prev   int64
			want   error
		}{
			{"stale version", "tenant-a", "sch_upd", 0, store.ErrConflict},
			{"future version", "tenant-a", "sch_upd", 2, store.ErrConflict},
			{"missing schedule", "tenant-a", "sch_nope", 1, store.ErrNotFound},
			{"another tenant's", "tenant-b", "sch_upd", 1, store.ErrNotFound},
		} {
			c := changed
			c.TenantID, c.ScheduleID = tc.tenant, tc.id
			_, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &c, PrevVersion: tc.prev, Now: at(0), Next: next})
			wantErr(t, "WriteVersion: "+tc.what, err, tc.want)
		}
		if called {
			t.Error("a refused update called Next")
		}
		// Nothing was written: neither the schedule nor its occurrences.
		assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", "sch_upd"), sc)
		assertOccurrence(t, "occurrence after refused updates", mustGetOccurrence(t, s, "tenant-a", pending.OccurrenceID), pending)

		// The right version applies once; the same update again conflicts.
		res := mustUpdate(t, s, &changed, 1, at(0), next)
		if res.Schedule.Version != 2 || res.Schedule.Expr != "0 3 * * *" {
			t.Errorf("updated schedule: version %d expr %q, want 2 and the new expr", res.Schedule.Version, res.Schedule.Expr)
		}
		_, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &changed, PrevVersion: 1, Now: at(0), Next: next})
		wantErr(t, "WriteVersion replayed at the old version", err, store.ErrConflict)
		if got := mustGetSchedule(t, s, "tenant-a", "sch_upd"); got.Version != 2 {
			t.Errorf("version %d after a conflicting update, want 2", got.Version)
		}
	})

	t.Run("UpdateRaceOneWins", func(t *testing.T) {
		t.Parallel()
		// Changes made from the same version at once: the version read is
		// locked until the commit, so exactly one applies and every other
		// is a conflict, and the one that applied cancels the pending
		// occurrence once.
		s := open(t)
		sc := NewSchedule("tenant-a", "sch_race")
		mustInsertSchedule(t, s, sc)
		pending := NewOccurrence(sc, at(time.Hour))
		pending.State = record.OccurrenceEnqueued
		mustInsertOccurrences(t, s, 1, pending)
		const n = 8
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			won      []engine.ChangeResult
			conflict int
		)
		for i := range n {
			wg.Go(func() {
				c := *sc
				c.Queue = fmt.Sprintf("q%d", i)
				res, err := engine.WriteVersion(t.Context(), s, engine.VersionChange{Schedule: &c, PrevVersion: 1, Now: at(0),
					Next: func(time.Time) time.Time { return at(2 * time.Hour) }})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, res)
				case errors.Is(err, store.ErrConflict):
					conflict++
				default:
					t.Errorf("WriteVersion %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 || conflict != n-1 {
			t.Fatalf("%d changes from version 1 applied and %d conflicted, want 1 and %d", len(won), conflict, n-1)
		}
		if won[0].Canceled != 1 || won[0].Schedule.Version != 2 {
			t.Errorf("the change that applied: canceled %d, version %d; want 1 and 2", won[0].Canceled, won[0].Schedule.Version)
		}
		assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", "sch_race"), &won[0].Schedule)
	})

	t.Run("UpdateWritesNewVersion", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := NewSchedule("tenant-a", "sch_fields")
		mustInsertSchedule(t, s, sc)

		u := NewSchedule("tenant-a", "sch_fields")
		u.Version = 99 // ignored: the new version is PrevVersion+1
		u.Shard, u.Name, u.Expr, u.TimeZone, u.Queue, u.Payload = 3, "renamed", "*/5 * * * *", "Europe/Paris", "other", []byte("new")
		u.MaxLateness, u.CatchUpK, u.OverlapPolicy, u.FlexibleWindow = time.Minute, 7, record.OverlapQueueOne, 0
		u.Retry = record.RetryPolicy{MaxAttempts: 3, BackoffBase: time.Second, BackoffCap: time.Minute, Deadline: time.Hour}
		u.IdempotencyKey = ""
		u.State = record.SchedulePaused
		u.NextRunAt = time.Time{}
		u.UpdatedAt = at(5 * time.Second)
		u.MissedCount = 1000               // the planner's: kept
		u.CreatedAt = at(-100 * time.Hour) // history: kept
		called := false
		res := mustUpdate(t, s, u, 1, at(0), func(time.Time) time.Time { called = true; return at(time.Hour) })
		if called {
			t.Error("Next called for a PAUSED schedule")
		}
		want := *u
		want.Version, want.MissedCount, want.CreatedAt = 2, sc.MissedCount, sc.CreatedAt
		assertScheduleEqual(t, &res.Schedule, &want)
		assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", "sch_fields"), &want)

		// ACTIVE without a Next function keeps the cursor it is given.
		u.State, u.NextRunAt = record.ScheduleActive, at(3*time.Hour)
		res = mustUpdate(t, s, u, 2, at(0), nil)
		if !res.Schedule.NextRunAt.Equal(at(3*time.Hour)) || res.Schedule.Version != 3 {
			t.Errorf("resume without Next: next %v version %d", res.Schedule.NextRunAt, res.Schedule.Version)
		}
	})

	t.Run("UpdateCancelsOlderVersions", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := NewSchedule("tenant-a", "sch_cancel")
		mustInsertSchedule(t, s, sc)
		other := NewSchedule("tenant-a", "sch_bystander")
		mustInsertSchedule(t, s, other)

		states := []record.OccurrenceState{
			record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRetryWait, // canceled
			record.OccurrenceRunning, record.OccurrenceRunning, // in flight
			record.OccurrenceSucceeded, record.OccurrenceDead, record.OccurrenceMissed, // history
			record.OccurrenceSkippedOverlap, record.OccurrenceCanceled,
		}
		var occs []record.Occurrence
		for i, st := range states {
			o := NewOccurrence(sc, at(time.Duration(i)*time.Minute))
			o.State = st
			occs = append(occs, o)
		}
		bystander := NewOccurrence(other, at(0))
		bystander.State = record.OccurrenceEnqueued
		mustInsertOccurrences(t, s, len(occs)+1, append(occs, bystander)...)

		now := at(time.Hour + 7*time.Millisecond)
		sc.State = record.ScheduleCanceled
		sc.NextRunAt = time.Time{}
		res := mustUpdate(t, s, sc, 1, now, nil)
		if res.Canceled != 3 || res.InFlight != 2 {
			t.Errorf("cancel: canceled %d, in flight %d; want 3 and 2", res.Canceled, res.InFlight)
		}
		for i, o := range occs {
			want := o
			if i < 3 {
				want.State, want.FinishedAt = record.OccurrenceCanceled, now
			}
			assertOccurrence(t, fmt.Sprintf("%s occurrence after cancel", o.State), mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
		}
		assertOccurrence(t, "another schedule's occurrence", mustGetOccurrence(t, s, "tenant-a", bystander.OccurrenceID), bystander)

		// The next update finds nothing left to cancel but the same two in
		// flight.
		sc.State = record.ScheduleCanceled
		res = mustUpdate(t, s, sc, 2, now, nil)
		if res.Canceled != 0 || res.InFlight != 2 {
			t.Errorf("second update: canceled %d, in flight %d; want 0 and 2", res.Canceled, res.InFlight)
		}
	})

	t.Run("UpdateStartsAfterLastKept", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			what   string
			states []record.OccurrenceState // one per minute from t0
			want   time.Time                // lastKept
		}{
			{"no occurrences", nil, time.Time{}},
			{"only pending, all canceled", []record.OccurrenceState{record.OccurrenceEnqueued, record.OccurrenceScheduled}, time.Time{}},
			{"running is kept", []record.OccurrenceState{record.OccurrenceSucceeded, record.OccurrenceRunning, record.OccurrenceEnqueued, record.OccurrenceScheduled}, at(time.Minute)},
			{"missed is kept", []record.OccurrenceState{record.OccurrenceSucceeded, record.OccurrenceMissed, record.OccurrenceRetryWait}, at(time.Minute)},
			{"canceled before is skipped", []record.OccurrenceState{record.OccurrenceDead, record.OccurrenceCanceled, record.OccurrenceCanceled}, at(0)},
			{"latest is finished", []record.OccurrenceState{record.OccurrenceEnqueued, record.OccurrenceSucceeded}, at(time.Minute)},
		} {
			t.Run(tc.what, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				sc := NewSchedule("tenant-a", "sch_last")
				mustInsertSchedule(t, s, sc)
				var occs []record.Occurrence
				for i, st := range tc.states {
					o := NewOccurrence(sc, at(time.Duration(i)*time.Minute))
					o.State = st
					occs = append(occs, o)
				}
				// A canceled occurrence later than all the others never
				// counts.
				old := NewOccurrence(sc, at(time.Hour))
				old.State = record.OccurrenceCanceled
				mustInsertOccurrences(t, s, len(occs)+1, append(occs, old)...)

				var got []time.Time
				res := mustUpdate(t, s, sc, 1, at(2*time.Hour), func(last time.Time) time.Time {
					got = append(got, last)
					return at(24*time.Hour + 500*time.Millisecond)
				})
				if len(got) != 1 || !got[0].Equal(tc.want) {
					t.Fatalf("Next called with %v, want once with %v", got, tc.want)
				}
				if !res.Schedule.NextRunAt.Equal(at(24*time.Hour+500*time.Millisecond)) || res.Schedule.Version != 2 {
					t.Errorf("result: next %v version %d", res.Schedule.NextRunAt, res.Schedule.Version)
				}
				stored := mustGetSchedule(t, s, "tenant-a", "sch_last")
				assertScheduleEqual(t, stored, &res.Schedule)
			})
		}
	})

	t.Run("UpdateNextRunAtNone", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := NewSchedule("tenant-a", "sch_none")
		mustInsertSchedule(t, s, sc)
		res := mustUpdate(t, s, sc, 1, at(0), func(time.Time) time.Time { return time.Time{} })
		if !res.Schedule.NextRunAt.IsZero() || !mustGetSchedule(t, s, "tenant-a", "sch_none").NextRunAt.IsZero() {
			t.Errorf("Next returned zero: cursor %v, want none", res.Schedule.NextRunAt)
		}
		// Nothing left to fire: the same version completes the schedule.
		if res.Schedule.State != record.ScheduleCompleted || res.Schedule.Version != 2 {
			t.Errorf("Next returned zero: %s at version %d, want COMPLETED at 2", res.Schedule.State, res.Schedule.Version)
		}
	})

	t.Run("UpdateCallbackPanicWritesNothing", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := NewSchedule("tenant-a", "sch_panic")
		mustInsertSchedule(t, s, sc)
		o := NewOccurrence(sc, at(0))
		o.State = record.OccurrenceEnqueued
		mustInsertOccurrences(t, s, 1, o)
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the callback's panic did not reach the caller")
				}
			}()
			_, _ = engine.WriteVersion(t.Context(), s, engine.VersionChange{Schedule: sc, PrevVersion: 1, Now: at(0),
				Next: func(time.Time) time.Time { panic("engine bug") }})
		}()
		assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", "sch_panic"), sc)
		assertOccurrence(t, "occurrence after a panicking update", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), o)
		// The store still works.
		mustUpdate(t, s, sc, 1, at(0), nil)
	})
}

// mustUpdate updates sc from version prev and checks that the result's
// schedule is what a read returns.
func mustUpdate(t *testing.T, s Store, sc *record.Schedule, prev int64, now time.Time, next func(time.Time) time.Time) engine.ChangeResult {
	t.Helper()
	res, err := engine.WriteVersion(t.Context(), s, engine.VersionChange{Schedule: sc, PrevVersion: prev, Now: now, Next: next})
	if err != nil {
		t.Fatalf("WriteVersion(%s from v%d): %v", sc.ScheduleID, prev, err)
	}
	if res.Schedule.Version != prev+1 {
		t.Errorf("WriteVersion(%s from v%d): version %d, want %d", sc.ScheduleID, prev, res.Schedule.Version, prev+1)
	}
	assertScheduleEqual(t, mustGetSchedule(t, s, sc.TenantID, sc.ScheduleID), &res.Schedule)
	return res
}
