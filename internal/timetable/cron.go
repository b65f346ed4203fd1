package timetable

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/adhocore/gronx"
)

// MaxExpressionLen caps a cron expression before any parsing, so a client
// cannot make the server burn CPU on a huge comma list.
const MaxExpressionLen = 256

// maxListItems caps the elements of one field's comma list.
const maxListItems = 64

// field describes one cron field: its name in error messages, its bounds and
// the names it accepts.
type field struct {
	name     string
	min, max int
	names    map[string]int
}

var (
	monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
		"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
	dayNames = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}

	fieldSecond = field{name: "second", min: 0, max: 59}
	fieldMinute = field{name: "minute", min: 0, max: 59}
	fieldHour   = field{name: "hour", min: 0, max: 23}
	fieldDOM    = field{name: "day-of-month", min: 1, max: 31}
	fieldMonth  = field{name: "month", min: 1, max: 12, names: monthNames}
	fieldDOW    = field{name: "day-of-week", min: 0, max: 7, names: dayNames}
)

// macros are the accepted @ shorthands; each stands for a 5-field expression.
var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// cronExpr is a compiled cron expression: one bitset per field, so matching
// and jumping to the next candidate are a few bit operations.
type cronExpr struct {
	sec, min uint64
	hour     uint32
	dom      uint32 // bits 1..31
	month    uint16 // bits 1..12
	dow      uint8  // bits 0..6, Sunday = 0 (7 folds onto 0)
	// domStar and dowStar follow Vixie cron: a day field that starts with
	// "*" (or is "?") does not restrict by itself, so the two day fields are
	// AND-ed; when both are restricted they are OR-ed.
	domStar, dowStar bool
	// canonical is the six-field numeric form, also what gronx validates.
	canonical string
}

// InvalidError reports bad input; its message names the bad part.
type InvalidError struct {
	// Field is the part of the input that is wrong: "cron", "minute field",
	// "time_zone", "every", "anchor", "at", ...
	Field string
	Msg   string
}

func (e *InvalidError) Error() string { return e.Msg }

func invalid(part, format string, args ...any) error {
	return &InvalidError{Field: part, Msg: fmt.Sprintf(format, args...)}
}

// parseCron compiles a 5- or 6-field cron expression or a macro.
func parseCron(expr string) (*cronExpr, error) {
	if len(expr) > MaxExpressionLen {
		return nil, invalid("cron", "cron expression: %d bytes, longer than the limit of %d", len(expr), MaxExpressionLen)
	}
	src := strings.TrimSpace(expr)
	if src == "" {
		return nil, invalid("cron", "cron expression is empty")
	}
	if strings.HasPrefix(src, "@") {
		m, ok := macros[strings.ToLower(src)]
		if !ok {
			return nil, invalid("cron", "cron macro %q: unknown; use one of @yearly @annually @monthly @weekly @daily @midnight @hourly", src)
		}
		src = m
	}
	parts := strings.Fields(src)
	var fields []field
	switch len(parts) {
	case 5:
		parts = append([]string{"0"}, parts...)
		fields = []field{fieldSecond, fieldMinute, fieldHour, fieldDOM, fieldMonth, fieldDOW}
	case 6:
		fields = []field{fieldSecond, fieldMinute, fieldHour, fieldDOM, fieldMonth, fieldDOW}
	default:
		return nil, invalid("cron", "cron expression %q: has %d fields, want 5 (minute hour day-of-month month day-of-week) or 6 (with a leading second)", src, len(parts))
	}

	c := &cronExpr{}
	var sets [6]uint64
	for i, p := range parts {
		set, err := parseField(p, fields[i])
		if err != nil {
			return nil, err
		}
		sets[i] = set
	}
	c.sec, c.min, c.hour = sets[0], sets[1], uint32(sets[2])
	c.dom, c.month = uint32(sets[3]), uint16(sets[4])
	dow := sets[5]
	if dow&(1<<7) != 0 {
		dow = dow&^(1<<7) | 1
	}
	c.dow = uint8(dow)
	c.domStar = parts[3] == "?" || strings.HasPrefix(parts[3], "*")
	c.dowStar = parts[5] == "?" || strings.HasPrefix(parts[5], "*")

	canon := make([]string, 6)
	for i, p := range parts {
		canon[i] = canonicalField(p, fields[i])
	}
	c.canonical = strings.Join(canon, " ")
	// gronx defines the dialect: whatever we accept, it must accept too.
	if !gronx.IsValid(c.canonical) {
		return nil, invalid("cron", "cron expression %q: rejected by the cron dialect", expr)
	}
	if !c.canFire() {
		return nil, invalid("cron", "cron expression %q: can never fire (no month in it has such a day)", strings.TrimSpace(expr))
	}
	return c, nil
}

