package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// Leased runs (docs/engine.md, "Leased runs"): on a store whose
// transactions offer store.RunTx, a claim leases the allow-policy
// occurrences it delivers from a lane with one run row instead of writing
// each, acks of them are appended to the run's ack log as ranges, and a
// fold writes the occurrence rows afterwards. This file holds the rules:
// what a run takes, which acks a run answers, when and how a run is
// folded, and which readers fold first.

// FoldAfter is how long after its claim a run acked whole waits for the
// background fold: long enough that a top-of-the-hour burst is handed out
// before its rows are written.
const FoldAfter = 10 * time.Second

// foldBatchRows caps the rows one background fold transaction writes, so
// that claims waiting for the writer wait at most that long.
const foldBatchRows = 20_000

// recheckAfter is how long a candidate a claim had to leave waiting
// (queue_one behind a running occurrence, a schedule another claim is
// deciding, a shard of a simulated outage) waits before a claim looks at
// it again, when a run moved the lane's head past it.
const recheckAfter = time.Second

// relax lets tx commit without waiting for the flush, where its store
// offers it (store.RelaxedTx): only for a transaction whose loss costs a
// redelivery under a new attempt and nothing else (acks and nacks, a
// fold). Never a claim: a lost claim would hand its attempts out a second
// time under the same numbers, and the attempt number is what fences a
// late ack from the worker that held it before.
func relax(ctx context.Context, tx store.QueueTx) error {
	if r, ok := tx.(store.RelaxedTx); ok {
		if err := r.RelaxDurability(ctx); err != nil {
			return fmt.Errorf("relax durability: %w", err)
		}
	}
	return nil
}

// runsOf returns tx's run statements, when its store has them.
func runsOf(tx store.QueueTx) (store.RunTx, bool) {
	rt, ok := tx.(store.RunTx)
	return rt, ok
}

// posLess orders positions of a lane.
func posLess(a, b store.CandidatePos) bool {
	return a.AvailableAt < b.AvailableAt || (a.AvailableAt == b.AvailableAt && a.Pos < b.Pos)
}

// posCompare orders positions of a lane, for sorting.
func posCompare(a, b store.CandidatePos) int {
	return cmp.Or(cmp.Compare(a.AvailableAt, b.AvailableAt), cmp.Compare(a.Pos, b.Pos))
}

// posOf is a candidate's position.
func posOf(c *store.ClaimCandidate) store.CandidatePos {
	return store.CandidatePos{Set: true, AvailableAt: c.Occurrence.AvailableAt.UnixMilli(), Pos: c.Pos}
}

// laneRun gathers, during a claim of one lane, what its run will hold:
// the positions leased (in lane order) and the candidates passed over
// that must wait.
type laneRun struct {
	lane   store.Lane
	leased []store.CandidatePos
	ids    []string
	tries  []int64 // each leased occurrence's attempt number
	left   []store.CandidatePos
}

// commitRun stores lr's run, if it leased anything, moving the lane's
// head past it, and puts the candidates it passed over back after the
// head. It notes the run in book (nil: none).
func commitRun(ctx context.Context, rt store.RunTx, lr *laneRun, w store.ClaimWrite, book *runBook) error {
	if len(lr.leased) == 0 {
		return nil
	}
	r := store.Run{Lane: lr.lane, First: lr.leased[0], Last: lr.leased[len(lr.leased)-1], N: len(lr.leased),
		WorkerID: w.WorkerID, ClaimedAt: w.Now.Truncate(time.Millisecond), LeaseExpiresAt: w.Now.Add(w.Lease).Truncate(time.Millisecond)}
	id, err := rt.InsertRun(ctx, &r)
	if err != nil {
		return err
	}
	faultinject.Crash(faultinject.RunBeforeCommit)
	var back []store.CandidatePos
	for _, p := range lr.left {
		if posLess(p, r.Last) {
			back = append(back, p)
		}
	}
	if len(back) > 0 {
		if err := rt.RequeueRows(ctx, lr.lane, back, w.Now.Add(recheckAfter)); err != nil {
			return fmt.Errorf("put back the candidates passed over: %w", err)
		}
	}
	book.add(id, lr)
	return nil
}

// runBook remembers, for acks, the runs this node handed out: which run
// each occurrence is in, at which position, under which attempt. It is a
// hint: an ack checks it against the run row it reads, and goes to the
// store (LeasedItems) for an occurrence it has no entry for. Bounded:
// when full it forgets everything, as after a restart.
type runBook struct {
	mu    sync.Mutex
	items map[string]bookItem
	runs  map[int64]*bookRun
}

