package engine

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// tzStart is the tests' clock: 2027-02-01 05:00 in Test/Shift, the day
// before 2026b moves it to UTC-4.
var tzStart = time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC)

// tzFixture is three schedules planned 72 hours ahead under 2026a.
type tzFixture struct {
	shift, steady, every *record.Schedule
	before               map[string][]record.Occurrence // schedule id -> occurrences planned under 2026a
}

func newTZFixture(t *testing.T, h *harness) *tzFixture {
	t.Helper()
	f := &tzFixture{
		shift:  h.create(schedule.Settings{Name: "shift", Queue: "q", Kind: timetable.KindCron, Expr: "0 9 * * *", TimeZone: "Test/Shift"}),
		steady: h.create(schedule.Settings{Name: "steady", Queue: "q", Kind: timetable.KindCron, Expr: "0 15 * * *", TimeZone: "Test/Steady"}),
		// every is elapsed time whatever its zone: 14:00Z every day.
		every: h.create(schedule.Settings{Name: "every", Queue: "q", Kind: timetable.KindEvery, Expr: "24h", TimeZone: "Test/Shift",
			Anchor: time.Date(2027, 1, 1, 14, 0, 0, 0, time.UTC)}),
		before: map[string][]record.Occurrence{},
	}
	h.plan()
	for _, sc := range []*record.Schedule{f.shift, f.steady, f.every} {
		f.before[sc.ScheduleID] = h.occurrences(sc.ScheduleID)
	}
	// 09:00 at UTC-5 is 14:00Z: Feb 1, 2 and 3 are within the horizon.
	if got := firingTimes(f.before[f.shift.ScheduleID], ""); !reflect.DeepEqual(got, []string{
		"2027-02-01T14:00:00Z", "2027-02-02T14:00:00Z", "2027-02-03T14:00:00Z"}) {
		t.Fatalf("planned under 2026a: %v", got)
	}
	if got := h.schedule(f.shift.ScheduleID).NextRunAt; !got.Equal(time.Date(2027, 2, 4, 14, 0, 0, 0, time.UTC)) {
		t.Fatalf("cursor under 2026a: %s, want 2027-02-04T14:00:00Z", got)
	}
	return f
}

// firingTimes lists the occurrences' scheduled times, only those in state
// when it is set.
func firingTimes(occs []record.Occurrence, state record.OccurrenceState) []string {
	var out []string
	for _, o := range occs {
		if state == "" || o.State == state {
			out = append(out, o.ScheduledFor.UTC().Format(time.RFC3339))
		}
	}
	return out
}

// check asserts what the fixture's schedules hold after the change to
// 2026b and a planner pass: Test/Shift's firings from Feb 2 on moved an
// hour earlier (canceled at the old instant, materialized at the new one
// under new ids), its Feb 1 firing kept its id, and the schedules in the
// unchanged zone and of kind every are as they were.
func (f *tzFixture) check(t *testing.T, h *harness) {
	t.Helper()
	f.checkUnder(t, h, "2026b")
}

