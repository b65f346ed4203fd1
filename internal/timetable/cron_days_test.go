package timetable

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/adhocore/gronx"
)

// TestDayFormsFire walks the day forms through calendar facts a reader can
// check on any calendar (2026-08-01 is a Saturday, 2026-05-31 a Sunday,
// 2032-02-29 a Sunday, 2044-02-29 a Monday; March, June and August 2026
// have five Mondays).
func TestDayFormsFire(t *testing.T) {
	cases := []struct {
		name, expr, from string
		want             []string // the next firings, dates at 00:00 UTC
	}{
		{"1W_on_a_saturday_is_monday_the_3rd", "0 0 1W * *", "2026-07-15", []string{"2026-08-03", "2026-09-01"}},
		{"31W_on_a_sunday_is_friday_the_29th", "0 0 31W * *", "2026-05-01", []string{"2026-05-29", "2026-07-31"}},
		{"15W_on_a_saturday_is_friday", "0 0 15W * *", "2026-08-01", []string{"2026-08-14", "2026-09-15"}},
		{"L_minus_3_is_last_minus_3", "0 0 L-3 * *", "2027-01-01", []string{"2027-01-28", "2027-02-25", "2027-03-28"}},
		{"LW_month_ending_sunday", "0 0 LW * *", "2026-05-01", []string{"2026-05-29", "2026-06-30"}},
		{"LW_leap_february_ending_sunday", "0 0 LW 2 *", "2032-01-01", []string{"2032-02-27", "2033-02-28"}},
		{"L_february_leap_and_not", "0 0 L 2 *", "2027-03-01", []string{"2028-02-29", "2029-02-28"}},
		{"L_minus_28_only_in_leap_februaries", "0 0 L-28 2 *", "2026-01-01", []string{"2028-02-01", "2032-02-01"}},
		{"last_friday", "0 0 * * 5L", "2026-01-01", []string{"2026-01-30", "2026-02-27", "2026-03-27"}},
		{"last_friday_by_name", "0 0 * * FRIL", "2026-01-01", []string{"2026-01-30"}},
		{"fifth_monday_skips_months", "0 0 * * 1#5", "2026-01-01", []string{"2026-03-30", "2026-06-29", "2026-08-31"}},
		{"fifth_monday_of_february", "0 0 * 2 1#5", "2026-01-01", []string{"2044-02-29"}},
		{"7_is_sunday", "0 0 * * 7#1", "2026-10-15", []string{"2026-11-01"}},
		{"second_friday_by_name", "0 0 ? * fri#2", "2026-05-01", []string{"2026-05-08", "2026-06-12"}},
		// Lists are unions.
		{"list_L_and_15", "0 0 L,15 * *", "2026-05-01", []string{"2026-05-15", "2026-05-31", "2026-06-15", "2026-06-30"}},
		{"list_nth_weekdays", "0 0 * * 1#1,3#3", "2026-05-01", []string{"2026-05-04", "2026-05-20", "2026-06-01", "2026-06-17"}},
		{"list_with_plain_days", "0 0 * * 1-5,6L", "2026-05-22", []string{"2026-05-22", "2026-05-25", "2026-05-26"}},
		// Both day fields restricted: either matches (Vixie OR).
		{"or_L_and_second_friday", "0 0 L * 5#2", "2026-05-01", []string{"2026-05-08", "2026-05-31", "2026-06-12", "2026-06-30"}},
		// A field starting with * does not restrict: both must match (AND).
		{"and_odd_days_last_friday", "0 0 */2 * 5L", "2026-01-01", []string{"2026-02-27", "2026-03-27"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(cronUTC(tc.expr))
			if err != nil {
				t.Fatal(err)
			}
			from, _ := time.Parse("2006-01-02", tc.from)
			after := from.Add(-time.Second)
			for i, want := range tc.want {
				f, ok := s.Next(after)
				if got := f.At.Format("2006-01-02"); !ok || got != want || f.At.Hour() != 0 {
					t.Fatalf("%q firing %d after %s: %v (%v), want %s 00:00", tc.expr, i, after.Format(time.RFC3339), f.At, ok, want)
				}
				after = f.At
			}
		})
	}
}

