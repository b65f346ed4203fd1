package timetable

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adhocore/gronx"
)

// The brute-force reference: walk every UTC minute (every second for
// 6-field expressions), read the wall time in the zone, ask gronx whether the
// wall time matches, and apply the DST options to what the walk sees. It
// shares nothing with the engine but the canonical expression text, so the
// differential tests below compare two independent answers.

type refFiring struct {
	at   int64 // unix seconds
	wall int64
	note NoteKind
}

type refResult struct {
	firings []refFiring
	skipped []int64 // wall times skipped by a gap under GapSkip
}

// refWalk is what the brute-force walk saw: each matching wall time with the
// instants it occurs at, and each matching wall time that does not exist with
// the first instant after its gap. It does not depend on the DST options.
type refWalk struct {
	from, to int64
	instants map[int64][]int64
	gapEnd   map[int64]int64
}

// walkReference walks every unit of (from - margin, to + margin].
func walkReference(tb testing.TB, s *Timetable, from, to int64) refWalk {
	tb.Helper()
	unit := int64(60)
	margin := int64(27 * 3600)
	expr := s.cron.canonical
	if s.cron.sec != 1 { // a seconds field that is not just "0"
		unit, margin = 1, 3*3600
	}
	g := gronx.New()
	match := func(wall int64) bool {
		due, err := gronxDue(g, expr, time.Unix(wall, 0).UTC())
		if err != nil {
			tb.Fatalf("gronx IsDue(%q): %v", expr, err)
		}
		return due
	}
	wallOf := func(u int64) int64 {
		_, off := time.Unix(u, 0).In(s.loc).Zone()
		return u + int64(off)
	}
	rw := refWalk{from: from, to: to, instants: map[int64][]int64{}, gapEnd: map[int64]int64{}}
	start := (from - margin) / unit * unit
	prev := wallOf(start - unit)
	for u := start; u <= to+margin; u += unit {
		w := wallOf(u)
		if w > prev+unit { // the wall clock jumped forward: walls in between do not exist
			for gw := prev + unit; gw < w; gw += unit {
				if match(gw) {
					rw.gapEnd[gw] = u
				}
			}
		}
		if match(w) {
			rw.instants[w] = append(rw.instants[w], u)
		}
		prev = w
	}
	return rw
}

// gronxDue asks gronx whether wall (a wall time read as UTC) matches the
// canonical expression. gronx has no L-n and no LW, two Quartz forms sched
// takes; for them the day-of-month field is rewritten for wall's month into
// what gronx knows, computed here with the time package alone: L-n becomes
// the day number last-n (31, which such a month lacks, when last-n < 1) and
// LW the last Monday-to-Friday.
func gronxDue(g *gronx.Gronx, canonical string, wall time.Time) (bool, error) {
	return g.IsDue(gronxForMonth(canonical, wall.Year(), wall.Month()), wall)
}

// gronxForMonth rewrites the L-n and LW items of a canonical expression's
// day-of-month field for month m of year y (see gronxDue).
func gronxForMonth(canonical string, y int, m time.Month) string {
	f := strings.Fields(canonical)
	if len(f) != 6 || !strings.Contains(f[3], "L-") && !strings.Contains(f[3], "LW") {
		return canonical
	}
	last := time.Date(y, m+1, 0, 12, 0, 0, 0, time.UTC)
	items := strings.Split(f[3], ",")
	for i, it := range items {
		switch {
		case it == "LW":
			d := last
			for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
				d = d.AddDate(0, 0, -1)
			}
			items[i] = strconv.Itoa(d.Day())
		case strings.HasPrefix(it, "L-"):
			n, _ := strconv.Atoi(it[2:])
			if d := last.Day() - n; d >= 1 {
				items[i] = strconv.Itoa(d)
			} else {
				items[i] = "31"
			}
		}
	}
	f[3] = strings.Join(items, ",")
	return strings.Join(f, " ")
}

// gronxValid is gronx.IsValid, with each L-n and LW item (which gronx
// lacks) checked as the day-of-month item gronx knows in their place, L.
func gronxValid(canonical string) bool {
	f := strings.Fields(canonical)
	if len(f) == 6 {
		items := strings.Split(f[3], ",")
		for i, it := range items {
			if it == "LW" || strings.HasPrefix(it, "L-") {
				items[i] = "L"
			}
		}
		f[3] = strings.Join(items, ",")
		canonical = strings.Join(f, " ")
	}
	return gronx.IsValid(canonical)
}