// checkUnder is check for 2026b's rules loaded under the tz label label
// (a rebuild of them under another version line): the store records the
// loaded rules of Test/Shift, and every shard, under label.
func (f *tzFixture) checkUnder(t *testing.T, h *harness, label string) {
	t.Helper()
	occs := h.occurrences(f.shift.ScheduleID)
	if got, want := firingTimes(occs, record.OccurrenceEnqueued), []string{
		"2027-02-01T14:00:00Z", "2027-02-02T13:00:00Z", "2027-02-03T13:00:00Z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Test/Shift ENQUEUED after the change: %v, want %v", got, want)
	}
	if got, want := firingTimes(occs, record.OccurrenceCanceled), []string{
		"2027-02-02T14:00:00Z", "2027-02-03T14:00:00Z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Test/Shift CANCELED after the change: %v, want %v", got, want)
	}
	byTime := map[time.Time]record.Occurrence{}
	for _, o := range occs {
		byTime[o.ScheduledFor] = o
	}
	for _, o := range f.before[f.shift.ScheduleID] {
		now := byTime[o.ScheduledFor]
		if now.OccurrenceID != o.OccurrenceID {
			t.Errorf("occurrence at %s: id %s, was %s", o.ScheduledFor, now.OccurrenceID, o.OccurrenceID)
		}
	}
	for _, o := range occs {
		if want := record.OccurrenceID(f.shift.ScheduleID, f.shift.Version, o.ScheduledFor); o.OccurrenceID != want {
			t.Errorf("occurrence at %s: id %s, want the derived %s", o.ScheduledFor, o.OccurrenceID, want)
		}
	}
	if got := h.schedule(f.shift.ScheduleID).NextRunAt; !got.Equal(time.Date(2027, 2, 4, 13, 0, 0, 0, time.UTC)) {
		t.Errorf("Test/Shift cursor after the change and a pass: %s, want 2027-02-04T13:00:00Z", got)
	}
	for _, sc := range []*record.Schedule{f.steady, f.every} {
		if got := h.occurrences(sc.ScheduleID); !sameOccurrences(got, f.before[sc.ScheduleID]) {
			t.Errorf("%s (unchanged rules) changed:\n got %+v\nwant %+v", sc.Name, got, f.before[sc.ScheduleID])
		}
	}
	rules, err := h.st.ZoneRules(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := timetable.ZoneFingerprint("Test/Shift")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rules {
		if r.Zone == "Test/Shift" && r.TZVersion == label {
			found = true
			if r.Fingerprint != fp {
				t.Errorf("recorded rules of Test/Shift under %s: %+v, want fingerprint %s", label, r, fp)
			}
		}
	}
	if !found {
		t.Errorf("no recorded rules for Test/Shift under %s: %+v", label, rules)
	}
	versions, err := h.st.ShardTZVersions(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for shard, v := range versions {
		if v != label {
			t.Errorf("shard %d recorded under %s, want %s", shard, v, label)
		}
	}
}

// checkReverted asserts what the fixture's Test/Shift schedule holds after
// the change to 2026b's rules was reverted to 2026a's and a planner pass:
// the firings 2026b's rules withdrew are back on the queue under their
// ids, the ones they made are CANCELED, and the cursor is 2026a's.
func (f *tzFixture) checkReverted(t *testing.T, h *harness) {
	t.Helper()
	occs := h.occurrences(f.shift.ScheduleID)
	if got := firingTimes(occs, record.OccurrenceEnqueued); !reflect.DeepEqual(got, []string{
		"2027-02-01T14:00:00Z", "2027-02-02T14:00:00Z", "2027-02-03T14:00:00Z"}) {
		t.Errorf("ENQUEUED after the revert: %v, want the 2026a firings", got)
	}
	if got := firingTimes(occs, record.OccurrenceCanceled); !reflect.DeepEqual(got, []string{
		"2027-02-02T13:00:00Z", "2027-02-03T13:00:00Z"}) {
		t.Errorf("CANCELED after the revert: %v, want the 2026b firings", got)
	}
	if !sameOccurrences(occs[:1], f.before[f.shift.ScheduleID][:1]) {
		t.Errorf("the kept firing changed: %+v", occs[0])
	}
	byTime := map[time.Time]record.Occurrence{}
	for _, o := range occs {
		byTime[o.ScheduledFor] = o
	}
	for _, o := range f.before[f.shift.ScheduleID] {
		back := byTime[o.ScheduledFor]
		if back.OccurrenceID != o.OccurrenceID || back.State != record.OccurrenceEnqueued || !back.FinishedAt.IsZero() {
			t.Errorf("firing at %s after the revert: %s %s finished %s, want %s ENQUEUED again", o.ScheduledFor,
				back.OccurrenceID, back.State, back.FinishedAt, o.OccurrenceID)
		}
	}
	if got := h.schedule(f.shift.ScheduleID).NextRunAt; !got.Equal(time.Date(2027, 2, 4, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("cursor after the revert and a pass: %s, want 2027-02-04T14:00:00Z", got)
	}
}

// rezoneAudits counts the schedule's schedule.rezone audit rows.
func rezoneAudits(t *testing.T, h *harness, scheduleID string) int {
	t.Helper()
	rows, err := h.st.ListAudit(h.ctx, store.ListAuditParams{TenantID: tenant, Target: scheduleID})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Action == AuditScheduleRezone {
			n++
		}
	}
	return n
}

// sameOccurrences compares two listings by id, time and state.
func sameOccurrences(a, b []record.Occurrence) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].OccurrenceID != b[i].OccurrenceID || !a[i].ScheduledFor.Equal(b[i].ScheduledFor) || a[i].State != b[i].State {
			return false
		}
	}
	return true
}

