// Package storetest is the store conformance suite: one set of tests that
// every store driver (SQLite and PostgreSQL) runs unchanged, so the
// drivers keep the same contract. A new store behaviour gets a subtest here
// first.
//
// The queue's rules (the overlap decision of a claim, what an expired
// lease leads to, what a replay and a purge write) live in the engine,
// composed from the store's transaction statements (store.QueueTx). The
// suite drives them through the engine's functions of a store and a time
// (engine.ClaimOccurrences, engine.ExpireLeases, ...) on the store under
// test, so every assertion about them runs on every store.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// Store is what the suite needs of a driver: the whole store contract,
// since the suite pins all of it.
type Store = store.Store

// Exercise runs the suite. open must return a new, empty store for each
// call and close it when the test ends (t.Cleanup).
func Exercise(t *testing.T, open func(t *testing.T) Store) {
	t.Helper()
	t.Run("Schedules", func(t *testing.T) { t.Parallel(); testSchedules(t, open) })
	t.Run("Planner", func(t *testing.T) { t.Parallel(); testPlanner(t, open) })
	t.Run("Occurrences", func(t *testing.T) { t.Parallel(); testOccurrences(t, open) })
	t.Run("Queue", func(t *testing.T) { t.Parallel(); testQueue(t, open) })
	t.Run("Isolation", func(t *testing.T) { t.Parallel(); testIsolation(t, open) })
	t.Run("Nodes", func(t *testing.T) { t.Parallel(); testNodes(t, open) })
	t.Run("Seeing", func(t *testing.T) { t.Parallel(); testSeeing(t, open) })
	t.Run("Versions", func(t *testing.T) { t.Parallel(); testVersions(t, open) })
	t.Run("Outages", func(t *testing.T) { t.Parallel(); testOutages(t, open) })
	t.Run("Tenants", func(t *testing.T) { t.Parallel(); testTenants(t, open) })
	t.Run("Targets", func(t *testing.T) { t.Parallel(); testTargets(t, open) })
	t.Run("Audit", func(t *testing.T) { t.Parallel(); testAudit(t, open) })
	t.Run("RunningQuota", func(t *testing.T) { t.Parallel(); testRunningQuota(t, open) })
	t.Run("Quotas", func(t *testing.T) { t.Parallel(); testQuotas(t, open) })
	t.Run("Batch", func(t *testing.T) { t.Parallel(); testBatch(t, open) })
	t.Run("Retention", func(t *testing.T) { t.Parallel(); testRetention(t, open) })
	t.Run("Zones", func(t *testing.T) { t.Parallel(); testZones(t, open) })
	t.Run("Runs", func(t *testing.T) { t.Parallel(); testRuns(t, open) })

	t.Run("InsertGetSchedule", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		want := NewSchedule("tenant-a", "sch_roundtrip")
		mustInsertSchedule(t, s, want)

		got, err := s.GetSchedule(ctx, "tenant-a", "sch_roundtrip")
		if err != nil {
			t.Fatalf("GetSchedule: %v", err)
		}
		assertScheduleEqual(t, got, want)

		// Optional fields left empty come back empty.
		bare := NewSchedule("tenant-a", "sch_bare")
		bare.Anchor, bare.NextRunAt, bare.IdempotencyKey, bare.Payload = time.Time{}, time.Time{}, "", nil
		mustInsertSchedule(t, s, bare)
		got, err = s.GetSchedule(ctx, "tenant-a", "sch_bare")
		if err != nil {
			t.Fatalf("GetSchedule: %v", err)
		}
		if !got.Anchor.IsZero() || !got.NextRunAt.IsZero() || got.IdempotencyKey != "" || len(got.Payload) != 0 {
			t.Errorf("empty optional fields came back as anchor=%v next=%v key=%q payload=%q",
				got.Anchor, got.NextRunAt, got.IdempotencyKey, got.Payload)
		}
	})

	t.Run("ScheduleEnumsMatchSchema", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		i := 0
		insert := func(mut func(*record.Schedule)) {
			t.Helper()
			i++
			sc := NewSchedule("tenant-a", fmt.Sprintf("sch_enum_%d", i))
			mut(sc)
			mustInsertSchedule(t, s, sc)
			got, err := s.GetSchedule(ctx, sc.TenantID, sc.ScheduleID)
			if err != nil {
				t.Fatalf("GetSchedule: %v", err)
			}
			assertScheduleEqual(t, got, sc)
		}
		for _, v := range []record.ScheduleState{record.ScheduleActive, record.SchedulePaused, record.ScheduleCanceled, record.ScheduleCompleted} {
			insert(func(sc *record.Schedule) { sc.State = v })
		}
		for _, v := range []timetable.Kind{timetable.KindCron, timetable.KindAt, timetable.KindEvery} {
			insert(func(sc *record.Schedule) { sc.Kind = v })
		}
		for _, v := range []timetable.GapPolicy{timetable.GapSkip, timetable.GapShift} {
			insert(func(sc *record.Schedule) { sc.DSTGap = v })
		}
		for _, v := range []timetable.RepeatPolicy{timetable.RepeatFirst, timetable.RepeatLast, timetable.RepeatAll} {
			insert(func(sc *record.Schedule) { sc.DSTRepeat = v })
		}
		for _, v := range []record.MisfirePolicy{record.MisfireSkip, record.MisfireFireOnce, record.MisfireCatchUp} {
			insert(func(sc *record.Schedule) { sc.MisfirePolicy, sc.CatchUpK = v, 1000 })
		}
		for _, v := range []record.OverlapPolicy{record.OverlapAllow, record.OverlapSkipIfRunning, record.OverlapQueueOne} {
			insert(func(sc *record.Schedule) { sc.OverlapPolicy = v })
		}

		// Values outside the enums are refused, with no sentinel.
		bad := NewSchedule("tenant-a", "sch_enum_bad")
		bad.State = "RUNNING"
		if err := s.InsertSchedule(ctx, bad); err == nil {
			t.Error("InsertSchedule with state RUNNING: no error")
		}
		bad.State, bad.MisfirePolicy, bad.CatchUpK = record.ScheduleActive, record.MisfireCatchUp, 0
		if err := s.InsertSchedule(ctx, bad); err == nil {
			t.Error("InsertSchedule with catch_up and K=0: no error")
		}
	})

	t.Run("InsertScheduleConflicts", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		first := NewSchedule("tenant-a", "sch_dup")
		mustInsertSchedule(t, s, first)

		again := NewSchedule("tenant-a", "sch_dup")
		again.IdempotencyKey = "other-key"
		if err := s.InsertSchedule(ctx, again); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same schedule id: got %v, want ErrConflict", err)
		}
		// The id is global: another tenant cannot take it either.
		again.TenantID = "tenant-b"
		if err := s.InsertSchedule(ctx, again); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same schedule id, other tenant: got %v, want ErrConflict", err)
		}

		sameKey := NewSchedule("tenant-a", "sch_dup_key")
		sameKey.IdempotencyKey = first.IdempotencyKey
		if err := s.InsertSchedule(ctx, sameKey); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same idempotency key: got %v, want ErrConflict", err)
		}
		// Keys are per tenant.
		sameKey.TenantID = "tenant-b"
		mustInsertSchedule(t, s, sameKey)
		// No key is no key: many schedules may have none.
		for _, id := range []string{"sch_nokey_1", "sch_nokey_2"} {
			sc := NewSchedule("tenant-a", id)
			sc.IdempotencyKey = ""
			mustInsertSchedule(t, s, sc)
		}

		got, err := s.GetSchedule(ctx, "tenant-a", "sch_dup")
		if err != nil {
			t.Fatalf("GetSchedule: %v", err)
		}
		assertScheduleEqual(t, got, first) // the refused writes changed nothing
	})

	t.Run("TenantIsolation", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_iso")
		mustInsertSchedule(t, s, sc)
		occ := NewOccurrence(sc, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
		mustInsertOccurrences(t, s, 1, occ)

		if _, err := s.GetSchedule(ctx, "tenant-b", "sch_iso"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSchedule as another tenant: got %v, want ErrNotFound", err)
		}
		if _, err := s.GetSchedule(ctx, "tenant-a", "sch_missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSchedule of a missing id: got %v, want ErrNotFound", err)
		}
		id := record.OccurrenceID(sc.ScheduleID, sc.Version, occ.ScheduledFor)
		if _, err := s.GetOccurrence(ctx, "tenant-b", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetOccurrence as another tenant: got %v, want ErrNotFound", err)
		}
		if got, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-b", ScheduleID: "sch_iso"}); err != nil || len(got) != 0 {
			t.Errorf("ListOccurrences as another tenant: got %d rows, %v; want none", len(got), err)
		}

		// Another tenant cannot materialize occurrences of this schedule,
		// and the refused batch leaves nothing behind.
		foreign := NewOccurrence(sc, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
		foreign.TenantID = "tenant-b"
		ok := NewOccurrence(sc, time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC))
		if _, err := s.InsertOccurrences(ctx, []record.Occurrence{ok, foreign}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("InsertOccurrences under another tenant: got %v, want ErrNotFound", err)
		}
		assertOccurrenceCount(t, s, sc, 1)

		// Nor can anyone materialize occurrences of a schedule that does
		// not exist.
		ghost := NewSchedule("tenant-a", "sch_iso_ghost")
		if _, err := s.InsertOccurrences(ctx, []record.Occurrence{NewOccurrence(ghost, time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC))}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("InsertOccurrences of a missing schedule: got %v, want ErrNotFound", err)
		}
		if got, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: ghost.ScheduleID}); err != nil || len(got) != 0 {
			t.Errorf("occurrences of a missing schedule: got %d rows, %v; want none", len(got), err)
		}
	})

	t.Run("DuplicateOccurrenceIsNoOp", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_dup_occ")
		mustInsertSchedule(t, s, sc)
		base := time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)
		batch := []record.Occurrence{
			NewOccurrence(sc, base),
			NewOccurrence(sc, base.Add(time.Hour)),
			NewOccurrence(sc, base.Add(2*time.Hour)),
		}
		mustInsertOccurrences(t, s, 3, batch...)
		// The same firings again, as a restarted or stale planner would.
		mustInsertOccurrences(t, s, 0, batch...)
		// A second insert that differs in its mutable fields is still the
		// same firing: the stored row is kept as it was.
		changed := batch[0]
		changed.State, changed.AvailableAt = record.OccurrenceEnqueued, base.Add(time.Minute)
		mustInsertOccurrences(t, s, 0, changed)
		// Overlapping batches insert only the new firing, and a firing twice
		// in one batch is one row.
		next := NewOccurrence(sc, base.Add(3*time.Hour))
		mustInsertOccurrences(t, s, 1, batch[2], next, next)
		mustInsertOccurrences(t, s, 0)

		got := assertOccurrenceCount(t, s, sc, 4)
		for i, o := range got {
			want := base.Add(time.Duration(i) * time.Hour)
			if !o.ScheduledFor.Equal(want) {
				t.Errorf("row %d scheduled for %v, want %v", i, o.ScheduledFor, want)
			}
			if o.OccurrenceID != record.OccurrenceID(sc.ScheduleID, sc.Version, want) {
				t.Errorf("row %d id %s is not derived", i, o.OccurrenceID)
			}
		}
		stored, err := s.GetOccurrence(ctx, sc.TenantID, got[0].OccurrenceID)
		if err != nil {
			t.Fatalf("GetOccurrence: %v", err)
		}
		want := batch[0]
		want.OccurrenceID = got[0].OccurrenceID
		if !reflect.DeepEqual(*stored, want) {
			t.Errorf("stored occurrence changed by a duplicate insert:\n got %+v\nwant %+v", *stored, want)
		}
	})

	t.Run("OccurrenceIDsStable", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_ids")
		mustInsertSchedule(t, s, sc)
		at := time.Date(2026, 11, 1, 8, 30, 0, 0, time.UTC)
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}

		// The caller may leave the id empty or give the derived one; the
		// instant matters, not the zone it is expressed in.
		o := NewOccurrence(sc, at)
		o.OccurrenceID, o.ScheduledFor = "", at.In(ny)
		mustInsertOccurrences(t, s, 1, o)
		want := record.OccurrenceID(sc.ScheduleID, sc.Version, at)
		got, err := s.GetOccurrence(ctx, sc.TenantID, want)
		if err != nil {
			t.Fatalf("GetOccurrence(%s): %v", want, err)
		}
		if !got.ScheduledFor.Equal(at) || got.ScheduledFor.Location() != time.UTC {
			t.Errorf("scheduled_for %v, want %v in UTC", got.ScheduledFor, at)
		}
		withID := NewOccurrence(sc, at)
		mustInsertOccurrences(t, s, 0, withID)

		// A new version of the schedule is a different firing.
		v2 := NewOccurrence(sc, at)
		v2.ScheduleVersion = 2
		v2.OccurrenceID = record.OccurrenceID(sc.ScheduleID, 2, at)
		mustInsertOccurrences(t, s, 1, v2)
		if v2.OccurrenceID == want {
			t.Error("versions 1 and 2 share an occurrence id")
		}
		assertOccurrenceCount(t, s, sc, 2)

		// Ids that are not derived, and sub-second times (which the id
		// cannot tell apart), fail the whole batch.
		forged := NewOccurrence(sc, at.Add(time.Hour))
		forged.OccurrenceID = "occ_forged"
		if _, err := s.InsertOccurrences(ctx, []record.Occurrence{NewOccurrence(sc, at.Add(2*time.Hour)), forged}); err == nil {
			t.Error("InsertOccurrences with a forged id: no error")
		}
		frac := NewOccurrence(sc, at.Add(time.Hour+time.Millisecond))
		frac.OccurrenceID = ""
		if _, err := s.InsertOccurrences(ctx, []record.Occurrence{frac}); err == nil {
			t.Error("InsertOccurrences with a sub-second scheduled_for: no error")
		}
		assertOccurrenceCount(t, s, sc, 2)
	})

	t.Run("OccurrenceEnumsMatchSchema", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := NewSchedule("tenant-a", "sch_occ_enums")
		mustInsertSchedule(t, s, sc)
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var batch []record.Occurrence
		for _, st := range []record.OccurrenceState{
			record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRunning,
			record.OccurrenceSucceeded, record.OccurrenceRetryWait, record.OccurrenceDead,
			record.OccurrenceMissed, record.OccurrenceCanceled, record.OccurrenceSkippedOverlap,
		} {
			for li, lane := range []record.Lane{record.LaneStrict, record.LaneFlexible, record.LaneCatchUp} {
				o := NewOccurrence(sc, at)
				o.State, o.Lane = st, lane
				o.EnqueuedAt = at.Add(10 * time.Millisecond)
				o.FirstClaimedAt = at.Add(20 * time.Millisecond)
				o.FinishedAt = at.Add(30 * time.Millisecond)
				o.AttemptCount = 2
				o.AttemptFloor = 1
				o.ShardEpoch = int64(len(batch) + 1)
				o.RetryFrom = at.Add(40 * time.Millisecond)
				o.OverlapPolicy = []record.OverlapPolicy{record.OverlapAllow, record.OverlapSkipIfRunning, record.OverlapQueueOne}[len(batch)%3]
				if st == record.OccurrenceDead {
					o.DeadReason = []record.DeadReason{record.DeadPermanentFailure, record.DeadAttemptsExhausted, record.DeadDeadlinePassed}[li]
				}
				batch = append(batch, o)
				at = at.Add(time.Minute)
			}
		}
		mustInsertOccurrences(t, s, len(batch), batch...)
		for _, want := range batch {
			got, err := s.GetOccurrence(t.Context(), sc.TenantID, want.OccurrenceID)
			if err != nil {
				t.Fatalf("GetOccurrence: %v", err)
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", *got, want)
			}
		}
	})
}

