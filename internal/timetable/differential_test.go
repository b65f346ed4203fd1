package timetable

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/adhocore/gronx"
)

var seedFlag = flag.Uint64("seed", 0, "seed for randomised tests (0: derived from the clock, and logged)")

// testSeed returns the seed for a randomised test and logs it, so every
// failure can be replayed with -seed.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -seed=%d)", s, s)
	return s
}

// diffZones covers both sides of Greenwich, 30-minute and 2-hour shifts,
// midnight transitions, negative DST, Ramadan DST, a skipped day and zones
// without DST.
var diffZones = []string{
	"America/New_York", "Europe/London", "Europe/Berlin", "Australia/Sydney",
	"Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago", "America/Havana",
	"Africa/Casablanca", "Europe/Dublin", "Antarctica/Troll", "Pacific/Apia",
	"America/Sao_Paulo", "Asia/Tehran", "America/St_Johns", "Atlantic/Azores",
	"Africa/Cairo", "America/Asuncion", "Asia/Kolkata", "UTC", "America/Vancouver",
	"Europe/Moscow", "Asia/Gaza", "America/Godthab",
}

// transitions lists the instants in [from, to) where the zone's offset
// changes, found by sampling offsets (independent of the engine's periods).
func transitions(loc *time.Location, from, to int64) []int64 {
	offAt := func(u int64) int { _, o := time.Unix(u, 0).In(loc).Zone(); return o }
	var out []int64
	for u := from; u < to; u += 3600 {
		if a, b := offAt(u), offAt(u+3600); a != b {
			lo, hi := u, u+3600
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				if offAt(mid) == a {
					lo = mid
				} else {
					hi = mid
				}
			}
			out = append(out, hi)
		}
	}
	return out
}

// randomCron builds a random expression in the dialect, 6 fields when
// seconds is true.
func randomCron(r *rand.Rand, seconds bool) string {
	part := func(lo, hi int, dense bool) string {
		switch k := r.IntN(10); {
		case k == 0:
			return "*"
		case k <= 2:
			return fmt.Sprintf("*/%d", 1+r.IntN(min(hi-lo+1, 20)))
		case k <= 4:
			a := lo + r.IntN(hi-lo+1)
			return fmt.Sprint(a)
		case k <= 6:
			a := lo + r.IntN(hi-lo+1)
			b := a + r.IntN(hi-a+1)
			return fmt.Sprintf("%d-%d", a, b)
		case k <= 7:
			a := lo + r.IntN(hi-lo+1)
			b := a + r.IntN(hi-a+1)
			return fmt.Sprintf("%d-%d/%d", a, b, 1+r.IntN(5))
		default:
			n := 2 + r.IntN(3)
			items := make([]string, n)
			for i := range items {
				items[i] = fmt.Sprint(lo + r.IntN(hi-lo+1))
			}
			return strings.Join(items, ",")
		}
	}
	f := []string{
		part(0, 59, true), part(0, 23, true),
		part(1, 31, false), part(1, 12, false), part(0, 7, false),
	}
	// Mostly keep the day fields loose so that a short window sees firings.
	if r.IntN(3) > 0 {
		f[2], f[3] = "*", "*"
	}
	if r.IntN(2) == 0 {
		f[4] = "*"
	}
	if r.IntN(3) == 0 {
		f[2] = "?"
	}
	// The special day forms (cron_days.go), in one or both day fields.
	switch r.IntN(8) {
	case 0:
		f[2] = randomDayField(r, true)
	case 1:
		f[4] = randomDayField(r, false)
	case 2:
		f[2], f[4] = randomDayField(r, true), randomDayField(r, false)
	}
	if seconds {
		f = append([]string{part(0, 59, true)}, f...)
	}
	return strings.Join(f, " ")
}

var (
	gapPolicies    = []GapPolicy{GapSkip, GapShift}
	repeatPolicies = []RepeatPolicy{RepeatFirst, RepeatLast, RepeatAll}
)