// TestTZReloadMovesFirings: a reload of the tz database (what SIGHUP and
// `schedctl admin reload-tz` do) moves the cursor and the occurrences
// materialized ahead of the cron schedules in the zone whose rules
// changed, and only those, on every store.
func TestTZReloadMovesFirings(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour })
		f := newTZFixture(t, h)

		// The operator installs the new release; the reload reads it.
		tztest.Install(t, "2026b")
		res, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		// Canceled: Feb 2 and 3 at 14:00Z; kept: Feb 1 at 14:00Z;
		// replanned: Feb 2, 3 and 4 at 13:00Z, before the old cursor (Feb
		// 4, 14:00Z; Feb 4 is past the horizon, planned when it is near).
		want := TZReloadResult{PreviousVersion: "2026a", Version: "2026b", PreviousLabel: "2026a", Label: "2026b", Shards: 4,
			Changed: []TZZoneMoves{{Zone: "Test/Shift", Schedules: 1, Moved: 1, Canceled: 2, Kept: 1, Replanned: 3}}}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("reload result:\n got %+v\nwant %+v", res, want)
		}
		// The metrics say what moved and which tz database is loaded.
		tzm := h.e.TZ.planner.obs.metrics.TZ
		for outcome, want := range map[string]float64{"canceled": 2, "kept": 1, "replanned": 3} {
			var m dto.Metric
			if err := tzm.Moved.WithLabelValues(outcome).Write(&m); err != nil || m.GetCounter().GetValue() != want {
				t.Errorf("sched_tz_rezone_firings_total{outcome=%q} = %v (%v), want %v", outcome, m.GetCounter().GetValue(), err, want)
			}
		}
		var info dto.Metric
		if err := tzm.Info.WithLabelValues("2026b").Write(&info); err != nil || info.GetGauge().GetValue() != 1 {
			t.Errorf("sched_tz_database_info{version=\"2026b\"} = %v (%v), want 1", info.GetGauge().GetValue(), err)
		}
		// Until the next pass, the cursor waits at the first moved firing.
		if got := h.schedule(f.shift.ScheduleID).NextRunAt; !got.Equal(time.Date(2027, 2, 2, 13, 0, 0, 0, time.UTC)) {
			t.Errorf("cursor after the reload: %s, want 2027-02-02T13:00:00Z", got)
		}
		st := h.plan()
		if st.Enqueued != 2 {
			t.Errorf("pass after the reload enqueued %d, want the 2 moved firings", st.Enqueued)
		}
		f.check(t, h)
		// The tenant's audit log says why, once, for the schedule moved.
		rows, err := h.st.ListAudit(h.ctx, store.ListAuditParams{TenantID: tenant, Target: f.shift.ScheduleID})
		if err != nil {
			t.Fatal(err)
		}
		var rezones []store.AuditEntry
		for _, r := range rows {
			if r.Action == AuditScheduleRezone {
				rezones = append(rezones, r)
			}
		}
		wantDetail := "tz 2026a -> 2026b (Test/Shift): 2 occurrence(s) canceled, cursor 2027-02-04T14:00:00Z -> 2027-02-02T13:00:00Z"
		if len(rezones) != 1 || rezones[0].Detail != wantDetail || rezones[0].OldVersion != 1 || rezones[0].NewVersion != 1 {
			t.Errorf("audit rows of the rezone: %+v, want one: %s", rezones, wantDetail)
		}

		// A second reload of the same tz database moves nothing.
		again, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatalf("reload again: %v", err)
		}
		if again.Version != "2026b" || again.PreviousVersion != "2026b" || len(again.Changed) != 0 {
			t.Errorf("second reload: %+v, want no zone changed", again)
		}
		h.plan()
		f.check(t, h)
	})
}

