package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// version is one version row and the firings it may produce: those of sp
// in (lo, hi], hi zero meaning no upper bound (the current version). Of
// those, the ones at or after planned are not planned yet (zero: all are).
//
// A superseded version whose row records how far the planner had got
// (until, its PlannedUntil) produced every firing in (lo, until): each has
// a row, or was counted by a late run, and those after hi were canceled by
// the change. Those up to the change (row.SupersededAt) are walked with
// the firings it kept, in the one stream of the schedule's versions; those
// after it (the tail, planned ahead of the change) lie among the next
// versions' firings and are walked apart (see tail).
type version struct {
	row     store.ScheduleVersion
	sp      *timetable.Timetable // nil: it fires nothing
	lo, hi  time.Time
	until   time.Time // zero: not recorded
	planned time.Time
	keep    int // the late firings its misfire policy fires
	// tzw, when set, is the warning of the version's zone: its rules
	// differ from those the schedule's shard was planned under, so what
	// would be absent or unexpected of it is unverifiable (tzcheck.go).
	tzw *TZWarning
}

// covers reports whether t, a firing of v after lo, is in the stream of
// v's firings.
func (v *version) covers(t time.Time) bool {
	switch {
	case v.until.IsZero():
		return v.hi.IsZero() || !t.After(v.hi)
	case !v.hi.IsZero() && !t.After(v.hi):
		return true
	}
	return !t.After(v.row.SupersededAt) && t.Before(v.until)
}

// pastEnd reports whether t, a firing of v, was planned yet lies after the
// last firing v kept: its row, if any, must be CANCELED.
func (v *version) pastEnd(t time.Time) bool {
	return !v.until.IsZero() && (v.hi.IsZero() || t.After(v.hi))
}

// tailAfter is the exclusive lower bound of v's tail: its firings planned
// ahead of the change that superseded it.
func (v *version) tailAfter() time.Time {
	after := v.row.SupersededAt
	for _, b := range []time.Time{v.lo, v.hi} {
		if b.After(after) {
			after = b
		}
	}
	return after
}

// tail is the next firing of version vi's tail, at.
type tail struct {
	vi int
	at time.Time
}

// firing is an expected firing with no row, held until what follows it
// tells whether a late run counted it.
type firing struct {
	at      time.Time
	inRange bool
}

// checker walks one schedule: its expected firings (version by version,
// in time order: the versions' spans do not overlap) beside its
// occurrence rows (in scheduled time order).
type checker struct {
	r  *run
	sc *record.Schedule
	// from is where this schedule's audit starts: the range's start, or
	// its tenant's history horizon when that is later.
	from   time.Time
	vs     []version
	counts Counts
	err    error // the sink's first error

	// The expected firings: version vi at cur.
	vi    int
	cur   time.Time
	curOK bool

	// The rows: a page, the position in it, where the next page starts.
	rows     []record.Occurrence
	ri       int
	after    store.OccurrenceKey
	rowsDone bool

	// The superseded versions' tails still to walk in the range, and the
	// rows of one instant taken by an expected firing.
	tails []tail
	taken []bool

	// The late run being read: the rowless firings waiting to be settled,
	// and the catch-up rows of one planner pass (runStamp) of version runV.
	rowless  []firing
	runV     int
	runOpen  bool
	runStamp time.Time
	runFired int
	budget   int64 // the schedule's missed count not yet used by rowless firings
}

