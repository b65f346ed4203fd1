package rowcodec

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

func TestPlanRuns(t *testing.T) {
	items := []store.PlanItem{{ScheduleID: "a"}, {ScheduleID: "b"}, {ScheduleID: "a"}, {ScheduleID: "c"}, {ScheduleID: "a"}, {ScheduleID: "b"}}
	var got [][]int
	if err := PlanRuns(items, func(run []int) error {
		got = append(got, append([]int(nil), run...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "[[0 1] [2 3] [4 5]]"; fmt.Sprint(got) != want {
		t.Errorf("runs %v, want %s", got, want)
	}
	if err := PlanRuns(nil, func([]int) error { t.Error("a run of no items"); return nil }); err != nil {
		t.Fatal(err)
	}
}

// row is a Scanner of fixed values.
type row []any

func (r row) Scan(dest ...any) error {
	for i, d := range dest {
		switch d := d.(type) {
		case *int64:
			*d = r[i].(int64)
		case *string:
			*d = r[i].(string)
		}
	}
	return nil
}

func TestSnapshotRead(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 30, 0, time.UTC)
	for _, bad := range []store.SnapshotParams{
		{Now: now, Buckets: -1},
		{Now: now, Buckets: MaxBacklogBuckets + 1},
		{Now: now, BacklogFrom: now.Add(time.Millisecond)},
	} {
		if _, err := NewSnapshotRead(bad); err == nil {
			t.Errorf("NewSnapshotRead(%+v): no error", bad)
		}
	}
	r, err := NewSnapshotRead(store.SnapshotParams{Now: now, BacklogFrom: now.Truncate(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Snap.DueBacklog) != DefaultBacklogBuckets || r.From != MS(now.Truncate(time.Minute)) ||
		r.End != r.From+DefaultBacklogBuckets*60_000 || r.Now != MS(now) {
		t.Fatalf("snapshot read %+v", r)
	}
	for _, m := range []row{{int64(0), int64(2)}, {int64(59), int64(1)}, {int64(0), int64(3)}} {
		if err := r.AddDue(m); err != nil {
			t.Fatal(err)
		}
	}
	if r.Snap.DueBacklog[0] != 5 || r.Snap.DueBacklog[59] != 1 {
		t.Errorf("backlog %v", r.Snap.DueBacklog)
	}
	if err := r.AddDue(row{int64(60), int64(1)}); err == nil {
		t.Error("a minute past the buckets: no error")
	}
}

func TestListAfter(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	first, _ := ListAfter(store.ListOccurrencesParams{})
	last, _ := ListAfter(store.ListOccurrencesParams{Reverse: true})
	ms, id := ListAfter(store.ListOccurrencesParams{Reverse: true, After: &store.OccurrenceKey{ScheduledFor: at, OccurrenceID: "occ_x"}})
	if first >= MS(at) || last <= MS(at) || ms != MS(at) || id != "occ_x" {
		t.Errorf("ListAfter: %d, %d, (%d, %s)", first, last, ms, id)
	}
}