// NewSchedule returns a valid schedule with every field set, times on the
// millisecond (the stores' precision) and in UTC.
func NewSchedule(tenantID, scheduleID string) *record.Schedule {
	created := time.Date(2026, 2, 1, 12, 0, 0, 123_000_000, time.UTC)
	return &record.Schedule{
		TenantID:       tenantID,
		ScheduleID:     scheduleID,
		Shard:          7,
		Name:           "nightly report " + scheduleID,
		Kind:           timetable.KindCron,
		Expr:           "30 2 * * *",
		TimeZone:       "America/New_York",
		Anchor:         time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		DSTGap:         timetable.GapShift,
		DSTRepeat:      timetable.RepeatAll,
		Version:        1,
		State:          record.ScheduleActive,
		NextRunAt:      time.Date(2026, 2, 2, 7, 30, 0, 0, time.UTC),
		Queue:          "reports",
		Payload:        []byte("{\"report\":\"nightly\"}\x00\xff"),
		MisfirePolicy:  record.MisfireCatchUp,
		MaxLateness:    90 * time.Second,
		CatchUpK:       5,
		OverlapPolicy:  record.OverlapSkipIfRunning,
		FlexibleWindow: 15 * time.Minute,
		Retry: record.RetryPolicy{
			MaxAttempts: 10,
			BackoffBase: 1500 * time.Millisecond,
			BackoffCap:  5 * time.Minute,
			Deadline:    24 * time.Hour,
		},
		IdempotencyKey: "key-" + scheduleID,
		MissedCount:    2,
		CreatedAt:      created,
		UpdatedAt:      created.Add(time.Second),
	}
}

