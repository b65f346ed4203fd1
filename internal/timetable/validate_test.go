package timetable

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/adhocore/gronx"
)

// Validation: bad input through Parse (expressions that never fire, bad or
// oversized cron, bad zones, bad intervals and timestamps), each error pinned
// by type, field and message so a client can rely on it, and the accepted
// dialect checked against gronx, which defines it.

// fastLimit bounds how long a rejection may take. Parse does no search, so
// real rejections take microseconds; the bound is generous so that a loaded
// machine or the race detector does not make the test flaky, and still far
// below the ~6 ms gronx spends searching before it gives up on 0 0 31 2 *.
const fastLimit = 100 * time.Millisecond

func cronUTC(expr string) Definition {
	return Definition{Kind: KindCron, Expr: expr, TimeZone: "UTC"}
}

func zoneDef(zone string) Definition {
	return Definition{Kind: KindCron, Expr: "* * * * *", TimeZone: zone}
}

func everyDef(expr string) Definition {
	return Definition{Kind: KindEvery, Expr: expr, TimeZone: "UTC"}
}

func atDef(expr string) Definition {
	return Definition{Kind: KindAt, Expr: expr, TimeZone: "UTC"}
}

// secondsList returns a comma list of n second values (0..59 repeating).
func secondsList(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprint(i % 60)
	}
	return strings.Join(items, ",")
}

type badCase struct {
	name  string
	def   Definition
	field string // InvalidError.Field
	msg   string // the exact message, or
	sub   string // a pinned substring when the message carries a variable part
}

