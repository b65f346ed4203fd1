package engine

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// TestRunAckedByAnotherNode: acks from a node that did not hand the run
// out (schedd restarted since the claim, its book empty) that take every
// occurrence of a run are one ack range, as the node that handed it out
// appends, not one per occurrence; acks of a part of a run are a range
// each. Either way the fold writes each occurrence SUCCEEDED at its ack.
//
// One range per occurrence made a fold write a run with one statement per
// occurrence, each of which scanned the rest of its millisecond's
// claimable rows (qFoldArchived, qFoldRange): a burst's batch of 1,000
// acked after a restart took about 15 s to fold out of 50,000 due at one
// instant, in a claim's sweep, holding the writer, while the claims
// waiting behind it handed out leases that ran out before they answered
// (internal/e2e, TestBurstSIGKILLLosesNothing).
func TestRunAckedByAnotherNode(t *testing.T) { onEveryStore(t, testRunAckedByAnotherNode) }

func testRunAckedByAnotherNode(t *testing.T, open harnessMaker) {
	t.Parallel()
	h := runHarness(t, open, 6)
	if !h.hasRuns() {
		t.Skip("the store leases no runs")
	}
	claim := func() []store.Claimed {
		t.Helper()
		got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w", Limit: 10, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	whole := claim()
	h.advance(time.Minute)
	part := claim()
	if len(whole) != 6 || len(part) != 6 {
		t.Fatalf("claimed %d and %d, want 6 and 6", len(whole), len(part))
	}
	// The restarted node: a new engine on the store.
	// On the harness's clock alone, as the first engine is (on
	// PostgreSQL its offset to the server's clock would move the acks'
	// time by the few milliseconds it measured).
	e2, err := New(h.ctx, Config{Store: h.st, Clock: h.clk, Shards: 4, Horizon: time.Minute, NodeID: "restarted",
		IgnoreStoreClock: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]store.Claimed{whole, part[:3], part[3:]} {
		rs, err := e2.Queue.AckBatch(h.ctx, tenant, ackOf(batch...))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			if r.Err != nil || r.Repeated || r.Occurrence.State != record.OccurrenceSucceeded {
				t.Fatalf("ack %d of %s: %+v", i, batch[i].Occurrence.OccurrenceID, r)
			}
		}
	}
	ackedAt := h.clk.Now().Truncate(time.Millisecond)

	var (
		runs []store.Run
		acks = map[int64][]store.RunAck{}
	)
	err = store.InTx(h.ctx, h.st, func(tx store.Tx) error {
		rt := tx.(store.RunTx)
		var err error
		if runs, err = rt.Runs(h.ctx, store.RunFilter{All: true}); err != nil {
			return err
		}
		for _, r := range runs {
			if acks[r.ID], err = rt.RunAcks(h.ctx, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for i, r := range runs {
		a := acks[r.ID]
		switch {
		case r.Acked != r.N:
			t.Errorf("run %d: %d of %d acked", i, r.Acked, r.N)
		case i == 0 && (len(a) != 1 || a[0].First != r.First || a[0].Last != r.Last || a[0].N != r.N):
			t.Errorf("the run acked whole by another node has ack ranges %+v; want one, the run's %v..%v", a, r.First, r.Last)
		case i == 1 && len(a) != r.N:
			t.Errorf("the run acked in two parts by another node has %d ack ranges; want one per occurrence, %d", len(a), r.N)
		}
	}

	if err := FoldTenant(h.ctx, h.st, tenant); err != nil {
		t.Fatal(err)
	}
	for _, c := range append(whole, part...) {
		o := h.rowState(c.Occurrence.OccurrenceID)
		if o.State != record.OccurrenceSucceeded || o.AttemptCount != 1 || !o.FinishedAt.Equal(ackedAt) {
			t.Errorf("%s after the fold: %s attempt %d finished %s; want SUCCEEDED 1 %s", o.OccurrenceID, o.State, o.AttemptCount, o.FinishedAt, ackedAt)
		}
	}
}