// NewOccurrence returns a SCHEDULED strict occurrence of sc at the given
// time, with its derived id, the schedule's overlap policy, and its retry
// deadline counting from its scheduled time.
func NewOccurrence(sc *record.Schedule, scheduledFor time.Time) record.Occurrence {
	return record.Occurrence{
		OccurrenceID:    record.OccurrenceID(sc.ScheduleID, sc.Version, scheduledFor),
		TenantID:        sc.TenantID,
		ScheduleID:      sc.ScheduleID,
		ScheduleVersion: sc.Version,
		ScheduledFor:    scheduledFor.UTC(),
		AvailableAt:     scheduledFor.UTC(),
		State:           record.OccurrenceScheduled,
		Lane:            record.LaneStrict,
		Queue:           sc.Queue,
		OverlapPolicy:   sc.OverlapPolicy,
		RetryFrom:       scheduledFor.UTC(),
	}
}

func mustInsertSchedule(t *testing.T, s Store, sc *record.Schedule) {
	t.Helper()
	if err := s.InsertSchedule(t.Context(), sc); err != nil {
		t.Fatalf("InsertSchedule(%s): %v", sc.ScheduleID, err)
	}
}

func mustInsertOccurrences(t *testing.T, s Store, wantNew int, occs ...record.Occurrence) {
	t.Helper()
	n, err := s.InsertOccurrences(t.Context(), occs)
	if err != nil {
		t.Fatalf("InsertOccurrences: %v", err)
	}
	if n != wantNew {
		t.Fatalf("InsertOccurrences of %d: %d new, want %d", len(occs), n, wantNew)
	}
}

