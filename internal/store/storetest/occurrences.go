package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

func testOccurrences(t *testing.T, open func(t *testing.T) Store) {
	t.Run("ListOccurrences", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		a := NewSchedule("tenant-a", "sch_list_a")
		b := NewSchedule("tenant-a", "sch_list_b")
		b.Queue = "mail"
		x := NewSchedule("tenant-b", "sch_list_x")
		for _, sc := range []*record.Schedule{a, b, x} {
			mustInsertSchedule(t, s, sc)
		}
		occ := func(sc *record.Schedule, minute int, version int64, st record.OccurrenceState) record.Occurrence {
			o := NewOccurrence(sc, at(time.Duration(minute)*time.Minute))
			o.ScheduleVersion, o.State = version, st
			o.OccurrenceID = record.OccurrenceID(sc.ScheduleID, version, o.ScheduledFor)
			return o
		}
		all := []record.Occurrence{
			occ(a, 3, 1, record.OccurrenceDead),      // a3
			occ(a, 1, 2, record.OccurrenceEnqueued),  // a1v2
			occ(a, 1, 1, record.OccurrenceCanceled),  // a1v1
			occ(b, 2, 1, record.OccurrenceDead),      // b2
			occ(b, 0, 1, record.OccurrenceSucceeded), // b0
			occ(x, 0, 1, record.OccurrenceDead),      // another tenant's
		}
		mustInsertOccurrences(t, s, len(all), all...)
		name := map[string]string{}
		for i, n := range []string{"a3", "a1v2", "a1v1", "b2", "b0", "x0"} {
			name[all[i].OccurrenceID] = n
		}
		// Ordered by (scheduled_for, occurrence_id): a1v2's id sorts
		// before a1v1's (the ids of one second differ in their hash).
		if all[1].OccurrenceID >= all[2].OccurrenceID {
			t.Fatalf("a1v2's id %s does not sort before a1v1's %s", all[1].OccurrenceID, all[2].OccurrenceID)
		}
		// after is the key of all[i], where a page that ended there resumes.
		after := func(i int) *store.OccurrenceKey {
			return &store.OccurrenceKey{ScheduledFor: all[i].ScheduledFor, OccurrenceID: all[i].OccurrenceID}
		}
		for _, tc := range []struct {
			p    store.ListOccurrencesParams
			want []string
		}{
			{store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID}, []string{"a1v2", "a1v1", "a3"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Limit: 2}, []string{"a1v2", "a1v1"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Reverse: true}, []string{"a3", "a1v1", "a1v2"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Reverse: true, Limit: 2}, []string{"a3", "a1v1"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, State: record.OccurrenceDead}, []string{"a3"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Queue: "mail"}, []string{}},
			{store.ListOccurrencesParams{TenantID: "tenant-a"}, []string{"b0", "a1v2", "a1v1", "b2", "a3"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", Reverse: true}, []string{"a3", "b2", "a1v1", "a1v2", "b0"}},
			// A tenant's pages resume after the key, within a second by id
			// (a1v2, a1v1), either way.
			{store.ListOccurrencesParams{TenantID: "tenant-a", Limit: 2}, []string{"b0", "a1v2"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", Limit: 2, After: after(1)}, []string{"a1v1", "b2"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", Limit: 2, After: after(3)}, []string{"a3"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", After: after(0)}, []string{}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", Reverse: true, Limit: 2, After: after(3)}, []string{"a1v1", "a1v2"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", Reverse: true, After: after(2)}, []string{"a1v2", "b0"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", Queue: "reports", After: after(1)}, []string{"a1v1", "a3"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", State: record.OccurrenceCanceled, Reverse: true, After: after(0)}, []string{"a1v1"}},
			{store.ListOccurrencesParams{TenantID: "tenant-b", After: after(5)}, []string{}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", State: record.OccurrenceDead, Reverse: true}, []string{"a3", "b2"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", Queue: "mail"}, []string{"b0", "b2"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", State: record.OccurrenceDead}, []string{"b2", "a3"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", State: record.OccurrenceDead, Queue: "reports"}, []string{"a3"}},
			{store.ListOccurrencesParams{TenantID: "tenant-a", State: record.OccurrenceEnqueued}, []string{"a1v2"}},
			{store.ListOccurrencesParams{TenantID: "tenant-b"}, []string{"x0"}},
			{store.ListOccurrencesParams{TenantID: "tenant-b", ScheduleID: a.ScheduleID}, []string{}},
			{store.ListOccurrencesParams{TenantID: "tenant-b", State: record.OccurrenceDead, Queue: "reports"}, []string{"x0"}},
		} {
			got, err := s.ListOccurrences(ctx, tc.p)
			if err != nil {
				t.Fatalf("ListOccurrences(%+v): %v", tc.p, err)
			}
			names := []string{}
			for _, o := range got {
				names = append(names, name[o.OccurrenceID])
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.want) {
				t.Errorf("ListOccurrences(%+v) = %v, want %v", tc.p, names, tc.want)
			}
		}
	})

	t.Run("ListOccurrencesLimits", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_many")
		mustInsertSchedule(t, s, sc)
		var occs []record.Occurrence
		for i := range store.DefaultListLimit + 5 {
			occs = append(occs, NewOccurrence(sc, at(time.Duration(i)*time.Second)))
		}
		mustInsertOccurrences(t, s, len(occs), occs...)
		for _, tc := range []struct{ limit, want int }{
			{0, store.DefaultListLimit}, {-1, store.DefaultListLimit}, {3, 3}, {store.MaxListLimit + 1, len(occs)},
		} {
			got, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: sc.ScheduleID, Limit: tc.limit})
			if err != nil || len(got) != tc.want {
				t.Errorf("ListOccurrences limit %d: %d rows, %v; want %d", tc.limit, len(got), err, tc.want)
			}
		}
	})

	t.Run("CountOccurrences", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		a := NewSchedule("tenant-a", "sch_count")
		b := NewSchedule("tenant-b", "sch_count_b")
		mustInsertSchedule(t, s, a)
		mustInsertSchedule(t, s, b)
		counts := map[record.OccurrenceState]int{
			record.OccurrenceScheduled: 1, record.OccurrenceEnqueued: 2, record.OccurrenceRunning: 3,
			record.OccurrenceSucceeded: 4, record.OccurrenceRetryWait: 5, record.OccurrenceDead: 6,
			record.OccurrenceMissed: 1, record.OccurrenceCanceled: 2, record.OccurrenceSkippedOverlap: 3,
		}
		var occs []record.Occurrence
		i := 0
		for st, n := range counts {
			for range n {
				o := NewOccurrence(a, at(time.Duration(i)*time.Minute))
				o.State = st
				occs = append(occs, o)
				i++
			}
		}
		// Another tenant's occurrences, in every state, count for it alone.
		for st := range counts {
			o := NewOccurrence(b, at(time.Duration(i)*time.Minute))
			o.State = st
			occs = append(occs, o)
			i++
		}
		mustInsertOccurrences(t, s, len(occs), occs...)
		for st, want := range counts {
			got, err := s.CountOccurrences(ctx, "tenant-a", st)
			if err != nil || got != want {
				t.Errorf("CountOccurrences(%s) = %d, %v; want %d", st, got, err, want)
			}
			got, err = s.CountOccurrences(ctx, "tenant-b", st)
			if err != nil || got != 1 {
				t.Errorf("CountOccurrences(tenant-b, %s) = %d, %v; want 1", st, got, err)
			}
			got, err = s.CountOccurrences(ctx, "tenant-c", st)
			if err != nil || got != 0 {
				t.Errorf("CountOccurrences(tenant-c, %s) = %d, %v; want 0", st, got, err)
			}
		}
	})
}