// TestEngineMatchesReference is the seeded differential run: random
// expressions in many zones, in windows around real DST transitions and at
// random, under every combination of the DST options.
func TestEngineMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 1))
	cases := 160
	if testing.Short() {
		cases = 40
	}
	for i := 0; i < cases; i++ {
		zone := diffZones[r.IntN(len(diffZones))]
		loc, err := LoadZone(zone)
		if err != nil {
			t.Fatal(err)
		}
		seconds := r.IntN(6) == 0
		expr := randomCron(r, seconds)
		s, err := Parse(Definition{Kind: KindCron, Expr: expr, TimeZone: zone,
			DSTGap: gapPolicies[r.IntN(2)], DSTRepeat: repeatPolicies[r.IntN(3)]})
		if err != nil {
			continue // a random expression that cannot fire; validation has its own tests
		}
		year := 1990 + r.IntN(50)
		y0 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		tr := transitions(loc, y0, y0+366*86400)
		var center int64
		if len(tr) > 0 && r.IntN(4) > 0 {
			center = tr[r.IntN(len(tr))]
		} else {
			center = y0 + r.Int64N(365*86400)
		}
		half := int64(36 * 3600)
		if seconds {
			half = 90 * 60
		}
		from := center - half + r.Int64N(1800)
		compareWithReference(t, s, from, center+half)
	}
}

// TestEngineMatchesReferenceAllTransitions checks fixed expressions at every
// transition of every zone in the list over several years, under all six
// policy combinations.
func TestEngineMatchesReferenceAllTransitions(t *testing.T) {
	exprs := []string{"30 2 * * *", "*/15 * * * *", "0 * * * *", "0 0 * * *", "45 1 * * 0", "0 */2 * * *"}
	years := []int{2011, 2027}
	if testing.Short() {
		years = []int{2027}
	}
	for _, zone := range diffZones {
		loc, _ := LoadZone(zone)
		for _, year := range years {
			y0 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
			for _, tr := range transitions(loc, y0, y0+366*86400) {
				for _, expr := range exprs {
					var walk refWalk
					for _, g := range gapPolicies {
						for _, rp := range repeatPolicies {
							s, err := Parse(Definition{Kind: KindCron, Expr: expr, TimeZone: zone, DSTGap: g, DSTRepeat: rp})
							if err != nil {
								t.Fatal(err)
							}
							if walk.instants == nil {
								walk = walkReference(t, s, tr-30*3600, tr+30*3600)
							}
							compareWith(t, s, walk.apply(g, rp), walk.from, walk.to)
						}
					}
				}
			}
		}
	}
}

// TestDayFieldsMatchReference drives the day logic (months, day of month, day
// of week, Vixie OR) over 40 years in UTC, one check per day.
func TestDayFieldsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 2))
	from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	g := gronx.New()
	for i := 0; i < 40; i++ {
		expr := randomCron(r, false)
		parts := strings.Fields(expr)
		parts[0], parts[1] = "0", "0"
		if r.IntN(2) == 0 { // force both day fields restricted: the OR rule
			parts[2], parts[4] = fmt.Sprint(1+r.IntN(31)), fmt.Sprint(r.IntN(8))
		}
		expr = strings.Join(parts, " ")
		s, err := Parse(Definition{Kind: KindCron, Expr: expr, TimeZone: "UTC"})
		if err != nil {
			continue
		}
		after := from.Add(-time.Second)
		f, ok := s.Next(after)
		for d := 0; d < 30*366; d++ {
			day := from.AddDate(0, 0, d)
			due, err := gronxDue(g, s.cron.canonical, day)
			if err != nil {
				t.Fatal(err)
			}
			if due != (ok && f.At.Equal(day)) {
				t.Fatalf("%s: on %s engine says next is %v, matcher says due=%v", expr, day.Format("2006-01-02"), f.At, due)
			}
			if due {
				f, ok = s.Next(day)
			}
		}
	}
}
