package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

var t0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func h(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }

// fixture is one schedule planted in a real store: its version rows, its
// row (cursor, state, missed count) and its occurrences.
type fixture struct {
	versions []store.ScheduleVersion
	state    record.ScheduleState
	cursor   time.Time
	missed   int64
	rows     []record.Occurrence
}

// hourly is a version row of an hourly cron (minute min) written at
// written, firing after startsAfter.
func hourly(ver int64, min int, written, startsAfter time.Time) store.ScheduleVersion {
	return store.ScheduleVersion{TenantID: "default", ScheduleID: "sch_fix", Version: ver,
		Definition: timetable.Definition{Kind: timetable.KindCron, Expr: fmt.Sprintf("%d * * * *", min), TimeZone: "UTC",
			DSTGap: timetable.GapShift, DSTRepeat: timetable.RepeatFirst},
		State: record.ScheduleActive, MisfirePolicy: record.MisfireFireOnce, MaxLateness: time.Minute,
		OverlapPolicy: record.OverlapAllow, WrittenAt: written, StartsAfter: startsAfter}
}

func closed(v store.ScheduleVersion, at, ends time.Time) store.ScheduleVersion {
	v.SupersededAt, v.EndsAt = at, ends
	return v
}

// plannedTo records that the planner had got to until under v when it was
// superseded.
func plannedTo(v store.ScheduleVersion, until time.Time) store.ScheduleVersion {
	v.PlannedUntil = until
	return v
}

func policy(v store.ScheduleVersion, p record.MisfirePolicy, k int) store.ScheduleVersion {
	v.MisfirePolicy, v.CatchUpK = p, k
	return v
}

// occ is an occurrence of version ver at t in state s, on lane.
func occ(ver int64, t time.Time, s record.OccurrenceState, lane record.Lane, stamp time.Time) record.Occurrence {
	o := record.Occurrence{TenantID: "default", ScheduleID: "sch_fix", ScheduleVersion: ver, ScheduledFor: t,
		AvailableAt: t, State: s, Lane: lane, Queue: "q", OverlapPolicy: record.OverlapAllow}
	if s == record.OccurrenceMissed {
		o.FinishedAt = stamp
	} else {
		o.EnqueuedAt = stamp
	}
	if s == record.OccurrenceSucceeded || s == record.OccurrenceCanceled || s == record.OccurrenceDead || s == record.OccurrenceSkippedOverlap {
		o.FinishedAt = stamp.Add(time.Minute)
	}
	return o
}

func strict(ver int64, t time.Time, s record.OccurrenceState) record.Occurrence {
	return occ(ver, t, s, record.LaneStrict, t)
}

func succeededEach(ver int64, from, to float64) []record.Occurrence {
	var out []record.Occurrence
	for x := from; x <= to; x++ {
		out = append(out, strict(ver, h(x), record.OccurrenceSucceeded))
	}
	return out
}