// TestTZChangeAtStart: a node started on another tz database than the one
// recorded rezones the schedules of the changed zones at its first pass,
// as a reload would, on every store.
func TestTZChangeAtStart(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour })
		f := newTZFixture(t, h)
		h.e.Stop() // hands its shards over

		tztest.Use(t, "2026b")
		h2 := harnessOn(t, h.st, h.path, h.clk, func(c *Config) { c.Horizon = 72 * time.Hour; c.NodeID = "next-node" })
		st := h2.plan()
		if st.Enqueued != 2 {
			t.Errorf("first pass of the node started on 2026b enqueued %d, want the 2 moved firings", st.Enqueued)
		}
		f.check(t, h2)

		// A third start on the same tz database finds nothing to do.
		h2.e.Stop()
		h3 := harnessOn(t, h.st, h.path, h.clk, func(c *Config) { c.Horizon = 72 * time.Hour; c.NodeID = "third-node" })
		h3.plan()
		f.check(t, h3)
		if n := rezoneAudits(t, h3, f.shift.ScheduleID); n != 1 {
			t.Errorf("%d schedule.rezone audit rows after a third start, want the one of the second", n)
		}
	})
}

// TestTZReloadFenced: a rezone writes nothing on a shard whose lease
// another node took (the epoch moved on): like a planner batch, it is
// fenced, and the shard is left to its new owner.
func TestTZReloadFenced(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour; c.Shards = 1 })
		f := newTZFixture(t, h)
		// The lease lapses and another node takes the shard, while this
		// node still trusts it (its clock has not moved).
		other := h.clk.Now().Add(time.Hour)
		if _, err := AcquireShard(h.ctx, h.st, store.AcquireShardParams{Shard: 0, Owner: "other-node", TTL: time.Hour, Now: other}); err != nil {
			t.Fatalf("the other node's acquire: %v", err)
		}
		tztest.Use(t, "2026b")
		res, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if res.Fenced != 1 || res.Shards != 0 || res.Pending != 1 {
			t.Errorf("reload on a lost shard: %+v, want it fenced and pending", res)
		}
		for _, sc := range []*record.Schedule{f.shift, f.steady, f.every} {
			if got := h.occurrences(sc.ScheduleID); !sameOccurrences(got, f.before[sc.ScheduleID]) {
				t.Errorf("%s changed on a fenced shard:\n got %+v\nwant %+v", sc.Name, got, f.before[sc.ScheduleID])
			}
		}
		if got := h.schedule(f.shift.ScheduleID).NextRunAt; !got.Equal(time.Date(2027, 2, 4, 14, 0, 0, 0, time.UTC)) {
			t.Errorf("cursor moved on a fenced shard: %s", got)
		}
	})
}

