package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// testOutages pins the simulated outages' rows (store.OutageStore): one
// in progress at a time, the current one read at a given now, and a
// cancel that ends exactly the ones in progress.
func testOutages(t *testing.T, open func(t *testing.T) Store) {
	t.Run("InsertCurrentCancel", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		if o, err := s.CurrentOutage(ctx, at(0)); err != nil || o != nil {
			t.Fatalf("CurrentOutage on an empty store = %+v, %v; want nil", o, err)
		}
		first := store.Outage{Shards: []int{0, 3}, StartedAt: at(0), EndsAt: at(10 * time.Minute), CreatedBy: "node-a"}
		id, err := s.InsertOutage(ctx, first)
		if err != nil {
			t.Fatalf("InsertOutage: %v", err)
		}
		first.ID = id
		got, err := s.CurrentOutage(ctx, at(5*time.Minute))
		if err != nil || got == nil {
			t.Fatalf("CurrentOutage mid-way = %+v, %v; want %+v", got, err, first)
		}
		if got.ID != id || !slices.Equal(got.Shards, first.Shards) || !got.StartedAt.Equal(first.StartedAt) ||
			!got.EndsAt.Equal(first.EndsAt) || !got.CanceledAt.IsZero() || got.CreatedBy != "node-a" {
			t.Errorf("CurrentOutage = %+v; want %+v", got, first)
		}
		// It ends at EndsAt: not in progress then.
		if o, err := s.CurrentOutage(ctx, at(10*time.Minute)); err != nil || o != nil {
			t.Errorf("CurrentOutage at its end = %+v, %v; want nil", o, err)
		}
		// A second one while the first is in progress is refused.
		_, err = s.InsertOutage(ctx, store.Outage{StartedAt: at(time.Minute), EndsAt: at(time.Hour), CreatedBy: "node-b"})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("InsertOutage while one is in progress: %v; want ErrConflict", err)
		}
		// Canceling ends it (and only once).
		canceled, err := s.CancelOutages(ctx, at(2*time.Minute))
		if err != nil || len(canceled) != 1 || canceled[0].ID != id || !canceled[0].CanceledAt.Equal(at(2*time.Minute)) {
			t.Fatalf("CancelOutages = %+v, %v; want outage %d canceled at %v", canceled, err, id, at(2*time.Minute))
		}
		if o, err := s.CurrentOutage(ctx, at(3*time.Minute)); err != nil || o != nil {
			t.Errorf("CurrentOutage after cancel = %+v, %v; want nil", o, err)
		}
		if again, err := s.CancelOutages(ctx, at(3*time.Minute)); err != nil || len(again) != 0 {
			t.Errorf("CancelOutages again = %+v, %v; want none", again, err)
		}
		// Now a new one may start; all shards is an empty list.
		id2, err := s.InsertOutage(ctx, store.Outage{StartedAt: at(3 * time.Minute), EndsAt: at(4 * time.Minute), CreatedBy: "node-b"})
		if err != nil || id2 == id {
			t.Fatalf("InsertOutage after cancel = %d, %v; want a new id", id2, err)
		}
		got, err = s.CurrentOutage(ctx, at(3*time.Minute))
		if err != nil || got == nil || got.ID != id2 || len(got.Shards) != 0 {
			t.Errorf("CurrentOutage = %+v, %v; want outage %d on all shards", got, err, id2)
		}
		// One that ended on its own is not canceled later.
		if c, err := s.CancelOutages(ctx, at(5*time.Minute)); err != nil || len(c) != 0 {
			t.Errorf("CancelOutages after the end = %+v, %v; want none", c, err)
		}
		if _, err := s.InsertOutage(ctx, store.Outage{StartedAt: at(4 * time.Minute), EndsAt: at(5 * time.Minute), CreatedBy: "node-a"}); err != nil {
			t.Errorf("InsertOutage at the end of the last one: %v", err)
		}
	})

	t.Run("BadOutage", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		for _, o := range []store.Outage{
			{StartedAt: at(0), EndsAt: at(time.Minute)},                                      // no node
			{StartedAt: at(time.Minute), EndsAt: at(time.Minute), CreatedBy: "n"},            // empty
			{Shards: []int{2, 1}, StartedAt: at(0), EndsAt: at(time.Minute), CreatedBy: "n"}, // unsorted
			{Shards: []int{-1}, StartedAt: at(0), EndsAt: at(time.Minute), CreatedBy: "n"},   // negative
		} {
			if _, err := s.InsertOutage(ctx, o); err == nil {
				t.Errorf("InsertOutage(%+v): no error", o)
			}
		}
		if o, err := s.CurrentOutage(ctx, at(0)); err != nil || o != nil {
			t.Errorf("CurrentOutage after refused inserts = %+v, %v; want nil", o, err)
		}
	})
}
