package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
	"github.com/sched-dev/sched/internal/timetable"
)

func atIn(name string, at time.Time) schedule.Settings {
	return schedule.Settings{Name: name, Queue: "q", Kind: timetable.KindAt, Expr: at.UTC().Format(time.RFC3339)}
}

// wantQuotaError fails unless err is a QuotaError of quota at limit,
// whose message names both.
func wantQuotaError(t *testing.T, err error, quota string, limit int64) {
	t.Helper()
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Quota != quota || qe.Limit != limit {
		t.Fatalf("error %v, want a QuotaError of %s at %d", err, quota, limit)
	}
	if msg := err.Error(); !strings.Contains(msg, quota) || !strings.Contains(msg, fmt.Sprint(limit)) {
		t.Fatalf("message %q does not name %s and %d", msg, quota, limit)
	}
}

// A tenant at its active_schedules quota cannot create; a paused schedule
// counts, a canceled one and an at schedule the planner completed do not;
// a tenant's own quota beats the daemon's default; other tenants are not
// held back.
func TestActiveSchedulesQuota(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T10:00:00Z")
		h := open(t, start, func(c *Config) { c.TenantDefaults.ActiveSchedules = 3 })
		s1 := h.create(every("s1", "1m"))
		h.create(every("s2", "1m"))
		launch := h.create(atIn("launch", start.Add(30*time.Second)))
		_, _, err := h.e.Control.Create(h.ctx, tenant, "", every("s4", "1m"))
		wantQuotaError(t, err, QuotaActiveSchedules, 3)

		if _, err := h.e.Control.Pause(h.ctx, tenant, "s2"); err != nil {
			t.Fatal(err)
		}
		_, _, err = h.e.Control.Create(h.ctx, tenant, "", every("s4", "1m"))
		wantQuotaError(t, err, QuotaActiveSchedules, 3) // a paused schedule counts

		if _, err := h.e.Control.Cancel(h.ctx, tenant, s1.ScheduleID); err != nil {
			t.Fatal(err)
		}
		h.create(every("s4", "1m")) // a canceled one does not
		_, _, err = h.e.Control.Create(h.ctx, tenant, "", every("s5", "1m"))
		wantQuotaError(t, err, QuotaActiveSchedules, 3)

		h.advance(31 * time.Second) // the at schedule fires and completes
		if sc := h.schedule(launch.ScheduleID); sc.State != record.ScheduleCompleted {
			t.Fatalf("launch is %s, want COMPLETED", sc.State)
		}
		h.create(every("s5", "1m"))

		// The tenant's own quota beats the default, both ways.
		if _, err := h.e.Tenants.Update(h.ctx, tenant, TenantPatch{ActiveSchedules: new(int64(4))}); !errors.Is(err, store.ErrNotFound) {
			// tenant-a has no row yet: create it with its quota.
			t.Fatalf("update of a tenant never created: %v", err)
		}
		if _, _, err := h.e.Tenants.Create(h.ctx, tenant, TenantPatch{ActiveSchedules: new(int64(4))}); err != nil {
			t.Fatal(err)
		}
		h.create(every("s6", "1m"))
		_, _, err = h.e.Control.Create(h.ctx, tenant, "", every("s7", "1m"))
		wantQuotaError(t, err, QuotaActiveSchedules, 4)
		if _, err := h.e.Tenants.Update(h.ctx, tenant, TenantPatch{ActiveSchedules: new(int64(1))}); err != nil {
			t.Fatal(err)
		}
		_, _, err = h.e.Control.Create(h.ctx, tenant, "", every("s7", "1m"))
		wantQuotaError(t, err, QuotaActiveSchedules, 1)

		// Another tenant has the default, and its own count.
		for i := range 3 {
			if _, _, err := h.e.Control.Create(h.ctx, "tenant-b", "", every(fmt.Sprintf("b%d", i), "1m")); err != nil {
				t.Fatalf("tenant-b create %d: %v", i, err)
			}
		}
		_, _, err = h.e.Control.Create(h.ctx, "tenant-b", "", every("b3", "1m"))
		wantQuotaError(t, err, QuotaActiveSchedules, 3)

		// A retried create with its idempotency key gets its schedule,
		// not the quota's refusal (s2, s4, s5, s6 are live: one place).
		if _, err := h.e.Tenants.Update(h.ctx, tenant, TenantPatch{ActiveSchedules: new(int64(5))}); err != nil {
			t.Fatal(err)
		}
		first, created, err := h.e.Control.Create(h.ctx, tenant, "key-1", every("s7", "1m"))
		if err != nil || !created {
			t.Fatalf("create with a key: %v %v", created, err)
		}
		again, created, err := h.e.Control.Create(h.ctx, tenant, "key-1", every("s7", "1m"))
		if err != nil || created || again.ScheduleID != first.ScheduleID {
			t.Fatalf("retried create at the quota: %v created %v, want the first schedule", err, created)
		}
	})
}

