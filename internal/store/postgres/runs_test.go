package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// The concurrency of leased runs on PostgreSQL (tx_runs.go): claims of
// one lane on several goroutines of one engine and on two engines (two
// pools, as two nodes) on one schema, while occurrences are inserted into
// the lane, some at positions a run has already passed, and while updates
// cancel the lane's occurrences. Nothing is lost, nothing is delivered
// twice, and a cancel never takes an occurrence a run delivered.

// runNodes opens two stores on one schema and an engine on each, on one
// virtual clock at start.
func runNodes(t *testing.T, start time.Time) ([]*Store, []*engine.Engine, *clock.Virtual) {
	t.Helper()
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	clk := clock.NewVirtual(start)
	var (
		stores  []*Store
		engines []*engine.Engine
	)
	for i := range 2 {
		s := openSchema(t, dsn, schema, WithMaxConns(8))
		e, err := engine.New(t.Context(), engine.Config{Store: s, Clock: clk, Shards: 4, Horizon: time.Minute,
			NodeID: fmt.Sprintf("node-%d", i), IgnoreStoreClock: true})
		if err != nil {
			t.Fatalf("engine %d: %v", i, err)
		}
		stores, engines = append(stores, s), append(engines, e)
	}
	return stores, engines, clk
}

// deliveries records what consumers were handed: every delivery of each
// occurrence, by attempt.
type deliveries struct {
	mu    sync.Mutex
	seen  map[string][]int64
	total atomic.Int64
}

func (d *deliveries) add(got []store.Claimed) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range got {
		id := c.Occurrence.OccurrenceID
		d.seen[id] = append(d.seen[id], c.Attempt.Attempt)
	}
	d.total.Add(int64(len(got)))
}

// consume claims from the tenant's queue through q until done says so,
// acking each batch with the next claim, and records what it got.
func consume(ctx context.Context, t *testing.T, q *engine.Queue, worker string, limit int, d *deliveries, done func() bool) {
	var acks []engine.AckItem
	for {
		req := engine.ClaimRequest{TenantID: "tenant-a", Queue: "jobs", WorkerID: worker, Limit: limit, Lease: time.Hour}
		rs, got, err := q.AckAndClaim(ctx, req, acks)
		if err != nil {
			t.Errorf("%s: %v", worker, err)
			return
		}
		for _, r := range rs {
			if r.Err != nil {
				t.Errorf("%s: ack: %v", worker, r.Err)
				return
			}
		}
		d.add(got)
		acks = acks[:0]
		for _, c := range got {
			acks = append(acks, engine.AckItem{OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt})
		}
		if len(got) == 0 && len(acks) == 0 {
			if done() {
				return
			}
			time.Sleep(time.Millisecond) // nothing due yet: let the inserter go on
		}
	}
}

