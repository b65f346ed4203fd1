package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// runHarness is a harness with n schedules firing each minute, planned
// and due: a claim of up to n finds them all in one lane.
func runHarness(t *testing.T, open harnessMaker, n int) *harness {
	t.Helper()
	h := open(t, utc("2027-01-04T10:00:00Z"), nil)
	for i := range n {
		h.create(every(fmt.Sprintf("s%02d", i), "1m"))
	}
	h.advance(time.Minute)
	return h
}

// rowState is an occurrence as its row stands, without folding any run:
// what a store read sees.
func (h *harness) rowState(id string) *record.Occurrence {
	h.t.Helper()
	o, err := h.st.GetOccurrence(h.ctx, tenant, id)
	if err != nil {
		h.t.Fatalf("get %s: %v", id, err)
	}
	return o
}

// got is an occurrence as the engine answers it.
func (h *harness) got(id string) *record.Occurrence {
	h.t.Helper()
	o, err := h.e.Queue.Occurrence(h.ctx, tenant, id)
	if err != nil {
		h.t.Fatalf("get %s: %v", id, err)
	}
	return o
}

func ackOf(cs ...store.Claimed) []AckItem {
	items := make([]AckItem, len(cs))
	for i, c := range cs {
		items[i] = AckItem{OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt}
	}
	return items
}

// hasRuns says whether h's store leases runs (SQLite today).
func (h *harness) hasRuns() bool { return storeHasRuns(h.ctx, h.st) }

// TestRunWritesNoRow: a claim on a store with runs writes no occurrence
// row (the rows still say ENQUEUED), yet every reader through the engine
// sees the occurrences RUNNING, and after the acks SUCCEEDED, with the
// attempt, worker and lease the claim answered.
func TestRunWritesNoRow(t *testing.T) { onEveryStore(t, testRunWritesNoRow) }