func (r *run) newChecker(sc *record.Schedule, rows []store.ScheduleVersion, from time.Time) (*checker, error) {
	c := &checker{r: r, sc: sc, from: from, counts: Counts{}, vi: -1, runV: -1, budget: sc.MissedCount,
		after: store.OccurrenceKey{ScheduledFor: from}}
	warned := map[string]*TZWarning{} // by zone: a schedule counts once in each warning
	for i, row := range rows {
		v := version{row: row, keep: keepOf(row)}
		if row.State == record.ScheduleActive && !row.StartsAfter.IsZero() {
			sp, err := r.parse(row.Definition)
			if err != nil {
				return nil, fmt.Errorf("reconcile schedule %s version %d: %w", sc.ScheduleID, row.Version, err)
			}
			v.sp, v.lo = sp, row.StartsAfter
			switch {
			case row.Superseded():
				v.hi, v.until = row.EndsAt, row.PlannedUntil
				if v.hi.IsZero() && v.until.IsZero() {
					v.sp = nil // no firing of it was kept
				}
			case i == len(rows)-1 && row.Version == sc.Version && sc.State == record.ScheduleActive:
				v.planned = sc.NextRunAt
			}
		}
		if v.sp != nil && row.Definition.Kind == timetable.KindCron {
			if was, unknown, differs := r.tz.differs(sc.Shard, row.Definition.TimeZone); differs {
				v.tzw = warned[row.Definition.TimeZone]
				if v.tzw == nil {
					v.tzw = r.tz.warn(row.Definition.TimeZone, was, sc.Shard, unknown)
					warned[row.Definition.TimeZone] = v.tzw
				}
			}
		}
		c.vs = append(c.vs, v)
	}
	for i := range c.vs {
		if v := &c.vs[i]; v.sp != nil && !v.until.IsZero() {
			from := v.tailAfter()
			if start := c.from.Add(-time.Nanosecond); start.After(from) {
				from = start
			}
			c.nextTail(tail{vi: i}, from)
		}
	}
	c.nextVersion()
	return c, nil
}

// nextTail keeps version tl.vi's tail at its next firing after from, if
// that is still planned and in the range.
func (c *checker) nextTail(tl tail, from time.Time) {
	v := &c.vs[tl.vi]
	if f, ok := v.sp.Next(from); ok && f.At.Before(v.until) && !f.At.After(c.r.opt.To) {
		tl.at = f.At
		c.tails = append(c.tails, tl)
	}
}

// firstTail returns the index of the earliest tail firing; -1 for none.
func (c *checker) firstTail() int {
	first := -1
	for i := range c.tails {
		if first < 0 || c.tails[i].at.Before(c.tails[first].at) {
			first = i
		}
	}
	return first
}

// keepOf is how many firings of one late run the version's misfire
// policy fires.
func keepOf(v store.ScheduleVersion) int {
	switch v.MisfirePolicy {
	case record.MisfireFireOnce:
		return 1
	case record.MisfireCatchUp:
		return v.CatchUpK
	}
	return 0
}

// nextVersion moves the expected firings to the first firing of the next
// version that has one in the range (from the range's start on).
func (c *checker) nextVersion() {
	for c.vi++; c.vi < len(c.vs); c.vi++ {
		v := &c.vs[c.vi]
		if v.sp == nil {
			continue
		}
		from := v.lo
		if start := c.from.Add(-time.Nanosecond); start.After(from) {
			from = start
		}
		if c.set(v.sp.Next(from)) {
			return
		}
	}
	c.curOK = false
}

// set takes f as the current expected firing if the version covers it.
func (c *checker) set(f timetable.Firing, ok bool) bool {
	v := &c.vs[c.vi]
	if !ok || !v.covers(f.At) {
		return false
	}
	c.cur, c.curOK = f.At, true
	return true
}

func (c *checker) advance() {
	if !c.set(c.vs[c.vi].sp.Next(c.cur)) {
		c.nextVersion()
	}
}

// peekRow returns the next row, reading a page when needed; nil at the end.
func (c *checker) peekRow(ctx context.Context) (*record.Occurrence, error) {
	if c.ri < len(c.rows) {
		return &c.rows[c.ri], nil
	}
	if c.rowsDone {
		return nil, nil
	}
	after := c.after
	page, err := c.r.st.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: c.sc.TenantID, ScheduleID: c.sc.ScheduleID,
		Limit: c.r.opt.PageSize, After: &after})
	if err != nil {
		return nil, err
	}
	c.rows, c.ri, c.rowsDone = page, 0, len(page) < c.r.opt.PageSize
	if len(page) == 0 {
		return nil, nil
	}
	last := page[len(page)-1]
	c.after = store.OccurrenceKey{ScheduledFor: last.ScheduledFor, OccurrenceID: last.OccurrenceID}
	return &c.rows[0], nil
}

