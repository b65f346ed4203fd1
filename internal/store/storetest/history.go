package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// HistoryTenant is the tenant FillHistory writes.
const HistoryTenant = "tenant-history"

// FillHistory stores n SUCCEEDED occurrences of HistoryTenant, as a
// fleet of schedules schedules (ids of a realistic length) firing in turn
// would leave them, one a second (or n a day, if fewer) from start, and
// returns the time after the last. The store's bulk
// insert writes them (the planner's path), insert rows a call. The rows
// hold no attempt: a driver's size test fills in the latest attempt's
// columns as an ack would.
func FillHistory(tb testing.TB, s Store, n, schedules int, start time.Time) time.Time {
	tb.Helper()
	ctx := tb.Context()
	scs := make([]*record.Schedule, schedules)
	for i := range scs {
		sc := NewSchedule(HistoryTenant, fmt.Sprintf("sch_%022d", i))
		sc.Name, sc.IdempotencyKey, sc.Queue = fmt.Sprintf("job-%d", i), "", "jobs"
		if err := s.InsertSchedule(ctx, sc); err != nil {
			tb.Fatalf("InsertSchedule: %v", err)
		}
		scs[i] = sc
	}
	// n firings a day: one every step, each schedule in turn.
	step := max((24 * time.Hour / time.Duration(n)).Truncate(time.Second), time.Second)
	const insert = 5000
	batch := make([]record.Occurrence, 0, insert)
	at := start.Truncate(time.Second)
	for i := range n {
		o := NewOccurrence(scs[i%schedules], at.Add(time.Duration(i)*step))
		o.State, o.EnqueuedAt = record.OccurrenceSucceeded, o.ScheduledFor
		o.AttemptCount, o.FirstClaimedAt, o.FinishedAt = 1, o.ScheduledFor.Add(time.Second), o.ScheduledFor.Add(2*time.Second)
		batch = append(batch, o)
		if len(batch) == insert || i == n-1 {
			if got, err := s.InsertOccurrences(ctx, batch); err != nil || got != len(batch) {
				tb.Fatalf("InsertOccurrences: %d of %d, %v", got, len(batch), err)
			}
			batch = batch[:0]
		}
	}
	return at.Add(time.Duration(n) * step)
}

// ReportHistorySize logs what bytes for n stored firings make of a
// retention of days days at a million firings a day.
func ReportHistorySize(tb testing.TB, store string, n int, bytes int64) {
	tb.Helper()
	per := float64(bytes) / float64(n)
	tb.Logf("%s: %d finished firings take %d bytes: %.0f bytes a firing; at 1,000,000 firings a day kept 7 days: %.2f GB",
		store, n, bytes, per, per*7e6/1e9)
}

// ReportPurgeSpeed deletes batches batches of size rows of FillHistory's
// oldest firings (all before end) and logs how long one took on average:
// how long a retention batch holds the store's writer.
func ReportPurgeSpeed(tb testing.TB, s Store, store string, end time.Time, batches, size int) {
	tb.Helper()
	began := time.Now()
	for range batches {
		if n, err := s.PurgeHistory(tb.Context(), HistoryTenant, end, size); err != nil || n != size {
			tb.Fatalf("PurgeHistory: %d of %d, %v", n, size, err)
		}
	}
	tb.Logf("%s: a purge batch of %d finished firings took %s on average", store, size, (time.Since(began) / time.Duration(batches)).Round(time.Millisecond))
}