func testRunWritesNoRow(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := runHarness(t, open, 6)
	got := h.claim("q", 10)
	if len(got) != 6 {
		t.Fatalf("claimed %d, want 6", len(got))
	}
	if h.hasRuns() {
		for _, c := range got {
			if o := h.rowState(c.Occurrence.OccurrenceID); o.State != record.OccurrenceEnqueued || o.AttemptCount != 0 {
				t.Fatalf("row of %s after the claim: %s attempt %d, want ENQUEUED 0 (leased by a run)", o.OccurrenceID, o.State, o.AttemptCount)
			}
		}
	}
	// The figures merge the runs.
	snap, err := h.st.Snapshot(h.ctx, store.SnapshotParams{Now: h.clk.Now(), TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	running := int64(0)
	for _, d := range snap.Depth {
		switch d.State {
		case record.OccurrenceRunning:
			running += d.Count
		case record.OccurrenceEnqueued:
			if d.Ready > 0 {
				t.Errorf("depth after the claim: %+v ready, want none", d)
			}
		}
	}
	if running != 6 || snap.OldestReady != nil {
		t.Fatalf("snapshot after the claim: %d running, oldest ready %v; want 6, none", running, snap.OldestReady)
	}
	rs, err := h.e.Queue.AckBatch(h.ctx, tenant, ackOf(got[:4]...))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Err != nil || r.Occurrence.State != record.OccurrenceSucceeded || r.Occurrence.AttemptCount != 1 {
			t.Fatalf("ack %d: %+v", i, r)
		}
	}
	// A repeated ack is taken without writing; a stale attempt is not.
	rs, err = h.e.Queue.AckBatch(h.ctx, tenant, []AckItem{{OccurrenceID: got[0].Occurrence.OccurrenceID, Attempt: 1},
		{OccurrenceID: got[5].Occurrence.OccurrenceID, Attempt: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].Repeated || rs[0].Err != nil {
		t.Fatalf("repeated ack: %+v", rs[0])
	}
	if !errors.Is(rs[1].Err, store.ErrStaleAttempt) {
		t.Fatalf("ack of attempt 2 of an attempt-1 delivery: %v, want ErrStaleAttempt", rs[1].Err)
	}
	// Read through the engine: acked ones SUCCEEDED, the others RUNNING.
	for i, c := range got {
		o := h.got(c.Occurrence.OccurrenceID)
		want := record.OccurrenceRunning
		if i < 4 {
			want = record.OccurrenceSucceeded
		}
		if o.State != want || o.AttemptCount != 1 || !o.FirstClaimedAt.Equal(c.Attempt.ClaimedAt) {
			t.Fatalf("occurrence %d: %s attempt %d first claimed %s; want %s 1 %s", i, o.State, o.AttemptCount, o.FirstClaimedAt,
				want, c.Attempt.ClaimedAt)
		}
	}
	// After the fold the rows say so, and the acks of the rest go to
	// the rows.
	rs, err = h.e.Queue.AckBatch(h.ctx, tenant, ackOf(got[4:]...))
	if err != nil || rs[0].Err != nil || rs[1].Err != nil {
		t.Fatalf("acks after the fold: %v %+v", err, rs)
	}
	for _, c := range got {
		if o := h.rowState(c.Occurrence.OccurrenceID); o.State != record.OccurrenceSucceeded || o.AttemptCount != 1 {
			t.Fatalf("row of %s at the end: %s attempt %d", o.OccurrenceID, o.State, o.AttemptCount)
		}
	}
}

// TestRunExpiresUnackedHalf: a run's lease runs out with half of it
// acked: only the other half comes back, under the next attempt number,
// and the acked half stays SUCCEEDED under the first.
func TestRunExpiresUnackedHalf(t *testing.T) { onEveryStore(t, testRunExpiresUnackedHalf) }

func testRunExpiresUnackedHalf(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := runHarness(t, open, 8)
	got := h.claim("q", 8)
	if len(got) != 8 {
		t.Fatalf("claimed %d, want 8", len(got))
	}
	acked := []store.Claimed{got[0], got[1], got[4], got[6]}
	if _, err := h.e.Queue.AckBatch(h.ctx, tenant, ackOf(acked...)); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(3 * time.Second) // past the 2 s lease
	again := h.claim("q", 8)       // sweeps first
	var ids []string
	for _, c := range again {
		if c.Attempt.Attempt != 2 {
			t.Fatalf("redelivered %s at attempt %d, want 2", c.Occurrence.OccurrenceID, c.Attempt.Attempt)
		}
		ids = append(ids, c.Occurrence.OccurrenceID)
	}
	var want []string
	for _, i := range []int{2, 3, 5, 7} {
		want = append(want, got[i].Occurrence.OccurrenceID)
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("redelivered %v, want the unacked half %v", ids, want)
	}
	for _, c := range acked {
		if o := h.got(c.Occurrence.OccurrenceID); o.State != record.OccurrenceSucceeded || o.AttemptCount != 1 {
			t.Fatalf("acked %s after the expiry: %s attempt %d", o.OccurrenceID, o.State, o.AttemptCount)
		}
	}
	// The first attempt of a redelivered one is in its history, expired.
	as, err := h.e.Queue.Attempts(h.ctx, store.ListAttemptsParams{TenantID: tenant, OccurrenceID: want[0], Limit: 10})
	if err != nil || len(as) != 2 || as[0].Result != record.ResultLeaseExpired {
		t.Fatalf("attempts of %s: %v %+v", want[0], err, as)
	}
}

// TestRunNackInside: a nack of one occurrence of a run takes the rules of
// a nack (a retry), and the run's other occurrences are acked as usual.
func TestRunNackInside(t *testing.T) { onEveryStore(t, testRunNackInside) }

func testRunNackInside(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := runHarness(t, open, 4)
	got := h.claim("q", 4)
	o, err := h.e.Queue.Nack(h.ctx, tenant, got[1].Occurrence.OccurrenceID, 1, Retryable, "try later")
	if err != nil || o.State != record.OccurrenceRetryWait || o.AttemptCount != 1 {
		t.Fatalf("nack inside a run: %v %+v", err, o)
	}
	rs, err := h.e.Queue.AckBatch(h.ctx, tenant, ackOf(got[0], got[2], got[3]))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Err != nil || r.Occurrence.State != record.OccurrenceSucceeded {
			t.Fatalf("ack beside the nack: %+v", r)
		}
	}
	if o := h.got(got[1].Occurrence.OccurrenceID); o.State != record.OccurrenceRetryWait {
		t.Fatalf("nacked one: %s", o.State)
	}
}

// TestRunBackgroundFold: runs acked whole are folded by the sweep once
// FoldAfter has passed: the rows then say SUCCEEDED with no read through
// the engine, and no run is left.
func TestRunBackgroundFold(t *testing.T) { onEveryStore(t, testRunBackgroundFold) }

func testRunBackgroundFold(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := runHarness(t, open, 5)
	req := ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w1", Limit: 2, Lease: time.Minute}
	var all []store.Claimed
	var acks []AckItem
	for {
		_, got, err := h.e.Queue.AckAndClaim(h.ctx, req, acks)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, got...)
		if len(got) == 0 {
			break
		}
		acks = ackOf(got...)
	}
	if len(all) != 5 {
		t.Fatalf("delivered %d, want 5", len(all))
	}
	h.clk.Advance(FoldAfter + time.Second)
	h.plan() // the pass folds runs acked whole

	for _, c := range all {
		if o := h.rowState(c.Occurrence.OccurrenceID); o.State != record.OccurrenceSucceeded || o.AttemptCount != 1 {
			t.Fatalf("row of %s after the fold: %s attempt %d", o.OccurrenceID, o.State, o.AttemptCount)
		}
	}
	if h.hasRuns() {
		var left []store.RunTotal
		err := store.InTx(h.ctx, h.st, func(tx store.Tx) (err error) {
			left, err = tx.(store.RunTx).RunTotals(h.ctx, "")
			return err
		})
		if err != nil || len(left) != 0 {
			t.Fatalf("runs left after the fold: %v %+v", err, left)
		}
	}
}

// TestRunPolicyChange: an update of a schedule whose occurrence a run
// holds counts that occurrence in flight (it is RUNNING, though its row
// said ENQUEUED), and once the new version skips while one runs, its next
// firing is decided against that running occurrence.
func TestRunPolicyChange(t *testing.T) { onEveryStore(t, testRunPolicyChange) }

func testRunPolicyChange(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := open(t, utc("2027-01-04T10:00:00Z"), nil)
	sc := h.create(every("busy", "1m"))
	h.advance(time.Minute)
	got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w1", Limit: 10, Lease: time.Hour})
	if err != nil || len(got) != 1 {
		t.Fatalf("claimed %d, %v; want 1", len(got), err)
	}
	req := every("busy", "1m")
	req.OverlapPolicy = record.OverlapSkipIfRunning
	res, err := h.e.Control.Update(h.ctx, tenant, sc.ScheduleID, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.InFlight != 1 {
		t.Fatalf("update: %d in flight, want 1 (the occurrence the run holds)", res.InFlight)
	}
	h.advance(time.Minute)
	if again := h.claim("q", 10); len(again) != 0 {
		t.Fatalf("claimed %d while the first runs under skip_if_running, want 0", len(again))
	}
	occs := h.occurrences(sc.ScheduleID)
	states := byState(occs)
	if len(states[record.OccurrenceRunning]) != 1 || len(states[record.OccurrenceSkippedOverlap]) != 1 {
		t.Fatalf("states after the skip: %v", states)
	}
}

// TestRunReadersAgree: with runs unfolded (some acked, some not), what
// the figures and the claim's next time read by merging the runs is what
// the rows say once the runs are folded.
func TestRunReadersAgree(t *testing.T) { onEveryStore(t, testRunReadersAgree) }

func testRunReadersAgree(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := runHarness(t, open, 30)
	first := h.claim("q", 10)
	second := h.claim("q", 10)
	if len(first) != 10 || len(second) != 10 {
		t.Fatalf("claimed %d and %d, want 10 each", len(first), len(second))
	}
	if _, err := h.e.Queue.AckBatch(h.ctx, tenant, ackOf(append(first[2:7], second[9])...)); err != nil {
		t.Fatal(err)
	}
	read := func() (store.Snapshot, time.Time, time.Time) {
		t.Helper()
		snap, err := h.st.Snapshot(h.ctx, store.SnapshotParams{Now: h.clk.Now(), TenantID: tenant})
		if err != nil {
			t.Fatal(err)
		}
		next, err := h.st.NextAvailable(h.ctx, tenant, "q")
		if err != nil {
			t.Fatal(err)
		}
		fire, err := h.e.Control.NextFire(h.ctx, h.schedule(first[0].Occurrence.ScheduleID))
		if err != nil {
			t.Fatal(err)
		}
		return snap, next, fire
	}
	snap, next, sc := read()
	if err := FoldTenant(h.ctx, h.st, tenant); err != nil {
		t.Fatal(err)
	}
	snap2, next2, sc2 := read()
	if fmt.Sprint(snap.Depth) != fmt.Sprint(snap2.Depth) {
		t.Errorf("depth merged with the runs:\n%+v\nafter the fold:\n%+v", snap.Depth, snap2.Depth)
	}
	if fmt.Sprint(snap.DueBacklog) != fmt.Sprint(snap2.DueBacklog) {
		t.Errorf("due backlog merged: %v, after the fold: %v", snap.DueBacklog, snap2.DueBacklog)
	}
	if (snap.OldestReady == nil) != (snap2.OldestReady == nil) ||
		(snap.OldestReady != nil && snap.OldestReady.OccurrenceID != snap2.OldestReady.OccurrenceID) {
		t.Errorf("oldest ready merged: %+v, after the fold: %+v", snap.OldestReady, snap2.OldestReady)
	}
	if !next.Equal(next2) {
		t.Errorf("next available merged: %s, after the fold: %s", next, next2)
	}
	if !sc.Equal(sc2) {
		t.Errorf("a held schedule's next firing merged: %s, after the fold: %s", sc, sc2)
	}
}