// Two nodes creating one tenant's schedules at once never take it past its
// quota: the count and the insert are one step under the tenant's lock.
func TestActiveSchedulesQuotaTwoNodes(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	clk := clock.NewVirtual(utc("2027-01-04T10:00:00Z"))
	const limit = 5
	node := func(id string) *harness {
		return harnessOn(t, pgtest.Open(t, dsn, schema), "", clk, func(c *Config) {
			c.IgnoreStoreClock, c.NodeID, c.TenantDefaults.ActiveSchedules = true, id, limit
		})
	}
	nodes := []*harness{node("node-a"), node("node-b")}
	for round := range 3 {
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			ok, over int
		)
		for n, h := range nodes {
			for g := range 8 {
				wg.Go(func() {
					_, _, err := h.e.Control.Create(t.Context(), tenant, "", every(fmt.Sprintf("r%d-n%d-g%d", round, n, g), "1m"))
					var qe *QuotaError
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok++
					case errors.As(err, &qe):
						over++
					default:
						t.Errorf("create: %v", err)
					}
				})
			}
		}
		wg.Wait()
		live, err := nodes[0].st.ListSchedules(t.Context(), store.ListSchedulesParams{TenantID: tenant, State: record.ScheduleActive, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		wantOK := limit
		if round > 0 {
			wantOK = 1 // one place was freed below
		}
		if ok != wantOK || over != 16-wantOK || len(live) != limit {
			t.Fatalf("round %d: %d created, %d refused, %d live; want %d, %d, %d", round, ok, over, len(live), wantOK, 16-wantOK, limit)
		}
		// Free one place, on the other node.
		if _, err := nodes[1-round%2].e.Control.Cancel(t.Context(), tenant, live[0].ScheduleID); err != nil {
			t.Fatal(err)
		}
	}
}

