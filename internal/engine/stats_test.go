package engine

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// TestStatusAnswersForTheCluster runs two nodes on one store: each counts
// what it does, and either one's Status adds up both, so it does not
// matter which node a client asks.
func TestStatusAnswersForTheCluster(t *testing.T) {
	start := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	a := newHarness(t, start, func(c *Config) { c.NodeID = "node-a" })
	b := &harness{t: t, ctx: a.ctx, clk: a.clk, st: a.st, path: a.path}
	var err error
	b.e, err = New(a.ctx, Config{Store: a.st, Clock: a.clk, Shards: 4, Horizon: time.Minute, NodeID: "node-b"})
	if err != nil {
		t.Fatal(err)
	}
	a.create(every("tick", "1s"))
	a.plan() // node-a takes the shards (node-b has not joined) and materializes a minute
	a.clk.Advance(10 * time.Second)
	gotA := a.claim("q", 4) // 4 first deliveries by node-a
	gotB, err := b.e.Queue.Claim(a.ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w2", Limit: 3, Lease: time.Minute})
	if err != nil || len(gotA) != 4 || len(gotB) != 3 {
		t.Fatalf("claims: %d by a, %d by b, %v", len(gotA), len(gotB), err)
	}
	if _, err := b.e.Queue.AckBatch(a.ctx, tenant, []AckItem{{OccurrenceID: gotB[0].Occurrence.OccurrenceID, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	// Each node's figures reach the store on its own timer (Status writes
	// the answering node's first).
	a.e.Stats.flush(a.ctx)
	b.e.Stats.flush(a.ctx)
	for name, h := range map[string]*harness{"node-a": a, "node-b": b} {
		st, err := h.e.Stats.Status(a.ctx, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ev := st.LastHour
		if ev.Claims != 7 || ev.Acks != 1 || ev.Materialized < 60 {
			t.Errorf("%s: last hour %+v; want 7 claims, 1 ack, a minute materialized", name, ev)
		}
		if n := sum(st.DeliveryLagMinute); n != 7 {
			t.Errorf("%s: %d delivery lag samples in the last minute, want 7", name, n)
		}
		if n := sum(st.ScheduleLagHour); n < 60 {
			t.Errorf("%s: %d schedule lag samples, want a minute's", name, n)
		}
		if st.LastPass["node-a"] == nil || st.LastPass["node-a"].Materialized < 60 {
			t.Errorf("%s: node-a's last pass %+v", name, st.LastPass["node-a"])
		}
		if o := st.Snapshot.OldestReady; o == nil || !o.AvailableAt.Equal(start.Add(8*time.Second)) {
			t.Errorf("%s: oldest ready %+v, want the firing at +8s (1 to 7 were claimed)", name, o)
		}
	}
	// An hour on, the minutes have left the window; two hours on, the
	// store has dropped them.
	a.clk.Advance(2*time.Hour + time.Minute)
	a.e.Stats.flush(a.ctx)
	rows, err := a.st.ReadStatMinutes(a.ctx, start.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Minute.Before(a.clk.Now().Add(-statsKeep)) {
			t.Errorf("a row of %s outlived the two hours kept", r.Minute)
		}
	}
}

// TestTenantStatus: a tenant's status is its own snapshot, cached apart
// from the cluster's for StatsEvery, with no per-minute figures (they are
// counted across tenants); the tenants' cache entries not asked for in a
// period are swept, so the cache holds only the tenants that ask.
func TestTenantStatus(t *testing.T) {
	start := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	h := newHarness(t, start, nil)
	h.create(every("tick", "1s"))
	h.plan()
	h.clk.Advance(10 * time.Second)
	h.claim("q", 2)

	all, err := h.e.Stats.Status(h.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tenant     string
		wantOldest bool
	}{
		{tenant, true},
		{"tenant-other", false},
	} {
		st, err := h.e.Stats.Status(h.ctx, tc.tenant)
		if err != nil {
			t.Fatalf("%s: %v", tc.tenant, err)
		}
		if st.TenantID != tc.tenant || len(st.LastPass) != 0 || st.ScheduleLagHour != nil || st.DeliveryLagMinute != nil || st.LastHour != (EventCounts{}) {
			t.Errorf("%s: per-minute figures in a tenant's status: %+v", tc.tenant, st)
		}
		if len(st.Nodes) != len(all.Nodes) || len(st.Leases) != len(all.Leases) {
			t.Errorf("%s: %d nodes, %d leases; the cluster's are %d, %d", tc.tenant, len(st.Nodes), len(st.Leases), len(all.Nodes), len(all.Leases))
		}
		if o := st.Snapshot.OldestReady; (o != nil) != tc.wantOldest || o != nil && o.TenantID != tc.tenant {
			t.Errorf("%s: oldest ready %+v", tc.tenant, o)
		}
		for _, d := range st.Snapshot.Depth {
			if d.TenantID != tc.tenant {
				t.Errorf("%s: another tenant's depth %+v", tc.tenant, d)
			}
		}
		if tc.wantOldest != (len(st.Snapshot.Depth) > 0) {
			t.Errorf("%s: depth %+v", tc.tenant, st.Snapshot.Depth)
		}
	}

	// Within the period a tenant's snapshot is the cached one; after it,
	// a new one, and the entry of a tenant that did not ask again is gone.
	_, first, _ := h.e.Stats.Snapshot(h.ctx, tenant)
	h.clk.Advance(time.Second)
	if _, at, _ := h.e.Stats.Snapshot(h.ctx, tenant); !at.Equal(first) {
		t.Errorf("snapshot within the period taken at %v, want the cached one of %v", at, first)
	}
	h.clk.Advance(DefaultStatsEvery)
	if _, at, _ := h.e.Stats.Snapshot(h.ctx, tenant); !at.After(first) {
		t.Errorf("snapshot after the period taken at %v, want a new one after %v", at, first)
	}
	c := &h.e.Stats.snap
	c.mu.Lock()
	_, other := c.tenants["tenant-other"]
	n := len(c.tenants)
	c.mu.Unlock()
	if other || n != 1 {
		t.Errorf("%d tenants cached (tenant-other's: %v), want only %s's", n, other, tenant)
	}
}

func sum(xs []int64) (n int64) {
	for _, x := range xs {
		n += x
	}
	return n
}

// TestDeadReasons: each way to the dead-letter queue leaves its reason.
func TestDeadReasons(t *testing.T) {
	start := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	h := newHarness(t, start, nil)
	sp := every("fail", "1s")
	sp.Retry.MaxAttempts = 1
	h.create(sp)
	h.plan()
	h.clk.Advance(3 * time.Second)
	got := h.claim("q", 2)
	if len(got) != 2 {
		t.Fatalf("claimed %d", len(got))
	}
	perm, err := h.e.Queue.Nack(h.ctx, tenant, got[0].Occurrence.OccurrenceID, 1, Permanent, "bad input")
	if err != nil {
		t.Fatal(err)
	}
	used, err := h.e.Queue.Nack(h.ctx, tenant, got[1].Occurrence.OccurrenceID, 1, Retryable, "timeout")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want record.DeadReason
		err  string
	}{
		{perm.OccurrenceID, record.DeadPermanentFailure, "bad input"},
		{used.OccurrenceID, record.DeadAttemptsExhausted, "timeout"},
	} {
		o, err := h.e.Queue.Occurrence(h.ctx, tenant, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if o.State != record.OccurrenceDead || o.DeadReason != tc.want || o.LastError != tc.err {
			t.Errorf("%s: %s %q %q, want DEAD %q %q", tc.id, o.State, o.DeadReason, o.LastError, tc.want, tc.err)
		}
	}
}

// TestBulkDLQInBatches: a bulk replay or purge moves at most its limit
// and says when more may match; called again, it finishes the job.
func TestBulkDLQInBatches(t *testing.T) {
	start := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	h := newHarness(t, start, nil)
	h.create(every("fail", "1s"))
	h.plan()
	h.clk.Advance(5 * time.Second)
	for _, c := range h.claim("q", 5) {
		if _, err := h.e.Queue.Nack(h.ctx, tenant, c.Occurrence.OccurrenceID, 1, Permanent, "no"); err != nil {
			t.Fatal(err)
		}
	}
	f := DLQFilter{TenantID: tenant}
	for _, want := range []struct {
		n    int
		more bool
	}{{2, true}, {2, true}, {1, false}, {0, false}} {
		ids, more, err := h.e.Queue.ReplayDead(h.ctx, f, 2)
		if err != nil || len(ids) != want.n || more != want.more {
			t.Fatalf("replay: %d ids, more %v, %v; want %d, %v", len(ids), more, err, want.n, want.more)
		}
	}
	h.clk.Advance(time.Millisecond) // the floor: see TestPermanentNackDeadAndReplay
	for _, c := range h.claim("q", 5) {
		if _, err := h.e.Queue.Nack(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt, Permanent, "still no"); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []struct {
		n    int
		more bool
	}{{3, true}, {2, false}} {
		n, more, err := h.e.Queue.PurgeDead(h.ctx, f, 3)
		if err != nil || n != want.n || more != want.more {
			t.Fatalf("purge: %d, more %v, %v; want %d, %v", n, more, err, want.n, want.more)
		}
	}
}