func plant(t *testing.T, f fixture) store.Store {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "sched.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	last := f.versions[len(f.versions)-1]
	sc := &record.Schedule{TenantID: "default", ScheduleID: "sch_fix", Name: "fix", Kind: last.Definition.Kind,
		Expr: last.Definition.Expr, TimeZone: "UTC", DSTGap: last.Definition.DSTGap, DSTRepeat: last.Definition.DSTRepeat,
		Version: last.Version, State: f.state, NextRunAt: f.cursor, Queue: "q", MisfirePolicy: last.MisfirePolicy,
		CatchUpK: last.CatchUpK, MaxLateness: last.MaxLateness, OverlapPolicy: record.OverlapAllow,
		Retry: record.RetryPolicy{MaxAttempts: 1}, MissedCount: f.missed, CreatedAt: h(-1), UpdatedAt: h(-1)}
	if sc.State == "" {
		sc.State = record.ScheduleActive
	}
	if err := store.InTx(ctx, st, func(tx store.Tx) error {
		if err := tx.InsertSchedule(ctx, sc); err != nil {
			return err
		}
		for _, v := range f.versions {
			if err := tx.InsertScheduleVersion(ctx, v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(f.rows) > 0 {
		if _, err := st.InsertOccurrences(ctx, f.rows); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// collect is a Sink that keeps everything.
type collect struct {
	findings []reconcile.Finding
	sums     []reconcile.Summary
}

func (c *collect) Finding(f reconcile.Finding) error   { c.findings = append(c.findings, f); return nil }
func (c *collect) Schedule(s reconcile.Summary) error  { c.sums = append(c.sums, s); return nil }
func (c *collect) TZWarning(reconcile.TZWarning) error { return nil }

func (c *collect) named(class reconcile.Class) []string {
	var out []string
	for _, f := range c.findings {
		if f.Class == class {
			out = append(out, fmt.Sprintf("v%d@%s", f.Version, f.ScheduledFor.Sub(t0)))
		}
	}
	return out
}

func TestClassify(t *testing.T) {
	v1 := hourly(1, 0, h(-1), h(-1))
	for _, tc := range []struct {
		name       string
		f          fixture
		from, to   time.Time
		want       reconcile.Counts
		absent     []string
		unexpected []string
		reason     string // a word the first unexpected finding's reason holds
	}{{
		name: "all succeeded", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(6), rows: succeededEach(1, 0, 5)},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 6},
	}, {
		name: "a row deleted", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(6),
			rows: slices.Delete(succeededEach(1, 0, 5), 2, 3)},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 5, reconcile.Absent: 1}, absent: []string{"v1@2h0m0s"},
	}, {
		name: "every state", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(6), rows: []record.Occurrence{
			strict(1, h(0), record.OccurrenceDead), strict(1, h(1), record.OccurrenceCanceled),
			strict(1, h(2), record.OccurrenceSkippedOverlap), strict(1, h(3), record.OccurrenceRunning),
			strict(1, h(4), record.OccurrenceRetryWait), strict(1, h(5), record.OccurrenceEnqueued)}},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Dead: 1, reconcile.Canceled: 1, reconcile.SkippedOverlap: 1, reconcile.Pending: 3},
	}, {
		name: "not yet planned", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(4), rows: succeededEach(1, 0, 3)},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 4, reconcile.Pending: 2},
	}, {
		// fire_once after an outage: the oldest counted, then up to
		// MaxMissedRows MISSED rows, then the most recent fired, all by
		// one pass (stamp 5.2h).
		name: "late run counted", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(6), missed: 2, rows: []record.Occurrence{
			strict(1, h(0), record.OccurrenceSucceeded),
			occ(1, h(3), record.OccurrenceMissed, record.LaneCatchUp, h(5.2)),
			occ(1, h(4), record.OccurrenceSucceeded, record.LaneCatchUp, h(5.2)),
			strict(1, h(5), record.OccurrenceSucceeded)}},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 3, reconcile.MissedCounted: 2, reconcile.Missed: 1},
	}, {
		name: "late run beyond the missed count", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(6), missed: 1, rows: []record.Occurrence{
			strict(1, h(0), record.OccurrenceSucceeded),
			occ(1, h(3), record.OccurrenceMissed, record.LaneCatchUp, h(5.2)),
			occ(1, h(4), record.OccurrenceSucceeded, record.LaneCatchUp, h(5.2)),
			strict(1, h(5), record.OccurrenceSucceeded)}},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 3, reconcile.MissedCounted: 1, reconcile.Missed: 1, reconcile.Absent: 1},
		absent: []string{"v1@2h0m0s"},
	}, {
		name: "late run straddles the range's end", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(7), missed: 2, rows: []record.Occurrence{
			strict(1, h(0), record.OccurrenceSucceeded), strict(1, h(1), record.OccurrenceSucceeded),
			occ(1, h(4), record.OccurrenceMissed, record.LaneCatchUp, h(6.2)),
			occ(1, h(5), record.OccurrenceSucceeded, record.LaneCatchUp, h(6.2))}},
		from: h(0), to: h(3.5), want: reconcile.Counts{reconcile.Succeeded: 2, reconcile.MissedCounted: 2},
	}, {
		name: "skip fired a late firing", f: fixture{versions: []store.ScheduleVersion{policy(v1, record.MisfireSkip, 0)}, cursor: h(6), rows: []record.Occurrence{
			strict(1, h(0), record.OccurrenceSucceeded), strict(1, h(1), record.OccurrenceSucceeded), strict(1, h(2), record.OccurrenceSucceeded),
			occ(1, h(3), record.OccurrenceMissed, record.LaneCatchUp, h(4.5)),
			occ(1, h(4), record.OccurrenceSucceeded, record.LaneCatchUp, h(4.5)),
			strict(1, h(5), record.OccurrenceSucceeded)}},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 4, reconcile.Missed: 1, reconcile.Unexpected: 1},
		unexpected: []string{"v1@4h0m0s"}, reason: "keeps 0",
	}, {
		name: "catch_up:2 fired an older one", f: fixture{versions: []store.ScheduleVersion{policy(v1, record.MisfireCatchUp, 2)}, cursor: h(6), rows: []record.Occurrence{
			strict(1, h(0), record.OccurrenceSucceeded),
			occ(1, h(1), record.OccurrenceSucceeded, record.LaneCatchUp, h(4.5)),
			occ(1, h(2), record.OccurrenceMissed, record.LaneCatchUp, h(4.5)),
			occ(1, h(3), record.OccurrenceSucceeded, record.LaneCatchUp, h(4.5)),
			strict(1, h(4), record.OccurrenceSucceeded), strict(1, h(5), record.OccurrenceSucceeded)}},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 5, reconcile.Unexpected: 1},
		unexpected: []string{"v1@2h0m0s"}, reason: "most recent",
	}, {
		// Two passes, each a late run: their catch-up rows are told apart
		// by the pass's time.
		name: "two late runs back to back", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(6), rows: []record.Occurrence{
			occ(1, h(0), record.OccurrenceMissed, record.LaneCatchUp, h(1.5)),
			occ(1, h(1), record.OccurrenceSucceeded, record.LaneCatchUp, h(1.5)),
			occ(1, h(2), record.OccurrenceMissed, record.LaneCatchUp, h(3.5)),
			occ(1, h(3), record.OccurrenceSucceeded, record.LaneCatchUp, h(3.5)),
			strict(1, h(4), record.OccurrenceSucceeded), strict(1, h(5), record.OccurrenceSucceeded)}},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 4, reconcile.Missed: 2},
	}, {
		// An update at 2.5h: version 1 kept up to 2h; its 3h row was
		// canceled by the change; version 2 fires at :30 after 2.5h.
		name: "an update", f: fixture{versions: []store.ScheduleVersion{closed(v1, h(2.5), h(2)), hourly(2, 30, h(2.5), h(2.5))}, cursor: h(6.5),
			rows: append(succeededEach(1, 0, 2), strict(1, h(3), record.OccurrenceCanceled),
				strict(2, h(3.5), record.OccurrenceSucceeded), strict(2, h(4.5), record.OccurrenceSucceeded), strict(2, h(5.5), record.OccurrenceSucceeded))},
		from: h(0), to: h(6), want: reconcile.Counts{reconcile.Succeeded: 6, reconcile.CanceledByChange: 1},
	}, {
		// The same, the history recording the cursor at the change (4h):
		// the 3h firing was planned, and canceled by it.
		name: "an update, planned until", f: fixture{versions: []store.ScheduleVersion{plannedTo(closed(v1, h(2.5), h(2)), h(4)), hourly(2, 30, h(2.5), h(2.5))}, cursor: h(6.5),
			rows: append(succeededEach(1, 0, 2), strict(1, h(3), record.OccurrenceCanceled),
				strict(2, h(3.5), record.OccurrenceSucceeded), strict(2, h(4.5), record.OccurrenceSucceeded), strict(2, h(5.5), record.OccurrenceSucceeded))},
		from: h(0), to: h(6), want: reconcile.Counts{reconcile.Succeeded: 6, reconcile.CanceledByChange: 1},
	}, {
		// The 2h row deleted before the update moved the last firing
		// kept back to 1h: 2h was planned all the same.
		name: "the last row of a version deleted before an update", f: fixture{versions: []store.ScheduleVersion{plannedTo(closed(v1, h(2.5), h(1)), h(4)), hourly(2, 30, h(2.5), h(2.5))}, cursor: h(6.5),
			rows: append(succeededEach(1, 0, 1), strict(1, h(3), record.OccurrenceCanceled),
				strict(2, h(3.5), record.OccurrenceSucceeded), strict(2, h(4.5), record.OccurrenceSucceeded), strict(2, h(5.5), record.OccurrenceSucceeded))},
		from: h(0), to: h(6), want: reconcile.Counts{reconcile.Succeeded: 5, reconcile.CanceledByChange: 1, reconcile.Absent: 1},
		absent: []string{"v1@2h0m0s"},
	}, {
		name: "a firing planned ahead of an update, deleted", f: fixture{versions: []store.ScheduleVersion{plannedTo(closed(v1, h(2.5), h(2)), h(4)), hourly(2, 30, h(2.5), h(2.5))}, cursor: h(6.5),
			rows: append(succeededEach(1, 0, 2),
				strict(2, h(3.5), record.OccurrenceSucceeded), strict(2, h(4.5), record.OccurrenceSucceeded), strict(2, h(5.5), record.OccurrenceSucceeded))},
		from: h(0), to: h(6), want: reconcile.Counts{reconcile.Succeeded: 6, reconcile.Absent: 1},
		absent: []string{"v1@3h0m0s"},
	}, {
		name: "a firing planned ahead of an update, not canceled", f: fixture{versions: []store.ScheduleVersion{plannedTo(closed(v1, h(2.5), h(2)), h(4)), hourly(2, 30, h(2.5), h(2.5))}, cursor: h(6.5),
			rows: append(succeededEach(1, 0, 3),
				strict(2, h(3.5), record.OccurrenceSucceeded), strict(2, h(4.5), record.OccurrenceSucceeded), strict(2, h(5.5), record.OccurrenceSucceeded))},
		from: h(0), to: h(6), want: reconcile.Counts{reconcile.Succeeded: 6, reconcile.Unexpected: 1},
		unexpected: []string{"v1@3h0m0s"}, reason: "yet not CANCELED",
	}, {
		// A late run (pass at 4.2h) counted 1h-3h and fired 4h, which an
		// update at 4.3h canceled: the last firing kept is 0h, and the
		// counted ones were planned.
		name: "a late run canceled by an update", f: fixture{versions: []store.ScheduleVersion{plannedTo(closed(v1, h(4.3), h(0)), h(5)), hourly(2, 30, h(4.3), h(4.3))},
			cursor: h(6.5), missed: 3, rows: []record.Occurrence{strict(1, h(0), record.OccurrenceSucceeded),
				occ(1, h(4), record.OccurrenceCanceled, record.LaneCatchUp, h(4.2)),
				strict(2, h(4.5), record.OccurrenceSucceeded), strict(2, h(5.5), record.OccurrenceSucceeded)}},
		from: h(0), to: h(6), want: reconcile.Counts{reconcile.Succeeded: 3, reconcile.MissedCounted: 3, reconcile.CanceledByChange: 1},
	}, {
		name: "a pause and a resume", f: fixture{versions: []store.ScheduleVersion{closed(v1, h(1.5), h(1)),
			closed(store.ScheduleVersion{TenantID: "default", ScheduleID: "sch_fix", Version: 2, Definition: v1.Definition,
				State: record.SchedulePaused, MisfirePolicy: record.MisfireSkip, OverlapPolicy: record.OverlapAllow, WrittenAt: h(1.5)}, h(3.5), h(1)),
			hourly(3, 0, h(3.5), h(3.5))}, cursor: h(6),
			rows: append(succeededEach(1, 0, 1), strict(1, h(2), record.OccurrenceCanceled), strict(3, h(4), record.OccurrenceSucceeded),
				strict(3, h(5), record.OccurrenceSucceeded), strict(2, h(3), record.OccurrenceSucceeded))},
		from: h(0), to: h(5.5), want: reconcile.Counts{reconcile.Succeeded: 4, reconcile.CanceledByChange: 1, reconcile.Unexpected: 1},
		unexpected: []string{"v2@3h0m0s"}, reason: "fires nothing",
	}, {
		name: "off the timetable", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(3),
			rows: append(succeededEach(1, 0, 2), strict(1, h(1.5), record.OccurrenceSucceeded), strict(7, h(2), record.OccurrenceSucceeded))},
		from: h(0), to: h(2.5), want: reconcile.Counts{reconcile.Succeeded: 3, reconcile.Unexpected: 2},
		unexpected: []string{"v1@1h30m0s", "v7@2h0m0s"}, reason: "does not fire",
	}, {
		name: "a manual trigger", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(2), rows: append(succeededEach(1, 0, 1),
			record.Occurrence{TenantID: "default", ScheduleID: "sch_fix", ScheduleVersion: 1, ScheduledFor: h(0.5), AvailableAt: h(0.5),
				State: record.OccurrenceSucceeded, Lane: record.LaneStrict, Queue: "q", TriggerKey: "by-hand", FinishedAt: h(0.6)})},
		from: h(0), to: h(1.5), want: reconcile.Counts{reconcile.Succeeded: 2, reconcile.Manual: 1},
	}, {
		name: "outside the range", f: fixture{versions: []store.ScheduleVersion{v1}, cursor: h(6), rows: succeededEach(1, 0, 5)},
		from: h(1.5), to: h(3), want: reconcile.Counts{reconcile.Succeeded: 2},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			st := plant(t, tc.f)
			var got collect
			total, err := reconcile.Run(context.Background(), st, reconcile.Options{From: tc.from, To: tc.to, PageSize: 2}, &got)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range total {
				if v == 0 {
					delete(total, k)
				}
			}
			if fmt.Sprint(total) != fmt.Sprint(tc.want) {
				t.Errorf("counts %v, want %v; findings %+v", total, tc.want, got.findings)
			}
			if a := got.named(reconcile.Absent); fmt.Sprint(a) != fmt.Sprint(tc.absent) && (len(a) > 0 || len(tc.absent) > 0) {
				t.Errorf("absent %v, want %v", a, tc.absent)
			}
			if u := got.named(reconcile.Unexpected); fmt.Sprint(u) != fmt.Sprint(tc.unexpected) && (len(u) > 0 || len(tc.unexpected) > 0) {
				t.Errorf("unexpected %v, want %v", u, tc.unexpected)
			}
			if tc.reason != "" {
				var reasons []string
				for _, f := range got.findings {
					if f.Class == reconcile.Unexpected {
						reasons = append(reasons, f.Reason)
					}
				}
				if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, tc.reason) }) {
					t.Errorf("unexpected reasons %q: want one with %q", reasons, tc.reason)
				}
			}
			if total.Problem() != (len(tc.absent)+len(tc.unexpected) > 0) {
				t.Errorf("Problem() = %v", total.Problem())
			}
			if len(got.sums) != 1 || got.sums[0].ScheduleID != "sch_fix" {
				t.Errorf("summaries %+v, want one of sch_fix", got.sums)
			}
		})
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, o := range []reconcile.Options{{}, {From: h(1), To: h(1)}, {From: h(2), To: h(1)},
		{From: h(0), To: h(0).Add(reconcile.MaxSpan + time.Second)}} {
		var in *reconcile.InputError
		if err := o.Check(); !errors.As(err, &in) || in.Field != "from" {
			t.Errorf("%+v: %v, want an input error on from", o, err)
		}
	}
	if err := (reconcile.Options{From: h(0), To: h(0).Add(reconcile.MaxSpan)}).Check(); err != nil {
		t.Errorf("a range of MaxSpan: %v", err)
	}
}
