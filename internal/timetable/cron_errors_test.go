package timetable

import (
	"testing"
	"time"
)

// TestCronErrorsTeach pins the messages that teach: each names the field,
// its 1-based position in the expression as written and the item at fault,
// and says what to write instead. Exact strings, so a change of wording is
// a deliberate change of this table.
func TestCronErrorsTeach(t *testing.T) {
	cases := []struct {
		name, expr, field, msg string
	}{
		// Six fields start with seconds: a trailing year, or a five-field
		// expression with one field too many.
		{"six_fields_year", "30 15 31 12 * 2024", "cron",
			`cron expression "30 15 31 12 * 2024": 6 fields start with seconds (second minute hour day-of-month month day-of-week), and field 6 "2024" looks like a year, which is not supported; did you mean the 5-field "30 15 31 12 *"?`},
		{"six_fields_year_range", "0 0 1 1 * 2027-2030", "cron",
			`cron expression "0 0 1 1 * 2027-2030": 6 fields start with seconds (second minute hour day-of-month month day-of-week), and field 6 "2027-2030" looks like a year, which is not supported; did you mean the 5-field "0 0 1 1 *"?`},
		{"six_fields_year_and_a_bad_minute", "99 15 31 12 * 2024", "cron",
			`cron expression "99 15 31 12 * 2024": 6 fields start with seconds (second minute hour day-of-month month day-of-week), and field 6 "2024" looks like a year, which is not supported; without it, minute field "99": out of range 0-59 (field 1 of 5)`},
		{"six_fields_shifted", "0 9 * * MON-FRI *", "cron",
			`cron expression "0 9 * * MON-FRI *": 6 fields start with seconds (second minute hour day-of-month month day-of-week), and read that way month field "MON-FRI": "MON" is a day name, not a month; months are 1-12 or JAN-DEC (field 5 of 6); did you mean the 5-field "0 9 * * MON-FRI"?`},
		{"seven_fields_quartz_year", "0 0 0 1 1 ? 2030", "cron",
			`cron expression "0 0 0 1 1 ? 2030": has 7 fields; the last, "2030", is a year, which is not supported: drop it ("0 0 0 1 1 ?", whose first field is seconds)`},

		// @every is the every kind.
		{"every_macro", "@every 5m", "cron",
			`cron macro "@every 5m": @every is not a cron macro; a fixed interval is its own schedule kind, every: give "5m" as every instead of cron (schedctl --every 5m, API field "every")`},
		{"every_macro_upper", "@EVERY 90s", "cron",
			`cron macro "@EVERY 90s": @every is not a cron macro; a fixed interval is its own schedule kind, every: give "90s" as every instead of cron (schedctl --every 90s, API field "every")`},
		{"every_macro_bad_duration", "@every soon", "cron",
			`cron macro "@every soon": @every is not a cron macro; a fixed interval is its own schedule kind, every: give "soon" as every instead of cron (a Go duration such as 90s, 15m or 24h) (schedctl --every soon, API field "every")`},
		{"every_macro_bare", "@every", "cron",
			`cron macro "@every": @every is not a cron macro; a fixed interval is its own schedule kind, every: give the interval (a Go duration such as 90s, 15m or 24h) as every instead of cron (schedctl --every 15m, API field "every")`},

		// Empty list items are named as such, before anything else in the field.
		{"empty_item_after_step", "*/15, * * * *", "minute field",
			`minute field "*/15,": item 2 of the list is empty: nothing follows the last comma; a space after a comma starts the next field, so write "*/15", or the next value right after the comma (field 1 of 5)`},
		{"empty_item_in_day_forms", "0 0 L,15,,1 * *", "day-of-month field",
			`day-of-month field "L,15,,1": item 3 of the list is empty: two commas in a row (field 3 of 5)`},
		{"question_in_list", "0 0 ?,L * *", "day-of-month field",
			`day-of-month field "?": "?" cannot be part of a list: ? alone means the field does not restrict (field 3 of 5, item 1 of "?,L")`},

		// Unknown names suggest the nearest.
		{"friday", "0 0 * * friday", "day-of-week field",
			`day-of-week field "friday": "friday" is not a day name (SUN-SAT); did you mean FRI? (field 5 of 5)`},
		{"Thurs", "0 0 * * Thurs", "day-of-week field",
			`day-of-week field "Thurs": "Thurs" is not a day name (SUN-SAT); did you mean THU? (field 5 of 5)`},
		{"Tues_in_range", "0 0 * * Tues-FRI", "day-of-week field",
			`day-of-week field "Tues-FRI": "Tues" is not a day name (SUN-SAT); did you mean TUE? (field 5 of 5)`},
		{"typo_FRU", "0 0 * * MON,FRU", "day-of-week field",
			`day-of-week field "FRU": "FRU" is not a day name (SUN-SAT); did you mean FRI? (field 5 of 5, item 2 of "MON,FRU")`},
		{"sept", "0 0 1 sept *", "month field",
			`month field "sept": "sept" is not a month name (JAN-DEC); did you mean SEP? (field 4 of 5)`},
		{"seconds_position", "0 0 0 1 sept *", "month field",
			`month field "sept": "sept" is not a month name (JAN-DEC); did you mean SEP? (field 5 of 6)`},

		// The day forms, misused.
		{"L_alone_in_dow", "0 0 * * L", "day-of-week field",
			`day-of-week field "L": "L" alone is not a day of the week: write nL for the last such weekday of the month (5L or FRIL, the last Friday), or put L in day-of-month for the month's last day (field 5 of 5)`},
		{"L_in_minute", "L 0 * * *", "minute field",
			`minute field "L": L, W and # only go in day-of-month (L, L-n, nW, LW) and day-of-week (nL, n#k) (field 1 of 5)`},
		{"hash_in_month", "0 0 * JUL#2 *", "month field",
			`month field "JUL#2": L, W and # only go in day-of-month (L, L-n, nW, LW) and day-of-week (nL, n#k) (field 4 of 5)`},
		{"L_minus_31", "0 0 L-31 * *", "day-of-month field",
			`day-of-month field "L-31": the offset after L- must be 1-30 (L alone is the last day) (field 3 of 5)`},
		{"L_minus_0", "0 0 L-0 * *", "day-of-month field",
			`day-of-month field "L-0": the offset after L- must be 1-30 (L alone is the last day) (field 3 of 5)`},
		{"L_minus_W", "0 0 L-3W * *", "day-of-month field",
			`day-of-month field "L-3W": L-n takes no W; write LW for the last weekday, or nW for the weekday nearest day n (field 3 of 5)`},
		{"L_step", "0 0 L/2 * *", "day-of-month field",
			`day-of-month field "L/2": day-of-month takes L (last day), L-n (n days before it), nW (weekday nearest day n) and LW (last weekday), each alone as a list item, without a range or step (field 3 of 5)`},
		{"hash_in_dom", "0 0 5#2 * *", "day-of-month field",
			`day-of-month field "5#2": "#" is for day-of-week (5#2 is the second Friday); day-of-month takes L, L-n, nW and LW (field 3 of 5)`},
		{"W_in_dow", "0 0 * * 15W", "day-of-week field",
			`day-of-week field "15W": "15W" belongs in day-of-month (L, L-n, nW, LW); day-of-week takes nL and n#k (field 5 of 5)`},
		{"LW_in_dow", "0 0 * * LW", "day-of-week field",
			`day-of-week field "LW": "LW" belongs in day-of-month (L, L-n, nW, LW); day-of-week takes nL and n#k (field 5 of 5)`},
		{"W_range", "0 0 1-15W * *", "day-of-month field",
			`day-of-month field "1-15W": W takes one day, not a range, step or *: write e.g. 15W (field 3 of 5)`},
		{"W_alone", "0 0 W * *", "day-of-month field",
			`day-of-month field "W": "W" needs a day before it: 15W is the weekday nearest the 15th (LW the last weekday) (field 3 of 5)`},
		{"W_32", "0 0 32W * *", "day-of-month field",
			`day-of-month field "32W": the day before W is out of range 1-31 (field 3 of 5)`},
		{"W_0", "0 0 0W * *", "day-of-month field",
			`day-of-month field "0W": the day before W is out of range 1-31 (field 3 of 5)`},
		{"hash_6", "0 0 * * 5#6", "day-of-week field",
			`day-of-week field "5#6": a month has at most five of any weekday: k in n#k must be 1-5 (field 5 of 5)`},
		{"hash_0", "0 0 * * 5#0", "day-of-week field",
			`day-of-week field "5#0": a month has at most five of any weekday: k in n#k must be 1-5 (field 5 of 5)`},
		{"hash_no_k", "0 0 * * 5#", "day-of-week field",
			`day-of-week field "5#": n#k needs k after the #, 1-5: 5#2 is the second Friday of the month (field 5 of 5)`},
		{"hash_no_day", "0 0 * * #2", "day-of-week field",
			`day-of-week field "#2": in n#k, a weekday is missing before it (0-7 or SUN-SAT) (field 5 of 5)`},
		{"hash_day_8", "0 0 * * 8#1", "day-of-week field",
			`day-of-week field "8#1": in n#k, the weekday is out of range 0-7 (field 5 of 5)`},
		{"hash_day_typo", "0 0 * * FRX#2", "day-of-week field",
			`day-of-week field "FRX#2": in n#k, "FRX" is not a day name; did you mean FRI? (field 5 of 5)`},
		{"last_dow_range", "0 0 * * MON-FRIL", "day-of-week field",
			`day-of-week field "MON-FRIL": in nL (the last weekday n of the month), it takes one weekday, not a range, step or * (field 5 of 5)`},
		{"last_dow_step", "0 0 * * 5L/2", "day-of-week field",
			`day-of-week field "5L/2": nL and n#k take no step: each names one day of the month (field 5 of 5)`},

		// Never fires, decided at once from the month shapes.
		{"W_beyond_february", "0 0 30W 2 *", "cron", `cron expression "0 0 30W 2 *": can never fire (no month in it has such a day)`},
		{"L_minus_30_february", "0 0 L-30 2 *", "cron", `cron expression "0 0 L-30 2 *": can never fire (no month in it has such a day)`},
		{"L_minus_29_february", "0 0 L-29 2 *", "cron", `cron expression "0 0 L-29 2 *": can never fire (no month in it has such a day)`},
		{"LW_on_weekends_only", "0 0 LW * */6", "cron", `cron expression "0 0 LW * */6": can never fire (no month in it has such a day)`},
		{"W_and_weekend_days", "0 0 15W * */6", "cron", `cron expression "0 0 15W * */6": can never fire (no month in it has such a day)`}, // */6 is Sunday and Saturday; * makes it AND
		{"W_or_weekend_days", "0 0 15W * SAT,SUN", "", ""}, // both restricted: OR, any weekend day fires
		{"fifth_saturday", "0 0 ? * 6#5", "", ""},          // some months have one
		{"first_day_and_fifth_friday", "0 0 */31 2 5#5", "cron", `cron expression "0 0 */31 2 5#5": can never fire (no month in it has such a day)`}, // */31 is the 1st only; * makes it AND
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			s, err := Parse(cronUTC(tc.expr))
			if d := time.Since(start); d > fastLimit {
				t.Errorf("Parse took %v, want < %v", d, fastLimit)
			}
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Parse(%q): %v, want it accepted", tc.expr, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q) accepted it (canonical %q), want %q", tc.expr, s.Canonical(), tc.msg)
			}
			ie, ok := err.(*InvalidError)
			if !ok {
				t.Fatalf("error %v is %T, want *InvalidError", err, err)
			}
			if ie.Field != tc.field || ie.Msg != tc.msg {
				t.Errorf("got field %q message\n%s\nwant field %q message\n%s", ie.Field, ie.Msg, tc.field, tc.msg)
			}
		})
	}
}

// TestLeadingZerosAccepted: 007 is 7, as gronx and Vixie cron read it; the
// canonical form drops the zeros, so gronx never takes a zero-padded
// fourth field for a year.
func TestLeadingZerosAccepted(t *testing.T) {
	cases := []canonicalCase{
		{"007 * * * *", "0 7 * * * *"},
		{"001 * * * *", "0 1 * * * *"},
		{"0 0 * * */0004", "0 0 0 * * */4"},
		{"0 5 3 4 */0004", "0 0 5 3 4 */4"},
		{"0 0 * * 1-5/0002", "0 0 0 * * 1-5/2"},
		{"0 0 09W * 05L", "0 0 0 9W * 5L"},
		{"0 0 L-03 * 05#02", "0 0 0 L-3 * 5#2"},
	}
	checkCanonical(t, cases)
}
