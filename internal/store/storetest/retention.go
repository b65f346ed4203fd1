package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testRetention pins store.RetentionStore: a purge deletes, in bounded
// batches and oldest first, only the tenant's finished occurrences
// scheduled before the cut, with their attempts; never a DEAD one, an open
// one, a younger one or another tenant's. A horizon only moves forward.
func testRetention(t *testing.T, open func(t *testing.T) Store) {
	t.Run("PurgeHistory", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		a := queueSchedule(t, s, "tenant-a", "sch_ret_a", record.OverlapAllow)
		b := queueSchedule(t, s, "tenant-b", "sch_ret_b", record.OverlapAllow)
		day := 24 * time.Hour

		// An old occurrence with two attempts, one of them archived in
		// attempts: a retryable failure, then a success.
		withAttempts := NewOccurrence(a, at(day))
		withAttempts.State, withAttempts.EnqueuedAt = record.OccurrenceEnqueued, at(day)
		mustInsertOccurrences(t, s, 1, withAttempts)
		if got := mustClaim(t, s, "tenant-a", 1, at(day)); len(got) != 1 {
			t.Fatalf("first claim: %d", len(got))
		}
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: withAttempts.OccurrenceID, Attempt: 1,
			Result: record.ResultFailedRetryable, State: record.OccurrenceRetryWait, RetryAt: at(day + time.Second), Now: at(day)})
		if got := mustClaim(t, s, "tenant-a", 1, at(day+2*time.Second)); len(got) != 1 {
			t.Fatalf("second claim: %d", len(got))
		}
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: withAttempts.OccurrenceID, Attempt: 2,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: at(day + 3*time.Second)})
		if as, err := s.ListAttempts(ctx, store.ListAttemptsParams{TenantID: "tenant-a", OccurrenceID: withAttempts.OccurrenceID, Limit: store.MaxListLimit}); err != nil || len(as) != 2 {
			t.Fatalf("attempts before the purge: %d, %v; want 2", len(as), err)
		}

		// Ten days of every state, for both tenants. Nothing is claimable:
		// the open ones are available far ahead.
		states := []record.OccurrenceState{record.OccurrenceSucceeded, record.OccurrenceMissed, record.OccurrenceCanceled,
			record.OccurrenceSkippedOverlap, record.OccurrenceDead, record.OccurrenceEnqueued, record.OccurrenceScheduled,
			record.OccurrenceRetryWait}
		var occs []record.Occurrence
		for _, sc := range []*record.Schedule{a, b} {
			for d := range 10 {
				for i, st := range states {
					o := NewOccurrence(sc, at(time.Duration(d)*day+time.Duration(i+1)*time.Minute))
					o.State, o.AvailableAt = st, at(365*day)
					if st == record.OccurrenceDead {
						o.DeadReason = record.DeadAttemptsExhausted
					}
					occs = append(occs, o)
				}
			}
		}
		mustInsertOccurrences(t, s, len(occs), occs...)

		cut := at(7 * day)
		const limit = 3
		total := 0
		for {
			n, err := s.PurgeHistory(ctx, "tenant-a", cut, limit)
			if err != nil {
				t.Fatalf("PurgeHistory: %v", err)
			}
			if n > limit {
				t.Fatalf("PurgeHistory deleted %d, over the limit %d", n, limit)
			}
			total += n
			if n < limit {
				break
			}
		}
		// Four finished states a day for seven days, and the one with
		// attempts.
		if want := 4*7 + 1; total != want {
			t.Errorf("purged %d, want %d", total, want)
		}
		if _, err := s.GetOccurrence(ctx, "tenant-a", withAttempts.OccurrenceID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the purged occurrence with attempts: %v; want ErrNotFound", err)
		}
		if as, _ := s.ListAttempts(ctx, store.ListAttemptsParams{TenantID: "tenant-a", OccurrenceID: withAttempts.OccurrenceID, Limit: store.MaxListLimit}); len(as) != 0 {
			t.Errorf("the purged occurrence's attempts: %d left", len(as))
		}
		left, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", Limit: store.MaxListLimit})
		if err != nil {
			t.Fatal(err)
		}
		if want := 10*len(states) - 4*7; len(left) != want {
			t.Errorf("tenant-a keeps %d occurrences, want %d", len(left), want)
		}
		for _, o := range left {
			finished := o.State != record.OccurrenceDead && !isOpen(o.State)
			if finished && o.ScheduledFor.Before(cut) {
				t.Errorf("kept a finished occurrence before the cut: %s %s", o.State, o.ScheduledFor)
			}
		}
		if n, err := s.CountOccurrences(ctx, "tenant-a", record.OccurrenceDead); err != nil || n != 10 {
			t.Errorf("DEAD kept: %d, %v; want 10", n, err)
		}
		other, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-b", Limit: store.MaxListLimit})
		if err != nil || len(other) != 10*len(states) {
			t.Errorf("tenant-b keeps %d, %v; want all %d", len(other), err, 10*len(states))
		}
		if ts, err := s.ScheduleTenants(ctx); err != nil || len(ts) != 2 || ts[0] != "tenant-a" || ts[1] != "tenant-b" {
			t.Errorf("ScheduleTenants = %v, %v; want tenant-a, tenant-b", ts, err)
		}
		// Again: nothing left to take.
		if n, err := s.PurgeHistory(ctx, "tenant-a", cut, limit); err != nil || n != 0 {
			t.Errorf("a second purge: %d, %v; want 0", n, err)
		}
	})

	t.Run("HistoryHorizon", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		if hs, err := s.HistoryHorizons(ctx); err != nil || len(hs) != 0 {
			t.Fatalf("horizons of a new store: %v, %v; want none", hs, err)
		}
		for _, tc := range []struct {
			tenant string
			set    time.Time
			want   time.Time
		}{
			{"tenant-a", at(time.Hour), at(time.Hour)},
			{"tenant-a", at(3 * time.Hour), at(3 * time.Hour)},
			{"tenant-a", at(2 * time.Hour), at(3 * time.Hour)}, // never back
			{"tenant-b", at(time.Minute), at(time.Minute)},
		} {
			got, err := s.SetHistoryHorizon(ctx, tc.tenant, tc.set)
			if err != nil || !got.Equal(tc.want) {
				t.Errorf("SetHistoryHorizon(%s, %s) = %s, %v; want %s", tc.tenant, tc.set, got, err, tc.want)
			}
		}
		hs, err := s.HistoryHorizons(ctx)
		if err != nil || len(hs) != 2 || !hs["tenant-a"].Equal(at(3*time.Hour)) || !hs["tenant-b"].Equal(at(time.Minute)) {
			t.Errorf("HistoryHorizons = %v, %v", hs, err)
		}
	})
}

// isOpen reports whether an occurrence in state st is not finished.
func isOpen(st record.OccurrenceState) bool {
	switch st {
	case record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRunning, record.OccurrenceRetryWait:
		return true
	}
	return false
}
