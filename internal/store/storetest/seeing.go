package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

// testSeeing pins what the engine reads to show the queue to people:
// manual occurrences, why an occurrence died and its last error, keyset
// paging of occurrence lists, the overlap skips a claim made, the
// dead-letter queue's purge, and the figures of StatsStore (stats.go).
func testSeeing(t *testing.T, open func(t *testing.T) Store) {
	// A manual occurrence (a trigger outside the timetable) has its key in
	// the natural key and an id derived from the schedule and the key
	// alone: it lives beside the planner's firing of the same second and
	// version, and a retried trigger, whenever it comes, is the same
	// occurrence.
	t.Run("ManualOccurrences", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_manual", record.OverlapAllow)
		planned := readyOccurrence(sc, 0, record.LaneStrict)
		manual := readyOccurrence(sc, 0, record.LaneStrict)
		manual.TriggerKey = "key-1"
		manual.OccurrenceID = record.ManualOccurrenceID(sc.ScheduleID, "key-1")
		mustInsertOccurrences(t, s, 1, planned)
		mustInsertOccurrences(t, s, 1, manual)

		// The same trigger again, a minute later: nothing new, no error,
		// and the stored occurrence keeps its first scheduled time.
		retried := readyOccurrence(sc, 1, record.LaneStrict)
		retried.TriggerKey, retried.OccurrenceID = manual.TriggerKey, manual.OccurrenceID
		mustInsertOccurrences(t, s, 0, retried)
		mustInsertOccurrences(t, s, 0, manual, retried)

		// Another key at the same second is another occurrence; the id may
		// be left to the store, which derives it from the key.
		other := readyOccurrence(sc, 0, record.LaneStrict)
		other.TriggerKey, other.OccurrenceID = "key-2", ""
		mustInsertOccurrences(t, s, 1, other)
		other.OccurrenceID = record.ManualOccurrenceID(sc.ScheduleID, "key-2")

		for _, want := range []record.Occurrence{planned, manual, other} {
			got := mustGetOccurrence(t, s, "tenant-a", want.OccurrenceID)
			assertOccurrence(t, "occurrence "+want.OccurrenceID, got, want)
			if got.Manual() != (want.TriggerKey != "") {
				t.Errorf("%s: Manual() = %v with trigger key %q", want.OccurrenceID, got.Manual(), got.TriggerKey)
			}
		}
		// Listed by (scheduled_for, occurrence_id): the timetable's firing
		// first, then the manual ones of the same second.
		got := assertOccurrenceCount(t, s, sc, 3)
		if want := sortedIDs(planned, manual, other); fmt.Sprint(occIDs(got)) != fmt.Sprint(want) || want[0] != planned.OccurrenceID {
			t.Errorf("listing: %v, want %v (the timetable's firing first)", occIDs(got), want)
		}
		for _, o := range got {
			if o.OccurrenceID != planned.OccurrenceID && (!o.Manual() || o.TriggerKey == "") {
				t.Errorf("listed manual occurrence %s has trigger key %q", o.OccurrenceID, o.TriggerKey)
			}
		}
		// A claim hands the key on to the worker.
		claimed := mustClaim(t, s, "tenant-a", 10, at(time.Hour))
		if len(claimed) != 3 {
			t.Fatalf("claimed %d, want 3", len(claimed))
		}
		for _, c := range claimed {
			if want := map[string]string{planned.OccurrenceID: "", manual.OccurrenceID: "key-1", other.OccurrenceID: "key-2"}[c.Occurrence.OccurrenceID]; c.Occurrence.TriggerKey != want {
				t.Errorf("claimed %s with trigger key %q, want %q", c.Occurrence.OccurrenceID, c.Occurrence.TriggerKey, want)
			}
		}

		// An id that is not the one derived from the key, or a manual id
		// without its key, fails the batch.
		forged := readyOccurrence(sc, 2, record.LaneStrict)
		forged.TriggerKey = "key-3"
		if _, err := s.InsertOccurrences(ctx, []record.Occurrence{forged}); err == nil {
			t.Error("InsertOccurrences of a manual occurrence with a timetable id: no error")
		}
		keyless := readyOccurrence(sc, 2, record.LaneStrict)
		keyless.OccurrenceID = record.ManualOccurrenceID(sc.ScheduleID, "key-4")
		if _, err := s.InsertOccurrences(ctx, []record.Occurrence{keyless}); err == nil {
			t.Error("InsertOccurrences of a manual id without a trigger key: no error")
		}
		assertOccurrenceCount(t, s, sc, 3)
	})

	// DeadReason says why an occurrence is DEAD, LastError is its latest
	// attempt's error; reads and lists carry both (and the engine's
	// answers to an ack and a nack, engine.TestAckAndNackAnswer), and a
	// replay clears the reason.
	t.Run("DeadReasonAndLastError", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_why", record.OverlapAllow)
		o := readyOccurrence(sc, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o)
		check := func(what string, got record.Occurrence, reason record.DeadReason, lastError string) {
			t.Helper()
			if got.DeadReason != reason || got.LastError != lastError {
				t.Errorf("%s: reason %q, last error %q; want %q, %q", what, got.DeadReason, got.LastError, reason, lastError)
			}
		}
		check("before any attempt", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), "", "")

		mustClaim(t, s, "tenant-a", 1, at(time.Minute))
		res := mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1,
			Result: record.ResultFailedRetryable, Error: "boom 1", State: record.OccurrenceRetryWait, RetryAt: at(2 * time.Minute), Now: at(time.Minute)})
		assertAnswer(t, "the retryable nack's answer", res[0].Occurrence,
			record.Occurrence{OccurrenceID: o.OccurrenceID, TenantID: "tenant-a", State: record.OccurrenceRetryWait, AttemptCount: 1})
		check("waiting to retry", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), "", "boom 1")

		// The new attempt is the latest, and it has no error yet.
		c := mustClaim(t, s, "tenant-a", 1, at(2*time.Minute))
		check("the claim's answer", c[0].Occurrence, "", "")
		check("running attempt 2", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), "", "")

		res = mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 2,
			Result: record.ResultFailedPermanent, Error: "boom 2", State: record.OccurrenceDead, DeadReason: record.DeadPermanentFailure, Now: at(3 * time.Minute)})
		dead := mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID)
		check("DEAD", dead, record.DeadPermanentFailure, "boom 2")
		assertAnswer(t, "the permanent nack's answer", res[0].Occurrence, dead)
		dlq, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", State: record.OccurrenceDead})
		if err != nil || len(dlq) != 1 {
			t.Fatalf("DEAD listing: %d rows, %v; want 1", len(dlq), err)
		}
		assertOccurrence(t, "DEAD listing", dlq[0], dead)

		replayed, err := engine.ReplayOccurrence(ctx, s, "tenant-a", o.OccurrenceID, at(time.Hour))
		if err != nil {
			t.Fatalf("ReplayOccurrence: %v", err)
		}
		check("the replay's answer", *replayed, "", "boom 2")
		check("replayed", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), "", "boom 2")
	})

	// One sweep that ends attempts every way: the result counts each
	// outcome, DEAD ones by their reason too, and each DEAD occurrence
	// says why.
	t.Run("ExpireLeasesOutcomes", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		policy := func(id string, maxAttempts int, deadline time.Duration) *record.Schedule {
			t.Helper()
			sc := NewSchedule("tenant-a", id)
			sc.Queue, sc.OverlapPolicy = jobsQueue, record.OverlapAllow
			sc.Retry = record.RetryPolicy{MaxAttempts: maxAttempts, BackoffBase: time.Second, BackoffCap: time.Minute, Deadline: deadline}
			mustInsertSchedule(t, s, sc)
			return sc
		}
		// Every occurrence is scheduled at t0; the sweep is at 21 min.
		held := policy("sch_out_held", 3, 24*time.Hour)         // its lease runs on
		requeued := policy("sch_out_requeued", 3, 24*time.Hour) // attempts and time left
		exhausted := policy("sch_out_exhausted", 1, 24*time.Hour)
		late := policy("sch_out_late", 100, 10*time.Minute)
		both := policy("sch_out_both", 1, 10*time.Minute)   // both hold: attempts_exhausted
		moved := policy("sch_out_moved", 1, 10*time.Minute) // moved on is decided first

		ho := readyOccurrence(held, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, ho)
		if _, err := engine.ClaimOccurrences(ctx, s, store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "w",
			Limit: 1, Lease: time.Hour, Now: at(20 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		ids := map[*record.Schedule]string{held: ho.OccurrenceID}
		for _, sc := range []*record.Schedule{requeued, exhausted, late, both, moved} {
			o := readyOccurrence(sc, 0, record.LaneStrict)
			mustInsertOccurrences(t, s, 1, o)
			ids[sc] = o.OccurrenceID
		}
		if got := mustClaim(t, s, "tenant-a", 10, at(20*time.Minute)); len(got) != 5 { // leases until 20.5 min
			t.Fatalf("claimed %d, want 5", len(got))
		}
		moved.Payload = []byte(`{"v":2}`)
		mustUpdate(t, s, moved, 1, at(20*time.Minute+10*time.Second), nil)

		now := at(21 * time.Minute)
		// Dead is split by the reason stored: two attempts_exhausted
		// (exhausted, both), one deadline_passed (late).
		mustExpire(t, s, now, 10, store.ExpireResult{Expired: 5, Requeued: 1, Dead: 3, DeadAttempts: 2, DeadDeadline: 1, Canceled: 1})
		for _, tc := range []struct {
			sc     *record.Schedule
			state  record.OccurrenceState
			reason record.DeadReason
		}{
			{held, record.OccurrenceRunning, ""},
			{requeued, record.OccurrenceEnqueued, ""},
			{exhausted, record.OccurrenceDead, record.DeadAttemptsExhausted},
			{late, record.OccurrenceDead, record.DeadDeadlinePassed},
			{both, record.OccurrenceDead, record.DeadAttemptsExhausted},
			{moved, record.OccurrenceCanceled, ""},
		} {
			got := mustGetOccurrence(t, s, "tenant-a", ids[tc.sc])
			if got.State != tc.state || got.DeadReason != tc.reason || got.LastError != "" {
				t.Errorf("%s: %s (reason %q, last error %q), want %s (reason %q, no error)",
					tc.sc.ScheduleID, got.State, got.DeadReason, got.LastError, tc.state, tc.reason)
			}
			if finished := tc.state == record.OccurrenceDead || tc.state == record.OccurrenceCanceled; finished && !got.FinishedAt.Equal(now) {
				t.Errorf("%s: finished at %v, want %v", tc.sc.ScheduleID, got.FinishedAt, now)
			}
		}
		mustExpire(t, s, now, 10, store.ExpireResult{})
	})

	t.Run("ListPaging", func(t *testing.T) { t.Parallel(); testListPaging(t, open) })
	t.Run("ListPagingWhileInserting", func(t *testing.T) { t.Parallel(); testListPagingWhileInserting(t, open) })

	// ClaimParams.Skipped counts what a claim marked SKIPPED_OVERLAP, in
	// ClaimOccurrences and FinishAndClaim alike, adding to what it held.
	t.Run("ClaimSkipped", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		busy := queueSchedule(t, s, "tenant-a", "sch_skipc_busy", record.OverlapSkipIfRunning)
		idle := queueSchedule(t, s, "tenant-a", "sch_skipc_idle", record.OverlapSkipIfRunning)
		one := queueSchedule(t, s, "tenant-a", "sch_skipc_one", record.OverlapQueueOne)
		free := queueSchedule(t, s, "tenant-a", "sch_skipc_free", record.OverlapAllow)
		for _, sc := range []*record.Schedule{busy, one} {
			running := readyOccurrence(sc, -10, record.LaneStrict)
			running.State, running.AttemptCount = record.OccurrenceRunning, 1
			mustInsertOccurrences(t, s, 1, running)
		}
		names := map[string]string{}
		for _, batch := range []struct {
			sc    *record.Schedule
			specs []readySpec
		}{
			{busy, []readySpec{{"busy 1", 1, record.LaneStrict}, {"busy 2", 2, record.LaneStrict}}},                               // both skipped
			{idle, []readySpec{{"idle 3", 3, record.LaneStrict}, {"idle 4", 4, record.LaneStrict}}},                               // idle 4 skipped
			{one, []readySpec{{"one 5", 5, record.LaneStrict}, {"one 6", 6, record.LaneStrict}, {"one 7", 7, record.LaneStrict}}}, // one 5 waits
			{free, []readySpec{{"free 8", 8, record.LaneStrict}}},
		} {
			for k, v := range insertReady(t, s, batch.sc, batch.specs) {
				names[k] = v
			}
		}
		claim := store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "worker-1", Limit: 10, Lease: testLease, Now: at(time.Hour)}
		skipped := 5
		claim.Skipped = &skipped
		got, err := engine.ClaimOccurrences(ctx, s, claim)
		if err != nil {
			t.Fatalf("ClaimOccurrences: %v", err)
		}
		if n := claimNames(got, names); fmt.Sprint(n) != "[idle 3 free 8]" {
			t.Errorf("claimed %v, want [idle 3 free 8]", n)
		}
		if skipped != 5+5 {
			t.Errorf("Skipped = %d after the claim, want 5 + 5", skipped)
		}
		// Nothing newly skipped: one 5 still waits, and is not counted
		// again.
		if _, err := engine.ClaimOccurrences(ctx, s, claim); err != nil {
			t.Fatalf("ClaimOccurrences again: %v", err)
		}
		if skipped != 10 {
			t.Errorf("Skipped = %d after a claim that skipped nothing, want 10", skipped)
		}
		// A claim that fails leaves it alone.
		bad := claim
		bad.Limit = 0
		if _, err := engine.ClaimOccurrences(ctx, s, bad); err == nil {
			t.Error("ClaimOccurrences with limit 0: no error")
		}
		if _, _, err := engine.FinishAndClaim(ctx, s, nil, bad); err == nil {
			t.Error("FinishAndClaim with limit 0: no error")
		}
		if skipped != 10 {
			t.Errorf("Skipped = %d after failed claims, want 10", skipped)
		}

		// FinishAndClaim counts its claim's skips too.
		for k, v := range insertReady(t, s, busy, []readySpec{{"busy 9", 9, record.LaneStrict}}) {
			names[k] = v
		}
		ack := store.FinishParams{TenantID: "tenant-a", OccurrenceID: findName(t, names, "free 8"), Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: at(time.Hour)}
		res, got, err := engine.FinishAndClaim(ctx, s, []store.FinishParams{ack}, claim)
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Fatalf("FinishAndClaim: %+v, %v", res, err)
		}
		if len(got) != 0 || skipped != 11 {
			t.Errorf("FinishAndClaim: claimed %d, Skipped = %d; want none claimed and 11", len(got), skipped)
		}
		for id, name := range names {
			o := mustGetOccurrence(t, s, "tenant-a", id)
			want := record.OccurrenceSkippedOverlap
			switch name {
			case "idle 3":
				want = record.OccurrenceRunning
			case "free 8":
				want = record.OccurrenceSucceeded
			case "one 5":
				want = record.OccurrenceEnqueued
			}
			if o.State != want {
				t.Errorf("%s: %s, want %s", name, o.State, want)
			}
		}
	})

	t.Run("PurgeDead", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		a := queueSchedule(t, s, "tenant-a", "sch_purge_a", record.OverlapAllow)
		b := NewSchedule("tenant-a", "sch_purge_b")
		b.Queue, b.OverlapPolicy = "mail", record.OverlapAllow
		mustInsertSchedule(t, s, b)
		x := queueSchedule(t, s, "tenant-b", "sch_purge_x", record.OverlapAllow)

		// One of a's dies for real, with an attempt as its history.
		real := readyOccurrence(a, 3, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, real)
		mustClaim(t, s, "tenant-a", 1, at(5*time.Minute))
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: real.OccurrenceID, Attempt: 1,
			Result: record.ResultFailedPermanent, Error: "bad input", State: record.OccurrenceDead, DeadReason: record.DeadPermanentFailure, Now: at(6 * time.Minute)})
		realAttempts, err := s.ListAttempts(ctx, store.ListAttemptsParams{TenantID: "tenant-a", OccurrenceID: real.OccurrenceID, Limit: store.MaxListLimit})
		if err != nil || len(realAttempts) != 1 {
			t.Fatalf("ListAttempts: %v, %v", realAttempts, err)
		}

		reasons := []record.DeadReason{record.DeadAttemptsExhausted, record.DeadDeadlinePassed, record.DeadRetryBudgetExhausted}
		dead := func(sc *record.Schedule, minute int) record.Occurrence {
			o := readyOccurrence(sc, minute, record.LaneStrict)
			o.State, o.FinishedAt, o.AttemptCount = record.OccurrenceDead, at(time.Duration(minute)*time.Minute+30*time.Second), 1
			o.DeadReason = reasons[minute%len(reasons)]
			return o
		}
		aDead := []record.Occurrence{dead(a, 0), dead(a, 1), dead(a, 2)}
		bDead := []record.Occurrence{dead(b, 0), dead(b, 1)}
		xDead := []record.Occurrence{dead(x, 0), dead(x, 1)}
		var live []record.Occurrence
		for i, st := range []record.OccurrenceState{record.OccurrenceEnqueued, record.OccurrenceRetryWait, record.OccurrenceCanceled, record.OccurrenceSucceeded} {
			o := readyOccurrence(a, 10+i, record.LaneStrict)
			o.State = st
			live = append(live, o)
		}
		for _, batch := range [][]record.Occurrence{aDead, bDead, xDead, live} {
			mustInsertOccurrences(t, s, len(batch), batch...)
		}
		aDead = append(aDead, mustGetOccurrence(t, s, "tenant-a", real.OccurrenceID))

		purge := func(p store.PurgeDeadParams, want int) {
			t.Helper()
			n, err := engine.PurgeDead(ctx, s, p)
			if err != nil || n != want {
				t.Fatalf("PurgeDead(%+v) = %d, %v; want %d", p, n, err, want)
			}
		}
		// Filters that match nothing purge nothing.
		purge(store.PurgeDeadParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Queue: "mail", Now: at(time.Hour), Limit: 10}, 0)
		purge(store.PurgeDeadParams{TenantID: "tenant-a", ScheduleID: x.ScheduleID, Now: at(time.Hour), Limit: 10}, 0)
		purge(store.PurgeDeadParams{TenantID: "tenant-c", Now: at(time.Hour), Limit: 10}, 0)

		// By schedule, Limit at a time, until a call purges fewer.
		purge(store.PurgeDeadParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Now: at(time.Hour), Limit: 3}, 3)
		purge(store.PurgeDeadParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Now: at(2 * time.Hour), Limit: 3}, 1)
		purge(store.PurgeDeadParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Now: at(3 * time.Hour), Limit: 3}, 0)
		// Each is CANCELED as of the call that took it, with the rest of it
		// (its dead reason, its last error) kept.
		assertPurged := func(want []record.Occurrence, nows map[time.Duration]int) {
			t.Helper()
			seen := map[time.Duration]int{}
			for _, w := range want {
				got := mustGetOccurrence(t, s, w.TenantID, w.OccurrenceID)
				seen[got.FinishedAt.Sub(t0)]++
				w.State, w.FinishedAt = record.OccurrenceCanceled, got.FinishedAt
				assertOccurrence(t, "purged occurrence", got, w)
			}
			if fmt.Sprint(seen) != fmt.Sprint(nows) {
				t.Errorf("purged occurrences finished at t0 + %v, want %v", seen, nows)
			}
		}
		assertPurged(aDead, map[time.Duration]int{time.Hour: 3, 2 * time.Hour: 1})
		assertAttempts(t, s, "tenant-a", real.OccurrenceID, realAttempts...)
		if got := mustGetOccurrence(t, s, "tenant-a", real.OccurrenceID); got.LastError != "bad input" || got.DeadReason != record.DeadPermanentFailure {
			t.Errorf("purged occurrence: last error %q, reason %q; want both kept", got.LastError, got.DeadReason)
		}
		for _, o := range append(slices.Clone(bDead), xDead...) {
			assertOccurrence(t, "DEAD occurrence outside the filter", mustGetOccurrence(t, s, o.TenantID, o.OccurrenceID), o)
		}
		for _, o := range live {
			assertOccurrence(t, string(o.State)+" occurrence", mustGetOccurrence(t, s, o.TenantID, o.OccurrenceID), o)
		}

		// By queue.
		purge(store.PurgeDeadParams{TenantID: "tenant-a", Queue: "mail", Now: at(4 * time.Hour), Limit: 10}, 2)
		assertPurged(bDead, map[time.Duration]int{4 * time.Hour: 2})
		if got, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", State: record.OccurrenceDead}); err != nil || len(got) != 0 {
			t.Errorf("tenant-a's DEAD after the purges: %d rows, %v; want none", len(got), err)
		}
		// A purged occurrence is out of the dead-letter queue for good.
		for _, o := range []record.Occurrence{real, aDead[0], bDead[0]} {
			_, err := engine.ReplayOccurrence(ctx, s, "tenant-a", o.OccurrenceID, at(5*time.Hour))
			wantErr(t, "replay of a purged occurrence", err, store.ErrConflict)
		}

		// Another tenant's dead-letter queue was untouched; with no filter,
		// its purge takes any of its DEAD.
		purge(store.PurgeDeadParams{TenantID: "tenant-a", Now: at(5 * time.Hour), Limit: 10}, 0)
		for _, o := range xDead {
			assertOccurrence(t, "another tenant's DEAD occurrence", mustGetOccurrence(t, s, o.TenantID, o.OccurrenceID), o)
		}
		purge(store.PurgeDeadParams{TenantID: "tenant-b", Now: at(6 * time.Hour), Limit: 1}, 1)
		purge(store.PurgeDeadParams{TenantID: "tenant-b", Now: at(6 * time.Hour), Limit: 1}, 1)
		purge(store.PurgeDeadParams{TenantID: "tenant-b", Now: at(6 * time.Hour), Limit: 1}, 0)
		assertPurged(xDead, map[time.Duration]int{6 * time.Hour: 2})
	})

	t.Run("Stats", func(t *testing.T) { t.Parallel(); testStats(t, open) })
	t.Run("Rules", func(t *testing.T) { t.Parallel(); testSeeingRules(t, open) })
}