// TestTZReloadWhilePlanning reloads the tz database back and forth while
// the background planner runs and schedules are created (run with -race):
// whatever interleaving, once the last reload is done and the planner
// has passed, every Test/Shift schedule's pending occurrences are exactly
// the firings of the rules in use between now and its cursor, and its
// cursor is one of them.
func TestTZReloadWhilePlanning(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour; c.Tick = time.Millisecond })
		exprs := []string{"0 9 * * *", "30 */6 * * *", "0 0 * * *", "15 23 * * *"}
		var ids []string
		for i, e := range exprs {
			ids = append(ids, h.create(schedule.Settings{Name: "s" + strconv.Itoa(i), Queue: "q", Kind: timetable.KindCron, Expr: e, TimeZone: "Test/Shift"}).ScheduleID)
		}
		if err := h.e.Start(h.ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		created := make(chan string, 64)
		go func() {
			defer close(created)
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				sc, _, err := h.e.Control.Create(h.ctx, tenant, "", schedule.Settings{Name: "n" + strconv.Itoa(i), Queue: "q",
					Kind: timetable.KindCron, Expr: exprs[i%len(exprs)], TimeZone: "Test/Shift"})
				if err != nil {
					t.Errorf("create while reloading: %v", err)
					return
				}
				created <- sc.ScheduleID
				if i >= 40 {
					<-done
					return
				}
			}
		}()
		versions := []string{"2026b", "2026a"}
		for i := range 10 {
			tztest.Install(t, versions[i%2])
			if _, err := h.e.TZ.Reload(h.ctx); err != nil {
				t.Fatalf("reload %d: %v", i, err)
			}
		}
		tztest.Install(t, "2026b")
		if _, err := h.e.TZ.Reload(h.ctx); err != nil {
			t.Fatalf("last reload: %v", err)
		}
		close(done)
		for id := range created {
			ids = append(ids, id)
		}
		h.e.Stop()
		h.plan()

		now := h.clk.Now()
		for _, id := range ids {
			sc := h.schedule(id)
			sp, err := timetable.Parse(sc.Definition())
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for f, ok := sp.Next(now); ok && f.At.Before(sc.NextRunAt); f, ok = sp.Next(f.At) {
				want = append(want, f.At.UTC().Format(time.RFC3339))
			}
			if f, ok := sp.Next(sc.NextRunAt.Add(-time.Second)); !ok || !f.At.Equal(sc.NextRunAt) {
				t.Errorf("%s (%s): cursor %s is not a firing under 2026b", sc.Name, sc.Expr, sc.NextRunAt)
			}
			var got []string
			for _, o := range h.occurrences(id) {
				if o.State == record.OccurrenceEnqueued && o.ScheduledFor.After(now) {
					got = append(got, o.ScheduledFor.UTC().Format(time.RFC3339))
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (%s): pending %v, want the 2026b firings %v", sc.Name, sc.Expr, got, want)
			}
		}
	})
}

// TestTZReloadBeforeFirstPass: schedules created, then a new release
// loaded before the node has planned (or held) any shard. The cursors were
// computed under the old release, so the first pass must rezone them, not
// take them for the new release's (a shard's version is recorded when
// the engine opens the store, before any cursor is written).
func TestTZReloadBeforeFirstPass(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour })
		sc := h.create(schedule.Settings{Name: "midnight", Queue: "q", Kind: timetable.KindCron, Expr: "0 0 * * *", TimeZone: "Test/Shift"})
		tztest.Install(t, "2026b")
		if _, err := h.e.TZ.Reload(h.ctx); err != nil {
			t.Fatal(err)
		}
		h.plan()
		got := firingTimes(h.occurrences(sc.ScheduleID), record.OccurrenceEnqueued)
		if want := []string{"2027-02-03T04:00:00Z", "2027-02-04T04:00:00Z"}; !reflect.DeepEqual(got, want) {
			t.Errorf("ENQUEUED after a reload before the first pass: %v, want the 2026b firings %v", got, want)
		}
	})
}

// TestTZRevertRestoresFirings: a release that reverts a change brings the
// withdrawn firings back under their ids (their CANCELED rows go back on
// the queue), and withdraws the ones the change had made.
func TestTZRevertRestoresFirings(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour })
		f := newTZFixture(t, h)
		tztest.Install(t, "2026b")
		if _, err := h.e.TZ.Reload(h.ctx); err != nil {
			t.Fatal(err)
		}
		h.plan()
		f.check(t, h)

		tztest.Install(t, "2026a")
		res, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []TZZoneMoves{{Zone: "Test/Shift", Schedules: 1, Moved: 1, Canceled: 2, Kept: 1, Replanned: 2}}
		if !reflect.DeepEqual(res.Changed, want) || res.PreviousVersion != "2026b" || res.Version != "2026a" {
			t.Errorf("revert: %+v, want %+v from 2026b to 2026a", res, want)
		}
		h.plan()
		f.checkReverted(t, h)
	})
}

