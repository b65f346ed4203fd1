package timetable

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/suggest"
)

// Errors that teach. Every error about one field of a cron expression has
// the shape
//
//	<name> field "<item>": <what is wrong and what to write> (field P of N[, item K of "<field>"])
//
// so a reader sees the field by name, the text at fault, and where it sits:
// P is the field's 1-based position in the expression as written (the
// minute is field 1 of 5 but field 2 of 6), and a list item also gets its
// 1-based place in the list. Errors about the whole expression (its number
// of fields, a macro, a year, one that can never fire) start with
// `cron expression "<expr>"` or `cron macro "<macro>"`.

// fieldCtx is one field of the expression being parsed, as the user wrote
// it: what it is, where it is, and its full text.
type fieldCtx struct {
	f    field
	pos  int    // 1-based position in the user's expression
	n    int    // number of fields the user wrote (5 or 6)
	text string // the field's full text
}

// fail reports a problem with the whole field (or its only item).
func (fc fieldCtx) fail(format string, args ...any) error {
	return invalid(fc.f.name+" field", "%s field %q: %s (field %d of %d)",
		fc.f.name, fc.text, fmt.Sprintf(format, args...), fc.pos, fc.n)
}

// failItem reports a problem with item k (1-based) of the field's list.
// A field of one item is reported as the field itself.
func (fc fieldCtx) failItem(item string, k, items int, format string, args ...any) error {
	if items <= 1 {
		return fc.fail(format, args...)
	}
	return invalid(fc.f.name+" field", "%s field %q: %s (field %d of %d, item %d of %q)",
		fc.f.name, item, fmt.Sprintf(format, args...), fc.pos, fc.n, k, fc.text)
}

// emptyItem explains an empty list item: where the comma is, and that a
// space after a comma starts the next field.
func (fc fieldCtx) emptyItem(k, items int) error {
	switch {
	case k == 1:
		return fc.fail("item 1 of the list is empty: nothing comes before the first comma")
	case k == items:
		return fc.fail("item %d of the list is empty: nothing follows the last comma; a space after a comma starts the next field, so write %q, or the next value right after the comma",
			k, strings.TrimRight(fc.text, ","))
	}
	return fc.fail("item %d of the list is empty: two commas in a row", k)
}

// nameKind is what a field's names are called in messages.
func (f field) nameKind() string {
	switch f.name {
	case fieldMonth.name:
		return "month name (JAN-DEC)"
	case fieldDOW.name:
		return "day name (SUN-SAT)"
	}
	return ""
}

// badValue explains why s is not a value of the field: a sign, a name in a
// field that takes none or a name of the other named field, a misspelt
// name with the nearest one suggested, a day modifier outside its field.
func (fc fieldCtx) badValue(s string) string {
	f := fc.f
	u := strings.ToUpper(s)
	switch {
	case s[0] == '+':
		return fmt.Sprintf("%q: a value takes no sign; write %s", s, strings.TrimLeft(s, "+"))
	case !hasLetter(u):
		if f.names != nil {
			return fmt.Sprintf("%q is not a number or a %s", s, f.nameKind())
		}
		return fmt.Sprintf("%q is not a number", s)
	}
	if mod := modifierMisplaced(u, f); mod != "" {
		return mod
	}
	if f.names == nil {
		if _, ok := monthNames[u]; ok {
			return fmt.Sprintf("%q is a month name; the %s field takes numbers %d-%d (names are for month and day-of-week)", s, f.name, f.min, f.max)
		}
		if _, ok := dayNames[u]; ok {
			return fmt.Sprintf("%q is a day name; the %s field takes numbers %d-%d (names are for month and day-of-week)", s, f.name, f.min, f.max)
		}
		return fmt.Sprintf("%q is not a number", s)
	}
	if f.name == fieldMonth.name {
		if _, ok := dayNames[u]; ok {
			return fmt.Sprintf("%q is a day name, not a month; months are 1-12 or JAN-DEC", s)
		}
	} else if _, ok := monthNames[u]; ok {
		return fmt.Sprintf("%q is a month name, not a day; days of the week are 0-7 or SUN-SAT", s)
	}
	if near := nearestName(u, f.names); near != "" {
		return fmt.Sprintf("%q is not a %s; did you mean %s?", s, f.nameKind(), near)
	}
	return fmt.Sprintf("%q is not a number or a %s", s, f.nameKind())
}

