package timetable

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"

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
	// special is set when a day field has L, W or # (cron_days.go).
	special bool
	// domOnly: the matching days are the dom bits alone (no day-of-week
	// restriction, no special form), so no weekday is computed.
	domOnly bool
	// days is the set of matching days for each month shape: days[dim-28][w]
	// for a month of dim days whose 1st is weekday w (cron_days.go).
	days [4][7]uint32
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

// cronFields are the six fields in order; a five-field expression has the
// second implied as 0.
var cronFields = [6]field{fieldSecond, fieldMinute, fieldHour, fieldDOM, fieldMonth, fieldDOW}

// parseCron compiles a 5- or 6-field cron expression or a macro, or
// returns the one compiled before for the same text (cronCache).
func parseCron(expr string) (*cronExpr, error) {
	if c := cronCache.get(expr); c != nil {
		return c, nil
	}
	c, err := compileCron(expr)
	if err != nil {
		return nil, err
	}
	cronCache.put(expr, c)
	return c, nil
}

// cronCache holds compiled expressions by their text. A bulk create
// parses every item's timetable, and its items mostly share a few
// expressions (a daily job per zone, "0 2 * * *"): compiling one (the
// fields, gronx's check, the day tables) was most of a create's
// validation. A cronExpr is never changed once compiled, so one is
// shared by every timetable of its text. Bounded: when full it starts
// over, so a stream of distinct expressions costs a compile each, as
// without it. Expressions refused are not kept.
var cronCache = compiledCrons{m: make(map[string]*cronExpr)}

// maxCachedCrons bounds cronCache.
const maxCachedCrons = 4096

type compiledCrons struct {
	mu sync.RWMutex
	m  map[string]*cronExpr
}

func (cc *compiledCrons) get(expr string) *cronExpr {
	cc.mu.RLock()
	defer cc.mu.RUnlock()
	return cc.m[expr]
}

func (cc *compiledCrons) put(expr string, c *cronExpr) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if len(cc.m) >= maxCachedCrons {
		clear(cc.m)
	}
	cc.m[expr] = c
}

// compileCron compiles a 5- or 6-field cron expression or a macro.
func compileCron(expr string) (*cronExpr, error) {
	if len(expr) > MaxExpressionLen {
		return nil, invalid("cron", "cron expression: %d bytes, longer than the limit of %d", len(expr), MaxExpressionLen)
	}
	src := strings.TrimSpace(expr)
	if src == "" {
		return nil, invalid("cron", "cron expression is empty")
	}
	if strings.HasPrefix(src, "@") {
		low := strings.ToLower(src)
		if low == "@every" || strings.HasPrefix(low, "@every ") || strings.HasPrefix(low, "@every\t") {
			return nil, everyMacroHint(src)
		}
		m, ok := macros[low]
		if !ok {
			return nil, invalid("cron", "cron macro %q: unknown; use one of @yearly @annually @monthly @weekly @daily @midnight @hourly", src)
		}
		src = m
	}
	return parseFields(src, strings.Fields(src))
}

// parseFields compiles the fields of src (5, or 6 with a leading second)
// and refuses an expression that can never fire.
func parseFields(src string, parts []string) (*cronExpr, error) {
	c, err := compileFields(src, parts)
	if err != nil {
		return nil, err
	}
	if !c.canFire() {
		return nil, invalid("cron", "cron expression %q: can never fire (no month in it has such a day)", src)
	}
	return c, nil
}

// compileFields compiles the fields of src (5, or 6 with a leading second).
func compileFields(src string, parts []string) (*cronExpr, error) {
	n := len(parts)
	all := parts
	switch n {
	case 5:
		all = append([]string{"0"}, parts...)
	case 6:
	case 1:
		return nil, invalid("cron", "cron expression %q: has 1 field, want 5 (minute hour day-of-month month day-of-week) or 6 (with a leading second)", src)
	case 7:
		if err := sevenFieldHint(src, parts); err != nil {
			return nil, err
		}
		fallthrough
	default:
		return nil, invalid("cron", "cron expression %q: has %d fields, want 5 (minute hour day-of-month month day-of-week) or 6 (with a leading second)", src, n)
	}

	c := &cronExpr{}
	var sets [6]uint64
	var canon [6]string
	var sp daySpecial
	for i, p := range all {
		pos := i + 1
		if n == 5 {
			pos = i // the second is implied
		}
		fc := fieldCtx{f: cronFields[i], pos: pos, n: n, text: p}
		set, cn, err := parseField(fc, &sp)
		if err != nil {
			if n == 6 {
				if h := sixFieldHint(src, parts, err); h != nil {
					return nil, h
				}
			}
			return nil, err
		}
		sets[i], canon[i] = set, cn
	}
	c.sec, c.min, c.hour = sets[0], sets[1], uint32(sets[2])
	c.dom, c.month = uint32(sets[3]), uint16(sets[4])
	dow := sets[5]
	if dow&(1<<7) != 0 {
		dow = dow&^(1<<7) | 1
	}
	c.dow = uint8(dow)
	c.domStar = all[3] == "?" || strings.HasPrefix(all[3], "*")
	c.dowStar = all[5] == "?" || strings.HasPrefix(all[5], "*")
	c.compileDays(&sp)

	c.canonical = strings.Join(canon[:], " ")
	// gronx defines the dialect: whatever we accept, it must accept too.
	// gronx has no L-n and no LW, which sched takes from Quartz; for those
	// items alone, gronx checks the expression with L in their place (the
	// same kind of item, so everything else is still checked).
	probe := c.canonical
	if sp.lastOff != 0 || sp.lastW {
		probe = gronxProbe(canon)
	}
	if !gronx.IsValid(probe) {
		return nil, invalid("cron", "cron expression %q: rejected by the cron dialect", src)
	}
	return c, nil
}