// bookCap bounds the occurrences a runBook remembers.
const bookCap = 1 << 18

type bookItem struct {
	run     int64
	idx     int
	attempt int64
}

type bookRun struct {
	lane  store.Lane
	pos   []store.CandidatePos
	ids   []string
	acked []bool
	left  int // not yet acked
}

func newRunBook() *runBook {
	return &runBook{items: map[string]bookItem{}, runs: map[int64]*bookRun{}}
}

// add notes run id of lr.
func (b *runBook) add(id int64, lr *laneRun) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items)+len(lr.ids) > bookCap {
		clear(b.items)
		clear(b.runs)
	}
	if old := b.runs[id]; old != nil { // an id of a run rolled back: forget it
		b.forgetLocked(id)
	}
	r := &bookRun{lane: lr.lane, pos: slices.Clone(lr.leased), ids: slices.Clone(lr.ids), acked: make([]bool, len(lr.ids)), left: len(lr.ids)}
	b.runs[id] = r
	for i, oid := range lr.ids {
		b.items[oid] = bookItem{run: id, idx: i, attempt: lr.tries[i]}
	}
}

// forget drops run id.
func (b *runBook) forget(id int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forgetLocked(id)
}

func (b *runBook) forgetLocked(id int64) {
	r := b.runs[id]
	if r == nil {
		return
	}
	for _, oid := range r.ids {
		if it, ok := b.items[oid]; ok && it.run == id {
			delete(b.items, oid)
		}
	}
	delete(b.runs, id)
}

