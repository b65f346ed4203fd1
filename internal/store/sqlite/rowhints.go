package sqlite

import (
	"iter"
	"sync"
)

// maxRowHints bounds rowHints: more than a fleet's claims in flight at
// once (MaxClaimBatch per worker), and a few megabytes at most, whatever
// the number of schedules or occurrences.
const maxRowHints = 1 << 16

// rowHints remembers the table row of the occurrences this store handed
// out in claims, so that their acks find each row by its integer rowid, one
// b-tree seek, where the occurrence id takes two (its index, then the
// row): about a tenth of a claim plus its ack (docs/engine.md).
//
// A hint is right for as long as the store is open, because an
// occurrence's row number never changes: occurrences.row is an INTEGER
// PRIMARY KEY, which VACUUM keeps, and only retention deletes occurrences,
// finished ones, dropping their hints (retention.go). A claim that rolled back
// still read the right row. The write that uses a hint still checks the
// tenant, the attempt and that the occurrence is RUNNING, as by id.
//
// Hints are dropped when their attempt finishes, and all of them at once
// when there are too many (occurrences claimed and never finished by their
// worker); a store that restarts starts with none. An ack without one goes
// by the id.
type rowHints struct {
	mu   sync.Mutex
	rows map[string]int64 // occurrence id -> rowid

	// schedules remembers the rows of the schedules DueSchedules read, for
	// the plan that advances them.
	schedules scheduleRows
}

// scheduleRows remembers the row (schedules.row) of each schedule
// DueSchedules returned, until CommitPlan takes it: the plan's cursor
// advance and its occurrences are keyed by that row, and a hint saves
// looking it up by id in the commit, which holds the one writer. A row
// names one schedule for ever (an INTEGER PRIMARY KEY AUTOINCREMENT, never
// changed nor given twice, and no schedule is ever deleted), so a hint is
// never wrong. What is taken is forgotten, so the map holds the pages in
// flight (the planner reads one page while it commits the previous one);
// pages read and never committed are dropped all at once when there are
// too many. A plan item without a hint goes by its id.
type scheduleRows struct {
	mu   sync.Mutex
	rows map[string]int64 // schedule id -> row
}

// put records that schedule ids[i] is at rows[i], for every i.
func (h *scheduleRows) put(ids func(i int) string, rows []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rows == nil || len(h.rows)+len(rows) > maxRowHints {
		h.rows = make(map[string]int64, len(rows))
	}
	for i, row := range rows {
		h.rows[ids(i)] = row
	}
}

// take sets rows[i] to the row hinted for schedule ids(i), or leaves it 0
// when there is none, forgets those hints, and reports how many it found.
func (h *scheduleRows) take(ids func(i int) string, rows []int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	found := 0
	for i := range rows {
		id := ids(i)
		if row, ok := h.rows[id]; ok {
			rows[i] = row
			delete(h.rows, id)
			found++
		}
	}
	return found
}

// put records that occurrence id is at rowid row.
func (h *rowHints) put(id string, row int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rows == nil || len(h.rows) >= maxRowHints {
		h.rows = make(map[string]int64)
	}
	h.rows[id] = row
}

// lookup returns the rowids hinted for the n occurrences ids, in order,
// under one lock; false when any of them has none.
func (h *rowHints) lookup(ids iter.Seq[string], n int) ([]int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rows := make([]int64, 0, n)
	for id := range ids {
		row, ok := h.rows[id]
		if !ok {
			return nil, false
		}
		rows = append(rows, row)
	}
	return rows, true
}

// drop forgets the hints of the occurrences ids.
func (h *rowHints) drop(ids iter.Seq[string]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := range ids {
		delete(h.rows, id)
	}
}
