package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// fairLoad stores n one-off schedules of tenantID in queue "q", all firing
// at at, in transactions of a few thousand: a burst of n due firings once
// the planner has run.
func fairLoad(tb testing.TB, st store.Store, shards int, tenantID string, n int, at time.Time) {
	tb.Helper()
	const perTx = 5000
	created := at.Add(-time.Hour)
	for from := 0; from < n; from += perTx {
		err := store.InTx(tb.Context(), st, func(tx store.Tx) error {
			for i := from; i < min(n, from+perTx); i++ {
				id := fmt.Sprintf("sch_%s%08d", tenantID, i)
				sc := &record.Schedule{
					TenantID: tenantID, ScheduleID: id, Shard: record.ShardOf(id, shards), Name: id,
					Kind: timetable.KindAt, Expr: at.UTC().Format(time.RFC3339), TimeZone: "UTC",
					DSTGap: timetable.GapSkip, DSTRepeat: timetable.RepeatFirst,
					Version: 1, State: record.ScheduleActive, NextRunAt: at, Queue: "q",
					MisfirePolicy: record.MisfireFireOnce, MaxLateness: time.Hour, OverlapPolicy: record.OverlapAllow,
					Retry:     record.RetryPolicy{MaxAttempts: 10, BackoffBase: time.Second, BackoffCap: time.Minute, Deadline: 24 * time.Hour},
					CreatedAt: created, UpdatedAt: created,
				}
				if err := tx.InsertSchedule(tb.Context(), sc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("store schedules of %s: %v", tenantID, err)
		}
	}
}

// planAll runs planner passes until one enqueues nothing, and returns how
// many occurrences they enqueued.
func planAll(tb testing.TB, e *Engine) int {
	tb.Helper()
	total := 0
	for {
		ps, err := e.PlanOnce(tb.Context())
		if err != nil {
			tb.Fatal(err)
		}
		if ps.Enqueued == 0 {
			return total
		}
		total += ps.Enqueued
	}
}

// createTenants creates tenants with the given weights.
func createTenants(tb testing.TB, e *Engine, weights map[string]int) {
	tb.Helper()
	for id, w := range weights {
		if _, _, err := e.Tenants.Create(tb.Context(), id, TenantPatch{Weight: &w}); err != nil {
			tb.Fatalf("create tenant %s: %v", id, err)
		}
	}
}

// poolClaim acks acks and claims up to limit of queue "q" for every
// tenant, failing the test on an error or a refused ack.
func (h *harness) poolClaim(limit int, acks []AckItem) []store.Claimed {
	h.t.Helper()
	rs, got, err := h.e.Queue.AckAndClaim(h.ctx, ClaimRequest{Queue: "q", WorkerID: "pool", Limit: limit, Lease: time.Minute, AllTenants: true}, acks)
	if err != nil {
		h.t.Fatalf("pool claim: %v", err)
	}
	for i, r := range rs {
		if r.Err != nil {
			h.t.Fatalf("ack %s of %s: %v", acks[i].OccurrenceID, acks[i].TenantID, r.Err)
		}
	}
	return got
}

// poolAcks are the acks of a pool claim's deliveries, each naming its
// tenant.
func poolAcks(got []store.Claimed) []AckItem {
	out := make([]AckItem, len(got))
	for i, c := range got {
		out[i] = AckItem{OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt, TenantID: c.Occurrence.TenantID}
	}
	return out
}

// A small tenant's work that comes due while a big tenant's burst drains
// goes out in the first pool claim after it is due, beside the big one's:
// a shared pool serves both, not the burst first. Nothing is lost or
// delivered twice.
func TestPoolClaimServesSmallTenantAtOnce(t *testing.T) {
	t.Parallel()
	top := utc("2027-01-04T10:00:00Z")
	h := newHarness(t, top.Add(-30*time.Second), nil)
	createTenants(t, h.e, map[string]int{"a": 1, "b": 1})
	fairLoad(t, h.st, 4, "a", 5000, top)
	fairLoad(t, h.st, 4, "b", 10, top.Add(2*time.Second))
	if n := planAll(t, h.e); n != 5010 {
		t.Fatalf("planned %d occurrences, want 5010", n)
	}
	h.clk.Set(top)
	seen := map[string]bool{}
	var acks []AckItem
	claims, bAt := 0, 0
	for {
		if claims == 3 {
			h.clk.Set(top.Add(2 * time.Second)) // b's work comes due mid-drain
		}
		got := h.poolClaim(100, acks)
		if len(got) == 0 {
			break
		}
		claims++
		nb := 0
		for _, c := range got {
			if seen[c.Occurrence.OccurrenceID] {
				t.Fatalf("claim %d delivered %s twice", claims, c.Occurrence.OccurrenceID)
			}
			seen[c.Occurrence.OccurrenceID] = true
			if c.Occurrence.TenantID == "b" {
				nb++
			}
		}
		if nb > 0 {
			if bAt != 0 || nb != 10 {
				t.Fatalf("claim %d delivered %d of b's 10 (an earlier claim: %d); want all 10 in one claim", claims, nb, bAt)
			}
			bAt = claims
		}
		acks = poolAcks(got)
	}
	h.poolClaim(1, acks)
	if bAt != 4 {
		t.Errorf("b's work went out in claim %d; want claim 4, the first after it was due", bAt)
	}
	if len(seen) != 5010 {
		t.Errorf("delivered %d occurrences, want 5010", len(seen))
	}
}

// While both have work waiting, a pool serves tenants in proportion to
// their weights, whatever the size of the batches.
func TestPoolClaimSharesByWeight(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 7, 100, 1000} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			t.Parallel()
			top := utc("2027-01-04T10:00:00Z")
			h := newHarness(t, top.Add(-30*time.Second), nil)
			createTenants(t, h.e, map[string]int{"heavy": 3, "light": 1})
			n := max(4*limit, 400) // enough for several claims
			fairLoad(t, h.st, 4, "heavy", n, top)
			fairLoad(t, h.st, 4, "light", n, top)
			planAll(t, h.e)
			h.clk.Set(top)
			count := map[string]int{}
			var acks []AckItem
			// Until half of heavy's work is out: both still have work
			// then, more than any one claim takes.
			for count["heavy"] < n/2 {
				got := h.poolClaim(limit, acks)
				if len(got) == 0 {
					t.Fatal("a pool claim got nothing while both tenants have work")
				}
				for _, c := range got {
					count[c.Occurrence.TenantID]++
				}
				acks = poolAcks(got)
			}
			ratio := float64(count["heavy"]) / float64(count["light"])
			t.Logf("while both had work: heavy %d, light %d (%.2f:1)", count["heavy"], count["light"], ratio)
			if ratio < 2.7 || ratio > 3.3 {
				t.Errorf("weights 3:1 were served %d:%d (%.2f:1); want about 3:1", count["heavy"], count["light"], ratio)
			}
		})
	}
}