// lookup returns what the book says of occurrence oid: its run, its lane
// and its position.
func (b *runBook) lookup(oid string) (bookItem, store.Lane, store.CandidatePos, bool) {
	if b == nil {
		return bookItem{}, store.Lane{}, store.CandidatePos{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	it, ok := b.items[oid]
	if !ok {
		return it, store.Lane{}, store.CandidatePos{}, false
	}
	r := b.runs[it.run]
	if r == nil {
		return it, store.Lane{}, store.CandidatePos{}, false
	}
	return it, r.lane, r.pos[it.idx], true
}

// ranges returns the positions of run id that idxs (newly acked, sorted)
// make up, as ranges of consecutive occurrences of the run, and marks
// them acked. ok is false when the book does not know the run.
func (b *runBook) ranges(id int64, idxs []int) (rs [][2]store.CandidatePos, ns []int, ok bool) {
	if b == nil {
		return nil, nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.runs[id]
	if r == nil {
		return nil, nil, false
	}
	for i := 0; i < len(idxs); {
		j := i
		for j+1 < len(idxs) && idxs[j+1] == idxs[j]+1 {
			j++
		}
		rs = append(rs, [2]store.CandidatePos{r.pos[idxs[i]], r.pos[idxs[j]]})
		ns = append(ns, j-i+1)
		i = j + 1
	}
	for _, i := range idxs {
		if !r.acked[i] {
			r.acked[i] = true
			r.left--
		}
		delete(b.items, r.ids[i])
	}
	if r.left == 0 { // nothing left to coalesce: the memory goes at once
		delete(b.runs, id)
	}
	return rs, ns, true
}

// runAck is one ack of a batch that a run answers.
type runAck struct {
	i   int // its index in the batch
	pos store.CandidatePos
	idx int // its index in the run, with the book; -1 without
}

// finishTx applies the finishes ps in tx: the acks of occurrences an
// unfolded run holds go to the run's ack log, a nack of one folds its run
// first, and everything else goes to the rows (QueueTx.FinishAttempts).
// The results are in ps's order, as FinishAttempts answers them.
func finishTx(ctx context.Context, tx store.QueueTx, ps []store.FinishParams, book *runBook) ([]store.FinishResult, error) {
	rt, ok := runsOf(tx)
	if !ok || len(ps) == 0 {
		return tx.FinishAttempts(ctx, ps)
	}
	// Where each finished occurrence stands: the book first, the store
	// for the rest.
	type where struct {
		run     int64
		lane    store.Lane
		pos     store.CandidatePos
		idx     int
		attempt int64 // the run's attempt of it
		acked   bool  // already acked (the store's answer)
		tenant  string
	}
	at := make([]where, len(ps))
	unknown := map[string][]string{} // tenant -> ids the book has not
	for i := range ps {
		p := &ps[i]
		if it, lane, pos, ok := book.lookup(p.OccurrenceID); ok && lane.TenantID == p.TenantID {
			at[i] = where{run: it.run, lane: lane, pos: pos, idx: it.idx, attempt: it.attempt, tenant: p.TenantID}
			continue
		}
		at[i].idx = -1
		unknown[p.TenantID] = append(unknown[p.TenantID], p.OccurrenceID)
	}
	if len(unknown) > 0 {
		found := map[[2]string]store.LeasedItem{}
		for _, tenant := range slices.Sorted(maps.Keys(unknown)) {
			items, err := rt.LeasedItems(ctx, tenant, unknown[tenant])
			if err != nil {
				return nil, fmt.Errorf("find runs: %w", err)
			}
			for _, it := range items {
				found[[2]string{tenant, it.OccurrenceID}] = it
			}
		}
		for i := range ps {
			if at[i].run != 0 {
				continue
			}
			if it, ok := found[[2]string{ps[i].TenantID, ps[i].OccurrenceID}]; ok && it.RunID != 0 {
				at[i] = where{run: it.RunID, lane: it.Lane, pos: it.Pos, idx: -1, attempt: int64(it.AttemptCount) + 1, acked: it.Acked,
					tenant: ps[i].TenantID}
			}
		}
	}
	var ids []int64
	for i := range at {
		if at[i].run != 0 && !slices.Contains(ids, at[i].run) {
			ids = append(ids, at[i].run)
		}
	}
	if len(ids) == 0 {
		return tx.FinishAttempts(ctx, ps)
	}
	runs, err := rt.Runs(ctx, store.RunFilter{IDs: ids})
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	live := make(map[int64]*store.Run, len(runs))
	for i := range runs {
		live[runs[i].ID] = &runs[i]
	}
	res := make([]store.FinishResult, len(ps))
	var (
		rest    []store.FinishParams
		restAt  []int
		acks    = map[int64][]runAck{}
		nacked  = map[int64]bool{}
		seen    = map[string]bool{}
		ackedAt time.Time
	)
	for i := range ps {
		p := &ps[i]
		w := &at[i]
		r := live[w.run]
		// The run read must be the one noted: the same lane, the
		// position inside its range.
		holds := r != nil && r.Lane == w.lane && !posLess(w.pos, r.First) && !posLess(r.Last, w.pos)
		if !holds {
			rest, restAt = append(rest, *p), append(restAt, i)
			continue
		}
		if p.Result != record.ResultSucceeded {
			nacked[r.ID] = true // folded below; the nack then goes to its row
			rest, restAt = append(rest, *p), append(restAt, i)
			continue
		}
		brief := record.Occurrence{OccurrenceID: p.OccurrenceID, TenantID: p.TenantID, State: record.OccurrenceSucceeded,
			AttemptCount: int(w.attempt)}
		switch {
		case p.Attempt != w.attempt:
			res[i].Err = fmt.Errorf("%w: attempt %d is not the current attempt %d", store.ErrStaleAttempt, p.Attempt, w.attempt)
		case w.acked || seen[p.OccurrenceID]:
			res[i] = store.FinishResult{Occurrence: brief, Repeated: true}
		default:
			seen[p.OccurrenceID] = true
			res[i] = store.FinishResult{Occurrence: brief}
			acks[r.ID] = append(acks[r.ID], runAck{i: i, pos: w.pos, idx: w.idx})
			ackedAt = p.Now
		}
	}
	// The acks of a run whose other occurrence is nacked in this batch go
	// to the rows too: the nack folds the run first.
	for id := range nacked {
		for _, a := range acks[id] {
			rest, restAt = append(rest, ps[a.i]), append(restAt, a.i)
			res[a.i] = store.FinishResult{}
		}
		delete(acks, id)
		if err := foldRuns(ctx, rt, []store.Run{*live[id]}, book); err != nil {
			return nil, err
		}
	}
	var log []store.RunAck
	for _, id := range slices.Sorted(maps.Keys(acks)) {
		log = append(log, ackRanges(live[id], acks[id], ackedAt, book)...)
	}
	if err := rt.AppendRunAcks(ctx, log); err != nil {
		return nil, fmt.Errorf("append acks: %w", err)
	}
	if len(log) > 0 {
		faultinject.Crash(faultinject.AckAfterAppend)
	}
	if len(rest) > 0 {
		rs, err := tx.FinishAttempts(ctx, rest)
		if err != nil {
			return nil, err
		}
		for j, i := range restAt {
			res[i] = rs[j]
		}
	}
	return res, nil
}

// ackRanges turns the acks of run r into ack ranges at at: consecutive
// occurrences of the run coalesced when the book knows the run; without
// it, the run's whole range when the acks take every occurrence of a run
// none of which was acked (distinct occurrences it holds, as many as the
// claimable rows of its range: all of them), one range each otherwise.
// A fold writes a range with one statement, so a batch acked whole on a
// node that did not hand it out (schedd restarted since) must not cost
// one per occurrence.
func ackRanges(r *store.Run, as []runAck, at time.Time, book *runBook) []store.RunAck {
	id := r.ID
	idxs := make([]int, 0, len(as))
	for _, a := range as {
		if a.idx < 0 {
			idxs = nil
			break
		}
		idxs = append(idxs, a.idx)
	}
	if idxs != nil {
		slices.Sort(idxs)
		if rs, ns, ok := book.ranges(id, idxs); ok {
			out := make([]store.RunAck, len(rs))
			for k := range rs {
				out[k] = store.RunAck{RunID: id, First: rs[k][0], Last: rs[k][1], N: ns[k], At: at}
			}
			return out
		}
	}
	if r.Acked == 0 && len(as) == r.N {
		return []store.RunAck{{RunID: id, First: r.First, Last: r.Last, N: r.N, At: at}}
	}
	out := make([]store.RunAck, len(as))
	for k, a := range as {
		out[k] = store.RunAck{RunID: id, First: a.pos, Last: a.pos, N: 1, At: at}
	}
	slices.SortFunc(out, func(a, b store.RunAck) int { return posCompare(a.First, b.First) })
	return out
}

// foldRuns folds runs in tx: each ack range's rows become SUCCEEDED at
// the ack's time, the run's other rows RUNNING under its lease, and the
// run is deleted. It returns how many rows it wrote.
func foldRuns(ctx context.Context, rt store.RunTx, runs []store.Run, book *runBook) error {
	_, err := foldCount(ctx, rt, runs, book)
	return err
}

func foldCount(ctx context.Context, rt store.RunTx, runs []store.Run, book *runBook) (int, error) {
	n := 0
	for i := range runs {
		r := &runs[i]
		acks, err := rt.RunAcks(ctx, r.ID)
		if err != nil {
			return n, fmt.Errorf("fold run %d: %w", r.ID, err)
		}
		for _, a := range acks {
			k, err := rt.FoldRange(ctx, r, a.First, a.Last, store.FoldWrite{AckedAt: a.At})
			if err != nil {
				return n, err
			}
			n += k
		}
		faultinject.Crash(faultinject.FoldMiddle)
		if r.Acked < r.N {
			k, err := rt.FoldRange(ctx, r, r.First, r.Last, store.FoldWrite{})
			if err != nil {
				return n, err
			}
			n += k
		}
		if err := rt.DeleteRun(ctx, r.ID); err != nil {
			return n, fmt.Errorf("fold run %d: %w", r.ID, err)
		}
		book.forget(r.ID)
	}
	return n, nil
}

// foldSelected folds, in tx, the runs f selects; nothing on a store
// without runs.
func foldSelected(ctx context.Context, tx store.QueueTx, f store.RunFilter, book *runBook) error {
	rt, ok := runsOf(tx)
	if !ok {
		return nil
	}
	runs, err := rt.Runs(ctx, f)
	if err != nil || len(runs) == 0 {
		return err
	}
	return foldRuns(ctx, rt, runs, book)
}

// foldSchedule folds, in tx, the runs holding an occurrence of the
// tenant's schedule: an update, pause or cancel decides on rows.
func foldSchedule(ctx context.Context, tx store.QueueTx, tenantID, scheduleID string, book *runBook) error {
	rt, ok := runsOf(tx)
	if !ok {
		return nil
	}
	ids, err := rt.ScheduleRuns(ctx, tenantID, scheduleID)
	if err != nil || len(ids) == 0 {
		return err
	}
	return foldSelected(ctx, tx, store.RunFilter{IDs: ids}, book)
}

// foldOccurrences folds, in tx, the runs holding the tenant's
// occurrences ids.
func foldOccurrences(ctx context.Context, tx store.QueueTx, tenantID string, ids []string, book *runBook) error {
	rt, ok := runsOf(tx)
	if !ok {
		return nil
	}
	items, err := rt.LeasedItems(ctx, tenantID, ids)
	if err != nil {
		return err
	}
	var runIDs []int64
	for _, it := range items {
		if it.RunID != 0 && !slices.Contains(runIDs, it.RunID) {
			runIDs = append(runIDs, it.RunID)
		}
	}
	if len(runIDs) == 0 {
		return nil
	}
	return foldSelected(ctx, tx, store.RunFilter{IDs: runIDs}, book)
}

// foldFor folds the run holding the tenant's occurrence, if any, in a
// transaction of its own, so that its row says where it stands. Nothing
// on a store without runs.
func foldFor(ctx context.Context, st store.Store, tenantID, occurrenceID string, book *runBook) error {
	if !storeHasRuns(ctx, st) {
		return nil
	}
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		return foldOccurrences(ctx, tx, tenantID, []string{occurrenceID}, book)
	})
	if err != nil {
		return fmt.Errorf("fold the run of %s: %w", occurrenceID, err)
	}
	return nil
}

// readOccurrence reads one occurrence of the tenant as it stands: the run
// holding it is folded first.
func readOccurrence(ctx context.Context, st store.Store, tenantID, occurrenceID string, book *runBook) (*record.Occurrence, error) {
	if err := foldFor(ctx, st, tenantID, occurrenceID, book); err != nil {
		return nil, err
	}
	return st.GetOccurrence(ctx, tenantID, occurrenceID)
}

// FoldTenant folds every unfolded run of the tenant (of every tenant
// with tenantID ""), in one transaction: afterwards the occurrence rows
// say what the runs held. The listings, the simulator's report and the
// reconciler call it before they read rows.
func FoldTenant(ctx context.Context, st store.Store, tenantID string) error {
	return foldTenant(ctx, st, tenantID, nil)
}

func foldTenant(ctx context.Context, st store.Store, tenantID string, book *runBook) error {
	if !storeHasRuns(ctx, st) {
		return nil
	}
	f := store.RunFilter{TenantID: tenantID, All: tenantID == ""}
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		return foldSelected(ctx, tx, f, book)
	})
	if err != nil {
		return fmt.Errorf("fold the runs of %s: %w", tenantID, err)
	}
	return nil
}

