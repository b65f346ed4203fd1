package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// A claim remembers the rows it hands out, and the acks of those
// occurrences find them by row (qFinishGroupByRow) and forget them. Acks
// the store has no row for (claims of an earlier process, a partial set)
// find theirs by id, with the same answers.
func TestAcksFindClaimedRows(t *testing.T) {
	at := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		// forget runs between the claim and the acks.
		forget func(s *Store, claimed []store.Claimed)
		// byRow is whether the acks should find their rows by rowid.
		byRow bool
	}{
		{"all remembered", func(*Store, []store.Claimed) {}, true},
		{"none remembered (a restart)", func(s *Store, _ []store.Claimed) { s.hints = rowHints{} }, false},
		{"one forgotten", func(s *Store, c []store.Claimed) {
			s.hints.drop(func(yield func(string) bool) { yield(c[1].Occurrence.OccurrenceID) })
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			sc := storetest.NewSchedule("tenant-a", "sch_a")
			sc.OverlapPolicy = record.OverlapAllow // all three at once
			if err := s.InsertSchedule(t.Context(), sc); err != nil {
				t.Fatal(err)
			}
			var occs []record.Occurrence
			for i := range 3 {
				o := storetest.NewOccurrence(sc, at.Add(time.Duration(i)*time.Minute))
				o.State, o.EnqueuedAt = record.OccurrenceEnqueued, at
				occs = append(occs, o)
			}
			mustInsertOccs(t, s, occs...)
			now := at.Add(time.Hour)
			claimed, err := engine.ClaimOccurrences(t.Context(), s, store.ClaimParams{TenantID: sc.TenantID, Queue: sc.Queue,
				WorkerID: "w", Limit: 10, Lease: time.Minute, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(claimed) != 3 {
				t.Fatalf("claimed %d, want 3", len(claimed))
			}
			for _, c := range claimed {
				row, ok := hintOf(&s.hints, c.Occurrence.OccurrenceID)
				if want := rowOf(t, s, c.Occurrence.OccurrenceID); !ok || row != want {
					t.Fatalf("hint of %s = %d, %v; want row %d", c.Occurrence.OccurrenceID, row, ok, want)
				}
			}
			tc.forget(s, claimed)
			ps := make([]store.FinishParams, len(claimed))
			for i, c := range claimed {
				ps[i] = store.FinishParams{TenantID: sc.TenantID, OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt,
					Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
			}
			// A stale ack of the same occurrences first: it writes
			// nothing, and the hints stay for the attempts running.
			stale := append([]store.FinishParams(nil), ps...)
			for i := range stale {
				stale[i].Attempt++
			}
			res, err := s.FinishAttempts(t.Context(), stale)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if r.Err == nil {
					t.Fatalf("stale ack %d took: %+v", i, r.Occurrence)
				}
			}
			if got := s.hintedRowsOK(ps); got != tc.byRow {
				t.Fatalf("acks by row: %v, want %v", got, tc.byRow)
			}
			res, err = s.FinishAttempts(t.Context(), ps)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if r.Err != nil || r.Occurrence.State != record.OccurrenceSucceeded {
					t.Fatalf("ack %d: %+v, %v", i, r.Occurrence, r.Err)
				}
				got, err := s.GetOccurrence(t.Context(), sc.TenantID, ps[i].OccurrenceID)
				if err != nil || got.State != record.OccurrenceSucceeded {
					t.Fatalf("occurrence %s after its ack: %+v, %v", ps[i].OccurrenceID, got, err)
				}
				if _, ok := hintOf(&s.hints, ps[i].OccurrenceID); ok {
					t.Fatalf("the hint of %s outlived its ack", ps[i].OccurrenceID)
				}
			}
		})
	}
}

// hintedRowsOK reports whether a finish of ps would find its rows by
// rowid.
func (s *Store) hintedRowsOK(ps []store.FinishParams) bool {
	group := make([]int, len(ps))
	for i := range group {
		group[i] = i
	}
	_, ok := s.hintedRows(ps, group)
	return ok
}

func rowOf(t *testing.T, s *Store, occurrenceID string) int64 {
	t.Helper()
	var row int64
	if err := s.w.QueryRowContext(t.Context(), `SELECT row FROM occurrences WHERE occurrence_id = ?`, occurrenceID).Scan(&row); err != nil {
		t.Fatalf("row of %s: %v", occurrenceID, err)
	}
	return row
}

// Hints never grow past maxRowHints, whatever is claimed and never acked.
func TestRowHintsBounded(t *testing.T) {
	var h rowHints
	for i := range maxRowHints + 10 {
		h.put(fmt.Sprintf("occ_%d", i), int64(i))
		if len(h.rows) > maxRowHints {
			t.Fatalf("%d hints after %d puts, over %d", len(h.rows), i+1, maxRowHints)
		}
	}
	if row, ok := hintOf(&h, fmt.Sprintf("occ_%d", maxRowHints+9)); !ok || row != maxRowHints+9 {
		t.Fatalf("the latest hint: %d, %v", row, ok)
	}
}

// hintOf is the rowid hinted for occurrence id.
func hintOf(h *rowHints, id string) (int64, bool) {
	rows, ok := h.lookup(func(yield func(string) bool) { yield(id) }, 1)
	if !ok {
		return 0, false
	}
	return rows[0], true
}