// A tenant's running quota caps its RUNNING occurrences: a claim beyond it
// gets nothing (not an error), an ack frees a slot, and a pool claim gives
// the rest of its batch to the other tenants.
func TestRunningQuota(t *testing.T) {
	t.Parallel()
	onEveryStore(t, testRunningQuota)
}

func testRunningQuota(t *testing.T, open harnessMaker) {
	t.Parallel()
	top := utc("2027-01-04T10:00:00Z")
	h := open(t, top.Add(-30*time.Second), nil)
	ctx := h.ctx
	if _, _, err := h.e.Tenants.Create(ctx, "capped", TenantPatch{Running: new(int64(5))}); err != nil {
		t.Fatal(err)
	}
	createTenants(t, h.e, map[string]int{"free": 1})
	fairLoad(t, h.st, 4, "capped", 50, top)
	fairLoad(t, h.st, 4, "free", 50, top)
	planAll(t, h.e)
	h.clk.Set(top)

	claim := func(limit int) []store.Claimed {
		t.Helper()
		got, err := h.e.Queue.Claim(ctx, ClaimRequest{TenantID: "capped", Queue: "q", WorkerID: "w", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := claim(3)
	if len(first) != 3 {
		t.Fatalf("first claim got %d, want 3", len(first))
	}
	if got := claim(10); len(got) != 2 {
		t.Fatalf("claim at 3 of 5 running got %d, want 2", len(got))
	}
	if got := claim(10); len(got) != 0 {
		t.Fatalf("claim at the quota got %d, want none", len(got))
	}
	if _, err := h.e.Queue.Ack(ctx, "capped", first[0].Occurrence.OccurrenceID, first[0].Attempt.Attempt); err != nil {
		t.Fatal(err)
	}
	rs, got, err := h.e.Queue.AckAndClaim(ctx, ClaimRequest{TenantID: "capped", Queue: "q", WorkerID: "w", Limit: 10}, poolAcks(first[1:2]))
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Err != nil {
		t.Fatalf("ack with the claim: %v", rs[0].Err)
	}
	if len(got) != 2 {
		t.Fatalf("claim after two acks got %d, want 2 (the acks in its own transaction free their slots)", len(got))
	}
	// The pool: capped is at its quota, so free gets the whole batch.
	pool := h.poolClaim(20, nil)
	count := map[string]int{}
	for _, c := range pool {
		count[c.Occurrence.TenantID]++
	}
	if count["capped"] != 0 || count["free"] != 20 {
		t.Errorf("pool claim with capped at its quota got %v; want 20 of free's", count)
	}
	// A waiting claim held back by the quota returns empty when its wait
	// ends, looking again on the way (the clock moves only by the test).
	done := make(chan int)
	go func() {
		got, err := h.e.Queue.Claim(ctx, ClaimRequest{TenantID: "capped", Queue: "q", WorkerID: "w", Limit: 1, Wait: time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- len(got)
	}()
	for waited := time.Duration(0); ; waited += quotaRecheck {
		select {
		case n := <-done:
			if n != 0 {
				t.Errorf("a claim at the quota got %d after waiting", n)
			}
			return
		case <-time.After(10 * time.Millisecond):
			if waited > 10*time.Second {
				t.Fatal("a waiting claim at its quota did not return")
			}
			h.clk.Advance(quotaRecheck)
		}
	}
}

// Strict work is never starved by flexible or catch-up work of its
// tenant, however much older that work is: within each tenant, a claim
// takes the strict lane first, then flexible, then catch-up, alone or in
// a pool shared with another tenant.
func TestStrictLaneFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tenants []string
		pool    bool
	}{
		{"single", []string{"x"}, false},
		{"pool", []string{"x", "y"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := utc("2027-01-04T10:00:00Z")
			h := newHarness(t, start, nil)
			ctx := h.ctx
			create := func(tn string, s schedule.Settings) {
				t.Helper()
				if _, _, err := h.e.Control.Create(ctx, tn, "", s); err != nil {
					t.Fatalf("create %s of %s: %v", s.Name, tn, err)
				}
			}
			for _, tn := range tc.tenants {
				createTenants(t, h.e, map[string]int{tn: 1})
				c := every("catch", "1m")
				c.MisfirePolicy, c.CatchUpK, c.MaxLateness = record.MisfireCatchUp, 5, time.Second
				create(tn, c)
			}
			h.clk.Advance(10 * time.Minute) // catch's firings are late: catch-up work
			h.plan()
			for _, tn := range tc.tenants {
				f := every("flex", "1m")
				f.FlexibleWindow = time.Second
				create(tn, f)
				for i := range 3 {
					create(tn, every(fmt.Sprintf("strict%d", i), "1m"))
				}
			}
			h.advance(time.Minute)
			h.advance(time.Minute + 2*time.Second) // past the flexible offsets too

			rank := map[record.Lane]int{record.LaneStrict: 0, record.LaneFlexible: 1, record.LaneCatchUp: 2}
			last := map[string]int{}
			perLane := map[record.Lane]int{}
			lastStrict := map[string]time.Time{}
			firstOther := map[string]time.Time{}
			for {
				var got []store.Claimed
				if tc.pool {
					got = h.poolClaim(2, nil)
				} else {
					var err error
					got, err = h.e.Queue.Claim(ctx, ClaimRequest{TenantID: "x", Queue: "q", WorkerID: "w", Limit: 2, Lease: time.Hour})
					if err != nil {
						t.Fatal(err)
					}
				}
				if len(got) == 0 {
					break
				}
				for _, c := range got {
					o := c.Occurrence
					if rank[o.Lane] < last[o.TenantID] {
						t.Fatalf("tenant %s got %s work after work of a later lane", o.TenantID, o.Lane)
					}
					last[o.TenantID] = rank[o.Lane]
					perLane[o.Lane]++
					if o.Lane == record.LaneStrict {
						if o.AvailableAt.After(lastStrict[o.TenantID]) {
							lastStrict[o.TenantID] = o.AvailableAt
						}
					} else if ft := firstOther[o.TenantID]; ft.IsZero() || o.AvailableAt.Before(ft) {
						firstOther[o.TenantID] = o.AvailableAt
					}
				}
			}
			if perLane[record.LaneStrict] == 0 || perLane[record.LaneFlexible] == 0 || perLane[record.LaneCatchUp] == 0 {
				t.Fatalf("claimed by lane %v: want work of every lane", perLane)
			}
			for _, tn := range tc.tenants {
				if last[tn] != rank[record.LaneCatchUp] {
					t.Errorf("tenant %s: its catch-up work was not claimed", tn)
				}
				if !firstOther[tn].Before(lastStrict[tn]) {
					t.Errorf("tenant %s: none of its other lanes' work (from %s) is older than its strict work (up to %s): the test shows nothing",
						tn, firstOther[tn], lastStrict[tn])
				}
			}
			t.Logf("claimed by lane: %v", perLane)
		})
	}
}

// A waiting pool claim returns as soon as any tenant's work comes due.
func TestPoolClaimLongPollWakes(t *testing.T) {
	t.Parallel()
	top := utc("2027-01-04T10:00:00Z")
	h := newHarness(t, top.Add(-30*time.Second), nil)
	createTenants(t, h.e, map[string]int{"a": 1, "b": 1})
	fairLoad(t, h.st, 4, "b", 3, top)
	planAll(t, h.e)
	done := make(chan []store.Claimed)
	go func() {
		got, err := h.e.Queue.Claim(h.ctx, ClaimRequest{Queue: "q", WorkerID: "pool", Limit: 10, Wait: time.Minute, AllTenants: true})
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	// Let the claim find nothing and sleep until b's work is due.
	time.Sleep(50 * time.Millisecond)
	h.clk.Set(top)
	select {
	case got := <-done:
		if len(got) != 3 || got[0].Occurrence.TenantID != "b" {
			t.Fatalf("the waiting pool claim got %d; want b's 3", len(got))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting pool claim did not wake when b's work came due")
	}
}