// parseField turns one field into a bitset of the values it allows.
func parseField(p string, f field) (uint64, error) {
	bad := func(part, format string, args ...any) error {
		return invalid(f.name+" field", "%s field %q: %s", f.name, part, fmt.Sprintf(format, args...))
	}
	if p == "?" {
		if f.name != fieldDOM.name && f.name != fieldDOW.name {
			return 0, bad(p, "\"?\" is only allowed in day-of-month and day-of-week")
		}
		return span(f.min, f.max, 1), nil
	}
	items := strings.Split(p, ",")
	if len(items) > maxListItems {
		return 0, bad(p, "list of %d items, more than the limit of %d", len(items), maxListItems)
	}
	var set uint64
	for _, item := range items {
		if item == "" {
			return 0, bad(p, "empty list item")
		}
		if isModifier(item, f) {
			return 0, bad(item, "the L, W and # modifiers are not supported")
		}
		rangePart, stepPart, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepPart)
			if err != nil || len(stepPart) > 2 || stepPart[0] < '0' || stepPart[0] > '9' {
				return 0, bad(item, "step %q is not a number", stepPart)
			}
			if n < 1 {
				return 0, bad(item, "step must be at least 1")
			}
			if n > f.max-f.min+1 {
				return 0, bad(item, "step %d is larger than the field's range %d-%d", n, f.min, f.max)
			}
			step = n
		}
		lo, hi := f.min, f.max
		switch {
		case rangePart == "*":
			if len(items) > 1 {
				return 0, bad(p, "\"*\" cannot be part of a list")
			}
			if f.name == fieldDOW.name {
				hi = 6
			}
		case strings.Contains(rangePart, "-"):
			a, b, _ := strings.Cut(rangePart, "-")
			switch {
			case a == "":
				return 0, bad(item, "a value cannot be negative, and a range needs a start")
			case b == "":
				return 0, bad(item, "range %q has no end", rangePart)
			}
			var err error
			if lo, err = fieldValue(a, f); err != nil {
				return 0, bad(item, "%v", err)
			}
			if hi, err = fieldValue(b, f); err != nil {
				return 0, bad(item, "%v", err)
			}
			if hi < lo {
				return 0, bad(item, "range runs backwards (%d > %d)", lo, hi)
			}
		default:
			v, err := fieldValue(rangePart, f)
			if err != nil {
				return 0, bad(item, "%v", err)
			}
			lo = v
			if !hasStep {
				hi = v
			} else if f.name == fieldDOW.name {
				// "N/s" runs to Saturday; a leading 7 means Sunday (gronx).
				hi = 6
				if lo == 7 {
					lo = 0
				}
			}
		}
		set |= span(lo, hi, step)
	}
	return set, nil
}

// isModifier reports the Quartz-style day modifiers (L, 15W, LW, 5L, 5#2)
// that gronx knows but sched does not take: they need their own reference
// tests before they can be trusted around DST.
func isModifier(item string, f field) bool {
	if f.name != fieldDOM.name && f.name != fieldDOW.name {
		return false
	}
	u := strings.ToUpper(item)
	if strings.Contains(u, "#") || u == "L" || u == "LW" {
		return true
	}
	if n := len(u); n >= 2 && (u[n-1] == 'L' || u[n-1] == 'W') {
		_, err := strconv.Atoi(u[:n-1])
		return err == nil
	}
	return false
}