func badCases() []badCase {
	const fieldsMsg = ": has %d fields, want 5 (minute hour day-of-month month day-of-week) or 6 (with a leading second)"
	const macroMsg = "cron macro %q: unknown; use one of @yearly @annually @monthly @weekly @daily @midnight @hourly"
	huge := strings.Repeat("1,", 170_000) + "1 * * * *" // ~340 KB comma list: must be refused without parsing
	padded257 := "0 0 * * *" + strings.Repeat(" ", 257-len("0 0 * * *"))
	list10k := secondsList(10_000) + " * * * * *"
	list65 := secondsList(65) + " * * * * *"
	longZone := strings.Repeat("A", 1024)
	cases := []badCase{
		// Out-of-range values, one per field. Each message names the field,
		// the text at fault and where it is (see cron_errors.go).
		{name: "second_60", def: cronUTC("60 * * * * *"), field: "second field", msg: `second field "60": out of range 0-59 (field 1 of 6)`},
		{name: "minute_61", def: cronUTC("61 * * * *"), field: "minute field", msg: `minute field "61": out of range 0-59 (field 1 of 5)`},
		{name: "minute_100", def: cronUTC("100 * * * *"), field: "minute field", msg: `minute field "100": out of range 0-59 (field 1 of 5)`},
		{name: "hour_24", def: cronUTC("0 24 * * *"), field: "hour field", msg: `hour field "24": out of range 0-23 (field 2 of 5)`},
		{name: "dom_0", def: cronUTC("0 0 0 * *"), field: "day-of-month field", msg: `day-of-month field "0": out of range 1-31 (field 3 of 5)`},
		{name: "dom_32", def: cronUTC("0 0 32 * *"), field: "day-of-month field", msg: `day-of-month field "32": out of range 1-31 (field 3 of 5)`},
		{name: "month_0", def: cronUTC("0 0 1 0 *"), field: "month field", msg: `month field "0": out of range 1-12 (field 4 of 5)`},
		{name: "month_13", def: cronUTC("0 0 1 13 *"), field: "month field", msg: `month field "13": out of range 1-12 (field 4 of 5)`},
		{name: "dow_8", def: cronUTC("0 0 * * 8"), field: "day-of-week field", msg: `day-of-week field "8": out of range 0-7 (field 5 of 5)`},
		{name: "range_end_out_of_range", def: cronUTC("0 0 * * 1-8"), field: "day-of-week field", msg: `day-of-week field "1-8": 8 is out of range 0-7 (field 5 of 5)`},
		{name: "list_item_out_of_range", def: cronUTC("0,15,60 * * * *"), field: "minute field", msg: `minute field "60": out of range 0-59 (field 1 of 5, item 3 of "0,15,60")`},
		{name: "huge_value", def: cronUTC("0 99999999999999999999 * * *"), field: "hour field", msg: `hour field "99999999999999999999": out of range 0-23 (field 2 of 5)`},

		// Not numbers, bad names.
		{name: "minute_letters", def: cronUTC("a * * * *"), field: "minute field", msg: `minute field "a": "a" is not a number (field 1 of 5)`},
		{name: "minute_plus_sign", def: cronUTC("+1 * * * *"), field: "minute field", msg: `minute field "+1": "+1": a value takes no sign; write 1 (field 1 of 5)`},
		{name: "minute_negative", def: cronUTC("-1 * * * *"), field: "minute field", msg: `minute field "-1": a value cannot be negative, and a range needs a start (field 1 of 5)`},
		{name: "hour_month_name", def: cronUTC("0 JAN * * *"), field: "hour field", msg: `hour field "JAN": "JAN" is a month name; the hour field takes numbers 0-23 (names are for month and day-of-week) (field 2 of 5)`},
		{name: "month_unknown_name", def: cronUTC("0 0 1 FOO *"), field: "month field", msg: `month field "FOO": "FOO" is not a number or a month name (JAN-DEC) (field 4 of 5)`},
		{name: "month_long_name", def: cronUTC("0 0 1 JANUARY *"), field: "month field", msg: `month field "JANUARY": "JANUARY" is not a month name (JAN-DEC); did you mean JAN? (field 4 of 5)`},
		{name: "month_day_name", def: cronUTC("0 0 1 MON *"), field: "month field", msg: `month field "MON": "MON" is a day name, not a month; months are 1-12 or JAN-DEC (field 4 of 5)`},
		{name: "dow_unknown_name", def: cronUTC("0 0 * * FUNDAY"), field: "day-of-week field", msg: `day-of-week field "FUNDAY": "FUNDAY" is not a number or a day name (SUN-SAT) (field 5 of 5)`},
		{name: "dow_month_name", def: cronUTC("0 0 * * JAN"), field: "day-of-week field", msg: `day-of-week field "JAN": "JAN" is a month name, not a day; days of the week are 0-7 or SUN-SAT (field 5 of 5)`},
		{name: "range_bad_end", def: cronUTC("1-x * * * *"), field: "minute field", msg: `minute field "1-x": "x" is not a number (field 1 of 5)`},
		{name: "range_three_parts", def: cronUTC("1-2-3 * * * *"), field: "minute field", msg: `minute field "1-2-3": a range is a-b, with a single - (field 1 of 5)`},
		{name: "range_missing_end", def: cronUTC("1-/2 * * * *"), field: "minute field", msg: `minute field "1-/2": range "1-" has no end (field 1 of 5)`},

		// Backwards ranges.
		{name: "backwards_minute", def: cronUTC("5-2 * * * *"), field: "minute field", msg: `minute field "5-2": range runs backwards (5 > 2); write the smaller value first (field 1 of 5)`},
		{name: "backwards_month_names", def: cronUTC("0 0 1 DEC-JAN *"), field: "month field", msg: `month field "DEC-JAN": range runs backwards (12 > 1); write the smaller value first (field 4 of 5)`},
		{name: "backwards_dow_7", def: cronUTC("0 0 * * 7-1"), field: "day-of-week field", msg: `day-of-week field "7-1": range runs backwards (7 > 1); write the smaller value first (field 5 of 5)`},
		{name: "backwards_dow_names", def: cronUTC("0 0 * * FRI-MON"), field: "day-of-week field", msg: `day-of-week field "FRI-MON": range runs backwards (5 > 1); write the smaller value first (field 5 of 5)`},

		// Steps.
		{name: "step_star_0", def: cronUTC("*/0 * * * *"), field: "minute field", msg: `minute field "*/0": step must be at least 1 (field 1 of 5)`},
		{name: "step_range_0", def: cronUTC("1-5/0 * * * *"), field: "minute field", msg: `minute field "1-5/0": step must be at least 1 (field 1 of 5)`},
		{name: "step_hour_0", def: cronUTC("0 */0 * * *"), field: "hour field", msg: `hour field "*/0": step must be at least 1 (field 2 of 5)`},
		{name: "step_too_large_minute", def: cronUTC("*/61 * * * *"), field: "minute field", msg: `minute field "*/61": step 61 is larger than the field's range 0-59 (field 1 of 5)`},
		{name: "step_too_large_hour", def: cronUTC("0 */25 * * *"), field: "hour field", msg: `hour field "*/25": step 25 is larger than the field's range 0-23 (field 2 of 5)`},
		{name: "step_too_large_month", def: cronUTC("0 0 1 */13 *"), field: "month field", msg: `month field "*/13": step 13 is larger than the field's range 1-12 (field 4 of 5)`},
		{name: "step_huge", def: cronUTC("*/99999999999999999999 * * * *"), field: "minute field", msg: `minute field "*/99999999999999999999": step 99999999999999999999 is larger than the field's range 0-59 (field 1 of 5)`},
		{name: "step_not_number", def: cronUTC("*/x * * * *"), field: "minute field", msg: `minute field "*/x": step "x" is not a number (field 1 of 5)`},
		{name: "step_empty", def: cronUTC("0 0 1-5/ * *"), field: "day-of-month field", msg: `day-of-month field "1-5/": step "" is not a number (field 3 of 5)`},
		{name: "step_twice", def: cronUTC("1/2/3 * * * *"), field: "minute field", msg: `minute field "1/2/3": step "2/3" is not a number (field 1 of 5)`},
		{name: "step_zero_padded_too_large", def: cronUTC("0 0 * * */0009"), field: "day-of-week field", msg: `day-of-week field "*/0009": step 9 is larger than the field's range 0-7 (field 5 of 5)`},

		// Lists.
		{name: "empty_list_item", def: cronUTC("1,,2 * * * *"), field: "minute field", msg: `minute field "1,,2": item 2 of the list is empty: two commas in a row (field 1 of 5)`},
		{name: "trailing_comma", def: cronUTC("1, * * * *"), field: "minute field", msg: `minute field "1,": item 2 of the list is empty: nothing follows the last comma; a space after a comma starts the next field, so write "1", or the next value right after the comma (field 1 of 5)`},
		{name: "leading_comma", def: cronUTC("0 ,1 * * *"), field: "hour field", msg: `hour field ",1": item 1 of the list is empty: nothing comes before the first comma (field 2 of 5)`},
		{name: "star_in_list", def: cronUTC("*,5 * * * *"), field: "minute field", msg: `minute field "*": "*" cannot be part of a list: * alone already means every value (field 1 of 5, item 1 of "*,5")`},
		{name: "star_step_in_list", def: cronUTC("0 0 * * 1,*/2"), field: "day-of-week field", msg: `day-of-week field "*/2": "*" cannot be part of a list: * alone already means every value (field 5 of 5, item 2 of "1,*/2")`},

		// "?" outside the day fields.
		{name: "question_minute", def: cronUTC("? * * * *"), field: "minute field", msg: `minute field "?": "?" is only allowed in day-of-month and day-of-week (field 1 of 5)`},
		{name: "question_hour", def: cronUTC("0 ? * * *"), field: "hour field", msg: `hour field "?": "?" is only allowed in day-of-month and day-of-week (field 2 of 5)`},
		{name: "question_month", def: cronUTC("0 0 * ? *"), field: "month field", msg: `month field "?": "?" is only allowed in day-of-month and day-of-week (field 4 of 5)`},
		{name: "question_second", def: cronUTC("? 0 0 * * *"), field: "second field", msg: `second field "?": "?" is only allowed in day-of-month and day-of-week (field 1 of 6)`},

		// The day forms' own errors are pinned in TestCronErrorsTeach.

		// Field counts, macros, empty input.
		{name: "4_fields", def: cronUTC("* * * *"), field: "cron", msg: `cron expression "* * * *"` + fmt.Sprintf(fieldsMsg, 4)},
		{name: "7_fields", def: cronUTC("0 0 0 1 1 * MON"), field: "cron", msg: `cron expression "0 0 0 1 1 * MON"` + fmt.Sprintf(fieldsMsg, 7)},
		{name: "1_field", def: cronUTC("daily"), field: "cron", msg: `cron expression "daily": has 1 field, want 5 (minute hour day-of-month month day-of-week) or 6 (with a leading second)`},
		{name: "macro_unknown", def: cronUTC("@reboot"), field: "cron", msg: fmt.Sprintf(macroMsg, "@reboot")},
		{name: "macro_gronx_only", def: cronUTC("@5minutes"), field: "cron", msg: fmt.Sprintf(macroMsg, "@5minutes")},
		{name: "empty", def: cronUTC(""), field: "cron", msg: "cron expression is empty"},
		{name: "blank", def: cronUTC(" \t "), field: "cron", msg: "cron expression is empty"},

		// Length and list caps, checked before any parsing so a huge input
		// costs no CPU.
		{name: "340KB", def: cronUTC(huge), field: "cron", msg: fmt.Sprintf("cron expression: %d bytes, longer than the limit of 256", len(huge))},
		{name: "257_bytes_valid_after_trim", def: cronUTC(padded257), field: "cron", msg: "cron expression: 257 bytes, longer than the limit of 256"},
		{name: "seconds_list_10000", def: cronUTC(list10k), field: "cron", msg: fmt.Sprintf("cron expression: %d bytes, longer than the limit of 256", len(list10k))},
		{name: "seconds_list_65", def: cronUTC(list65), field: "second field", msg: fmt.Sprintf("second field %q: list of 65 items, more than the limit of 64 (field 1 of 6)", secondsList(65))},

		// Never fires: rejected, not searched (a search for a firing that
		// does not exist would cost CPU and then fail anyway).
		{name: "never_feb_31", def: cronUTC("0 0 31 2 *"), field: "cron", msg: `cron expression "0 0 31 2 *": can never fire (no month in it has such a day)`},
		{name: "never_feb_30", def: cronUTC("0 0 30 2 *"), field: "cron", msg: `cron expression "0 0 30 2 *": can never fire (no month in it has such a day)`},
		{name: "never_31_short_months", def: cronUTC("0 0 31 4,6,9,11 *"), field: "cron", msg: `cron expression "0 0 31 4,6,9,11 *": can never fire (no month in it has such a day)`},
		{name: "never_6_fields", def: cronUTC("0 0 0 30,31 FEB ?"), field: "cron", msg: `cron expression "0 0 0 30,31 FEB ?": can never fire (no month in it has such a day)`},

		// Zones: IANA names only; never a host-dependent zone or a file path.
		{name: "zone_empty", def: zoneDef(""), field: "time_zone", msg: "time zone is empty: give an IANA name such as Europe/Berlin or UTC"},
		{name: "zone_Local", def: zoneDef("Local"), field: "time_zone", msg: `time zone "Local": not allowed, it depends on the host; give an IANA name`},
		{name: "zone_relative_path", def: zoneDef("../../etc/passwd"), field: "time_zone", msg: `time zone "../../etc/passwd": unknown IANA zone`},
		{name: "zone_absolute_path", def: zoneDef("/etc/localtime"), field: "time_zone", msg: `time zone "/etc/localtime": unknown IANA zone`},
		{name: "zone_traversal", def: zoneDef("America/Argentina/../../../etc/passwd"), field: "time_zone", msg: `time zone "America/Argentina/../../../etc/passwd": unknown IANA zone`},
		{name: "zone_unknown", def: zoneDef("Mars/Olympus"), field: "time_zone", msg: `time zone "Mars/Olympus": unknown IANA zone`},
		{name: "zone_1KB", def: zoneDef(longZone), field: "time_zone", msg: "time zone: 1024 bytes, longer than the limit of 64"},
		{name: "zone_nul", def: zoneDef("UTC\x00"), field: "time_zone", msg: `time zone "UTC\x00": unknown IANA zone` + hintUTC()},
		{name: "zone_space", def: zoneDef(" UTC"), field: "time_zone", msg: `time zone " UTC": unknown IANA zone` + hintUTC()},
		{name: "zone_lowercase", def: zoneDef("utc"), field: "time_zone", msg: `time zone "utc": unknown IANA zone` + hintUTC()},
		{name: "zone_for_every", def: Definition{Kind: KindEvery, Expr: "1h", TimeZone: "Local"}, field: "time_zone", msg: `time zone "Local": not allowed, it depends on the host; give an IANA name`},

		// Every-intervals.
		{name: "every_overflow", def: everyDef("9999999999h"), field: "every", msg: `every "9999999999h": not a duration (use e.g. 90s, 15m, 24h)`},
		{name: "every_0s", def: everyDef("0s"), field: "every", msg: `every "0s": must be at least 1s`},
		{name: "every_negative", def: everyDef("-1s"), field: "every", msg: `every "-1s": must be at least 1s`},
		{name: "every_1ns", def: everyDef("1ns"), field: "every", msg: `every "1ns": must be at least 1s`},
		{name: "every_999ms", def: everyDef("999ms"), field: "every", msg: `every "999ms": must be at least 1s`},
		{name: "every_1500ms", def: everyDef("1500ms"), field: "every", msg: `every "1500ms": must be a whole number of seconds`},
		{name: "every_abc", def: everyDef("abc"), field: "every", msg: `every "abc": not a duration (use e.g. 90s, 15m, 24h)`},
		{name: "every_no_unit", def: everyDef("90"), field: "every", msg: `every "90": not a duration (use e.g. 90s, 15m, 24h)`},
		{name: "every_empty", def: everyDef(""), field: "every", msg: `every "": not a duration (use e.g. 90s, 15m, 24h)`},
		{name: "every_days", def: everyDef("1d"), field: "every", msg: `every "1d": not a duration (use e.g. 90s, 15m, 24h)`},
		{name: "every_over_10y", def: everyDef("87601h"), field: "every", msg: `every "87601h": must be at most 87600h0m0s (10 years)`},
		{name: "every_anchor_year_10000", def: Definition{Kind: KindEvery, Expr: "1h", TimeZone: "UTC", Anchor: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
			field: "anchor", sub: "year 10000 is outside 1-9999"},
		{name: "every_anchor_end_of_9999", def: Definition{Kind: KindEvery, Expr: "87600h", TimeZone: "UTC", Anchor: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
			field: "anchor", msg: "anchor 9999-12-31T23:59:59Z: after 9999-12-31T09:59:59Z, the last instant an every schedule can fire at, so it would never fire"},
		{name: "every_anchor_just_past_last", def: Definition{Kind: KindEvery, Expr: "1s", TimeZone: "Pacific/Kiritimati", Anchor: time.Date(9999, 12, 31, 10, 0, 0, 0, time.UTC)},
			field: "anchor", msg: "anchor 9999-12-31T10:00:00Z: after 9999-12-31T09:59:59Z, the last instant an every schedule can fire at, so it would never fire"},
		{name: "every_anchor_offset_given", def: Definition{Kind: KindEvery, Expr: "1h", TimeZone: "UTC", Anchor: time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", 3600))},
			field: "anchor", msg: "anchor 9999-12-31T22:00:00Z: after 9999-12-31T09:59:59Z, the last instant an every schedule can fire at, so it would never fire"},
		{name: "every_anchor_year_0", def: Definition{Kind: KindEvery, Expr: "1h", TimeZone: "UTC", Anchor: time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC)},
			field: "anchor", msg: "anchor 0000-06-01T00:00:00Z: year 0 is outside 1-9999"},

		// At timestamps.
		{name: "at_space_separator", def: atDef("2027-03-14 09:00:00Z"), field: "at", msg: `at "2027-03-14 09:00:00Z": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_no_offset", def: atDef("2027-03-14T09:00:00"), field: "at", msg: `at "2027-03-14T09:00:00": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_date_only", def: atDef("2027-03-14"), field: "at", msg: `at "2027-03-14": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_unix", def: atDef("1805014800"), field: "at", msg: `at "1805014800": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_words", def: atDef("tomorrow"), field: "at", msg: `at "tomorrow": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_empty", def: atDef(""), field: "at", msg: `at "": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_feb_30", def: atDef("2027-02-30T09:00:00Z"), field: "at", msg: `at "2027-02-30T09:00:00Z": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_hour_24", def: atDef("2027-03-14T24:00:00Z"), field: "at", msg: `at "2027-03-14T24:00:00Z": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_year_0000", def: atDef("0000-01-01T00:00:00Z"), field: "at", msg: "at 0000-01-01T00:00:00Z: year 0 is outside 1-9999"},
		{name: "at_year_0001_east_offset", def: atDef("0001-01-01T00:30:00+01:00"), field: "at", msg: "at 0001-01-01T00:30:00+01:00: year 0 is outside 1-9999"},
		{name: "at_year_10000", def: atDef("10000-01-01T00:00:00Z"), field: "at", msg: `at "10000-01-01T00:00:00Z": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{name: "at_year_9999_west_offset", def: atDef("9999-12-31T23:30:00-01:00"), field: "at", msg: "at 9999-12-31T23:30:00-01:00: year 10000 is outside 1-9999"},
		{name: "at_fraction", def: atDef("2027-03-14T09:00:00.9Z"), field: "at", msg: "at 2027-03-14T09:00:00.9Z: has a fraction of a second; schedules fire on whole seconds"},
		{name: "every_anchor_fraction", def: Definition{Kind: KindEvery, Expr: "24h", TimeZone: "UTC", Anchor: time.Date(2027, 3, 14, 9, 0, 0, 900e6, time.UTC)},
			field: "anchor", msg: "anchor 2027-03-14T09:00:00.9Z: has a fraction of a second; schedules fire on whole seconds"},

		// DST options and kind.
		{name: "gap_unknown", def: Definition{Kind: KindCron, Expr: "* * * * *", TimeZone: "UTC", DSTGap: "forward"}, field: "dst_gap", msg: `dst_gap "forward": want skip or shift`},
		{name: "gap_repeat_value", def: Definition{Kind: KindCron, Expr: "* * * * *", TimeZone: "UTC", DSTGap: "all"}, field: "dst_gap", msg: `dst_gap "all": want skip or shift`},
		{name: "repeat_unknown", def: Definition{Kind: KindCron, Expr: "* * * * *", TimeZone: "UTC", DSTRepeat: "twice"}, field: "dst_repeat", msg: `dst_repeat "twice": want first, last or all`},
		{name: "repeat_gap_value", def: Definition{Kind: KindCron, Expr: "* * * * *", TimeZone: "UTC", DSTRepeat: "skip"}, field: "dst_repeat", msg: `dst_repeat "skip": want first, last or all`},
		{name: "kind_unknown", def: Definition{Kind: "interval", Expr: "* * * * *", TimeZone: "UTC"}, field: "kind", msg: `schedule kind "interval": want cron, at or every`},
		{name: "kind_empty", def: Definition{Kind: "", Expr: "* * * * *", TimeZone: "UTC"}, field: "kind", msg: `schedule kind "": want cron, at or every`},
	}
	return cases
}

// TestParseRejects drives bad input through Parse and pins each error.
func TestParseRejects(t *testing.T) {
	for _, tc := range badCases() {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			s, err := Parse(tc.def)
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("Parse(%.80q) accepted it (canonical %q), want an error", tc.def.Expr, s.Canonical())
			}
			if s != nil {
				t.Errorf("Parse returned a timetable together with the error %v", err)
			}
			ie, ok := err.(*InvalidError)
			if !ok {
				t.Fatalf("error %v is %T, want *InvalidError", err, err)
			}
			if ie.Field != tc.field {
				t.Errorf("Field = %q, want %q (message %q)", ie.Field, tc.field, ie.Msg)
			}
			if ie.Error() != ie.Msg {
				t.Errorf("Error() = %q, Msg = %q", ie.Error(), ie.Msg)
			}
			switch {
			case tc.msg != "" && ie.Msg != tc.msg:
				t.Errorf("message\n got %q\nwant %q", ie.Msg, tc.msg)
			case tc.sub != "" && !strings.Contains(ie.Msg, tc.sub):
				t.Errorf("message %q does not contain %q", ie.Msg, tc.sub)
			}
			if elapsed > fastLimit {
				t.Errorf("rejection took %v, want < %v", elapsed, fastLimit)
			}
		})
	}
}

// TestNeverFiringRejectedFast: gronx calls these valid (and its NextTickAfter
// then searches and fails); Parse must reject them at once.
func TestNeverFiringRejectedFast(t *testing.T) {
	for _, expr := range []string{"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"} {
		if !gronx.IsValid(expr) {
			t.Errorf("gronx.IsValid(%q) = false; this test expects gronx to accept it (has gronx changed?)", expr)
		}
		start := time.Now()
		_, err := Parse(cronUTC(expr))
		elapsed := time.Since(start)
		if ie, ok := err.(*InvalidError); !ok || ie.Field != "cron" || !strings.Contains(ie.Msg, "can never fire") {
			t.Errorf("Parse(%q) = %v, want an *InvalidError on cron saying it can never fire", expr, err)
		}
		if elapsed > fastLimit {
			t.Errorf("Parse(%q) took %v, want < %v", expr, elapsed, fastLimit)
		}
		gStart := time.Now()
		next, gerr := gronx.NextTickAfter(expr, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), false)
		t.Logf("%-18q Parse rejected in %v; gronx IsValid=true, NextTickAfter=%v, %v in %v",
			expr, elapsed, next.Format(time.RFC3339), gerr, time.Since(gStart))
	}
}

// TestLengthCapBeforeParsing: the cap counts raw bytes before anything else,
// so a valid expression padded past it is refused and one at it is taken;
// a 340 KB list costs nothing.
func TestLengthCapBeforeParsing(t *testing.T) {
	base := "0 0 * * *"
	if _, err := Parse(cronUTC(base + strings.Repeat(" ", MaxExpressionLen-len(base)))); err != nil {
		t.Errorf("256-byte expression: %v", err)
	}
	if _, err := Parse(cronUTC(secondsList(64) + " * * * * *")); err != nil {
		t.Errorf("64-item seconds list: %v", err)
	}
	huge := strings.Repeat("1,", 170_000) + "1 * * * *"
	start := time.Now()
	for i := 0; i < 100; i++ {
		if _, err := Parse(cronUTC(huge)); err == nil {
			t.Fatal("340 KB expression accepted")
		}
	}
	if per := time.Since(start) / 100; per > time.Millisecond {
		t.Errorf("rejecting a 340 KB expression took %v each, want < 1ms", per)
	}
}

// TestParseAccepts pins the positive side of the dialect: macros, names,
// 7 as Sunday, "?", and six fields, each with its canonical form.
func TestParseAccepts(t *testing.T) {
	cases := []canonicalCase{
		{"@yearly", "0 0 0 1 1 *"},
		{"@annually", "0 0 0 1 1 *"},
		{"@monthly", "0 0 0 1 * *"},
		{"@weekly", "0 0 0 * * 0"},
		{"@daily", "0 0 0 * * *"},
		{"@midnight", "0 0 0 * * *"},
		{"@hourly", "0 0 * * * *"},
		{"@YEARLY", "0 0 0 1 1 *"},
		{"@Annually", "0 0 0 1 1 *"},
		{"@MONTHLY", "0 0 0 1 * *"},
		{"@Weekly", "0 0 0 * * 0"},
		{"@DAILY", "0 0 0 * * *"},
		{"@MidNight", "0 0 0 * * *"},
		{"  @hourly  ", "0 0 * * * *"},
		{"0 0 1 JAN-DEC *", "0 0 0 1 1-12 *"},
		{"0 0 1 jan,feb,mar,apr,may,jun,jul,aug,sep,oct,nov,dec *", "0 0 0 1 1,2,3,4,5,6,7,8,9,10,11,12 *"},
		{"0 0 1 Jan-Jun/2 *", "0 0 0 1 1-6/2 *"},
		{"0 9 * * MON-FRI", "0 0 9 * * 1-5"},
		{"0 9 * * mon-fri", "0 0 9 * * 1-5"},
		{"0 9 * * SUN,MON,TUE,WED,THU,FRI,SAT", "0 0 9 * * 0,1,2,3,4,5,6"},
		{"0 9 * * sat,Sun", "0 0 9 * * 6,0"},
		{"0 0 * * 7", "0 0 0 * * 7"},
		{"0 0 * * 5-7", "0 0 0 * * 5-7"},
		{"0 0 ? * MON", "0 0 0 ? * 1"},
		{"0 0 1 * ?", "0 0 0 1 * ?"},
		{"30 0 9 * * *", "30 0 9 * * *"},
		{"*/10 * * * * *", "*/10 * * * * *"},
		{"0 0 12 ? JAN SUN", "0 0 12 ? 1 0"},
		{"*/60 * * * *", "0 */60 * * * *"},
		{"0 0 29 2 *", "0 0 0 29 2 *"},
		{"0\t0  *\t* *", "0 0 0 * * *"},
		// The day forms (cron_days.go): upper case, names as numbers, 7 as 0.
		{"0 0 l * *", "0 0 0 L * *"},
		{"0 0 lw * *", "0 0 0 LW * *"},
		{"0 0 L-3,15w * *", "0 0 0 L-3,15W * *"},
		{"0 0 * * fril", "0 0 0 * * 5L"},
		{"0 0 ? * SUN#1,7#3,7L", "0 0 0 ? * 0#1,0#3,0L"},
		{"0 0 L * 1-5,FRI#2", "0 0 0 L * 1-5,5#2"},
	}
	checkCanonical(t, cases)
}

// canonicalCase is an accepted expression and its canonical six-field form.
type canonicalCase struct{ expr, canonical string }

// checkCanonical parses each case, compares its canonical form, and checks
// that gronx accepts that form too.
func checkCanonical(t *testing.T, cases []canonicalCase) {
	t.Helper()
	for _, tc := range cases {
		s, err := Parse(cronUTC(tc.expr))
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.expr, err)
			continue
		}
		if got := s.Canonical(); got != tc.canonical {
			t.Errorf("Parse(%q).Canonical() = %q, want %q", tc.expr, got, tc.canonical)
		}
		if !gronxValid(s.Canonical()) {
			t.Errorf("gronx.IsValid(%q) = false for accepted %q", s.Canonical(), tc.expr)
		}
	}
}

// TestAcceptedFire checks a few accepted expressions fire where they should.
func TestAcceptedFire(t *testing.T) {
	monday := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC) // a Monday
	cases := []struct {
		expr string
		from time.Time
		want string
	}{
		{"0 0 * * 7", monday, "2026-03-08T00:00:00Z"},            // 7 is Sunday
		{"0 0 * * 0", monday, "2026-03-08T00:00:00Z"},            // so is 0
		{"0 0 * * SUN", monday, "2026-03-08T00:00:00Z"},          // and SUN
		{"0 0 ? * WED", monday, "2026-03-04T00:00:00Z"},          // ? does not restrict
		{"0 0 13 * FRI", monday, "2026-03-06T00:00:00Z"},         // Vixie OR: Friday the 6th comes first
		{"0 0 */2 * FRI", monday, "2026-03-13T00:00:00Z"},        // * prefix: AND, odd days that are Fridays
		{"30 0 9 * * *", monday, "2026-03-03T09:00:30Z"},         // six fields
		{"@monthly", monday, "2026-04-01T00:00:00Z"},             // macro
		{"0 0 1 dec *", monday, "2026-12-01T00:00:00Z"},          // lowercase name
		{"0 0 29 2 *", monday, "2028-02-29T00:00:00Z"},           // leap day
		{"0 12 31 * *", monday, "2026-03-31T12:00:00Z"},          // 31st
		{"0 0 31 4,6,9,11,12 *", monday, "2026-12-31T00:00:00Z"}, // only December has a 31st
	}
	for _, tc := range cases {
		s, err := Parse(cronUTC(tc.expr))
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.expr, err)
			continue
		}
		f, ok := s.Next(tc.from)
		if got := f.At.Format(time.RFC3339); !ok || got != tc.want {
			t.Errorf("%q Next(%s) = %s, %v; want %s", tc.expr, tc.from.Format(time.RFC3339), got, ok, tc.want)
		}
	}
}

// TestLeapDayAcrossCentury: 2100 is not a leap year, so the next Feb 29
// after 2097-03-01 is 8 years away; a horizon shorter than that would
// wrongly give up.
func TestLeapDayAcrossCentury(t *testing.T) {
	s, err := Parse(cronUTC("0 0 29 2 *"))
	if err != nil {
		t.Fatal(err)
	}
	f, ok := s.Next(time.Date(2097, 3, 1, 0, 0, 0, 0, time.UTC))
	if want := time.Date(2104, 2, 29, 0, 0, 0, 0, time.UTC); !ok || !f.At.Equal(want) {
		t.Fatalf("Next = %v, %v; want %v", f.At, ok, want)
	}
}

// TestYear9999Stops: iterating a yearly expression near the end of the
// calendar stops with ok=false and never returns a time that encoding/json
// cannot marshal, in zones on both sides of Greenwich.
func TestYear9999Stops(t *testing.T) {
	for _, zone := range []string{"UTC", "America/New_York", "Pacific/Kiritimati", "Etc/GMT+12", "Etc/GMT-14", "Pacific/Apia"} {
		s, err := Parse(Definition{Kind: KindCron, Expr: "59 23 31 12 *", TimeZone: zone})
		if err != nil {
			t.Fatal(err)
		}
		after := time.Date(9990, 1, 1, 0, 0, 0, 0, time.UTC)
		n := 0
		for ; ; n++ {
			f, ok := s.Next(after)
			if !ok {
				break
			}
			if n > 20 {
				t.Fatalf("%s: still firing after %d iterations from 9990 (at %v)", zone, n, f.At)
			}
			if y := f.At.Year(); y > 9999 {
				t.Fatalf("%s: firing %v is past year 9999", zone, f.At)
			}
			if _, err := json.Marshal(f.At); err != nil {
				t.Fatalf("%s: json.Marshal(%v): %v", zone, f.At, err)
			}
			if !f.At.After(after) {
				t.Fatalf("%s: Next(%v) = %v, not after", zone, after, f.At)
			}
			after = f.At
		}
		if n < 9 {
			t.Errorf("%s: only %d firings from 9990 to the end of 9999", zone, n)
		}
		if _, ok := s.Next(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
			t.Errorf("%s: Next from year 10000 returned a firing", zone)
		}
	}
	// The every kind stops as well.
	s, err := Parse(Definition{Kind: KindEvery, Expr: "8760h", TimeZone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Date(9990, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; ; n++ {
		f, ok := s.Next(after)
		if !ok {
			break
		}
		if _, err := json.Marshal(f.At); err != nil || n > 20 {
			t.Fatalf("every 8760h: firing %v after %d: %v", f.At, n, err)
		}
		after = f.At
	}
}

// TestAtNext: an at fires once, strictly after; in the past it has no firing.
func TestAtNext(t *testing.T) {
	s, err := Parse(Definition{Kind: KindAt, Expr: "2027-03-14T09:00:00-04:00", TimeZone: "America/New_York"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2027, 3, 14, 13, 0, 0, 0, time.UTC)
	f, ok := s.Next(at.Add(-time.Second))
	if !ok || !f.At.Equal(at) || FormatWall(f.Wall) != "2027-03-14T09:00:00" || f.Note != NoteNone {
		t.Errorf("Next(at-1s) = %+v, %v; want %v, wall 2027-03-14T09:00:00", f, ok, at)
	}
	for _, after := range []time.Time{at, at.Add(time.Second), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if f, ok := s.Next(after); ok {
			t.Errorf("Next(%v) = %v, want no firing (the at is past)", after, f.At)
		}
	}
}

// TestAtFractionalSecondsNeverFireEarly: RFC 3339 allows fractional
// seconds, and the engine keeps whole seconds. It once truncated, so "at
// 09:00:00.9" fired at 09:00:00, before the instant asked for (and an every
// anchor with a fraction fired early too). Rejecting the fraction is one
// right answer, firing at or after the instant the other.
func TestAtFractionalSecondsNeverFireEarly(t *testing.T) {
	const in = "2027-03-14T09:00:00.9Z"
	want, _ := time.Parse(time.RFC3339, in)
	if s, err := Parse(atDef(in)); err == nil { // rejecting the fraction is fine
		if f, ok := s.Next(want.Add(-time.Hour)); ok && f.At.Before(want) {
			t.Errorf("at %q fires at %s, before the instant %s", in,
				f.At.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
		}
	}
	anchor := time.Date(2027, 3, 14, 9, 0, 0, 900e6, time.UTC)
	if s, err := Parse(Definition{Kind: KindEvery, Expr: "24h", TimeZone: "UTC", Anchor: anchor}); err == nil {
		if f, ok := s.Next(anchor.Add(-time.Hour)); ok && f.At.Before(anchor) {
			t.Errorf("every 24h anchored at %s fires at %s, before the anchor",
				anchor.Format(time.RFC3339Nano), f.At.Format(time.RFC3339Nano))
		}
	}
	// Zero fractional digits are a whole second.
	if _, err := Parse(atDef("2027-03-14T09:00:00.000Z")); err != nil {
		t.Errorf("at with .000: %v", err)
	}
}

// TestEveryNext: every-intervals count from the anchor, by default the Unix
// epoch, in elapsed time.
func TestEveryNext(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		anchor time.Time
		after  time.Time
		want   time.Time
	}{
		{"epoch_from_midnight", time.Time{}, day, day.Add(90 * time.Second)},
		{"epoch_unaligned", time.Time{}, day.Add(10 * time.Second), day.Add(90 * time.Second)},
		{"epoch_on_a_firing", time.Time{}, day.Add(90 * time.Second), day.Add(180 * time.Second)},
		{"epoch_itself", time.Time{}, time.Unix(0, 0), time.Unix(90, 0)},
		{"anchor_before", day.Add(7 * time.Second), day.Add(-24 * time.Hour), day.Add(7 * time.Second)},
		{"anchor_on", day.Add(7 * time.Second), day.Add(7 * time.Second), day.Add(97 * time.Second)},
		{"anchor_after", day.Add(7 * time.Second), day.Add(10 * time.Second), day.Add(97 * time.Second)},
		{"anchor_far", day.Add(7 * time.Second), day.Add(24*time.Hour + 10*time.Second), day.Add(24*time.Hour + 97*time.Second)},
	}
	for _, tc := range cases {
		s, err := Parse(Definition{Kind: KindEvery, Expr: "90s", TimeZone: "UTC", Anchor: tc.anchor})
		if err != nil {
			t.Fatal(err)
		}
		f, ok := s.Next(tc.after)
		if !ok || !f.At.Equal(tc.want) || f.Note != NoteNone {
			t.Errorf("%s: Next(%v) = %v (%v), %v; want %v", tc.name, tc.after, f.At, f.Note, ok, tc.want)
		}
	}
	// The default anchor is the Unix epoch: every firing is a multiple of 90 s.
	s, _ := Parse(everyDef("90s"))
	after := time.Date(2031, 7, 9, 13, 14, 15, 0, time.UTC)
	for i := 0; i < 100; i++ {
		f, _ := s.Next(after)
		if f.At.Unix()%90 != 0 || !f.At.After(after) || f.At.Sub(after) > 90*time.Second {
			t.Fatalf("Next(%v) = %v: not the next multiple of 90 s since the epoch", after, f.At)
		}
		after = f.At.Add(-time.Duration(i) * time.Second / 2)
	}
}

// TestEveryOffsetChanged: every 24h is elapsed time, so across a New York
// DST change the local time moves by an hour and the firing says so.
func TestEveryOffsetChanged(t *testing.T) {
	anchor := time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC) // 09:00 EST
	s, err := Parse(Definition{Kind: KindEvery, Expr: "24h", TimeZone: "America/New_York", Anchor: anchor})
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		at   string
		wall string
		note NoteKind
		prev int
	}
	want := []step{
		{"2026-03-08T14:00:00Z", "2026-03-08T10:00:00", NoteOffsetChanged, -5 * 3600}, // DST began at 07:00Z
		{"2026-03-09T14:00:00Z", "2026-03-09T10:00:00", NoteNone, 0},
	}
	after := anchor
	for i, w := range want {
		f, ok := s.Next(after)
		if !ok || f.At.Format(time.RFC3339) != w.at || FormatWall(f.Wall) != w.wall || f.Note != w.note || f.PrevOffset != w.prev {
			t.Errorf("spring firing %d: %s wall %s note %v prev %d, %v; want %s wall %s note %v prev %d",
				i, f.At.Format(time.RFC3339), FormatWall(f.Wall), f.Note, f.PrevOffset, ok, w.at, w.wall, w.note, w.prev)
		}
		after = f.At
	}
	if NoteOffsetChanged.String() != "offset_changed" {
		t.Errorf("NoteOffsetChanged.String() = %q", NoteOffsetChanged.String())
	}
	// Fall back: 2026-11-01 06:00Z; the 14:00Z firing is now 09:00 EST.
	f, ok := s.Next(time.Date(2026, 10, 31, 14, 0, 0, 0, time.UTC))
	if !ok || f.At.Format(time.RFC3339) != "2026-11-01T14:00:00Z" || FormatWall(f.Wall) != "2026-11-01T09:00:00" ||
		f.Note != NoteOffsetChanged || f.PrevOffset != -4*3600 {
		t.Errorf("fall firing: %s wall %s note %v prev %d, %v", f.At.Format(time.RFC3339), FormatWall(f.Wall), f.Note, f.PrevOffset, ok)
	}
	// The first firing has no previous one to compare with.
	f, _ = s.Next(anchor.Add(-time.Hour))
	if !f.At.Equal(anchor) || f.Note != NoteNone {
		t.Errorf("first firing: %v note %v; want %v with no note", f.At, f.Note, anchor)
	}
}

// conformanceExprs are hand-picked expressions for the dialect check: names,
// "?", 7 as Sunday, steps on the day of week, both day-field rules.
var conformanceExprs = []string{
	"0 9 * * MON-FRI", "0 9 * * mon-fri", "0 0 1 JAN,APR,JUL,OCT *", "30 18 * * sat,sun",
	"0 12 ? * WED", "0 0 ? JAN-MAR 7", "0 0 * * 7", "0 0 1 * 7", "0 0 1-7 * 7", "0 0 ? * 7",
	"0 0 13 * 5", "0 0 13 * FRI", "0 0 * * 5-7", "0 0 * * 7/2", "0 0 * * 1-7/2", "0 0 * * 0-7",
	"0 0 * * 6,7", "0 0 * * 4/3", "0 0 * * */3", "*/5 * ? * SUN", "0 0 */2 * MON", "0 0 1,15 * MON",
	"0 0 29 2 *", "0 0 29 2 1", "0 0 ? FEB 1", "15,45 */10 9-17 * * MON-FRI", "0 0 0 29 2 ?",
	"@weekly", "@monthly", "@yearly", "0 0 1 */3 *", "0 0 L-1 * *", "0 0 0/5 * * *", "*/7 0/7 * * *",
	"0 0 * * */0001", "0 0 1 * */3",
	// gronx takes a sixth field with four digits for a year (gronx.Segments):
	// a zero-padded step in the day of week must be rejected, or read alike.
	"0 5 3 4 */0004", "0 0 * * 1-5/0002",
	// Sign and zero padding that Atoi takes in a step.
	"*/05 */02 * * *",
}

// TestDialectConformance: every expression Parse accepts is valid to gronx,
// gronx reads its canonical form as the same six fields, and the engine's
// matcher agrees with gronx.IsDue at thousands of wall times: uniform ones
// and ones next to the engine's own matches.
func TestDialectConformance(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 7))
	exprs := append([]string(nil), conformanceExprs...)
	nRandom := 300
	if testing.Short() {
		nRandom = 100
	}
	for i := 0; i < nRandom; i++ {
		exprs = append(exprs, randomCron(r, r.IntN(4) == 0))
	}
	g := gronx.New()
	lo := joinWall(1970, 1, 1, 0, 0, 0)
	hi := joinWall(2100, 1, 1, 0, 0, 0)
	deltas := []int64{0, 0, 0, -1, 1, -60, 60, -3600, 3600, -86400, 86400}
	accepted, samples, matches := 0, 0, 0
	for _, expr := range exprs {
		s, err := Parse(cronUTC(expr))
		if err != nil {
			if _, ok := err.(*InvalidError); !ok {
				t.Errorf("Parse(%q): %T %v, want *InvalidError", expr, err, err)
			}
			continue
		}
		accepted++
		canon := s.Canonical()
		if !gronxValid(canon) {
			t.Errorf("%q: accepted, but gronx.IsValid(%q) = false", expr, canon)
			continue
		}
		if segs, err := gronx.Segments(canon); err != nil || len(segs) != 6 {
			t.Errorf("%q: gronx reads the canonical form %q as %d fields %q (%v), not the engine's six",
				expr, canon, len(segs), segs, err)
		}
		c := s.cron
		fails := 0
		for k := 0; k < 200 && fails < 3; k++ {
			w := lo + r.Int64N(hi-lo)
			if k%2 == 1 {
				if nw, ok := c.nextWall(w); ok {
					w = nw + deltas[r.IntN(len(deltas))]
				}
			} else if k%4 == 0 {
				w -= w % 60
			}
			due, err := gronxDue(g, canon, time.Unix(w, 0).UTC())
			if err != nil {
				t.Fatalf("gronx IsDue(%q): %v", canon, err)
			}
			got := c.matchWall(w)
			samples++
			if got {
				matches++
			}
			if got != due {
				fails++
				t.Errorf("%q (canonical %q) at %s: engine matchWall=%v, gronx IsDue=%v",
					expr, canon, FormatWall(w), got, due)
			}
		}
	}
	t.Logf("%d expressions, %d accepted, %d wall times checked, %d matching", len(exprs), accepted, samples, matches)
	if accepted < len(exprs)/2 || matches < samples/10 {
		t.Errorf("too little coverage: %d/%d accepted, %d/%d matching", accepted, len(exprs), matches, samples)
	}
}

// TestEveryAnchorAtTheLastInstant: an anchor at the last instant an every
// schedule can fire at is taken and fires there once; one second later is
// refused (badCases), since it would never fire.
func TestEveryAnchorAtTheLastInstant(t *testing.T) {
	last := time.Date(9999, 12, 31, 9, 59, 59, 0, time.UTC)
	s, err := Parse(Definition{Kind: KindEvery, Expr: "87600h", TimeZone: "Pacific/Kiritimati", Anchor: last})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	f, ok := s.Next(last.Add(-time.Hour))
	if !ok || !f.At.Equal(last) {
		t.Fatalf("Next before the anchor = %v, %v; want %v", f.At, ok, last)
	}
	if f, ok := s.Next(last); ok {
		t.Fatalf("Next at the anchor = %v, want none", f.At)
	}
}

// hintUTC is the end of LoadZone's error for a name close to UTC: the
// suggestion, when the tz database in use lists its zones (tzdata.zi; Go's
// embedded zoneinfo.zip does not).
func hintUTC() string {
	if len(zones.Load().names()) == 0 {
		return ""
	}
	return "; did you mean UTC?"
}
