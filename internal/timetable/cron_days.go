package timetable

import (
	"strconv"
	"strings"
)

// The day forms beyond plain numbers, in the two day fields:
//
//	day-of-month  L     the last day of the month                     (gronx, Quartz)
//	              L-n   n days before the last (L-3: the 28th of a 31-day month), n 1-30  (Quartz; gronx rejects it)
//	              nW    the weekday (Mon-Fri) nearest day n, never crossing the month: 1W on a
//	                    Saturday is Monday the 3rd, 31W on a Sunday is Friday the 29th; a month
//	                    without day n has no nW day                  (gronx, Quartz)
//	              LW    the last weekday of the month                 (Quartz; gronx rejects it)
//	day-of-week   nL    the last weekday n of the month (5L, FRIL)    (gronx, Quartz)
//	              n#k   the k-th weekday n of the month, k 1-5 (5#2, FRI#2); #5 skips
//	                    months without a fifth                         (gronx, Quartz)
//
// Day-of-week numbers are cron's (0 or 7 Sunday ... 6 Saturday), not
// Quartz's (1 Sunday ... 7 Saturday). Each form is one list item and takes
// no range or step; a list is the union of its items (L,15 is the 15th and
// the last day). The forms do not change how the two day fields combine:
// a field starting with * or being ? does not restrict, both restricted
// means either may match (Vixie cron), as for plain numbers.
//
// Every day form depends only on the month's length and the weekday of its
// first day, so Parse compiles the two day fields into a table of 4 x 7
// day sets, one per month shape (28-31 days; 1st on Sunday..Saturday).
// Finding the next matching day is then a table lookup and a bit scan, and
// whether the expression can ever fire is exact: every shape occurs for
// every month (February with 29 days in leap years) over the years.

// daySpecial holds the special items of the two day fields.
type daySpecial struct {
	last    bool     // L
	lastW   bool     // LW
	lastOff uint32   // L-n: bit n for n in 1..30
	nearW   uint32   // nW: bit n for n in 1..31
	lastDow uint8    // nL: bit n for weekday n (0..6)
	nth     [5]uint8 // n#k: nth[k-1] has bit n
}

func (sp *daySpecial) any() bool {
	return sp.last || sp.lastW || sp.lastOff != 0 || sp.nearW != 0 || sp.lastDow != 0 ||
		sp.nth != [5]uint8{}
}

// parseDOMSpecial parses a day-of-month item holding L or W (u is upper
// case). It returns the canonical item text.
func parseDOMSpecial(u string, sp *daySpecial) (canon, reason string) {
	switch {
	case u == "L":
		sp.last = true
		return "L", ""
	case u == "LW":
		sp.lastW = true
		return "LW", ""
	case strings.Contains(u, "#"):
		return "", `"#" is for day-of-week (5#2 is the second Friday); day-of-month takes L, L-n, nW and LW`
	case strings.HasPrefix(u, "L-"):
		off := u[2:]
		if strings.HasSuffix(off, "W") {
			return "", "L-n takes no W; write LW for the last weekday, or nW for the weekday nearest day n"
		}
		n, ok := digits(off)
		if !ok {
			return "", "the offset after L- must be a number of days from 1 to 30 (L-3 is three days before the last day)"
		}
		if n < 1 || n > 30 {
			return "", "the offset after L- must be 1-30 (L alone is the last day)"
		}
		sp.lastOff |= 1 << n
		return "L-" + strconv.Itoa(n), ""
	case strings.HasSuffix(u, "W") && !strings.Contains(u, "L"):
		d := u[:len(u)-1]
		if d == "" {
			return "", `"W" needs a day before it: 15W is the weekday nearest the 15th (LW the last weekday)`
		}
		if strings.ContainsAny(d, "-/,*") {
			return "", "W takes one day, not a range, step or *: write e.g. 15W"
		}
		n, ok := digits(d)
		if !ok {
			return "", "W takes one day number before it: write e.g. 15W"
		}
		if n < 1 || n > 31 {
			return "", "the day before W is out of range 1-31"
		}
		sp.nearW |= 1 << n
		return strconv.Itoa(n) + "W", ""
	}
	return "", "day-of-month takes L (last day), L-n (n days before it), nW (weekday nearest day n) and LW (last weekday), each alone as a list item, without a range or step"
}

// parseDOWSpecial parses a day-of-week item holding L or # (u is upper
// case). It returns the canonical item text.
func parseDOWSpecial(u string, sp *daySpecial) (canon, reason string) {
	dayOf := func(s string) (int, string) {
		if s == "" {
			return 0, "a weekday is missing before it (0-7 or SUN-SAT)"
		}
		if strings.ContainsAny(s, "-/,*") {
			return 0, "it takes one weekday, not a range, step or *"
		}
		if v, ok := dayNames[s]; ok {
			return v, ""
		}
		n, ok := digits(s)
		if !ok {
			if near := nearestName(s, dayNames); near != "" {
				return 0, strconv.Quote(s) + " is not a day name; did you mean " + near + "?"
			}
			return 0, strconv.Quote(s) + " is not a weekday (0-7 or SUN-SAT)"
		}
		if n > 7 {
			return 0, "the weekday is out of range 0-7"
		}
		return n % 7, ""
	}
	if strings.Contains(u, "/") {
		return "", "nL and n#k take no step: each names one day of the month"
	}
	if a, b, ok := strings.Cut(u, "#"); ok {
		wd, why := dayOf(a)
		if why != "" {
			return "", "in n#k, " + why
		}
		if b == "" {
			return "", "n#k needs k after the #, 1-5: 5#2 is the second Friday of the month"
		}
		k, ok := digits(b)
		if !ok {
			return "", "in n#k, k must be a number 1-5"
		}
		if k < 1 || k > 5 {
			return "", "a month has at most five of any weekday: k in n#k must be 1-5"
		}
		sp.nth[k-1] |= 1 << wd
		return strconv.Itoa(wd) + "#" + strconv.Itoa(k), ""
	}
	// nL: the last weekday n of the month.
	wd, why := dayOf(u[:len(u)-1])
	if why != "" {
		return "", "in nL (the last weekday n of the month), " + why
	}
	sp.lastDow |= 1 << wd
	return strconv.Itoa(wd) + "L", ""
}