func assertOccurrenceCount(t *testing.T, s Store, sc *record.Schedule, want int) []record.Occurrence {
	t.Helper()
	got, err := s.ListOccurrences(t.Context(), store.ListOccurrencesParams{TenantID: sc.TenantID, ScheduleID: sc.ScheduleID})
	if err != nil {
		t.Fatalf("ListOccurrences: %v", err)
	}
	if len(got) != want {
		t.Fatalf("%d occurrences of %s, want %d", len(got), sc.ScheduleID, want)
	}
	return got
}

func assertScheduleEqual(t *testing.T, got, want *record.Schedule) {
	t.Helper()
	g, w := *got, *want
	if !bytes.Equal(g.Payload, w.Payload) {
		t.Errorf("payload %q, want %q", g.Payload, w.Payload)
	}
	g.Payload, w.Payload = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("schedule round trip:\n got %+v\nwant %+v", g, w)
	}
}

// t0 is the suite's reference instant; tests place everything relative to
// it, on whole milliseconds (the stores' precision).
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func mustGetSchedule(t *testing.T, s Store, tenantID, scheduleID string) *record.Schedule {
	t.Helper()
	sc, err := s.GetSchedule(t.Context(), tenantID, scheduleID)
	if err != nil {
		t.Fatalf("GetSchedule(%s): %v", scheduleID, err)
	}
	return sc
}