// walk merges the expected firings with the rows, instant by instant. It
// stops at the range's end, except that a run of rowless firings that
// reaches it is followed further, until a row settles it (a late run's
// catch-up rows may lie past the end): at most Options.MaxFirings firings
// past the end, all the run's schedules together, or the reconcile is
// refused.
func (c *checker) walk(ctx context.Context) error {
	to := c.r.opt.To
	var group []record.Occurrence
	for steps := 0; ; steps++ {
		if steps%4096 == 4095 {
			// Firings past the last row are walked without a read: a
			// canceled request or schedd reconcile's interrupt stops
			// here.
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row, err := c.peekRow(ctx)
		if err != nil {
			return err
		}
		ti := c.firstTail()
		if !c.curOK && row == nil && ti < 0 {
			break
		}
		t, have := c.cur, c.curOK
		if row != nil && (!have || row.ScheduledFor.Before(t)) {
			t, have = row.ScheduledFor, true
		}
		if ti >= 0 && (!have || c.tails[ti].at.Before(t)) {
			t = c.tails[ti].at // in the range: a tail ends there
		}
		inRange := !t.After(to)
		if !inRange {
			if len(c.rowless) == 0 || !c.curOK {
				break // nothing to settle, or nothing left that could
			}
			if c.r.lookahead == 0 {
				// The firings walked past the end, all schedules
				// together, are bounded like those in the range.
				return inputErr("to", "settling the late runs that straddle the range's end %s walked %d firings past it, the bound: end the range before or after the late run",
					fmtTime(to), c.r.opt.MaxFirings)
			}
			c.r.lookahead--
		}
		group = group[:0]
		for row != nil && row.ScheduledFor.Equal(t) {
			group = append(group, *row)
			c.ri++
			if row, err = c.peekRow(ctx); err != nil {
				return err
			}
		}
		c.taken = append(c.taken[:0], make([]bool, len(group))...)
		if c.curOK && c.cur.Equal(t) {
			c.expected(t, c.take(group, c.vs[c.vi].row.Version), inRange)
			c.advance()
		}
		for i := 0; i < len(c.tails); {
			if tl := c.tails[i]; tl.at.Equal(t) {
				c.tailFiring(&c.vs[tl.vi], t, c.take(group, c.vs[tl.vi].row.Version))
				c.tails = slices.Delete(c.tails, i, i+1)
				c.nextTail(tl, t)
				continue
			}
			i++
		}
		if inRange {
			for i := range group {
				if !c.taken[i] {
					c.explain(&group[i])
				}
			}
		}
	}
	c.endRun()
	return c.err
}

// take returns the row of version ver among the rows of one instant not
// taken yet, and takes it; nil when there is none.
func (c *checker) take(group []record.Occurrence, ver int64) *record.Occurrence {
	for i := len(group) - 1; i >= 0; i-- {
		if !c.taken[i] && !manual(&group[i]) && group[i].ScheduleVersion == ver {
			c.taken[i] = true
			return &group[i]
		}
	}
	return nil
}

// tailFiring classifies a firing of v planned ahead of the change that
// superseded it, at t, given its row (nil when there is none): the change
// canceled it, so its row must be there, CANCELED.
func (c *checker) tailFiring(v *version, t time.Time, o *record.Occurrence) {
	switch {
	case o == nil:
		c.find(Absent, v.row.Version, t, "", "", plannedReason(v))
	case o.State == record.OccurrenceCanceled:
		c.counts[CanceledByChange]++
	default:
		c.find(Unexpected, v.row.Version, t, o.OccurrenceID, o.State, c.whyNot(v, o))
	}
}

// plannedReason is why a rowless firing of v after its last kept one is
// absent.
func plannedReason(v *version) string {
	return fmt.Sprintf("no occurrence, yet the planner had planned it before version %d was superseded (its cursor was then %s); a change cancels the firings planned ahead, it does not remove them",
		v.row.Version, fmtTime(v.until))
}

// expected classifies the current expected firing, at t, given its row
// (nil when there is none).
func (c *checker) expected(t time.Time, o *record.Occurrence, inRange bool) {
	v := &c.vs[c.vi]
	if c.runV != c.vi {
		c.endRun()
		c.runV = c.vi
	}
	class := classOf
	if v.pastEnd(t) && o != nil {
		// Planned, then canceled by the change: CANCELED, or a problem.
		if o.State != record.OccurrenceCanceled {
			c.endRun()
			if inRange {
				c.find(Unexpected, v.row.Version, t, o.OccurrenceID, o.State, c.whyNot(v, o))
			}
			return
		}
		class = canceledByChange
	}
	if o == nil {
		if !v.planned.IsZero() && !t.Before(v.planned) {
			c.endRun()
			if inRange {
				c.counts[Pending]++
			}
			return
		}
		c.rowless = append(c.rowless, firing{at: t, inRange: inRange})
		return
	}
	if o.Lane != record.LaneCatchUp {
		c.endRun()
		if inRange {
			c.counts[class(o.State)]++
		}
		return
	}
	// A catch-up row: the planner's misfire rule wrote it for one of the
	// most recent firings of a late run, and counted the older ones of the
	// run without a row.
	stamp := o.EnqueuedAt
	if stamp.IsZero() {
		stamp = o.FinishedAt // a MISSED row: the pass's time
	}
	if c.runOpen && stamp.Equal(c.runStamp) {
		// Rowless firings after a row of the same pass: the pass counted
		// only firings older than every row it wrote, so nothing counted
		// these, whatever the missed count says.
		c.absentRowless("no occurrence, yet it lies among the rows one late run wrote, which are its most recent firings")
	} else {
		c.settleRowless()
	}
	if !c.runOpen || !stamp.Equal(c.runStamp) {
		c.runOpen, c.runStamp, c.runFired = true, stamp, 0
	}
	violation := ""
	if o.State != record.OccurrenceMissed {
		c.runFired++
		if c.runFired > v.keep {
			violation = fmt.Sprintf("late run fired %d firings; misfire policy %s keeps %d", c.runFired, policyOf(v.row), v.keep)
		}
	} else if c.runFired > 0 {
		violation = "MISSED after a fired firing of the same late run: the firings it fires must be the most recent"
	}
	if !inRange {
		return
	}
	if violation != "" {
		c.find(Unexpected, v.row.Version, t, o.OccurrenceID, o.State, violation)
		return
	}
	c.counts[class(o.State)]++
}

// settleRowless counts the rowless firings waiting as missed: a catch-up
// row followed them, so the misfire rule counted them, as far as the
// schedule's missed count allows; any beyond it are absent.
func (c *checker) settleRowless() {
	for _, f := range c.rowless {
		if c.budget > 0 {
			c.budget--
			if f.inRange {
				c.counts[MissedCounted]++
			}
			continue
		}
		if f.inRange {
			c.find(Absent, c.vs[c.runV].row.Version, f.at, "", "",
				fmt.Sprintf("no occurrence; a late run follows, but the schedule's missed count (%d) is used up", c.sc.MissedCount))
		}
	}
	c.rowless = c.rowless[:0]
}

// endRun ends the late run being read: rowless firings that no catch-up
// row followed are absent.
func (c *checker) endRun() {
	c.absentRowless("no occurrence, and no late run of the version counts it")
	c.runOpen = false
}

// absentRowless reports the rowless firings waiting as absent, for reason
// (or, for one after the last firing its version kept, because it was
// planned).
func (c *checker) absentRowless(reason string) {
	for _, f := range c.rowless {
		if f.inRange {
			v, why := &c.vs[c.runV], reason
			if v.pastEnd(f.at) {
				why = plannedReason(v)
			}
			c.find(Absent, v.row.Version, f.at, "", "", why)
		}
	}
	c.rowless = c.rowless[:0]
}

// explain classifies a row that is not an expected firing's.
func (c *checker) explain(o *record.Occurrence) {
	if manual(o) {
		c.find(Manual, o.ScheduleVersion, o.ScheduledFor, o.OccurrenceID, o.State, "a trigger outside the timetable")
		return
	}
	var v *version
	for i := range c.vs {
		if c.vs[i].row.Version == o.ScheduleVersion {
			v = &c.vs[i]
		}
	}
	if v != nil && o.State == record.OccurrenceCanceled && v.row.Superseded() &&
		(v.row.EndsAt.IsZero() || o.ScheduledFor.After(v.row.EndsAt)) {
		c.counts[CanceledByChange]++
		return
	}
	if v != nil && o.State == record.OccurrenceCanceled && v.row.Definition.Kind == timetable.KindCron &&
		c.r.rulesChanged[v.row.Definition.TimeZone] {
		// A firing under the zone's earlier rules, withdrawn when the tz
		// database changed (engine/tzreload.go): never delivered, and the
		// moved firing stands at its new instant.
		c.counts[CanceledByChange]++
		return
	}
	c.find(Unexpected, o.ScheduleVersion, o.ScheduledFor, o.OccurrenceID, o.State, c.whyNot(v, o))
}

// whyNot says why no version explains o (of version v, nil when the
// history has no such version).
func (c *checker) whyNot(v *version, o *record.Occurrence) string {
	t := o.ScheduledFor
	switch {
	case v == nil:
		return fmt.Sprintf("the schedule's history has no version %d", o.ScheduleVersion)
	case v.row.State != record.ScheduleActive || v.row.StartsAfter.IsZero():
		return fmt.Sprintf("version %d fires nothing (written %s)", v.row.Version, v.row.State)
	case !t.After(v.row.StartsAfter):
		return fmt.Sprintf("version %d fires only after %s", v.row.Version, v.row.StartsAfter.UTC().Format(time.RFC3339))
	case v.row.Superseded() && (v.row.EndsAt.IsZero() || t.After(v.row.EndsAt)):
		return fmt.Sprintf("after the last firing version %d kept (%s), yet not CANCELED", v.row.Version, fmtTime(v.row.EndsAt))
	}
	if f, ok := v.sp.Next(t.Add(-time.Nanosecond)); !ok || !f.At.Equal(t) {
		return fmt.Sprintf("version %d's timetable does not fire at this time", v.row.Version)
	}
	return "a second occurrence of one firing"
}

func (c *checker) find(class Class, ver int64, t time.Time, id string, state record.OccurrenceState, reason string) {
	if class == Absent || class == Unexpected {
		for i := range c.vs {
			if w := c.vs[i].tzw; c.vs[i].row.Version == ver && w != nil {
				w.Unverifiable++
				reason = fmt.Sprintf("unverifiable, would be %s: zone %s's rules under tz %s, which shard %d was planned under, differ from this reconciler's %s; %s",
					class, w.Zone, w.StoreVersion, c.sc.Shard, w.Version, reason)
				class = Unverifiable
				break
			}
		}
	}
	c.counts[class]++
	if id == "" {
		id = record.OccurrenceID(c.sc.ScheduleID, ver, t)
	}
	if c.err != nil {
		return
	}
	c.err = c.r.sink.Finding(Finding{Class: class, TenantID: c.sc.TenantID, ScheduleID: c.sc.ScheduleID, Name: c.sc.Name,
		Version: ver, ScheduledFor: t, OccurrenceID: id, State: state, Reason: reason})
}

// classOf is the class of an expected firing whose row is in state s.
func classOf(s record.OccurrenceState) Class {
	switch s {
	case record.OccurrenceSucceeded:
		return Succeeded
	case record.OccurrenceDead:
		return Dead
	case record.OccurrenceCanceled:
		return Canceled
	case record.OccurrenceMissed:
		return Missed
	case record.OccurrenceSkippedOverlap:
		return SkippedOverlap
	}
	return Pending // SCHEDULED, ENQUEUED, RUNNING, RETRY_WAIT
}

// canceledByChange is the class of a CANCELED row of a firing a change
// canceled.
func canceledByChange(record.OccurrenceState) Class { return CanceledByChange }

// manual reports whether o is a trigger's, outside the timetable.
func manual(o *record.Occurrence) bool {
	return o.Manual() || strings.HasPrefix(o.OccurrenceID, record.OccurrencePrefix+"z")
}

func policyOf(v store.ScheduleVersion) string {
	if v.MisfirePolicy == record.MisfireCatchUp {
		return fmt.Sprintf("%s:%d", v.MisfirePolicy, v.CatchUpK)
	}
	return string(v.MisfirePolicy)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}