// fieldValue parses a number or a name and checks it against the bounds.
func fieldValue(s string, f field) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing value")
	}
	if v, ok := f.names[strings.ToUpper(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || s[0] == '+' || s[0] == '-' || len(s) > 2 && v <= f.max {
		if f.names != nil {
			return 0, fmt.Errorf("%q is not a number or a name", s)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("out of range %d-%d", f.min, f.max)
	}
	return v, nil
}

// canonicalField rewrites names as numbers so gronx sees the same field.
func canonicalField(p string, f field) string {
	if f.names == nil {
		return p
	}
	up := strings.ToUpper(p)
	for name, v := range f.names {
		up = strings.ReplaceAll(up, name, strconv.Itoa(v))
	}
	return up
}

func span(lo, hi, step int) uint64 {
	var s uint64
	for v := lo; v <= hi; v += step {
		s |= 1 << uint(v)
	}
	return s
}

// canFire reports whether some day of the calendar matches the day fields.
// Hours, minutes and seconds always have at least one value, and every day
// exists on every weekday over the years, so only month and day of month can
// make an expression impossible (0 0 31 2 *).
func (c *cronExpr) canFire() bool {
	if !c.domStar && !c.dowStar {
		return true // OR: any weekday in the set fires in every month
	}
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		max := daysIn(2000, m) // 2000 is a leap year: February has 29
		if c.dom&(uint32(1)<<(max+1)-2) != 0 {
			return true
		}
	}
	return false
}

// nextBit returns the lowest set bit of set at or above from, or -1.
func nextBit(set uint64, from int) int {
	if from >= 64 {
		return -1
	}
	s := set >> uint(from) << uint(from)
	if s == 0 {
		return -1
	}
	return bits.TrailingZeros64(s)
}

// matchDay reports whether day d of y-m matches the day fields.
func (c *cronExpr) matchDay(y, m, d int) bool {
	domOK := c.dom&(1<<d) != 0
	dowOK := c.dow&(1<<weekdayOf(daysFromCivil(y, m, d))) != 0
	if c.domStar || c.dowStar {
		return domOK && dowOK
	}
	return domOK || dowOK
}

// nextDay returns the first matching day of y-m at or after d, or -1.
func (c *cronExpr) nextDay(y, m, d int) int {
	dim := daysIn(y, m)
	if d > dim {
		return -1
	}
	domSet := uint64(c.dom) & (uint64(1)<<(dim+1) - 2)
	and := c.domStar || c.dowStar
	switch {
	case and && c.dow == 0x7f:
		return nextBit(domSet, d)
	case and && domSet == uint64(1)<<(dim+1)-2:
		return c.nextDOW(y, m, d, dim)
	case and:
		for ; d <= dim; d++ {
			if c.matchDay(y, m, d) {
				return d
			}
		}
		return -1
	}
	a, b := nextBit(domSet, d), c.nextDOW(y, m, d, dim)
	if a < 0 || (b >= 0 && b < a) {
		return b
	}
	return a
}

// nextDOW returns the first day at or after d whose weekday is in the set.
func (c *cronExpr) nextDOW(y, m, d, dim int) int {
	wd := weekdayOf(daysFromCivil(y, m, d))
	rot := uint16(c.dow) | uint16(c.dow)<<7 // two weeks, so a shift finds the wrap
	k := nextBit(uint64(rot), wd)
	if k < 0 {
		return -1
	}
	if d += k - wd; d > dim {
		return -1
	}
	return d
}

// nextWall returns the first wall time at or after w whose fields match,
// jumping field by field. ok is false past year 9999.
func (c *cronExpr) nextWall(w int64) (int64, bool) {
	if w < minWall {
		w = minWall
	}
	y, mo, d, h, mi, s := splitWall(w)
	for {
		if y > 9999 {
			return 0, false
		}
		if c.month&(1<<mo) == 0 {
			nm := nextBit(uint64(c.month), mo)
			if nm < 0 {
				y, mo = y+1, bits.TrailingZeros16(c.month)
			} else {
				mo = nm
			}
			d, h, mi, s = 1, 0, 0, 0
			continue
		}
		nd := c.nextDay(y, mo, d)
		if nd < 0 {
			if mo++; mo > 12 {
				y, mo = y+1, 1
			}
			d, h, mi, s = 1, 0, 0, 0
			continue
		}
		if nd != d {
			d, h, mi, s = nd, 0, 0, 0
		}
		nh := nextBit(uint64(c.hour), h)
		if nh < 0 {
			d, h, mi, s = d+1, 0, 0, 0
			continue
		}
		if nh != h {
			h, mi, s = nh, 0, 0
		}
		nmi := nextBit(c.min, mi)
		if nmi < 0 {
			h, mi, s = h+1, 0, 0
			continue
		}
		if nmi != mi {
			mi, s = nmi, 0
		}
		ns := nextBit(c.sec, s)
		if ns < 0 {
			mi, s = mi+1, 0
			continue
		}
		w = joinWall(y, mo, d, h, mi, ns)
		if w > maxWall {
			return 0, false
		}
		return w, true
	}
}

// matchWall reports whether a wall time matches every field.
func (c *cronExpr) matchWall(w int64) bool {
	y, mo, d, h, mi, s := splitWall(w)
	return c.sec&(1<<s) != 0 && c.min&(1<<mi) != 0 && c.hour&(1<<h) != 0 &&
		c.month&(1<<mo) != 0 && c.matchDay(y, mo, d)
}
