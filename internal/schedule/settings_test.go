package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/timetable"
)

// checkErr fails unless err is a *ValidationError of field with exactly
// msg, or nil when msg is "".
func checkErr(t *testing.T, err error, field, msg string) {
	t.Helper()
	if msg == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want a *ValidationError", err, err)
	}
	if ve.Field != field || ve.Message != msg || ve.Error() != msg {
		t.Fatalf("got field %q message %q, want field %q message %q", ve.Field, ve.Message, field, msg)
	}
}

// TestNormalizeRules: every rule of Normalize, with a setting it takes and
// one it refuses, and the exact error the API answers with.
func TestNormalizeRules(t *testing.T) {
	t.Parallel()
	base := func() Settings {
		return Settings{Name: "nightly", Queue: "reports", Kind: timetable.KindCron, Expr: "0 2 * * *", TimeZone: "Europe/Berlin"}
	}
	every := func(s *Settings) { s.Kind, s.Expr, s.TimeZone = timetable.KindEvery, "1h", "" }
	tests := []struct {
		name       string
		mut        func(*Settings)
		field, msg string // msg "" = valid
	}{
		// name
		{"name with inner space", func(s *Settings) { s.Name = "nightly report ü" }, "", ""},
		{"name of 128 bytes", func(s *Settings) { s.Name = strings.Repeat("n", MaxNameLen) }, "", ""},
		{"name empty", func(s *Settings) { s.Name = "" }, "name", "name: must not be empty"},
		{"name of 129 bytes", func(s *Settings) { s.Name = strings.Repeat("n", MaxNameLen+1) }, "name", "name: 129 bytes is over the limit of 128"},
		{"name not UTF-8", func(s *Settings) { s.Name = "a\xffb" }, "name", "name: is not valid UTF-8"},
		{"name with NUL", func(s *Settings) { s.Name = "a\x00b" }, "name", `name: "a\x00b" contains a control character (U+0000)`},
		{"name with newline", func(s *Settings) { s.Name = "a\nb" }, "name", `name: "a\nb" contains a control character (U+000A)`},
		{"name with trailing space", func(s *Settings) { s.Name = "nightly " }, "name", `name: "nightly " has leading or trailing space`},
		{"every anchored past the last firing", func(s *Settings) {
			s.Kind, s.Expr, s.TimeZone, s.Anchor = timetable.KindEvery, "87600h", "UTC", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
		}, "anchor", "anchor 9999-12-31T23:59:59Z: after 9999-12-31T09:59:59Z, the last instant an every schedule can fire at, so it would never fire"},
		{"name shaped like an id", func(s *Settings) { s.Name = "sch_nightly" }, "name", `name: "sch_nightly" starts with "sch_", the prefix of an id: a name must not look like an id`},
		{"name ..", func(s *Settings) { s.Name = ".." }, "name", `name: "..": a name must not be only dots`},
		{"name with a bidi override", func(s *Settings) { s.Name = "a\u202eb" }, "name", `name: "a\u202eb" contains an invisible or formatting character (U+202E)`},
		// queue
		{"queue of every allowed character", func(s *Settings) { s.Queue = "jobs.eu-1:high_prio" }, "", ""},
		{"queue of 64 bytes", func(s *Settings) { s.Queue = strings.Repeat("q", MaxQueueLen) }, "", ""},
		{"queue empty", func(s *Settings) { s.Queue = "" }, "queue", "queue: must not be empty"},
		{"queue of 65 bytes", func(s *Settings) { s.Queue = strings.Repeat("q", MaxQueueLen+1) }, "queue", "queue: 65 bytes is over the limit of 64"},
		{"queue with SQL", func(s *Settings) { s.Queue = "' OR 1=1 --" }, "queue", `queue: "' OR 1=1 --": use only letters, digits and . _ - :`},
		{"queue with space", func(s *Settings) { s.Queue = "a b" }, "queue", `queue: "a b": use only letters, digits and . _ - :`},
		{"queue not ASCII", func(s *Settings) { s.Queue = "ü" }, "queue", `queue: "ü": use only letters, digits and . _ - :`},
		{"queue upper case", func(s *Settings) { s.Queue = "Emails" }, "queue", `queue: "Emails": use lowercase letters (emails)`},
		{"queue of dots", func(s *Settings) { s.Queue = "..." }, "queue", `queue: "...": a name must not be only dots`},
		// kind and expression
		{"kind at", func(s *Settings) { s.Kind, s.Expr, s.TimeZone = timetable.KindAt, "2027-03-14T09:00:00-04:00", "" }, "", ""},
		{"kind every", every, "", ""},
		{"kind unknown", func(s *Settings) { s.Kind = "sometimes" }, "kind", `kind: kind "sometimes": want cron, at or every`},
		{"kind empty", func(s *Settings) { s.Kind = "" }, "kind", `kind: kind "": want cron, at or every`},
		{"cron minute 61", func(s *Settings) { s.Expr = "61 * * * *" }, "cron", `minute field "61": out of range 0-59 (field 1 of 5)`},
		{"cron that never fires", func(s *Settings) { s.Expr = "0 0 31 2 *" }, "cron", `cron expression "0 0 31 2 *": can never fire (no month in it has such a day)`},
		{"cron whose every time is in a DST gap", func(s *Settings) { s.Expr, s.TimeZone = "30 2 * 3 0#2", "America/New_York" }, "cron",
			`cron: cron expression "30 2 * 3 0#2" never fires in America/New_York with dst_gap skip: every wall time it names falls in a gap of the zone's clock (e.g. 2038-03-14 02:30); use dst_gap shift to fire at the gap's end, or another time of day`},
		{"the same with dst_gap shift", func(s *Settings) {
			s.Expr, s.TimeZone, s.DSTGap = "30 2 * 3 0#2", "America/New_York", timetable.GapShift
		}, "", ""},
		{"cron with seconds", func(s *Settings) { s.Expr = "*/2 * * * * *" }, "", ""},
		{"every 0s", func(s *Settings) { every(s); s.Expr = "0s" }, "every", `every "0s": must be at least 1s`},
		{"every 1.5s", func(s *Settings) { every(s); s.Expr = "1500ms" }, "every", `every "1500ms": must be a whole number of seconds`},
		{"at not RFC 3339", func(s *Settings) { s.Kind, s.Expr = timetable.KindAt, "tomorrow" }, "at", `at "tomorrow": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		// time zone
		{"cron in UTC", func(s *Settings) { s.TimeZone = "UTC" }, "", ""},
		{"cron without a zone", func(s *Settings) { s.TimeZone = "" }, "time_zone", "time_zone: a cron schedule needs a time zone (an IANA name such as Europe/Berlin, or UTC, or a CRON_TZ= prefix on the expression)"},
		{"unknown zone", func(s *Settings) { s.TimeZone = "Mars/Olympus" }, "time_zone", `time zone "Mars/Olympus": unknown IANA zone`},
		{"zone Local", func(s *Settings) { s.TimeZone = "Local" }, "time_zone", `time zone "Local": not allowed, it depends on the host; give an IANA name`},
		{"every in a zone", func(s *Settings) { every(s); s.TimeZone = "Asia/Kolkata" }, "", ""},
		// anchor
		{"anchor on every", func(s *Settings) { every(s); s.Anchor = time.Date(2027, 1, 1, 0, 0, 30, 0, time.UTC) }, "", ""},
		{"anchor on cron", func(s *Settings) { s.Anchor = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }, "anchor", "anchor: an anchor only applies to an every schedule"},
		{"anchor with a fraction", func(s *Settings) { every(s); s.Anchor = time.Date(2027, 1, 1, 0, 0, 0, 5e8, time.UTC) }, "anchor", "anchor 2027-01-01T00:00:00.5Z: has a fraction of a second; schedules fire on whole seconds"},
		// DST policies
		{"cron shift and last", func(s *Settings) { s.DSTGap, s.DSTRepeat = timetable.GapShift, timetable.RepeatLast }, "", ""},
		{"dst_gap on every", func(s *Settings) { every(s); s.DSTGap = timetable.GapShift }, "dst_gap", "dst_gap: DST options only apply to a cron schedule"},
		{"dst_repeat on at", func(s *Settings) {
			s.Kind, s.Expr, s.DSTRepeat = timetable.KindAt, "2027-03-14T13:00:00Z", timetable.RepeatAll
		}, "dst_repeat", "dst_repeat: DST options only apply to a cron schedule"},
		{"dst_gap unknown", func(s *Settings) { s.DSTGap = "later" }, "dst_gap", `dst_gap "later": want skip or shift`},
		{"dst_repeat unknown", func(s *Settings) { s.DSTRepeat = "twice" }, "dst_repeat", `dst_repeat "twice": want first, last or all`},
		// payload
		{"payload at the limit", func(s *Settings) { s.Payload = make([]byte, record.MaxPayload) }, "", ""},
		{"payload over the limit", func(s *Settings) { s.Payload = make([]byte, record.MaxPayload+1) }, "payload", "payload: payload of 262145 bytes is over the limit of 262144 (256 KiB)"},
		// misfire policy
		{"misfire skip", func(s *Settings) { s.MisfirePolicy = record.MisfireSkip }, "", ""},
		{"catch_up:1000", func(s *Settings) { s.MisfirePolicy, s.CatchUpK = record.MisfireCatchUp, MaxCatchUpK }, "", ""},
		{"catch_up:1001", func(s *Settings) { s.MisfirePolicy, s.CatchUpK = record.MisfireCatchUp, MaxCatchUpK+1 }, "misfire_policy", "misfire_policy: catch_up:1001: K must be 1 to 1000"},
		{"catch_up without K", func(s *Settings) { s.MisfirePolicy = record.MisfireCatchUp }, "misfire_policy", "misfire_policy: catch_up:0: K must be 1 to 1000"},
		{"misfire unknown", func(s *Settings) { s.MisfirePolicy = "later" }, "misfire_policy", `misfire_policy: "later": want skip, fire_once or catch_up:K`},
		{"K without catch_up", func(s *Settings) { s.MisfirePolicy, s.CatchUpK = record.MisfireSkip, 3 }, "misfire_policy", "misfire_policy: K only applies to catch_up"},
		{"K with the default policy", func(s *Settings) { s.CatchUpK = 3 }, "misfire_policy", "misfire_policy: K only applies to catch_up"},
		// max_lateness
		{"max_lateness 1s", func(s *Settings) { s.MaxLateness = time.Second }, "", ""},
		{"max_lateness 30 days", func(s *Settings) { s.MaxLateness = MaxSettingDuration }, "", ""},
		{"max_lateness 1ns", func(s *Settings) { s.MaxLateness = 1 }, "max_lateness", "max_lateness: 1ns: must be from 1s to 720h0m0s"},
		{"max_lateness negative", func(s *Settings) { s.MaxLateness = -time.Second }, "max_lateness", "max_lateness: -1s: must be from 1s to 720h0m0s"},
		{"max_lateness over 30 days", func(s *Settings) { s.MaxLateness = MaxSettingDuration + time.Second }, "max_lateness", "max_lateness: 720h0m1s: must be from 1s to 720h0m0s"},
		{"max_lateness sub-millisecond", func(s *Settings) { s.MaxLateness = time.Second + time.Microsecond }, "max_lateness", "max_lateness: 1.000001s: must be whole milliseconds"},
		// overlap policy
		{"overlap queue_one", func(s *Settings) { s.OverlapPolicy = record.OverlapQueueOne }, "", ""},
		{"overlap skip_if_running", func(s *Settings) { s.OverlapPolicy = record.OverlapSkipIfRunning }, "", ""},
		{"overlap unknown", func(s *Settings) { s.OverlapPolicy = "never" }, "overlap_policy", `overlap_policy: "never": want allow, skip_if_running or queue_one`},
		// flexible_window
		{"flexible_window 24h", func(s *Settings) { s.FlexibleWindow = MaxFlexibleWindow }, "", ""},
		{"flexible_window 1.5s", func(s *Settings) { s.FlexibleWindow = 1500 * time.Millisecond }, "flexible_window", "flexible_window: 1.5s: must be whole seconds from 0 to 24h"},
		{"flexible_window negative", func(s *Settings) { s.FlexibleWindow = -time.Second }, "flexible_window", "flexible_window: -1s: must be whole seconds from 0 to 24h"},
		{"flexible_window 25h", func(s *Settings) { s.FlexibleWindow = 25 * time.Hour }, "flexible_window", "flexible_window: 25h0m0s: must be whole seconds from 0 to 24h"},
		// max_attempts
		{"max_attempts 1", func(s *Settings) { s.Retry.MaxAttempts = 1 }, "", ""},
		{"max_attempts 1000", func(s *Settings) { s.Retry.MaxAttempts = MaxAttempts }, "", ""},
		{"max_attempts negative", func(s *Settings) { s.Retry.MaxAttempts = -1 }, "max_attempts", "max_attempts: -1: must be 1 to 1000"},
		{"max_attempts 1001", func(s *Settings) { s.Retry.MaxAttempts = MaxAttempts + 1 }, "max_attempts", "max_attempts: 1001: must be 1 to 1000"},
		// retry_base, retry_cap, retry_deadline
		{"retry_base 1ms", func(s *Settings) { s.Retry.BackoffBase = time.Millisecond }, "", ""},
		{"retry_base 2h", func(s *Settings) { s.Retry.BackoffBase = 2 * time.Hour }, "retry_base", "retry_base: 2h0m0s: must be from 1ms to 1h0m0s"},
		{"retry_base sub-millisecond", func(s *Settings) { s.Retry.BackoffBase = 1500 * time.Microsecond }, "retry_base", "retry_base: 1.5ms: must be whole milliseconds"},
		{"retry_cap 24h", func(s *Settings) { s.Retry.BackoffCap = MaxRetryCap }, "", ""},
		{"retry_cap 25h", func(s *Settings) { s.Retry.BackoffCap = 25 * time.Hour }, "retry_cap", "retry_cap: 25h0m0s: must be from 1ms to 24h0m0s"},
		{"retry_cap below retry_base", func(s *Settings) { s.Retry.BackoffBase, s.Retry.BackoffCap = time.Minute, time.Second }, "retry_cap", "retry_cap: 1s is less than retry_base 1m0s"},
		{"retry_cap below the default base", func(s *Settings) { s.Retry.BackoffCap = 500 * time.Millisecond }, "retry_cap", "retry_cap: 500ms is less than retry_base 1s"},
		{"retry_deadline 1s", func(s *Settings) { s.Retry.Deadline = time.Second }, "", ""},
		{"retry_deadline 500ms", func(s *Settings) { s.Retry.Deadline = 500 * time.Millisecond }, "retry_deadline", "retry_deadline: 500ms: must be from 1s to 720h0m0s"},
		{"retry_deadline over 30 days", func(s *Settings) { s.Retry.Deadline = 31 * 24 * time.Hour }, "retry_deadline", "retry_deadline: 744h0m0s: must be from 1s to 720h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			tt.mut(&s)
			sp, err := s.Normalize()
			checkErr(t, err, tt.field, tt.msg)
			if err == nil && sp == nil {
				t.Fatal("valid settings without a parsed timing")
			}
		})
	}
}

// TestNormalizeOrder: with several settings wrong, the error names the
// first in the order of the fields (name, queue, kind, ... retry), as the
// API always has.
func TestNormalizeOrder(t *testing.T) {
	t.Parallel()
	s := Settings{Name: "", Queue: "bad queue", Kind: "sometimes", OverlapPolicy: "never"}
	_, err := s.Normalize()
	checkErr(t, err, "name", "name: must not be empty")
	s.Name = "n"
	_, err = s.Normalize()
	checkErr(t, err, "queue", `queue: "bad queue": use only letters, digits and . _ - :`)
	s.Queue = "q"
	_, err = s.Normalize()
	checkErr(t, err, "kind", `kind: kind "sometimes": want cron, at or every`)
}

// TestNormalizeDefaults: what is left out takes the defaults, and what is
// given is kept.
func TestNormalizeDefaults(t *testing.T) {
	t.Parallel()
	s := Settings{Name: "n", Queue: "q", Kind: timetable.KindEvery, Expr: "90s"}
	sp, err := s.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Name: "n", Queue: "q", Kind: timetable.KindEvery, Expr: "90s", TimeZone: "UTC",
		DSTGap: timetable.GapSkip, DSTRepeat: timetable.RepeatFirst,
		MisfirePolicy: record.MisfireFireOnce, MaxLateness: time.Minute, OverlapPolicy: record.OverlapAllow,
		Retry: record.RetryPolicy{MaxAttempts: 10, BackoffBase: time.Second, BackoffCap: 5 * time.Minute, Deadline: 24 * time.Hour}}
	if !equal(s, want) {
		t.Errorf("normalized\n %+v\nwant\n %+v", s, want)
	}
	if d := sp.Definition(); d.Kind != timetable.KindEvery || d.TimeZone != "UTC" {
		t.Errorf("parsed timing %+v", d)
	}
	given := Settings{Name: "n", Queue: "q", Kind: timetable.KindCron, Expr: "@daily", TimeZone: "Asia/Kolkata",
		DSTGap: timetable.GapShift, DSTRepeat: timetable.RepeatAll, Payload: []byte(`{"a":1}`),
		MisfirePolicy: record.MisfireCatchUp, CatchUpK: 3, MaxLateness: 2 * time.Hour, OverlapPolicy: record.OverlapSkipIfRunning,
		FlexibleWindow: time.Minute, Retry: record.RetryPolicy{MaxAttempts: 3, BackoffBase: 10 * time.Millisecond, BackoffCap: time.Minute, Deadline: time.Hour}}
	s = given
	if _, err := s.Normalize(); err != nil {
		t.Fatal(err)
	}
	if !equal(s, given) {
		t.Errorf("normalized\n %+v\nwant it unchanged\n %+v", s, given)
	}
}

func equal(a, b Settings) bool {
	return a.Name == b.Name && a.Queue == b.Queue && a.Kind == b.Kind && a.Expr == b.Expr && a.TimeZone == b.TimeZone &&
		a.Anchor.Equal(b.Anchor) && a.DSTGap == b.DSTGap && a.DSTRepeat == b.DSTRepeat && string(a.Payload) == string(b.Payload) &&
		a.MisfirePolicy == b.MisfirePolicy && a.CatchUpK == b.CatchUpK && a.MaxLateness == b.MaxLateness &&
		a.OverlapPolicy == b.OverlapPolicy && a.FlexibleWindow == b.FlexibleWindow && a.Retry == b.Retry
}

// TestSetDuration: zero takes the default; a value is kept within lo..hi
// and to the millisecond.
func TestSetDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want time.Duration
		msg      string
	}{
		{0, time.Minute, ""},
		{time.Second, time.Second, ""},
		{time.Hour, time.Hour, ""},
		{999 * time.Millisecond, 0, "lease: 999ms: must be from 1s to 1h0m0s"},
		{time.Hour + time.Millisecond, 0, "lease: 1h0m0.001s: must be from 1s to 1h0m0s"},
		{time.Second + time.Nanosecond, 0, "lease: 1.000000001s: must be whole milliseconds"},
	}
	for _, tt := range tests {
		d := tt.in
		err := SetDuration("lease", &d, time.Minute, time.Second, time.Hour)
		checkErr(t, err, "lease", tt.msg)
		if err == nil && d != tt.want {
			t.Errorf("SetDuration(%s) = %s, want %s", tt.in, d, tt.want)
		}
	}
}
