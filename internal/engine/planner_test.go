package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

// A 10-minute planner outage under each misfire policy: a schedule firing
// every minute, created at 10:00:00 and first planned at 10:10:30. The
// firings of 10:01 to 10:09 are more than max_lateness (60 s) late; 10:10
// is 30 s late, within max_lateness, and fires late; 10:11 is within the
// horizon and fires on time.
func TestMisfirePoliciesAfterOutage(t *testing.T) {
	t.Parallel()
	late := func(from, to int) []string {
		var out []string
		for m := from; m <= to; m++ {
			out = append(out, fmt.Sprintf("2027-01-04T10:%02d:00Z", m))
		}
		return out
	}
	tests := []struct {
		policy    record.MisfirePolicy
		k         int
		missed    []string
		catchUp   []string // late firings that still fire, in the catch-up lane
		onTimeEnq []string
	}{
		{record.MisfireSkip, 0, late(1, 9), nil, late(10, 11)},
		{record.MisfireFireOnce, 0, late(1, 8), late(9, 9), late(10, 11)},
		{record.MisfireCatchUp, 3, late(1, 6), late(7, 9), late(10, 11)},
		{record.MisfireCatchUp, 1000, nil, late(1, 9), late(10, 11)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s:%d", tt.policy, tt.k), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
			req := every("minutely", "1m")
			req.MisfirePolicy, req.CatchUpK = tt.policy, tt.k
			sc := h.create(req)
			h.clk.Advance(10*time.Minute + 30*time.Second) // the outage: no planner pass
			h.plan()

			var missed, catchUp, onTime []string
			var catchUpAvail []time.Time
			for _, o := range h.occurrences(sc.ScheduleID) {
				at := o.ScheduledFor.Format(time.RFC3339)
				switch {
				case o.State == record.OccurrenceMissed:
					missed = append(missed, at)
				case o.State == record.OccurrenceEnqueued && o.Lane == record.LaneCatchUp:
					catchUp = append(catchUp, at)
					catchUpAvail = append(catchUpAvail, o.AvailableAt)
				case o.State == record.OccurrenceEnqueued && o.Lane == record.LaneStrict:
					onTime = append(onTime, at)
				default:
					t.Errorf("unexpected occurrence %s %s lane %s", at, o.State, o.Lane)
				}
			}
			if !reflect.DeepEqual(missed, tt.missed) || !reflect.DeepEqual(catchUp, tt.catchUp) || !reflect.DeepEqual(onTime, tt.onTimeEnq) {
				t.Errorf("after the outage:\n missed   %v, want %v\n catch-up %v, want %v\n on time  %v, want %v",
					missed, tt.missed, catchUp, tt.catchUp, onTime, tt.onTimeEnq)
			}
			// Catch-up firings are paced by the tenant's rate, oldest first.
			for i := 1; i < len(catchUpAvail); i++ {
				if gap := catchUpAvail[i].Sub(catchUpAvail[i-1]); gap != 100*time.Millisecond {
					t.Errorf("catch-up firing %d is %v after the one before, want 100ms (10/s)", i, gap)
				}
			}
			if got := h.schedule(sc.ScheduleID); got.MissedCount != 0 || !got.NextRunAt.Equal(utc("2027-01-04T10:12:00Z")) {
				t.Errorf("schedule after the outage: missed_count %d next_run_at %s, want 0 and 10:12", got.MissedCount, got.NextRunAt)
			}
		})
	}
}