// testListPaging pages through fixed listings, forwards and backwards,
// with several page sizes and filters: the pages, end to end, are the
// whole listing in order, each row once.
func testListPaging(t *testing.T, open func(t *testing.T) Store) {
	s, ctx := open(t), t.Context()
	a := queueSchedule(t, s, "tenant-a", "sch_page_a", record.OverlapAllow)
	b := NewSchedule("tenant-a", "sch_page_b")
	b.Queue = "mail"
	mustInsertSchedule(t, s, b)
	x := queueSchedule(t, s, "tenant-b", "sch_page_x", record.OverlapAllow)

	// Many rows share a second (versions, schedules, manual triggers), so
	// the occurrence id decides their order.
	states := []record.OccurrenceState{record.OccurrenceDead, record.OccurrenceEnqueued, record.OccurrenceSucceeded, record.OccurrenceDead, record.OccurrenceCanceled}
	var all []record.Occurrence
	add := func(sc *record.Schedule, sec int, version int64, key string) {
		o := NewOccurrence(sc, at(time.Duration(sec)*time.Second))
		o.ScheduleVersion = version
		o.OccurrenceID = record.OccurrenceID(sc.ScheduleID, version, o.ScheduledFor)
		if key != "" {
			o.TriggerKey, o.OccurrenceID = key, record.ManualOccurrenceID(sc.ScheduleID, key)
		}
		o.State = states[len(all)%len(states)]
		all = append(all, o)
	}
	for sec := range 8 {
		for v := int64(1); v <= 3; v++ {
			add(a, sec*7%8, v, "")
		}
		add(b, sec, 1, "")
		add(b, sec*3%8, 2, "")
		add(x, sec, 1, "")
	}
	add(a, 2, 1, "manual-1")
	add(a, 2, 1, "manual-2")
	add(b, 5, 2, "manual-3")
	mustInsertOccurrences(t, s, len(all), all...)

	filters := []store.ListOccurrencesParams{
		{TenantID: "tenant-a", ScheduleID: a.ScheduleID},
		{TenantID: "tenant-a"},
		{TenantID: "tenant-a", State: record.OccurrenceDead},
		{TenantID: "tenant-a", State: record.OccurrenceDead, ScheduleID: b.ScheduleID},
		{TenantID: "tenant-a", State: record.OccurrenceDead, Queue: "mail"},
		{TenantID: "tenant-b"},
	}
	for _, f := range filters {
		for _, reverse := range []bool{false, true} {
			f.Reverse = reverse
			want := listing(all, f)
			if len(want) < 3 {
				t.Fatalf("%s: only %d rows; the test needs more", describe(f), len(want))
			}
			for _, limit := range []int{1, 4, 7, store.MaxListLimit} {
				p := f
				p.Limit = limit
				got := pageAll(t, s, p, nil)
				if fmt.Sprint(occIDs(got)) != fmt.Sprint(occIDs(want)) {
					t.Errorf("%s, pages of %d:\n got %v\nwant %v", describe(f), limit, occIDs(got), occIDs(want))
				}
			}
		}
	}

	// After is a position, not a row: any key works, rows equal to it are
	// excluded, and its zone does not matter.
	mid := listing(all, store.ListOccurrencesParams{TenantID: "tenant-a"})[10]
	foreign := listing(all, store.ListOccurrencesParams{TenantID: "tenant-b"})[3]
	for _, after := range []store.OccurrenceKey{
		keyOf(mid),
		{ScheduledFor: mid.ScheduledFor, OccurrenceID: ""},
		{ScheduledFor: mid.ScheduledFor, OccurrenceID: record.ManualOccurrenceID(a.ScheduleID, "manual-1")},
		{ScheduledFor: mid.ScheduledFor.In(time.FixedZone("UTC-5", -5*3600)), OccurrenceID: mid.OccurrenceID},
		{ScheduledFor: at(-time.Hour), OccurrenceID: "occ_x"},
		{ScheduledFor: at(time.Hour), OccurrenceID: ""},
		keyOf(foreign), // another tenant's row
	} {
		for _, f := range filters[:3] {
			for _, reverse := range []bool{false, true} {
				p := f
				p.Reverse, p.After, p.Limit = reverse, &after, 5
				got, err := s.ListOccurrences(ctx, p)
				if err != nil {
					t.Fatalf("ListOccurrences(%s): %v", describe(p), err)
				}
				want := listing(all, p)
				want = want[:min(len(want), 5)]
				if fmt.Sprint(occIDs(got)) != fmt.Sprint(occIDs(want)) {
					t.Errorf("%s:\n got %v\nwant %v", describe(p), occIDs(got), occIDs(want))
				}
			}
		}
	}
}