// TestRunsConcurrentClaims: five consumers (three on one engine, two on
// another) drain one lane of allow-policy occurrences while an inserter
// adds 40 batches to it through both stores, each batch partly at the
// clock's now (at or before the heads claims move: the floor puts them
// after) and partly in the past. Every occurrence is delivered exactly
// once, under attempt 1; afterwards, with the runs folded, every row is
// SUCCEEDED.
func TestRunsConcurrentClaims(t *testing.T) {
	t.Parallel()
	top := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	stores, engines, clk := runNodes(t, top)
	ctx := t.Context()
	const (
		schedules = 20
		rounds    = 40
	)
	var scs []*record.Schedule
	for i := range schedules {
		sc := storetest.NewSchedule("tenant-a", fmt.Sprintf("sch_runs_conc_%02d", i))
		sc.Name, sc.Queue, sc.OverlapPolicy, sc.NextRunAt = sc.ScheduleID, "jobs", record.OverlapAllow, time.Time{}
		if err := stores[0].InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	d := &deliveries{seen: map[string][]int64{}}
	var inserted atomic.Bool
	// Done once every occurrence was delivered, or, once the inserter is
	// done, when nothing is left to claim (an occurrence lost behind a
	// head is counted missing below), or when a consumer failed.
	done := func() bool {
		if t.Failed() || d.total.Load() >= schedules*rounds {
			return true
		}
		if !inserted.Load() {
			return false
		}
		next, err := stores[0].NextAvailable(ctx, "tenant-a", "jobs")
		return err != nil || next.IsZero()
	}
	var wg sync.WaitGroup
	for w := range 5 {
		e := engines[w%2]
		wg.Go(func() { consume(ctx, t, e.Queue, fmt.Sprintf("w%d", w), 1+w*7, d, done) })
	}
	wg.Go(func() {
		defer inserted.Store(true)
		for r := range rounds {
			now := clk.Now()
			var occs []record.Occurrence
			for i, sc := range scs {
				o := storetest.NewOccurrence(sc, top.Add(time.Duration(r)*time.Minute))
				o.State, o.EnqueuedAt, o.AvailableAt = record.OccurrenceEnqueued, now, now
				if i%3 == 0 {
					o.AvailableAt = top.Add(-time.Hour) // before every head
				}
				occs = append(occs, o)
			}
			if n, err := stores[r%2].InsertOccurrences(ctx, occs); err != nil || n != len(occs) {
				t.Errorf("round %d: inserted %d, %v", r, n, err)
				return
			}
			clk.Advance(time.Millisecond) // the rows the floor put after a head come due
		}
		clk.Advance(time.Second)
	})
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(d.seen) != schedules*rounds {
		t.Errorf("delivered %d occurrences, want %d", len(d.seen), schedules*rounds)
	}
	for id, attempts := range d.seen {
		if len(attempts) != 1 || attempts[0] != 1 {
			t.Errorf("%s delivered under attempts %v, want once under attempt 1", id, attempts)
		}
	}
	var runs int
	if err := stores[0].pool.QueryRow(ctx, `SELECT count(*) FROM runs`).Scan(&runs); err != nil || runs == 0 {
		t.Errorf("%d runs before the fold, %v: the claims did not lease runs", runs, err)
	}
	if err := engine.FoldTenant(ctx, stores[1], ""); err != nil {
		t.Fatal(err)
	}
	if n, err := stores[0].CountOccurrences(ctx, "tenant-a", record.OccurrenceSucceeded); err != nil || n != schedules*rounds {
		t.Errorf("%d SUCCEEDED after the fold, %v; want %d", n, err, schedules*rounds)
	}
}

// TestRunsConcurrentUpdates: while four consumers on two engines drain a
// lane, every schedule of it is updated (WriteVersion), which cancels its
// occurrences not yet delivered. No occurrence is both delivered and
// canceled, each update's count of canceled ones is the rows it canceled,
// and every occurrence ends delivered (SUCCEEDED once folded) or
// CANCELED.
func TestRunsConcurrentUpdates(t *testing.T) {
	t.Parallel()
	top := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	stores, engines, clk := runNodes(t, top)
	ctx := t.Context()
	const (
		schedules = 12
		perSch    = 60
	)
	var (
		scs  []*record.Schedule
		occs []record.Occurrence
	)
	for i := range schedules {
		sc := storetest.NewSchedule("tenant-a", fmt.Sprintf("sch_runs_upd_%02d", i))
		sc.Name, sc.Queue, sc.OverlapPolicy, sc.NextRunAt = sc.ScheduleID, "jobs", record.OverlapAllow, time.Time{}
		if err := stores[0].InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
		for j := range perSch {
			o := storetest.NewOccurrence(sc, top.Add(-time.Duration(j)*time.Second))
			o.State, o.EnqueuedAt = record.OccurrenceEnqueued, top
			occs = append(occs, o)
		}
	}
	// Interleaved in the lane: each claim takes several schedules'.
	for i := range occs {
		j := (i * 7) % len(occs)
		occs[i], occs[j] = occs[j], occs[i]
	}
	if n, err := stores[0].InsertOccurrences(ctx, occs); err != nil || n != len(occs) {
		t.Fatalf("InsertOccurrences: %d, %v", n, err)
	}
	d := &deliveries{seen: map[string][]int64{}}
	var updated atomic.Bool
	var (
		wg       sync.WaitGroup
		canceled = map[string]int{}
	)
	for w := range 4 {
		e := engines[w%2]
		wg.Go(func() {
			consume(ctx, t, e.Queue, fmt.Sprintf("w%d", w), 5+w*3, d, func() bool { return updated.Load() || t.Failed() })
		})
	}
	wg.Go(func() {
		defer updated.Store(true)
		for i, sc := range scs {
			next := *sc
			res, err := engine.WriteVersion(ctx, stores[i%2], engine.VersionChange{Schedule: &next, PrevVersion: 1, Now: clk.Now()})
			if err != nil {
				t.Errorf("update %s: %v", sc.ScheduleID, err)
				return
			}
			canceled[sc.ScheduleID] = res.Canceled
		}
	})
	wg.Wait()
	if t.Failed() {
		return
	}
	if err := engine.FoldTenant(ctx, stores[0], ""); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range canceled {
		total += n
	}
	t.Logf("%d delivered, %d canceled of %d", len(d.seen), total, len(occs))
	for _, sc := range scs {
		got, err := stores[1].ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: sc.ScheduleID,
			Limit: store.MaxListLimit})
		if err != nil {
			t.Fatal(err)
		}
		nCanceled := 0
		for _, o := range got {
			delivered := d.seen[o.OccurrenceID]
			switch {
			case len(delivered) > 1:
				t.Errorf("%s delivered %d times", o.OccurrenceID, len(delivered))
			case o.State == record.OccurrenceCanceled && len(delivered) > 0:
				t.Errorf("%s delivered and CANCELED", o.OccurrenceID)
			case o.State == record.OccurrenceCanceled:
				nCanceled++
			case o.State != record.OccurrenceSucceeded || len(delivered) != 1:
				t.Errorf("%s ends %s, delivered %d times; want SUCCEEDED once or CANCELED", o.OccurrenceID, o.State, len(delivered))
			}
		}
		if len(got) != perSch || nCanceled != canceled[sc.ScheduleID] {
			t.Errorf("%s: %d rows, %d CANCELED; the update counted %d canceled", sc.ScheduleID, len(got), nCanceled,
				canceled[sc.ScheduleID])
		}
	}
}