// A long outage: three days of a 1-second schedule. At most MaxMissedRows
// rows are written, the rest are counted, and the schedule keeps running
// afterwards (a Kubernetes CronJob, by contrast, stops after 100 missed
// starts).
func TestLongOutageBoundedMissedRows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		policy record.MisfirePolicy
		k      int
		fire   int
	}{{record.MisfireSkip, 0, 0}, {record.MisfireFireOnce, 0, 1}, {record.MisfireCatchUp, 1000, 1000}} {
		t.Run(string(tt.policy), func(t *testing.T) {
			t.Parallel()
			start := utc("2027-01-04T00:00:00Z")
			h := newHarness(t, start, nil)
			req := every("each second", "1s")
			req.MisfirePolicy, req.CatchUpK = tt.policy, tt.k
			sc := h.create(req)
			h.clk.Advance(72 * time.Hour)
			h.plan()

			// Firings at start+1s .. now+60s (horizon); late ones are those
			// before now-60s.
			now := h.clk.Now()
			totalLate := int(now.Add(-60*time.Second).Sub(start)/time.Second) - 1
			states := map[record.OccurrenceState]int{}
			var lanes = map[record.Lane]int{}
			occs, err := h.e.Queue.Occurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, ScheduleID: sc.ScheduleID, State: record.OccurrenceMissed, Limit: store.MaxListLimit})
			if err != nil {
				t.Fatal(err)
			}
			states[record.OccurrenceMissed] = len(occs)
			enq, err := h.e.Queue.Occurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, ScheduleID: sc.ScheduleID, State: record.OccurrenceEnqueued, Limit: store.MaxListLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range enq {
				lanes[o.Lane]++
			}
			got := h.schedule(sc.ScheduleID)
			if states[record.OccurrenceMissed] != DefaultMaxMissedRows {
				t.Errorf("%d MISSED rows, want %d", states[record.OccurrenceMissed], DefaultMaxMissedRows)
			}
			if lanes[record.LaneCatchUp] != tt.fire {
				t.Errorf("%d catch-up firings, want %d", lanes[record.LaneCatchUp], tt.fire)
			}
			if want := int64(totalLate - DefaultMaxMissedRows - tt.fire); got.MissedCount != want {
				t.Errorf("missed_count %d, want %d (late %d - rows %d - fired %d)", got.MissedCount, want, totalLate, DefaultMaxMissedRows, tt.fire)
			}
			// It keeps running.
			st := h.advance(time.Minute)
			if st.Enqueued != 60 {
				t.Errorf("the minute after recovery enqueued %d, want 60", st.Enqueued)
			}
		})
	}
}

// Both DST transitions over a virtual week each, in New York, for every
// policy. The planner, moved in half-hour steps with an hour's horizon,
// must store exactly the firings the time engine lists, and the
// transition-day answers are checked by hand.
func TestDSTWeeks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr string
		gap        timetable.GapPolicy
		repeat     timetable.RepeatPolicy
		from       string
		day        string   // the transition day, local date
		wantDay    []string // firings on it, UTC
	}{
		{"spring skip", "30 2 * * *", timetable.GapSkip, "", "2027-03-10T12:00:00Z", "2027-03-14", nil},
		{"spring shift", "30 2 * * *", timetable.GapShift, "", "2027-03-10T12:00:00Z", "2027-03-14", []string{"2027-03-14T07:00:00Z"}},
		{"fall first", "30 1 * * *", "", timetable.RepeatFirst, "2027-11-03T12:00:00Z", "2027-11-07", []string{"2027-11-07T05:30:00Z"}},
		{"fall last", "30 1 * * *", "", timetable.RepeatLast, "2027-11-03T12:00:00Z", "2027-11-07", []string{"2027-11-07T06:30:00Z"}},
		{"fall all", "30 1 * * *", "", timetable.RepeatAll, "2027-11-03T12:00:00Z", "2027-11-07", []string{"2027-11-07T05:30:00Z", "2027-11-07T06:30:00Z"}},
		{"fall every 30 min, all", "*/30 1 * * *", "", timetable.RepeatAll, "2027-11-03T12:00:00Z", "2027-11-07",
			[]string{"2027-11-07T05:00:00Z", "2027-11-07T05:30:00Z", "2027-11-07T06:00:00Z", "2027-11-07T06:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := utc(tt.from)
			h := newHarness(t, start, func(c *Config) { c.Horizon = time.Hour })
			req := cronIn(tt.name, tt.expr, "America/New_York")
			req.DSTGap, req.DSTRepeat = tt.gap, tt.repeat
			sc := h.create(req)
			end := start.Add(7 * 24 * time.Hour)
			for h.clk.Now().Before(end) {
				h.advance(30 * time.Minute)
			}
			var got []string
			var onDay []string
			ny, _ := time.LoadLocation("America/New_York")
			for _, o := range h.occurrences(sc.ScheduleID) {
				if o.State != record.OccurrenceEnqueued {
					t.Errorf("%s is %s, want ENQUEUED", o.ScheduledFor, o.State)
				}
				got = append(got, o.ScheduledFor.Format(time.RFC3339))
				if o.ScheduledFor.In(ny).Format("2006-01-02") == tt.day {
					onDay = append(onDay, o.ScheduledFor.Format(time.RFC3339))
				}
			}
			// The expected list, from the time engine directly (no planner).
			sp, err := timetable.Parse(sc.Definition())
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for f, ok := sp.Next(start); ok && !f.At.After(h.clk.Now().Add(time.Hour)); f, ok = sp.Next(f.At) {
				want = append(want, f.At.Format(time.RFC3339))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("stored firings:\n %v\nwant\n %v", got, want)
			}
			if !reflect.DeepEqual(onDay, tt.wantDay) {
				t.Errorf("on %s: %v, want %v", tt.day, onDay, tt.wantDay)
			}
		})
	}
}

