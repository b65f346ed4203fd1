package engine

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
	"github.com/sched-dev/sched/internal/timetable"
)

// notifyNodes returns two engines on one PostgreSQL schema, each on a
// store handle of its own, on the real clock: a, never started (the test
// drives its planner with PlanOnce, and it holds the only shard), and b,
// started, so that its listener turns a's notifications into wakes. b's
// planner holds no shard and ticks once an hour: only a notification can
// wake b's claims.
func notifyNodes(t *testing.T) (a, b *Engine) {
	t.Helper()
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	mk := func(id string) *Engine {
		e, err := New(t.Context(), Config{
			Store: pgtest.Open(t, dsn, schema), Clock: clock.Real{}, NodeID: id,
			Shards: 1, ShardLease: time.Minute, Tick: time.Hour, Horizon: time.Minute,
		})
		if err != nil {
			t.Fatalf("new engine %s: %v", id, err)
		}
		return e
	}
	a = mk("node-a")
	if _, err := a.PlanOnce(t.Context()); err != nil { // takes the shard
		t.Fatal(err)
	}
	b = mk("node-b")
	if err := b.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	t.Cleanup(a.Stop)
	return a, b
}

// createAt creates on e a schedule firing once, lead after now (rounded up
// to a second).
func createAt(t *testing.T, e *Engine, name string, lead time.Duration) *record.Schedule {
	t.Helper()
	at := time.Now().Add(lead).Truncate(time.Second).Add(time.Second).UTC()
	sc, _, err := e.Control.Create(t.Context(), tenant, "", schedule.Settings{Name: name, Queue: "q", Kind: timetable.KindAt, Expr: at.Format(time.RFC3339)})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return sc
}

// claimAsync long-polls a claim of queue q on e for 30 s.
func claimAsync(t *testing.T, e *Engine) <-chan []store.Claimed {
	ch := make(chan []store.Claimed, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		got, err := e.Queue.Claim(t.Context(), ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w-b", Limit: 10, Wait: 30 * time.Second})
		if err != nil && t.Context().Err() == nil {
			t.Errorf("claim on b: %v", err)
		}
		ch <- got
	}()
	t.Cleanup(func() { <-done }) // after t.Context() is canceled
	return ch
}

// awaitClaim waits for the claim of claimAsync, failing after within: the
// claim's own timer is 30 s, so returning sooner means it was woken.
func awaitClaim(t *testing.T, ch <-chan []store.Claimed, within time.Duration, start time.Time) []store.Claimed {
	t.Helper()
	select {
	case got := <-ch:
		if len(got) == 0 {
			t.Fatalf("claim on b returned empty after %v", time.Since(start))
		}
		return got
	case <-time.After(within):
		t.Fatalf("claim on b not woken within %v", within)
		return nil
	}
}

// TestNotifyReplayWakesOtherNode: a claim long-polling on node b returns
// soon after node a replays a DEAD occurrence, not at the end of its wait.
func TestNotifyReplayWakesOtherNode(t *testing.T) {
	a, b := notifyNodes(t)
	sc := createAt(t, a, "once", 0)
	if _, err := a.PlanOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := a.Queue.Claim(t.Context(), ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w-a", Limit: 1, Wait: 10 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("claim on a: %d claimed, %v", len(got), err)
	}
	occ := got[0].Occurrence.OccurrenceID
	if o, err := a.Queue.Nack(t.Context(), tenant, occ, got[0].Attempt.Attempt, Permanent, "boom"); err != nil || o.State != record.OccurrenceDead {
		t.Fatalf("nack: %v, %+v", err, o)
	}

	ch := claimAsync(t, b)
	time.Sleep(500 * time.Millisecond) // let b's claim go to sleep
	start := time.Now()
	if _, err := a.Queue.Replay(t.Context(), tenant, occ); err != nil {
		t.Fatalf("replay on a: %v", err)
	}
	got = awaitClaim(t, ch, 5*time.Second, start)
	if got[0].Occurrence.OccurrenceID != occ || got[0].Occurrence.ScheduleID != sc.ScheduleID {
		t.Fatalf("b claimed %s, want the replayed %s", got[0].Occurrence.OccurrenceID, occ)
	}
	t.Logf("b's claim returned %v after the replay", time.Since(start))
}

// TestNotifyPlanWakesOtherNode: a claim long-polling on node b, on an empty
// queue, returns soon after the firing node a planned is due: a's plan
// commit woke it to learn when that is.
func TestNotifyPlanWakesOtherNode(t *testing.T) {
	a, b := notifyNodes(t)
	ch := claimAsync(t, b)
	time.Sleep(500 * time.Millisecond) // let b's claim go to sleep
	start := time.Now()
	sc := createAt(t, a, "once", time.Second)
	if _, err := a.PlanOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := awaitClaim(t, ch, 8*time.Second, start)
	if got[0].Occurrence.ScheduleID != sc.ScheduleID {
		t.Fatalf("b claimed an occurrence of %s, want %s", got[0].Occurrence.ScheduleID, sc.ScheduleID)
	}
	t.Logf("b's claim returned %v after the plan (the firing was due %v after it)", time.Since(start), sc.NextRunAt.Sub(start))
}