// testListPagingWhileInserting adds rows before, at and after the cursor
// between pages: every row there at the start comes back exactly once,
// and nothing comes back twice or out of order.
func testListPagingWhileInserting(t *testing.T, open func(t *testing.T) Store) {
	s := open(t)
	a := queueSchedule(t, s, "tenant-a", "sch_live_a", record.OverlapAllow)
	b := NewSchedule("tenant-a", "sch_live_b")
	b.Queue = "mail"
	mustInsertSchedule(t, s, b)

	var all []record.Occurrence
	version := int64(0)
	newOcc := func(sc *record.Schedule, sec int64, st record.OccurrenceState) record.Occurrence {
		version++
		o := NewOccurrence(sc, at(time.Duration(sec)*time.Second))
		o.ScheduleVersion, o.State = version, st
		o.OccurrenceID = record.OccurrenceID(sc.ScheduleID, version, o.ScheduledFor)
		return o
	}
	var initial []record.Occurrence
	for i := range 30 {
		sc := []*record.Schedule{a, b}[i%2]
		initial = append(initial, newOcc(sc, int64(i/3), []record.OccurrenceState{record.OccurrenceDead, record.OccurrenceSucceeded}[i%3%2]))
	}
	mustInsertOccurrences(t, s, len(initial), initial...)
	all = append(all, initial...)

	for _, f := range []store.ListOccurrencesParams{
		{TenantID: "tenant-a"},
		{TenantID: "tenant-a", ScheduleID: a.ScheduleID},
		{TenantID: "tenant-a", State: record.OccurrenceDead},
	} {
		for _, reverse := range []bool{false, true} {
			f.Reverse, f.Limit = reverse, 4
			start := listing(all, f)
			dir := time.Second
			if reverse {
				dir = -time.Second
			}
			// Between the first pages: a row behind the cursor, two at
			// its second (their ids fall either side of it or not), and
			// two ahead. (Only the first: rows added ahead of every page
			// would keep the listing from ending.)
			pages := 0
			got := pageAll(t, s, f, func(cursor store.OccurrenceKey) {
				if pages++; pages > 4 {
					return
				}
				sec := int64(cursor.ScheduledFor.Sub(t0) / time.Second)
				d := int64(dir / time.Second)
				add := []record.Occurrence{
					newOcc(a, sec-2*d, record.OccurrenceDead),
					newOcc(a, sec, record.OccurrenceDead),
					newOcc(b, sec, record.OccurrenceDead),
					newOcc(a, sec+d, record.OccurrenceDead),
					newOcc(b, sec+5*d, record.OccurrenceDead),
				}
				mustInsertOccurrences(t, s, len(add), add...)
				all = append(all, add...)
			})
			what := describe(f)
			seen := map[string]int{}
			for i, o := range got {
				seen[o.OccurrenceID]++
				if i > 0 && compareKeys(keyOf(got[i-1]), keyOf(o))*int(dir/time.Second) >= 0 {
					t.Errorf("%s: row %d %v is not after row %d %v", what, i, keyOf(o), i-1, keyOf(got[i-1]))
				}
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("%s: %s came back %d times", what, id, n)
				}
			}
			for _, o := range start {
				if seen[o.OccurrenceID] != 1 {
					t.Errorf("%s: %s, there at the start, came back %d times", what, o.OccurrenceID, seen[o.OccurrenceID])
				}
			}
		}
	}
}