// A flexible schedule's available_at is a function of the occurrence id
// alone: the same after a restart that plans the same firing again from an
// older copy of the database.
func TestFlexibleAvailableAtSameAfterRestart(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-04T10:00:30Z")
	h := newHarness(t, start, nil)
	req := every("flexible", "1m")
	req.FlexibleWindow = 5 * time.Minute
	sc := h.create(req)
	h.st.Close() // checkpoints the WAL into the file
	snapshot := filepath.Join(t.TempDir(), "before.db")
	copyFile(t, h.path, snapshot) // the database before any firing was planned

	a := openHarness(t, h.path, clock.NewVirtual(start), nil)
	a.plan()
	first := a.occurrences(sc.ScheduleID)
	if len(first) != 1 {
		t.Fatalf("%d occurrences, want 1", len(first))
	}
	o := first[0]
	if o.Lane != record.LaneFlexible || o.AvailableAt.Before(o.ScheduledFor) || !o.AvailableAt.Before(o.ScheduledFor.Add(5*time.Minute)) {
		t.Fatalf("occurrence %s lane %s available %s: want the flexible lane, within [scheduled_for, +5m)", o.ScheduledFor, o.Lane, o.AvailableAt)
	}

	b := openHarness(t, snapshot, clock.NewVirtual(start.Add(7*time.Second)), nil)
	b.plan()
	again := b.occurrences(sc.ScheduleID)
	if len(again) != 1 || again[0].OccurrenceID != o.OccurrenceID || !again[0].AvailableAt.Equal(o.AvailableAt) {
		t.Fatalf("after the restart: %+v\nbefore: %+v", again, o)
	}
}

// An at schedule materializes once and completes.
func TestAtScheduleCompletes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	sc := h.create(schedule.Settings{Name: "once", Queue: "q", Kind: timetable.KindAt, Expr: "2027-01-04T11:05:00+01:00"}) // 10:05Z
	h.plan()
	if got := h.schedule(sc.ScheduleID); got.State != record.ScheduleActive || len(h.occurrences(sc.ScheduleID)) != 0 {
		t.Fatalf("state %s before its time", got.State)
	}
	h.advance(4*time.Minute + 30*time.Second) // 10:05 is now within the horizon
	got := h.schedule(sc.ScheduleID)
	occs := h.occurrences(sc.ScheduleID)
	if got.State != record.ScheduleCompleted || !got.NextRunAt.IsZero() || len(occs) != 1 {
		t.Fatalf("state %s next %v occurrences %d, want COMPLETED, none, 1", got.State, got.NextRunAt, len(occs))
	}
}