// Over its firings_per_second quota a tenant's firings are all
// materialized on time, with their own scheduled_for and ids, and only
// their available_at spread at the rate; another tenant firing at the same
// instant is not delayed; nothing is MISSED and the reconciler finds
// every firing.
func TestFiringsPerSecondQuota(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		start := utc("2027-01-04T09:59:30Z")
		fire := utc("2027-01-04T10:00:00Z") // every schedule's first firing
		h := open(t, start, nil)
		if _, _, err := h.e.Tenants.Create(h.ctx, tenant, TenantPatch{FiringsPerSecond: new(int64(10))}); err != nil {
			t.Fatal(err)
		}
		const n = 100
		for i := range n {
			for _, tn := range []string{tenant, "tenant-b"} {
				if _, _, err := h.e.Control.Create(h.ctx, tn, "", cronIn(fmt.Sprintf("c%03d", i), "0 * * * *", "UTC")); err != nil {
					t.Fatal(err)
				}
			}
		}
		st := h.plan()
		if st.Enqueued != 2*n || st.Missed != 0 {
			t.Fatalf("plan: %+v, want %d enqueued and none missed", st, 2*n)
		}
		// Slots of 100 ms; a second's worth (10) go at the firing's time.
		var want []time.Time
		for k := range n {
			want = append(want, fire.Add(time.Duration(max(k-9, 0))*100*time.Millisecond))
		}
		for _, tc := range []struct {
			tenant    string
			want      []time.Time
			throttled float64
		}{
			{tenant, want, n - 10},
			{"tenant-b", slices.Repeat([]time.Time{fire}, n), 0},
		} {
			occs, err := h.e.Queue.Occurrences(h.ctx, store.ListOccurrencesParams{TenantID: tc.tenant, Limit: store.MaxListLimit})
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			var got []time.Time
			for _, o := range occs {
				if !o.ScheduledFor.Equal(fire) || o.State != record.OccurrenceEnqueued || o.Lane != record.LaneStrict ||
					o.OccurrenceID != record.OccurrenceID(o.ScheduleID, o.ScheduleVersion, fire) {
					t.Fatalf("%s: occurrence %+v, want ENQUEUED, strict, at %s under its own id", tc.tenant, o, fire)
				}
				ids[o.OccurrenceID] = true
				got = append(got, o.AvailableAt.UTC())
			}
			slices.SortFunc(got, func(a, b time.Time) int { return a.Compare(b) })
			if len(ids) != n || !slices.EqualFunc(got, tc.want, time.Time.Equal) {
				t.Fatalf("%s: %d ids, available_at %v\nwant %v", tc.tenant, len(ids), got, tc.want)
			}
			var m dto.Metric
			if err := h.e.Control.metrics.TenantThrottledFirings.WithLabelValues(tc.tenant).Write(&m); err != nil {
				t.Fatal(err)
			}
			if c := m.GetCounter().GetValue(); c != tc.throttled {
				t.Errorf("%s: %v firings counted throttled, want %v", tc.tenant, c, tc.throttled)
			}
		}

		// At the firing's time a worker gets the burst, and the rest one
		// per slot; none is MISSED later, however long they wait.
		h.clk.Set(fire)
		if got := h.claim("q", 1000); len(got) != 10 {
			t.Fatalf("claimed %d at the firing's time, want 10", len(got))
		}
		h.advance(450 * time.Millisecond)
		if got := h.claim("q", 1000); len(got) != 4 {
			t.Fatalf("claimed %d 450 ms later, want 4 (slots of 100 ms)", len(got))
		}
		h.advance(20 * time.Second)
		for _, occs := range [][]record.Occurrence{h.occurrences("")} {
			if m := byState(occs)[record.OccurrenceMissed]; len(m) != 0 {
				t.Fatalf("%d MISSED, want none", len(m))
			}
		}
		rep, err := reconcile.Report(h.ctx, h.st, reconcile.Options{From: start, To: fire.Add(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Problem || len(rep.Absent) != 0 || len(rep.Unexpected) != 0 {
			t.Fatalf("reconcile: totals %+v, absent %+v, unexpected %+v", rep.Totals, rep.Absent, rep.Unexpected)
		}
	})
}

// A slot calendar gives a firing planned late but due early an early
// slot: the planner materializes shard after shard, not in time order.
func TestSlotCalendarOutOfOrder(t *testing.T) {
	t.Parallel()
	t0 := utc("2027-01-04T10:00:00Z")
	c := &slotCalendar{interval: 100 * time.Millisecond, burst: 2}
	for _, tc := range []struct {
		due, want time.Duration // after t0
	}{
		{30 * time.Second, 30 * time.Second},
		{30 * time.Second, 30 * time.Second},
		{30 * time.Second, 30*time.Second + 100*time.Millisecond},
		{0, 0}, // due earlier, planned later: not behind the later ones
		{0, 0},
		{0, 100 * time.Millisecond},
		{50 * time.Millisecond, 200 * time.Millisecond},
		{30 * time.Second, 30*time.Second + 200*time.Millisecond},
	} {
		if got := c.take(t0.Add(tc.due)); !got.Equal(t0.Add(tc.want)) {
			t.Fatalf("due +%s: available +%s, want +%s (runs %v)", tc.due, got.Sub(t0), tc.want, c.taken)
		}
	}
	if len(c.taken) != 2 {
		t.Errorf("runs %v, want two (merged)", c.taken)
	}
}

// Catch-up pacing goes on where it was after a restart: a new engine on
// the same file paces the tenant's next catch-up firings after the slots
// the first one gave, not from its own start.
func TestCatchUpPacingSurvivesRestart(t *testing.T) {
	t.Parallel()
	x0 := utc("2027-01-04T10:00:00Z")
	h := newHarness(t, x0, nil) // the default catch-up quota: 10/s
	late := func(name string, at time.Time) schedule.Settings {
		s := atIn(name, at)
		s.MisfirePolicy, s.MaxLateness = record.MisfireFireOnce, time.Second
		return s
	}
	slots := func(h *harness, prefix string) []time.Time {
		t.Helper()
		occs, err := h.e.Queue.Occurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, Limit: store.MaxListLimit})
		if err != nil {
			t.Fatal(err)
		}
		var got []time.Time
		for _, o := range occs {
			sc := h.schedule(o.ScheduleID)
			if strings.HasPrefix(sc.Name, prefix) {
				if o.Lane != record.LaneCatchUp || o.State != record.OccurrenceEnqueued {
					t.Fatalf("%s: %s %s, want an ENQUEUED catch-up", sc.Name, o.Lane, o.State)
				}
				got = append(got, o.AvailableAt.UTC())
			}
		}
		slices.SortFunc(got, func(a, b time.Time) int { return a.Compare(b) })
		return got
	}
	paced := func(from time.Time, n int) []time.Time {
		var out []time.Time
		for k := range n {
			out = append(out, from.Add(time.Duration(k)*100*time.Millisecond))
		}
		return out
	}
	for i := range 100 {
		h.create(late(fmt.Sprintf("a%03d", i), x0.Add(2*time.Second)))
	}
	x := x0.Add(5 * time.Second) // an outage: the planner next runs here
	h.advance(5 * time.Second)
	if got, want := slots(h, "a"), paced(x, 100); !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("first node's catch-up slots %v\nwant %v", got, want)
	}

	// The process ends; a new engine opens the same file. More firings
	// turn out late 3 s later, while the first ones are still paced.
	h.e.Stop()
	h.st.Close()
	h2 := openHarness(t, h.path, h.clk, nil)
	for i := range 10 {
		h2.create(late(fmt.Sprintf("b%03d", i), x.Add(time.Second)))
	}
	h2.advance(3 * time.Second)
	if got, want := slots(h2, "b"), paced(x.Add(10*time.Second), 10); !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("after the restart: slots %v\nwant %v (after the first node's last slot)", got, want)
	}
}

// Firings due before the pass (late, but within their max_lateness) are
// paced among themselves too: the calendar forgets old slots once per
// pass, not between the firings of one.
func TestFiringSlotLateInOnePass(t *testing.T) {
	t.Parallel()
	t0 := utc("2027-01-04T10:00:00Z")
	p := newPacer()
	now := t0.Add(30 * time.Second)
	throttled := 0
	var last time.Time
	for range 20 {
		at, delayed := p.firingSlot(tenant, 10, 4, 4, t0, now)
		if delayed {
			throttled++
		}
		last = at
	}
	if throttled != 10 || !last.Equal(t0.Add(time.Second)) {
		t.Fatalf("%d throttled, the last at +%s; want 10 and +1s", throttled, last.Sub(t0))
	}
	// A node holding half the shards paces at half the rate.
	half := newPacer()
	for range 6 {
		last, _ = half.firingSlot(tenant, 10, 2, 4, t0, t0)
	}
	if !last.Equal(t0.Add(200 * time.Millisecond)) {
		t.Fatalf("at half the shards the sixth firing is at +%s, want +200ms (5/s, a burst of 5)", last.Sub(t0))
	}
}