// isLastDow reports a day-of-week item of the nL form (with or without a
// step after it, which parseDOWSpecial refuses).
func isLastDow(u string) bool {
	head, _, _ := strings.Cut(u, "/")
	return len(head) > 1 && strings.HasSuffix(head, "L")
}

// gronxProbe is the canonical form with each L-n and LW item of the
// day-of-month field replaced by L, for gronx's validity check.
func gronxProbe(canon [6]string) string {
	items := strings.Split(canon[3], ",")
	for i, it := range items {
		if it == "LW" || strings.HasPrefix(it, "L-") {
			items[i] = "L"
		}
	}
	canon[3] = strings.Join(items, ",")
	return strings.Join(canon[:], " ")
}

// parseField turns one field into a bitset of the values it allows and its
// canonical text; the special day forms go into sp.
func parseField(fc fieldCtx, sp *daySpecial) (uint64, string, error) {
	f, p := fc.f, fc.text
	if p == "?" {
		if f.name != fieldDOM.name && f.name != fieldDOW.name {
			return 0, "", fc.fail("\"?\" is only allowed in day-of-month and day-of-week")
		}
		return span(f.min, f.max, 1), "?", nil
	}
	items := strings.Split(p, ",")
	if len(items) > maxListItems {
		return 0, "", fc.fail("list of %d items, more than the limit of %d", len(items), maxListItems)
	}
	for k, item := range items {
		if item == "" {
			return 0, "", fc.emptyItem(k+1, len(items))
		}
	}
	var set uint64
	canon := make([]string, len(items))
	for k, item := range items {
		bad := func(format string, args ...any) error {
			return fc.failItem(item, k+1, len(items), format, args...)
		}
		u := strings.ToUpper(item)
		switch {
		case item == "?":
			return 0, "", bad("\"?\" cannot be part of a list: ? alone means the field does not restrict")
		case f.name == fieldDOM.name && strings.ContainsAny(u, "LW#"):
			cn, why := parseDOMSpecial(u, sp)
			if why != "" {
				return 0, "", bad("%s", why)
			}
			canon[k] = cn
			continue
		case f.name == fieldDOW.name && (strings.Contains(u, "#") || isLastDow(u)):
			cn, why := parseDOWSpecial(u, sp)
			if why != "" {
				return 0, "", bad("%s", why)
			}
			canon[k] = cn
			continue
		}
		rangePart, stepPart, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, ok := digits(stepPart)
			if !ok {
				return 0, "", bad("step %q is not a number", stepPart)
			}
			if n < 1 {
				return 0, "", bad("step must be at least 1")
			}
			if n > f.max-f.min+1 {
				return 0, "", bad("step %s is larger than the field's range %d-%d", strings.TrimLeft(stepPart, "0"), f.min, f.max)
			}
			step = n
		}
		lo, hi := f.min, f.max
		var cn string
		switch {
		case rangePart == "*":
			if len(items) > 1 {
				return 0, "", bad("\"*\" cannot be part of a list: * alone already means every value")
			}
			if f.name == fieldDOW.name {
				hi = 6
			}
			cn = "*"
		case strings.Contains(rangePart, "-"):
			a, b, _ := strings.Cut(rangePart, "-")
			switch {
			case a == "":
				return 0, "", bad("a value cannot be negative, and a range needs a start")
			case b == "":
				return 0, "", bad("range %q has no end", rangePart)
			case strings.Contains(b, "-"):
				return 0, "", bad("a range is a-b, with a single -")
			}
			var why string
			if lo, why = fc.value(a, true); why != "" {
				return 0, "", bad("%s", why)
			}
			if hi, why = fc.value(b, true); why != "" {
				return 0, "", bad("%s", why)
			}
			if hi < lo {
				return 0, "", bad("range runs backwards (%d > %d); write the smaller value first", lo, hi)
			}
			cn = strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
		default:
			v, why := fc.value(rangePart, false)
			if why != "" {
				return 0, "", bad("%s", why)
			}
			lo = v
			cn = strconv.Itoa(v)
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
		if hasStep {
			cn += "/" + strconv.Itoa(step)
		}
		canon[k] = cn
		set |= span(lo, hi, step)
	}
	return set, strings.Join(canon, ","), nil
}

// value parses a number (leading zeros allowed: 007 is 7, as in gronx and
// Vixie cron) or a name, and checks it against the bounds. why explains a
// bad one; inRange says the value is one end of a range.
func (fc fieldCtx) value(s string, inRange bool) (v int, why string) {
	f := fc.f
	if s == "" {
		return 0, "missing value"
	}
	if v, ok := f.names[strings.ToUpper(s)]; ok {
		return v, ""
	}
	v, ok := digits(s)
	if !ok {
		return 0, fc.badValue(s)
	}
	if v < f.min || v > f.max {
		if inRange {
			return 0, fmt.Sprintf("%s is out of range %d-%d", s, f.min, f.max)
		}
		return 0, fmt.Sprintf("out of range %d-%d", f.min, f.max)
	}
	return v, ""
}

func span(lo, hi, step int) uint64 {
	var s uint64
	for v := lo; v <= hi; v += step {
		s |= 1 << uint(v)
	}
	return s
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