// Two planners on one store: the second takes the shards only after the
// first's lease runs out, with a higher epoch, and the first planner's
// writes under its old epoch are refused, so a stale planner cannot write
// after losing its shards.
func TestShardLeaseFencing(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-04T10:00:00Z")
	h := newHarness(t, start, nil)
	b, err := New(h.ctx, Config{Store: h.st, Clock: h.clk, Shards: 4, Horizon: time.Minute, NodeID: "node-b"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		h.create(every(fmt.Sprintf("s%d", i), "10s"))
	}
	if st := h.plan(); st.Shards != 4 {
		t.Fatalf("node a holds %d shards, want 4", st.Shards)
	}
	if st, err := b.PlanOnce(h.ctx); err != nil || st.Shards != 0 {
		t.Fatalf("node b holds %d shards (%v) while a's leases are live", st.Shards, err)
	}
	held := map[int]int64{}
	for s, l := range h.e.member.held {
		held[s] = l.lease.Epoch
	}

	// a stalls past its lease; b takes over.
	h.clk.Advance(DefaultShardLease + time.Second)
	st, err := b.PlanOnce(h.ctx)
	if err != nil || st.Shards != 4 {
		t.Fatalf("node b holds %d shards after a's lease ran out (%v)", st.Shards, err)
	}
	for s, l := range b.member.held {
		if l.lease.Epoch <= held[s] {
			t.Errorf("shard %d: epoch %d after the move, not above %d", s, l.lease.Epoch, held[s])
		}
	}

	// a wakes up later, finds schedules due, and writes with the lease it
	// remembers: refused.
	h.clk.Advance(20 * time.Second)
	withSchedules := map[int]bool{}
	for i := range 8 {
		withSchedules[record.ShardOf(h.schedule(fmt.Sprintf("s%d", i)).ScheduleID, 4)] = true
	}
	fenced := 0
	for _, hs := range h.e.member.held {
		// Pretend its local trust had not run out, nor any renewal come
		// due (a renewal would learn of the move before the write).
		hs.trustedUntil, hs.renewAfter = h.clk.Now().Add(time.Hour), h.clk.Now().Add(time.Hour)
	}
	for s, hs := range h.e.member.held {
		var ps PlanStats
		if err := h.e.planner.planShard(h.ctx, hs, len(h.e.member.held), h.clk.Now(), &ps, new(time.Time)); err != nil {
			t.Fatalf("shard %d: %v", s, err)
		}
		fenced += ps.Fenced
	}
	if fenced != len(withSchedules) {
		t.Errorf("%d stale batches fenced, want one per shard with schedules (%d)", fenced, len(withSchedules))
	}
	for s := range withSchedules {
		if _, still := h.e.member.held[s]; still {
			t.Errorf("node a still believes it holds shard %d after being fenced", s)
		}
	}
	occs, err := h.st.ListOccurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, Limit: store.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range occs {
		if o.ScheduledFor.After(start.Add(time.Minute)) {
			hs := b.member.held[record.ShardOf(o.ScheduleID, 4)]
			if o.ShardEpoch != hs.lease.Epoch {
				t.Errorf("occurrence %s written under epoch %d, the live epoch is %d", o.ScheduledFor, o.ShardEpoch, hs.lease.Epoch)
			}
		}
	}
}

// slowCommits is a real store whose plan commits each take step on the
// virtual clock, as a loaded database's do at the top of the hour.
type slowCommits struct {
	store.Store
	clk  *clock.Virtual
	step time.Duration
}

func (s slowCommits) CommitPlan(ctx context.Context, p store.Plan) (store.PlanResult, error) {
	res, err := s.Store.CommitPlan(ctx, p)
	s.clk.Advance(s.step)
	return res, err
}

// A pass that runs longer than its shard leases renews each lease
// between batches, and takes again a shard whose trust ran out while the
// shards before it were planned, and so plans every due schedule, rather
// than dropping the batches that come after the node's trust in the
// leases it renewed at the pass's start ran out.
func TestLongPassRenewsItsLease(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-04T10:00:00Z")
	clk := clock.NewVirtual(start)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sched.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const n, step = 100, 2 * time.Second
	h := harnessOn(t, slowCommits{Store: st, clk: clk, step: step}, "", clk, func(c *Config) {
		c.Shards, c.PlanBatch, c.IgnoreStoreClock = 4, 8, true
	})
	for i := range n {
		h.create(schedule.Settings{Name: fmt.Sprintf("once-%03d", i), Queue: "q", Kind: timetable.KindAt, Expr: "2027-01-04T10:00:30Z"})
	}
	ps := h.plan()
	took := clk.Now().Sub(start)
	occs, err := h.st.ListOccurrences(h.ctx, store.ListOccurrencesParams{TenantID: tenant, Limit: store.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(occs) != n || ps.Enqueued != n {
		t.Fatalf("one pass of %s enqueued %d (%d occurrences), want every one of the %d due", took, ps.Enqueued, len(occs), n)
	}
	if took < 2*DefaultShardLease {
		t.Fatalf("the pass took %s of the clock, want more than two leases (%s) for the test to mean anything", took, 2*DefaultShardLease)
	}
	leases, err := h.st.ListShardLeases(h.ctx)
	if err != nil || len(leases) != 4 {
		t.Fatalf("leases %v, %v", leases, err)
	}
	for _, l := range leases {
		if l.Owner != "test-node" || !l.ExpiresAt.After(clk.Now()) {
			t.Errorf("shard %d after the pass: owner %s, expires %s; want this node's, live at %s", l.Shard, l.Owner, l.ExpiresAt, clk.Now())
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