// modifierMisplaced explains a day modifier (L, W, #) in a field that does
// not take it, or "" when u is no such thing.
func modifierMisplaced(u string, f field) string {
	isNum := func(s string) bool {
		_, err := strconv.Atoi(s)
		return err == nil && s != "" && s[0] != '+' && s[0] != '-'
	}
	switch {
	case f.name == fieldDOW.name && u == "L":
		return `"L" alone is not a day of the week: write nL for the last such weekday of the month (5L or FRIL, the last Friday), or put L in day-of-month for the month's last day`
	case f.name == fieldDOW.name && (u == "LW" || strings.HasPrefix(u, "L-") || strings.HasSuffix(u, "W") && isNum(u[:len(u)-1])):
		return fmt.Sprintf("%q belongs in day-of-month (L, L-n, nW, LW); day-of-week takes nL and n#k", u)
	case f.name == fieldDOM.name || f.name == fieldDOW.name:
		return ""
	case u == "L" || u == "LW" || strings.HasPrefix(u, "L-") || strings.Contains(u, "#") ||
		(strings.HasSuffix(u, "L") || strings.HasSuffix(u, "W")) && isNum(u[:len(u)-1]):
		return "L, W and # only go in day-of-month (L, L-n, nW, LW) and day-of-week (nL, n#k)"
	}
	return ""
}

func hasLetter(u string) bool {
	for i := 0; i < len(u); i++ {
		if u[i] >= 'A' && u[i] <= 'Z' {
			return true
		}
	}
	return false
}

// nearestName suggests the name u was probably meant to be: the name it
// starts with (FRIDAY, THURS, TUES, SEPT, JUNE), else the one an edit away
// (two for a word of five letters or more), or "".
func nearestName(u string, names map[string]int) string {
	if len(u) > 3 {
		if _, ok := names[u[:3]]; ok {
			return u[:3]
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// One edit away (FRU, THRU), or two for a longer word (JANUAR).
	limit := 1
	if len(u) >= 5 {
		limit = 2
	}
	return suggest.Closest(u, keys, limit)
}

// yearLike matches a field that reads as a year or a range of years.
var yearLike = regexp.MustCompile(`^[1-9][0-9]{3}(-[1-9][0-9]{3})?(/[0-9]+)?$`)

// sixFieldHint explains a six-field expression that fails to parse as
// seconds + five fields and reads well as five fields plus something: a
// year (30 15 31 12 * 2024) or a trailing field of the wrong kind. err6 is
// the error of the six-field reading; nil means no hint applies.
func sixFieldHint(src string, parts []string, err6 error) error {
	five := strings.Join(parts[:5], " ")
	_, err5 := parseFields(five, parts[:5])
	const lead = "6 fields start with seconds (second minute hour day-of-month month day-of-week)"
	switch {
	case yearLike.MatchString(parts[5]) && err5 == nil:
		return invalid("cron", "cron expression %q: %s, and field 6 %q looks like a year, which is not supported; did you mean the 5-field %q?",
			src, lead, parts[5], five)
	case yearLike.MatchString(parts[5]):
		return invalid("cron", "cron expression %q: %s, and field 6 %q looks like a year, which is not supported; without it, %v",
			src, lead, parts[5], err5)
	case err5 == nil:
		return invalid("cron", "cron expression %q: %s, and read that way %v; did you mean the 5-field %q?",
			src, lead, err6, five)
	}
	return nil
}

// sevenFieldHint explains a Quartz-style seven-field expression with a
// trailing year.
func sevenFieldHint(src string, parts []string) error {
	if yearLike.MatchString(parts[6]) || parts[6] == "*" || parts[6] == "?" {
		six := strings.Join(parts[:6], " ")
		return invalid("cron", "cron expression %q: has 7 fields; the last, %q, is a year, which is not supported: drop it (%q, whose first field is seconds)",
			src, parts[6], six)
	}
	return nil
}

// everyMacroHint answers "@every <d>": an interval is the every kind of
// schedule, not a cron macro.
func everyMacroHint(src string) error {
	d := strings.TrimSpace(src[len("@every"):])
	if d == "" {
		return invalid("cron", "cron macro %q: @every is not a cron macro; a fixed interval is its own schedule kind, every: give the interval (a Go duration such as 90s, 15m or 24h) as every instead of cron (schedctl --every 15m, API field \"every\")", src)
	}
	note := ""
	if _, err := time.ParseDuration(d); err != nil {
		note = " (a Go duration such as 90s, 15m or 24h)"
	}
	return invalid("cron", "cron macro %q: @every is not a cron macro; a fixed interval is its own schedule kind, every: give %q as every instead of cron%s (schedctl --every %s, API field \"every\")",
		src, d, note, d)
}
