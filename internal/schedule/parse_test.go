package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/timetable"
)

// TestFromRequest: the API's strings read into Settings, and every syntax
// rule with a body it takes and one it refuses, with the exact error the
// API answers with. Ranges are left to Normalize.
func TestFromRequest(t *testing.T) {
	t.Parallel()
	base := func() api.ScheduleRequest { return api.ScheduleRequest{Name: "n", Queue: "q", Every: "1h"} }
	tests := []struct {
		name       string
		mut        func(*api.ScheduleRequest)
		field, msg string // msg "" = read
	}{
		{"every", func(r *api.ScheduleRequest) {}, "", ""},
		{"cron", func(r *api.ScheduleRequest) { r.Every, r.Cron = "", "0 2 * * *" }, "", ""},
		{"at", func(r *api.ScheduleRequest) { r.Every, r.At = "", "2027-03-14T09:00:00-04:00" }, "", ""},
		{"no kind", func(r *api.ScheduleRequest) { r.Every = "" }, "cron", "give exactly one of cron, at or every"},
		{"two kinds", func(r *api.ScheduleRequest) { r.Cron = "* * * * *" }, "cron", "give exactly one of cron, at or every"},
		{"three kinds", func(r *api.ScheduleRequest) { r.Cron, r.At = "* * * * *", "2027-03-14T09:00:00Z" }, "cron", "give exactly one of cron, at or every"},
		{"anchor", func(r *api.ScheduleRequest) { r.Anchor = "2027-01-01T00:00:30+01:00" }, "", ""},
		{"anchor not a time", func(r *api.ScheduleRequest) { r.Anchor = "noon" }, "anchor", `anchor "noon": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{"anchor year 10000", func(r *api.ScheduleRequest) { r.Anchor = "10000-01-01T00:00:00Z" }, "anchor", `anchor "10000-01-01T00:00:00Z": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{"payload", func(r *api.ScheduleRequest) { r.Payload = json.RawMessage(` {"a": [1, 2]} `) }, "", ""},
		{"payload not JSON", func(r *api.ScheduleRequest) { r.Payload = json.RawMessage(`{a}`) }, "payload", "payload: not valid JSON"},
		{"payload over the limit", func(r *api.ScheduleRequest) {
			r.Payload = json.RawMessage(`"` + strings.Repeat("x", record.MaxPayload-1) + `"`)
		}, "payload", "payload: 262145 bytes is over the limit of 262144 (256 KiB)"},
		{"misfire catch_up:5", func(r *api.ScheduleRequest) { r.MisfirePolicy = "catch_up:5" }, "", ""},
		{"misfire catch_up", func(r *api.ScheduleRequest) { r.MisfirePolicy = "catch_up" }, "misfire_policy", `misfire_policy "catch_up": say how many to catch up, catch_up:K with K from 1 to 1000`},
		{"misfire catch_up:1001", func(r *api.ScheduleRequest) { r.MisfirePolicy = "catch_up:1001" }, "misfire_policy", `misfire_policy "catch_up:1001": K must be a whole number from 1 to 1000`},
		{"max_lateness", func(r *api.ScheduleRequest) { r.MaxLateness = " 90s " }, "", ""},
		{"max_lateness 0s", func(r *api.ScheduleRequest) { r.MaxLateness = "0s" }, "max_lateness", `max_lateness "0s": must be positive (leave it out for the default)`},
		{"max_lateness soon", func(r *api.ScheduleRequest) { r.MaxLateness = "soon" }, "max_lateness", `max_lateness "soon": not a duration (use e.g. 90s, 15m, 24h)`},
		{"flexible_window 0s", func(r *api.ScheduleRequest) { r.FlexibleWindow = "0s" }, "", ""},
		{"flexible_window -1s", func(r *api.ScheduleRequest) { r.FlexibleWindow = "-1s" }, "flexible_window", `flexible_window "-1s": must be positive (leave it out for the default)`},
		{"retry_base 0s", func(r *api.ScheduleRequest) { r.RetryBase = "0s" }, "retry_base", `retry_base "0s": must be positive (leave it out for the default)`},
		{"retry_cap 5 minutes", func(r *api.ScheduleRequest) { r.RetryCap = "5 minutes" }, "retry_cap", `retry_cap "5 minutes": not a duration (use e.g. 90s, 15m, 24h)`},
		{"retry_deadline -1s", func(r *api.ScheduleRequest) { r.RetryDeadline = "-1s" }, "retry_deadline", `retry_deadline "-1s": must be positive (leave it out for the default)`},
		{"max_attempts 0", func(r *api.ScheduleRequest) { r.MaxAttempts = 0 }, "", ""},
		{"max_attempts -1", func(r *api.ScheduleRequest) { r.MaxAttempts = -1 }, "max_attempts", "max_attempts: -1 must be at least 1 (0 or absent: the default)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := base()
			tt.mut(&r)
			_, err := FromRequest(&r)
			checkErr(t, err, tt.field, tt.msg)
		})
	}
}