// FoldFinished folds, in one transaction, runs acked whole that were
// claimed before now - FoldAfter, up to about foldBatchRows rows, and
// returns how many rows it wrote: the background fold, off the hot path.
// The planner's pass calls it once a pass, so a burst's runs are folded a
// transaction a second after the burst, and a claim never waits for a
// fold longer than one such transaction.
func FoldFinished(ctx context.Context, st store.Store, now time.Time) (int, error) {
	return foldFinished(ctx, st, now, nil)
}

func foldFinished(ctx context.Context, st store.Store, now time.Time, book *runBook) (int, error) {
	if !storeHasRuns(ctx, st) {
		return 0, nil
	}
	n := 0
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		n = 0
		if err := relax(ctx, tx); err != nil {
			return err
		}
		rt, _ := runsOf(tx)
		runs, err := rt.Runs(ctx, store.RunFilter{FinishedBefore: now.Add(-FoldAfter), Limit: 64})
		if err != nil {
			return err
		}
		var take []store.Run
		rows := 0
		for _, r := range runs {
			if rows > 0 && rows+r.N > foldBatchRows {
				break
			}
			take = append(take, r)
			rows += r.N
		}
		n, err = foldCount(ctx, rt, take, book)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("fold finished runs: %w", err)
	}
	if n > 0 {
		faultinject.Crash(faultinject.FoldAfterCommit)
	}
	return n, nil
}

// foldExpired folds, in tx, the runs whose lease ran out at or before now:
// their unacked rows become RUNNING with the expired lease, which the
// sweep then ends as any expired attempt.
func foldExpired(ctx context.Context, tx store.QueueTx, now time.Time, limit int, book *runBook) error {
	return foldSelected(ctx, tx, store.RunFilter{ExpiredAt: now, Limit: limit}, book)
}

// storeHasRuns says whether st's transactions offer runs, without
// starting one: the drivers' transaction types are fixed.
func storeHasRuns(ctx context.Context, st store.Store) bool {
	h, ok := st.(interface{ HasRuns() bool })
	return ok && h.HasRuns()
}

// runningInRuns counts the tenant's occurrences that unfolded runs hold
// and no ack covers: RUNNING, though their rows do not say so yet.
func runningInRuns(ctx context.Context, tx store.QueueTx, tenantID string) (int64, error) {
	rt, ok := runsOf(tx)
	if !ok {
		return 0, nil
	}
	ts, err := rt.RunTotals(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("runs of %s: %w", tenantID, err)
	}
	var n int64
	for _, t := range ts {
		n += t.Leased - t.Acked
	}
	return n, nil
}