// TestTZRollingUpgrade: two nodes share the shards; one restarts on the
// new tz release and rezones the shards it takes, while the other node's
// shards stay as its old release planned them; when that node restarts on
// the new release too, its shards are rezoned as well (each shard records
// the version it was last planned under, so a node that finds the store's
// zone rules already recorded for the new release still moves its own
// shards' firings).
func TestTZRollingUpgrade(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		mut := func(node string) func(*Config) {
			return func(c *Config) { c.Horizon = 72 * time.Hour; c.NodeID = node; c.IgnoreStoreClock = true }
		}
		a := open(t, tzStart, mut("node-a"))
		b := harnessOn(t, a.st, a.path, a.clk, mut("node-b"))
		a.plan()
		b.plan()
		a.plan() // gives back the shards beyond its share
		b.plan() // takes them
		owner := func() map[int]string {
			leases, err := a.st.ListShardLeases(a.ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := map[int]string{}
			for _, l := range leases {
				out[l.Shard] = l.Owner
			}
			return out
		}
		before := owner()
		// Schedules on both nodes' shards.
		var scs []*record.Schedule
		byNode := map[string]int{}
		for i := 0; i < 40 && (byNode["node-a"] == 0 || byNode["node-b"] == 0 || len(scs) < 4); i++ {
			sc := a.create(schedule.Settings{Name: "s" + strconv.Itoa(i), Queue: "q", Kind: timetable.KindCron, Expr: "0 9 * * *", TimeZone: "Test/Shift"})
			scs = append(scs, sc)
			byNode[before[sc.Shard]]++
		}
		if byNode["node-a"] == 0 || byNode["node-b"] == 0 {
			t.Fatalf("schedules by node: %v; want some on each", byNode)
		}
		a.plan()
		b.plan()
		pendingAt := func(h *harness, sc *record.Schedule) []string {
			return firingTimes(h.occurrences(sc.ScheduleID), record.OccurrenceEnqueued)
		}
		old := []string{"2027-02-01T14:00:00Z", "2027-02-02T14:00:00Z", "2027-02-03T14:00:00Z"}
		moved := []string{"2027-02-01T14:00:00Z", "2027-02-02T13:00:00Z", "2027-02-03T13:00:00Z"}

		// node-a restarts on 2026b; node-b still runs 2026a (it plans
		// nothing meanwhile: in one test process both see one tz
		// database).
		a.e.Stop()
		tztest.Use(t, "2026b")
		a2 := harnessOn(t, a.st, a.path, a.clk, mut("node-a2"))
		a2.plan()
		after := owner()
		for _, sc := range scs {
			want := old
			if after[sc.Shard] == "node-a2" {
				want = moved
			}
			if got := pendingAt(a2, sc); !reflect.DeepEqual(got, want) {
				t.Errorf("%s on shard %d (%s) after node-a restarted: %v, want %v", sc.Name, sc.Shard, after[sc.Shard], got, want)
			}
		}
		versions, err := a.st.ShardTZVersions(a.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for shard, node := range after {
			if want := map[string]string{"node-a2": "2026b", "node-b": "2026a"}[node]; versions[shard] != want {
				t.Errorf("shard %d (%s) recorded under %q, want %q", shard, node, versions[shard], want)
			}
		}

		// node-b restarts on 2026b: its shards move too.
		b.e.Stop()
		b2 := harnessOn(t, a.st, a.path, a.clk, mut("node-b2"))
		b2.plan()
		a2.plan()
		for _, sc := range scs {
			if got := pendingAt(b2, sc); !reflect.DeepEqual(got, moved) {
				t.Errorf("%s on shard %d after both restarted: %v, want %v", sc.Name, sc.Shard, got, moved)
			}
		}
		if versions, err = a.st.ShardTZVersions(a.ctx); err != nil {
			t.Fatal(err)
		}
		for shard := range 4 {
			if versions[shard] != "2026b" {
				t.Errorf("shard %d recorded under %q after both restarted, want 2026b", shard, versions[shard])
			}
		}
	})
}
