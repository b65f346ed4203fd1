package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// Claims read a lane on from where the claims before them stopped, and a
// claimable row that lies before that point (here one written late, due
// earlier than rows already claimed) is still delivered: by the first
// claim that finds the lane empty from the hint on, or by the first claim
// after hintSpan, which reads from the start.
func TestClaimHintsPassNothingOver(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		top := utc("2027-01-04T10:00:00Z")
		h := open(t, top.Add(-30*time.Second), nil)
		var first *record.Schedule
		for i := range 10 {
			sc := h.create(every(fmt.Sprintf("s%d", i), "1m"))
			if first == nil {
				first = sc
			}
		}
		h.advance(31 * time.Second) // 10:00:01: ten firings of 10:00 due
		late := func(key string, at time.Time) string {
			t.Helper()
			o := record.Occurrence{
				OccurrenceID: record.ManualOccurrenceID(first.ScheduleID, key), TenantID: tenant, ScheduleID: first.ScheduleID,
				ScheduleVersion: first.Version, ScheduledFor: at, AvailableAt: at, EnqueuedAt: h.clk.Now(),
				State: record.OccurrenceEnqueued, Lane: record.LaneStrict, Queue: first.Queue, OverlapPolicy: first.OverlapPolicy,
				RetryFrom: at, TriggerKey: key,
			}
			if n, err := h.st.InsertOccurrences(h.ctx, []record.Occurrence{o}); err != nil || n != 1 {
				t.Fatalf("insert the late occurrence: %d, %v", n, err)
			}
			return o.OccurrenceID
		}
		ids := func(got []store.Claimed) []string {
			var out []string
			for _, c := range got {
				out = append(out, c.Occurrence.OccurrenceID)
			}
			return out
		}
		queue := first.Queue
		if got := h.claim(queue, 5); len(got) != 5 {
			t.Fatalf("first claim got %d, want 5", len(got))
		}
		lateID := late("late-1", top.Add(-15*time.Second))
		got := h.claim(queue, 5)
		if len(got) != 5 {
			t.Fatalf("second claim got %d, want the other 5 firings", len(got))
		}
		for _, id := range ids(got) {
			if id == lateID {
				t.Fatalf("the second claim read from the start; it should read on from the first claim's hint")
			}
		}
		// The lane is empty from the hint on: the claim reads it again
		// from the start and finds the late one.
		if got := ids(h.claim(queue, 5)); len(got) != 1 || got[0] != lateID {
			t.Fatalf("third claim got %v, want only the late occurrence %s", got, lateID)
		}

		// A hint older than hintSpan is not used: with the next minute's
		// firings due after the hint, the oldest row, written late
		// before the hint, comes first.
		late2 := late("late-2", top.Add(-20*time.Second))
		h.clk.Set(top.Add(-30 * time.Second).Add(31 * time.Second)) // where the hint was set
		h.advance(time.Minute)                                      // 10:01:01, past hintSpan
		if got := ids(h.claim(queue, 1)); len(got) != 1 || got[0] != late2 {
			t.Fatalf("a claim after hintSpan got %v, want the late occurrence %s first", got, late2)
		}
	})
}