// pageAll pages through the listing p selects, p.Limit rows a page,
// calling between (if not nil) with the cursor after each full page.
func pageAll(t *testing.T, s Store, p store.ListOccurrencesParams, between func(cursor store.OccurrenceKey)) []record.Occurrence {
	t.Helper()
	var out []record.Occurrence
	for range 1000 {
		page, err := s.ListOccurrences(t.Context(), p)
		if err != nil {
			t.Fatalf("ListOccurrences(%s): %v", describe(p), err)
		}
		if len(page) > p.Limit {
			t.Fatalf("ListOccurrences(%s): %d rows, over the limit", describe(p), len(page))
		}
		out = append(out, page...)
		if len(page) < p.Limit {
			return out
		}
		k := keyOf(page[len(page)-1])
		p.After = &k
		if between != nil {
			between(k)
		}
	}
	t.Fatalf("ListOccurrences(%s): no end after 1000 pages", describe(p))
	return nil
}

// listing is what ListOccurrences(p) returns from occs, limit aside: the
// rows that match p's filters, strictly after p.After, in p's order.
func listing(occs []record.Occurrence, p store.ListOccurrencesParams) []record.Occurrence {
	var out []record.Occurrence
	for _, o := range occs {
		if o.TenantID != p.TenantID || p.ScheduleID != "" && o.ScheduleID != p.ScheduleID ||
			p.State != "" && o.State != p.State || p.Queue != "" && o.Queue != p.Queue {
			continue
		}
		out = append(out, o)
	}
	dir := 1
	if p.Reverse {
		dir = -1
	}
	slices.SortFunc(out, func(x, y record.Occurrence) int { return dir * compareKeys(keyOf(x), keyOf(y)) })
	if p.After != nil {
		out = slices.DeleteFunc(out, func(o record.Occurrence) bool { return dir*compareKeys(keyOf(o), *p.After) <= 0 })
	}
	return out
}