// TestFromRequestFields: every field of a request lands in its setting.
func TestFromRequestFields(t *testing.T) {
	t.Parallel()
	r := api.ScheduleRequest{Name: "n", Queue: "q", Cron: "0 2 * * *", TimeZone: "Europe/Berlin", DSTGap: "shift", DSTRepeat: "all",
		Payload: json.RawMessage(`{ "b": 2, "a": 1 }`), MisfirePolicy: "catch_up:7", MaxLateness: "2m", OverlapPolicy: "queue_one",
		FlexibleWindow: "30s", MaxAttempts: 4, RetryBase: "250ms", RetryCap: "1m", RetryDeadline: "6h", IdempotencyKey: "k"}
	s, err := FromRequest(&r)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Name: "n", Queue: "q", Kind: timetable.KindCron, Expr: "0 2 * * *", TimeZone: "Europe/Berlin",
		DSTGap: timetable.GapShift, DSTRepeat: timetable.RepeatAll, Payload: []byte(`{"b":2,"a":1}`),
		MisfirePolicy: record.MisfireCatchUp, CatchUpK: 7, MaxLateness: 2 * time.Minute, OverlapPolicy: record.OverlapQueueOne,
		FlexibleWindow: 30 * time.Second, Retry: record.RetryPolicy{MaxAttempts: 4, BackoffBase: 250 * time.Millisecond, BackoffCap: time.Minute, Deadline: 6 * time.Hour}}
	if !equal(s, want) {
		t.Errorf("read\n %+v\nwant\n %+v", s, want)
	}
	if _, err := s.Normalize(); err != nil {
		t.Errorf("normalize: %v", err)
	}
	a, err := FromRequest(&api.ScheduleRequest{Name: "n", Queue: "q", Every: "1h", Anchor: "2027-01-01T01:00:30+01:00"})
	if err != nil || !a.Anchor.Equal(time.Date(2027, 1, 1, 0, 0, 30, 0, time.UTC)) || a.Anchor.Location() != time.UTC {
		t.Errorf("anchor %v (%v), want 2027-01-01T00:00:30Z in UTC", a.Anchor, err)
	}
}

// TestParsePayload: JSON stored compact; absent and null are no payload.
func TestParsePayload(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		msg      string
	}{
		{"", "", ""},
		{" null ", "", ""},
		{`"x"`, `"x"`, ""},
		{"{ \"b\" : [1, 2],\n \"a\": null }", `{"b":[1,2],"a":null}`, ""},
		{`1e400`, `1e400`, ""},
		{`{"a":}`, "", "payload: not valid JSON"},
		{`1 2`, "", "payload: not valid JSON"},
		{`"` + strings.Repeat("p", record.MaxPayload-2) + `"`, `"` + strings.Repeat("p", record.MaxPayload-2) + `"`, ""},
		{`"` + strings.Repeat("p", record.MaxPayload-1) + `"`, "", "payload: 262145 bytes is over the limit of 262144 (256 KiB)"},
	}
	for _, tt := range tests {
		b, err := ParsePayload(json.RawMessage(tt.in))
		checkErr(t, err, "payload", tt.msg)
		if err == nil && string(b) != tt.want {
			t.Errorf("ParsePayload(%.40q) = %.40q, want %.40q", tt.in, b, tt.want)
		}
		if err == nil && tt.want == "" && b != nil {
			t.Errorf("ParsePayload(%q) = %q, want nil", tt.in, b)
		}
	}
}

