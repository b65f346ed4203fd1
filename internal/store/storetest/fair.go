package storetest

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testRunningQuota: QueueTx.CountRunning counts a tenant's RUNNING
// occurrences in every queue, the transaction's own claims included and
// no other tenant's; a claim with MaxRunning takes no more than brings
// the tenant to it, and an ack in the same transaction frees a slot.
func testRunningQuota(t *testing.T, open func(t *testing.T) Store) {
	t.Run("CountRunning", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		a := queueSchedule(t, s, "tenant-a", "sch_quota_a", record.OverlapAllow)
		b := queueSchedule(t, s, "tenant-b", "sch_quota_b", record.OverlapAllow)
		var occs []record.Occurrence
		for i := range 6 {
			occs = append(occs, readyOccurrence(a, i, record.LaneStrict))
		}
		occs = append(occs, readyOccurrence(b, 0, record.LaneStrict))
		mustInsertOccurrences(t, s, len(occs), occs...)
		now := at(time.Hour)
		count := func(tenantID string) int64 {
			t.Helper()
			var n int64
			err := store.InTx(ctx, s, func(tx store.Tx) (err error) {
				n, _, err = tx.CountRunning(ctx, tenantID, true)
				return err
			})
			if err != nil {
				t.Fatalf("CountRunning: %v", err)
			}
			return n
		}
		if n := count("tenant-a"); n != 0 {
			t.Fatalf("running before any claim: %d", n)
		}
		mustClaim(t, s, "tenant-b", 1, now)
		claim := store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "worker-1", Limit: 2, Lease: testLease, Now: now, MaxRunning: 3}
		got, err := engine.ClaimOccurrences(ctx, s, claim)
		if err != nil || len(got) != 2 {
			t.Fatalf("claim under the quota: %d, %v; want 2", len(got), err)
		}
		if n := count("tenant-a"); n != 2 {
			t.Fatalf("running after claiming 2: %d (tenant-b's must not count)", n)
		}
		// Within one transaction the claim counts what it claimed.
		err = store.InTx(ctx, s, func(tx store.Tx) error {
			if _, err := tx.FinishAttempts(ctx, nil); err != nil {
				return err
			}
			n, _, err := tx.CountRunning(ctx, "tenant-a", true)
			if err == nil && n != 2 {
				t.Errorf("in a transaction: %d running, want 2", n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		claim.Limit = 10
		if got, err = engine.ClaimOccurrences(ctx, s, claim); err != nil || len(got) != 1 {
			t.Fatalf("claim up to the quota of 3: %d, %v; want 1", len(got), err)
		}
		if got, err = engine.ClaimOccurrences(ctx, s, claim); err != nil || len(got) != 0 {
			t.Fatalf("claim at the quota: %d, %v; want none", len(got), err)
		}
		ack := store.FinishParams{TenantID: "tenant-a", OccurrenceID: occs[0].OccurrenceID, Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
		res, got, err := engine.FinishAndClaim(ctx, s, []store.FinishParams{ack}, claim)
		if err != nil || res[0].Err != nil || len(got) != 1 {
			t.Fatalf("ack and claim at the quota: %d claimed, %v %v; want 1 (the ack frees a slot)", len(got), err, res)
		}
		if n := count("tenant-a"); n != 3 {
			t.Errorf("running at the end: %d, want 3", n)
		}
	})
}