// randomDayField returns a random day-of-month or day-of-week field mixing
// the special forms with plain items, lists and the stars.
func randomDayField(r *rand.Rand, dom bool) string {
	var items []string
	for n := 1 + r.IntN(3); len(items) < n; {
		var it string
		if dom {
			switch k := r.IntN(8); k {
			case 0:
				it = "L"
			case 1:
				it = "LW"
			case 2:
				it = fmt.Sprintf("L-%d", 1+r.IntN(30))
			case 3, 4:
				it = fmt.Sprintf("%dW", 1+r.IntN(31))
			case 5:
				a := 1 + r.IntN(31)
				it = fmt.Sprintf("%d-%d", a, a+r.IntN(32-a))
			default:
				it = fmt.Sprint(1 + r.IntN(31))
			}
		} else {
			day := fmt.Sprint(r.IntN(8))
			if r.IntN(4) == 0 {
				day = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}[r.IntN(7)]
			}
			switch k := r.IntN(6); k {
			case 0, 1:
				it = day + "L"
			case 2, 3:
				it = fmt.Sprintf("%s#%d", day, 1+r.IntN(5))
			case 4:
				a := r.IntN(7)
				it = fmt.Sprintf("%d-%d", a, a+r.IntN(8-a))
			default:
				it = day
			}
		}
		items = append(items, it)
	}
	return strings.Join(items, ",")
}

// randomDayExpr is a random five-field expression whose day fields use the
// special forms: one or both day fields special, the other sometimes * or
// ? (AND) or */n (AND with a restriction), months sometimes narrowed.
func randomDayExpr(r *rand.Rand, minute, hour string) string {
	dom, dow := randomDayField(r, true), randomDayField(r, false)
	switch r.IntN(5) {
	case 0:
		dom = []string{"*", "?", "*/2", "*/10"}[r.IntN(4)]
	case 1:
		dow = []string{"*", "?", "*/2", "*/6", "1-5"}[r.IntN(5)]
	case 2:
		dom = fmt.Sprint(1 + r.IntN(31))
	}
	month := "*"
	if r.IntN(3) == 0 {
		month = []string{"2", "FEB", "2,4", "4,6,9,11", "*/3", "3", "10-12"}[r.IntN(7)]
	}
	return strings.Join([]string{minute, hour, dom, month, dow}, " ")
}

// TestCanFireExact: whether an expression can ever fire, answered from the
// month shapes at once, agrees with a day-by-day walk of 2001-2028 by gronx.
// Between 1901 and 2099 the calendar repeats every 28 years, so those years
// hold every month with every weekday for its 1st and February with 29 days
// starting on every weekday: a day form that never matches there never
// matches.
func TestCanFireExact(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 11))
	n := 150
	if testing.Short() {
		n = 40
	}
	g := gronx.New()
	start := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)
	fires, never := 0, 0
	// Two that never fire and one that does, whatever the seed draws (a
	// short run's 40 random ones may hold no expression that never fires).
	exprs := []string{"0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 L-29 FEB 6#5"}
	for range n {
		expr := randomDayExpr(r, "0", "0")
		if r.IntN(2) == 0 { // the edges: short months, weekend-only AND
			pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
			expr = strings.Join([]string{"0", "0",
				pick("30W", "31W", "29W", "L-29", "L-30", "L-28", "L-27", "30,31", "LW", "15W", "L", "*/2", "?"),
				pick("2", "FEB", "2,4", "4,6,9,11", "*"),
				pick("*", "?", "*/6", "*/2", "*/3", "6#5", "0L", "5#5", "1#4")}, " ")
		}
		exprs = append(exprs, expr)
	}
	for _, expr := range exprs {
		_, err := parseCron(expr)
		accepted := err == nil
		if err != nil && !strings.Contains(err.Error(), "can never fire") {
			t.Fatalf("%q: %v", expr, err)
		}
		c, err := compileFields(expr, strings.Fields(expr)) // without the never-fires check
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		walk := false
		for d := start; d.Before(end) && !walk; d = d.AddDate(0, 0, 1) {
			due, err := gronxDue(g, c.canonical, d)
			if err != nil {
				t.Fatalf("gronx IsDue(%q): %v", c.canonical, err)
			}
			walk = due
		}
		if accepted != walk {
			t.Errorf("%q: Parse says it can fire: %v; a walk of 2001-2028 found a firing: %v", expr, accepted, walk)
		}
		if walk {
			fires++
		} else {
			never++
		}
	}
	t.Logf("%d expressions: %d can fire, %d never", len(exprs), fires, never)
	if never == 0 || fires == 0 {
		t.Errorf("too little coverage: %d fire, %d never", fires, never)
	}
}