func mustGetOccurrence(t *testing.T, s Store, tenantID, occurrenceID string) record.Occurrence {
	t.Helper()
	o, err := s.GetOccurrence(t.Context(), tenantID, occurrenceID)
	if err != nil {
		t.Fatalf("GetOccurrence(%s): %v", occurrenceID, err)
	}
	return *o
}

// wantErr fails unless errors.Is(err, target); a nil target wants no
// error.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	switch {
	case target == nil && err != nil:
		t.Errorf("%s: %v, want no error", what, err)
	case target != nil && !errors.Is(err, target):
		t.Errorf("%s: %v, want %v", what, err, target)
	}
}

// assertOccurrence compares an occurrence field by field.
// assertAnswer checks a finish's answer (store.FinishResult.Occurrence):
// the id, tenant, state and attempt count of want, all an answer must
// hold. The whole occurrence is asserted on a read of it.
func assertAnswer(t *testing.T, what string, got, want record.Occurrence) {
	t.Helper()
	if got.OccurrenceID != want.OccurrenceID || got.TenantID != want.TenantID || got.State != want.State || got.AttemptCount != want.AttemptCount {
		t.Errorf("%s: %s of %s, %s after %d attempts; want %s of %s, %s after %d", what, got.OccurrenceID, got.TenantID, got.State,
			got.AttemptCount, want.OccurrenceID, want.TenantID, want.State, want.AttemptCount)
	}
}

func assertOccurrence(t *testing.T, what string, got, want record.Occurrence) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}