func describe(p store.ListOccurrencesParams) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tenant=%s", p.TenantID)
	for _, kv := range [][2]string{{"schedule", p.ScheduleID}, {"state", string(p.State)}, {"queue", p.Queue}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	if p.Reverse {
		b.WriteString(" reverse")
	}
	if p.After != nil {
		fmt.Fprintf(&b, " after=(%s, %q)", p.After.ScheduledFor.Format(time.RFC3339), p.After.OccurrenceID)
	}
	return b.String()
}

// keyOf is o's position in a listing.
func keyOf(o record.Occurrence) store.OccurrenceKey {
	return store.OccurrenceKey{ScheduledFor: o.ScheduledFor, OccurrenceID: o.OccurrenceID}
}

// compareKeys orders keys as listings do, oldest first: by scheduled_for,
// then by occurrence id, byte by byte.
func compareKeys(x, y store.OccurrenceKey) int {
	if c := x.ScheduledFor.Compare(y.ScheduledFor); c != 0 {
		return c
	}
	return strings.Compare(x.OccurrenceID, y.OccurrenceID)
}

func occIDs(occs []record.Occurrence) []string {
	out := []string{}
	for _, o := range occs {
		out = append(out, o.OccurrenceID)
	}
	return out
}

// sortedIDs returns the ids of occs in listing order.
func sortedIDs(occs ...record.Occurrence) []string {
	sorted := slices.Clone(occs)
	slices.SortFunc(sorted, func(x, y record.Occurrence) int { return compareKeys(keyOf(x), keyOf(y)) })
	return occIDs(sorted)
}