// TestCanonicalPayload: payloads of the same meaning have one normal form.
func TestCanonicalPayload(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, err string }{
		{"", "", ""},
		{"null", "", ""},
		{`{ "b": 2, "a": [1, {"c": null}] }`, `{"a":[1,{"c":null}],"b":2}`, ""},
		{`1.50`, `1.50`, ""},
		{`{"a":}`, "", "invalid character"},
		{`1 2`, "", "more than one JSON value"},
	}
	for _, tt := range tests {
		got, err := CanonicalPayload(json.RawMessage(tt.in))
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) || got != tt.want {
			t.Errorf("CanonicalPayload(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestMisfireSpelling: catch_up:K read and written back; other words are
// left to Normalize.
func TestMisfireSpelling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		p    record.MisfirePolicy
		k    int
		msg  string
		back string // FormatMisfire of the result
	}{
		{"", "", 0, "", ""},
		{"skip", record.MisfireSkip, 0, "", "skip"},
		{"fire_once", record.MisfireFireOnce, 0, "", "fire_once"},
		{"catch_up:1", record.MisfireCatchUp, 1, "", "catch_up:1"},
		{"catch_up:1000", record.MisfireCatchUp, 1000, "", "catch_up:1000"},
		{"catch_up:007", record.MisfireCatchUp, 7, "", "catch_up:7"},
		{"sometimes", "sometimes", 0, "", "sometimes"},
		{"catch_up", "", 0, `misfire_policy "catch_up": say how many to catch up, catch_up:K with K from 1 to 1000`, ""},
		{"catch_up:0", "", 0, `misfire_policy "catch_up:0": K must be a whole number from 1 to 1000`, ""},
		{"catch_up:1001", "", 0, `misfire_policy "catch_up:1001": K must be a whole number from 1 to 1000`, ""},
		{"catch_up:x", "", 0, `misfire_policy "catch_up:x": K must be a whole number from 1 to 1000`, ""},
		{"catch_up:-1", "", 0, `misfire_policy "catch_up:-1": K must be a whole number from 1 to 1000`, ""},
	}
	for _, tt := range tests {
		p, k, err := ParseMisfire(tt.in)
		checkErr(t, err, "misfire_policy", tt.msg)
		if err != nil {
			continue
		}
		if p != tt.p || k != tt.k {
			t.Errorf("ParseMisfire(%q) = %q, %d; want %q, %d", tt.in, p, k, tt.p, tt.k)
		}
		if got := FormatMisfire(p, k); got != tt.back {
			t.Errorf("FormatMisfire(%q, %d) = %q, want %q", p, k, got, tt.back)
		}
	}
}

// TestParseDuration: absent is zero; zero only where it means something.
func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		zeroOK bool
		want   time.Duration
		msg    string
	}{
		{"", false, 0, ""},
		{"90s", false, 90 * time.Second, ""},
		{" 1h30m ", false, 90 * time.Minute, ""},
		{"1ns", false, 1, ""}, // a range for Normalize
		{"0s", true, 0, ""},
		{"0s", false, 0, `wait "0s": must be positive (leave it out for the default)`},
		{"-1s", true, 0, `wait "-1s": must be positive (leave it out for the default)`},
		{"soon", true, 0, `wait "soon": not a duration (use e.g. 90s, 15m, 24h)`},
		{"9999999999h", false, 0, `wait "9999999999h": not a duration (use e.g. 90s, 15m, 24h)`},
	}
	for _, tt := range tests {
		d, err := ParseDuration("wait", tt.in, tt.zeroOK)
		checkErr(t, err, "wait", tt.msg)
		if err == nil && d != tt.want {
			t.Errorf("ParseDuration(%q) = %s, want %s", tt.in, d, tt.want)
		}
	}
}

// TestReason: the message without the field's name in front, for callers
// that name the field their own way; the time engine's messages are kept
// whole.
func TestReason(t *testing.T) {
	t.Parallel()
	_, err := ParseDuration("max_lateness", "soon", false)
	_, _, err2 := ParseMisfire("catch_up")
	_, err3 := ParseAnchor("noon")
	s := Settings{Name: "n", Queue: "q", Kind: timetable.KindCron, Expr: "61 * * * *", TimeZone: "UTC"}
	_, err4 := s.Normalize()
	_, _, err5 := ParseKind("", "", "")
	tests := []struct {
		err  error
		want string
	}{
		{Invalid("name", "must not be empty"), "must not be empty"},
		{CheckText("queue", "a b", MaxQueueLen, true), `"a b": use only letters, digits and . _ - :`},
		{err, `"soon": not a duration (use e.g. 90s, 15m, 24h)`},
		{err2, `"catch_up": say how many to catch up, catch_up:K with K from 1 to 1000`},
		{err3, `anchor "noon": not an RFC 3339 time (e.g. 2027-03-14T09:00:00-04:00)`},
		{err4, `minute field "61": out of range 0-59 (field 1 of 5)`},
		{err5, "give exactly one of cron, at or every"},
	}
	for _, tt := range tests {
		ve, ok := tt.err.(*ValidationError)
		if !ok {
			t.Fatalf("%v (%T): want a *ValidationError", tt.err, tt.err)
		}
		if got := ve.Reason(); got != tt.want {
			t.Errorf("Reason of %q = %q, want %q", ve.Message, got, tt.want)
		}
	}
}

// TestFromTimetable: the time engine's errors keep their message; parts of a
// cron expression are the field cron; other errors pass through.
func TestFromTimetable(t *testing.T) {
	t.Parallel()
	for field, want := range map[string]string{"minute field": "cron", "day-of-week field": "cron", "cron": "cron", "time_zone": "time_zone", "every": "every"} {
		err := FromTimetable(&timetable.InvalidError{Field: field, Msg: "m"})
		checkErr(t, err, want, "m")
	}
	other := json.Unmarshal([]byte("{"), new(any))
	if got := FromTimetable(other); got != other {
		t.Errorf("FromTimetable(%v) = %v, want it unchanged", other, got)
	}
}