// dayFormsOn returns expressions in each day form that match the local
// date y-m-d (or, for W and the OR lists, a day near it), every half hour,
// so that the day's gap or repeat is among their wall times.
func dayFormsOn(y int, m time.Month, d int, short bool) []string {
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	wd := int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday())
	k := (d-1)/7 + 1
	names := []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
	lastDom := "L"
	if d < last {
		lastDom = fmt.Sprintf("L-%d", last-d)
	}
	forms := []string{
		fmt.Sprintf("*/30 * %s * *", lastDom),               // L or L-n on the day
		fmt.Sprintf("*/30 * * %d %d#%d", m, wd, k),          // n#k on the day
		fmt.Sprintf("*/30 * %dW * *", d),                    // nW: the day if a weekday, else the nearest
		fmt.Sprintf("*/30 * ? * %sL", names[wd]),            // nL by name (the day when it is the last such)
		fmt.Sprintf("*/30 * LW,%d * *", d),                  // a list with LW
		fmt.Sprintf("*/30 * L * %d#%d,%d#%d", wd, k, wd, 1), // OR: the last day or the k-th and first weekday
	}
	if wd == 0 {
		forms = append(forms, fmt.Sprintf("*/30 * * * 7#%d", k)) // 7 is Sunday
	}
	if short {
		return forms[:3]
	}
	return forms
}

// TestDayFormsMatchReferenceAtTransitions: each day form, in every zone of
// diffZones that has a transition in the years checked (22 of them), on
// the local day of each real transition, under all six DST option
// combinations, against the brute-force reference.
func TestDayFormsMatchReferenceAtTransitions(t *testing.T) {
	years := []int{2011, 2027}
	zonesSeen := map[string]bool{}
	formsSeen := map[string]bool{}
	for _, zone := range diffZones {
		loc, _ := LoadZone(zone)
		for yi, year := range years {
			y0 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
			trs := transitions(loc, y0, y0+366*86400)
			if testing.Short() && yi == 0 && len(transitionsIn(loc, years[1])) > 0 {
				continue // -short: 2011 only for zones without transitions in 2027
			}
			for i, tr := range trs {
				if i >= 2 {
					break
				}
				zonesSeen[zone] = true
				local := time.Unix(tr-1, 0).In(loc)
				for _, expr := range dayFormsOn(local.Year(), local.Month(), local.Day(), testing.Short()) {
					var walk refWalk
					for _, g := range gapPolicies {
						for _, rp := range repeatPolicies {
							s, err := Parse(Definition{Kind: KindCron, Expr: expr, TimeZone: zone, DSTGap: g, DSTRepeat: rp})
							if err != nil {
								t.Fatalf("%s in %s: %v", expr, zone, err)
							}
							if walk.instants == nil {
								walk = walkReference(t, s, tr-30*3600, tr+30*3600)
							}
							compareWith(t, s, walk.apply(g, rp), walk.from, walk.to)
						}
					}
					f := strings.Fields(expr)
					formsSeen[formKind(f[2])+"|"+formKind(f[4])] = true
				}
			}
		}
	}
	if len(zonesSeen) < 20 {
		t.Errorf("only %d zones had transitions: %v", len(zonesSeen), zonesSeen)
	}
	t.Logf("%d zones, form pairs %v", len(zonesSeen), formsSeen)
}

// transitionsIn lists a zone's transitions in one year.
func transitionsIn(loc *time.Location, year int) []int64 {
	y0 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	return transitions(loc, y0, y0+366*86400)
}

// formKind names the day forms in a field, for the coverage log.
func formKind(field string) string {
	var kinds []string
	for _, it := range strings.Split(field, ",") {
		switch {
		case it == "L" || it == "LW":
			kinds = append(kinds, it)
		case strings.HasPrefix(it, "L-"):
			kinds = append(kinds, "L-n")
		case strings.HasSuffix(it, "W"):
			kinds = append(kinds, "nW")
		case strings.HasSuffix(it, "L"):
			kinds = append(kinds, "nL")
		case strings.Contains(it, "#"):
			kinds = append(kinds, "n#k")
		case it == "*" || it == "?":
			kinds = append(kinds, it)
		default:
			kinds = append(kinds, "n")
		}
	}
	return strings.Join(kinds, ",")
}