// reference returns the firings with instants in (from, to].
func reference(tb testing.TB, s *Timetable, from, to int64) refResult {
	tb.Helper()
	return walkReference(tb, s, from, to).apply(s.def.DSTGap, s.def.DSTRepeat)
}

// apply turns the walk into firings under the DST options.
func (rw refWalk) apply(gap GapPolicy, repeat RepeatPolicy) refResult {
	var res refResult
	byAt := map[int64]refFiring{}
	add := func(f refFiring) {
		if old, ok := byAt[f.at]; ok && old.wall <= f.wall {
			return // an earlier wall already claimed this instant (shifted gap)
		}
		byAt[f.at] = f
	}
	for w, us := range rw.instants {
		switch {
		case len(us) == 1:
			add(refFiring{at: us[0], wall: w})
		case repeat == RepeatFirst:
			add(refFiring{at: us[0], wall: w, note: NoteRepeatFirst})
		case repeat == RepeatLast:
			add(refFiring{at: us[len(us)-1], wall: w, note: NoteRepeatLast})
		default:
			add(refFiring{at: us[0], wall: w, note: NoteRepeatAll1})
			add(refFiring{at: us[len(us)-1], wall: w, note: NoteRepeatAll2})
		}
	}
	for w, g := range rw.gapEnd {
		if gap == GapShift {
			add(refFiring{at: g, wall: w, note: NoteGapShifted})
		} else if g > rw.from && g <= rw.to {
			res.skipped = append(res.skipped, w)
		}
	}
	for at, f := range byAt {
		if at > rw.from && at <= rw.to {
			res.firings = append(res.firings, f)
		}
	}
	sort.Slice(res.firings, func(i, j int) bool { return res.firings[i].at < res.firings[j].at })
	sort.Slice(res.skipped, func(i, j int) bool { return res.skipped[i] < res.skipped[j] })
	return res
}

// engineRun collects the engine's firings and skipped walls in (from, to].
func engineRun(s *Timetable, from, to int64) refResult {
	var res refResult
	after := time.Unix(from, 0)
	for {
		var sk []int64
		f, ok := s.NextObserved(after, func(w SkippedWall) {
			if w.GapEnd <= to {
				sk = append(sk, w.Wall)
			}
		})
		res.skipped = append(res.skipped, sk...)
		if !ok || f.At.Unix() > to {
			return res
		}
		res.firings = append(res.firings, refFiring{at: f.At.Unix(), wall: f.Wall, note: f.Note})
		after = f.At
	}
}

// compareWithReference fails the test when engine and reference disagree.
func compareWithReference(tb testing.TB, s *Timetable, from, to int64) {
	tb.Helper()
	compareWith(tb, s, reference(tb, s, from, to), from, to)
}

// compareWith fails the test when the engine's firings in (from, to] differ
// from want.
func compareWith(tb testing.TB, s *Timetable, want refResult, from, to int64) {
	tb.Helper()
	got := engineRun(s, from, to)
	d := s.def
	ctx := func() string {
		return d.Expr + " in " + d.TimeZone + " gap=" + string(d.DSTGap) + " repeat=" + string(d.DSTRepeat) +
			" from " + time.Unix(from, 0).UTC().Format(time.RFC3339) + " to " + time.Unix(to, 0).UTC().Format(time.RFC3339)
	}
	n := max(len(want.firings), len(got.firings))
	for i := 0; i < n; i++ {
		var w, g refFiring
		if i < len(want.firings) {
			w = want.firings[i]
		}
		if i < len(got.firings) {
			g = got.firings[i]
		}
		if w.at != g.at || w.note != g.note {
			tb.Fatalf("%s\nfiring %d: engine %s (%v), reference %s (%v)", ctx(), i,
				fmtUnix(s, g.at), g.note, fmtUnix(s, w.at), w.note)
		}
	}
	if len(want.skipped) != len(got.skipped) {
		tb.Fatalf("%s\nskipped walls: engine %d, reference %d", ctx(), len(got.skipped), len(want.skipped))
	}
	for i := range want.skipped {
		if want.skipped[i] != got.skipped[i] {
			tb.Fatalf("%s\nskipped wall %d: engine %s, reference %s", ctx(), i, FormatWall(got.skipped[i]), FormatWall(want.skipped[i]))
		}
	}
}

func fmtUnix(s *Timetable, u int64) string {
	if u == 0 {
		return "(none)"
	}
	return time.Unix(u, 0).In(s.loc).Format("2006-01-02T15:04:05-07:00 MST")
}