// digits parses a string of decimal digits; leading zeros are allowed
// (007 is 7). A value too long to matter reads as 1<<30, which every bound
// check refuses.
func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		if n < 1<<30 {
			n = n*10 + int(s[i]-'0')
		}
	}
	return min(n, 1<<30), true
}

// compileDays fills the month-shape table from the day fields.
func (c *cronExpr) compileDays(sp *daySpecial) {
	c.special = sp.any()
	and := c.domStar || c.dowStar
	// dowPat has bit j set when weekday j%7 is in the plain set; shifted by
	// the weekday of the 1st it gives the month's matching days.
	var dowPat uint64
	for j := 0; j < 38; j++ {
		if c.dow&(1<<(j%7)) != 0 {
			dowPat |= 1 << j
		}
	}
	for dim := 28; dim <= 31; dim++ {
		in := uint32(1)<<(dim+1) - 2 // days 1..dim
		for w1 := 0; w1 < 7; w1++ {
			wd := func(d int) int { return (w1 + d - 1) % 7 }
			dom := c.dom & in
			dow := uint32(dowPat>>w1<<1) & in
			if c.special {
				if sp.last {
					dom |= 1 << dim
				}
				for n := 1; n <= 30; n++ {
					if sp.lastOff&(1<<n) != 0 && dim-n >= 1 {
						dom |= 1 << (dim - n)
					}
				}
				for n := 1; n <= dim; n++ {
					if sp.nearW&(1<<n) != 0 {
						dom |= 1 << nearestWeekday(n, dim, wd(n))
					}
				}
				if sp.lastW {
					dom |= 1 << nearestWeekday(dim, dim, wd(dim))
				}
				for n := 0; n < 7; n++ {
					if sp.lastDow&(1<<n) != 0 {
						dow |= 1 << (dim - (wd(dim)-n+7)%7)
					}
					for k := 1; k <= 5; k++ {
						if sp.nth[k-1]&(1<<n) != 0 {
							if d := 1 + (n-w1+7)%7 + 7*(k-1); d <= dim {
								dow |= 1 << d
							}
						}
					}
				}
			}
			if and {
				c.days[dim-28][w1] = dom & dow
			} else {
				c.days[dim-28][w1] = dom | dow
			}
		}
	}
	// Without day-of-week restrictions and special forms, the day set is
	// the day-of-month bits alone: no weekday needs computing.
	c.domOnly = and && c.dow == 0x7f && !c.special
}

// nearestWeekday is the Monday-to-Friday day nearest day n (weekday wd) of
// a month of dim days, without leaving the month (Quartz's W).
func nearestWeekday(n, dim, wd int) int {
	switch {
	case wd == 6 && n == 1: // Saturday the 1st: Monday the 3rd
		return 3
	case wd == 6:
		return n - 1
	case wd == 0 && n == dim: // Sunday the last: the Friday before
		return n - 2
	case wd == 0:
		return n + 1
	}
	return n
}

// monthDays returns the set of matching days (bits 1..31) of y-m.
func (c *cronExpr) monthDays(y, m, dim int) uint32 {
	return c.days[dim-28][weekdayOf(daysFromCivil(y, m, 1))]
}

// canFire reports whether some day of the calendar matches the day and
// month fields. Hours, minutes and seconds always have a value, and every
// month takes every shape over the years (February's 29-day ones in leap
// years), so it is exact to ask whether an allowed month has a shape with
// a matching day: at most 12 x 7 + 7 table reads.
func (c *cronExpr) canFire() bool {
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		for dim := daysIn(2001, m); dim <= daysIn(2000, m); dim++ { // 2000 is a leap year, 2001 not
			for w1 := 0; w1 < 7; w1++ {
				if c.days[dim-28][w1] != 0 {
					return true
				}
			}
		}
	}
	return false
}

// matchDay reports whether day d of y-m matches the day fields.
func (c *cronExpr) matchDay(y, m, d int) bool {
	dim := daysIn(y, m)
	if c.domOnly {
		return d <= dim && c.dom&(1<<d) != 0
	}
	return c.monthDays(y, m, dim)&(1<<d) != 0
}

// nextDay returns the first matching day of y-m at or after d, or -1.
func (c *cronExpr) nextDay(y, m, d int) int {
	dim := daysIn(y, m)
	if d > dim {
		return -1
	}
	if c.domOnly {
		return nextBit(uint64(c.dom)&(uint64(1)<<(dim+1)-2), d)
	}
	return nextBit(uint64(c.monthDays(y, m, dim)), d)
}
