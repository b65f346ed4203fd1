package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/timetable"
)

// FromRequest reads a create or update body into Settings. It checks the
// syntax of what the API spells as strings (one kind, the anchor, the
// payload, the catch_up:K spelling, durations, a negative max_attempts);
// ranges, defaults and everything else are Normalize's. Errors are
// *ValidationError.
func FromRequest(r *api.ScheduleRequest) (Settings, error) {
	s := Settings{
		Name: r.Name, Queue: r.Queue, Target: r.Target, TimeZone: r.TimeZone,
		DSTGap: timetable.GapPolicy(r.DSTGap), DSTRepeat: timetable.RepeatPolicy(r.DSTRepeat),
		OverlapPolicy: record.OverlapPolicy(r.OverlapPolicy),
	}
	var err error
	if s.Kind, s.Expr, err = ParseKind(r.Cron, r.At, r.Every); err != nil {
		return s, err
	}
	if s.Anchor, err = ParseAnchor(r.Anchor); err != nil {
		return s, err
	}
	if s.Payload, err = ParsePayload(r.Payload); err != nil {
		return s, err
	}
	if s.MisfirePolicy, s.CatchUpK, err = ParseMisfire(r.MisfirePolicy); err != nil {
		return s, err
	}
	for _, d := range []struct {
		field string
		in    string
		out   *time.Duration
		zero  bool // "0s" means something (flexible_window: strict)
	}{
		{"max_lateness", r.MaxLateness, &s.MaxLateness, false},
		{"flexible_window", r.FlexibleWindow, &s.FlexibleWindow, true},
		{"retry_base", r.RetryBase, &s.Retry.BackoffBase, false},
		{"retry_cap", r.RetryCap, &s.Retry.BackoffCap, false},
		{"retry_deadline", r.RetryDeadline, &s.Retry.Deadline, false},
	} {
		if *d.out, err = ParseDuration(d.field, d.in, d.zero); err != nil {
			return s, err
		}
	}
	s.Retry.MaxAttempts = r.MaxAttempts
	if r.MaxAttempts < 0 {
		return s, Invalid("max_attempts", "%d must be at least 1 (0 or absent: the default)", r.MaxAttempts)
	}
	return s, nil
}

// ParseKind picks the kind of a request from its three expression fields,
// of which exactly one must be given, and returns it with its expression.
func ParseKind(cron, at, every string) (timetable.Kind, string, error) {
	var kind timetable.Kind
	var expr string
	n := 0
	for _, k := range []struct {
		kind timetable.Kind
		expr string
	}{{timetable.KindCron, cron}, {timetable.KindAt, at}, {timetable.KindEvery, every}} {
		if k.expr != "" {
			kind, expr = k.kind, k.expr
			n++
		}
	}
	if n != 1 {
		return kind, expr, &ValidationError{Field: "cron", Message: "give exactly one of cron, at or every"}
	}
	return kind, expr, nil
}

// ParseAnchor reads an every schedule's anchor, an RFC 3339 time, in UTC;
// "" is no anchor (the zero time).
func ParseAnchor(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := timetable.ParseInstant("anchor", s)
	if err != nil {
		return time.Time{}, FromTimetable(err)
	}
	return t.UTC(), nil
}

// ParsePayload checks a schedule's payload, any JSON value of at most
// record.MaxPayload bytes as sent, and returns it compact (so a worker gets the
// same bytes on every delivery, whatever the spacing of the request).
// Absent and JSON null are no payload (nil).
func ParsePayload(p json.RawMessage) ([]byte, error) {
	t := bytes.TrimSpace(p)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	if len(t) > record.MaxPayload {
		return nil, Invalid("payload", "%d bytes is over the limit of %d (256 KiB)", len(t), record.MaxPayload)
	}
	if !json.Valid(t) {
		return nil, Invalid("payload", "not valid JSON")
	}
	var c bytes.Buffer
	if err := json.Compact(&c, t); err != nil {
		return nil, Invalid("payload", "not valid JSON")
	}
	return c.Bytes(), nil
}

// CanonicalPayload is a payload's normal form, to compare two payloads by
// meaning: decoded and encoded again with object keys sorted, no
// insignificant space, numbers as written. Absent and JSON null are "".
func CanonicalPayload(p json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(p)) == 0 {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if dec.More() {
		return "", errors.New("more than one JSON value")
	}
	if v == nil {
		return "", nil
	}
	out, err := json.Marshal(v)
	return string(out), err
}

// ParseMisfire reads a misfire policy as the API spells it: skip,
// fire_once or catch_up:K. K is checked here (1 to MaxCatchUpK); any other
// word is returned as is for Normalize to refuse.
func ParseMisfire(s string) (record.MisfirePolicy, int, error) {
	if k, ok := strings.CutPrefix(s, string(record.MisfireCatchUp)+":"); ok {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 || n > MaxCatchUpK {
			return "", 0, invalidValue("misfire_policy", "%q: K must be a whole number from 1 to %d", s, MaxCatchUpK)
		}
		return record.MisfireCatchUp, n, nil
	}
	if s == string(record.MisfireCatchUp) {
		return "", 0, invalidValue("misfire_policy", "%q: say how many to catch up, catch_up:K with K from 1 to %d", s, MaxCatchUpK)
	}
	return record.MisfirePolicy(s), 0, nil
}

// FormatMisfire spells a misfire policy as the API does, the inverse of
// ParseMisfire: catch_up with its K as catch_up:K.
func FormatMisfire(p record.MisfirePolicy, k int) string {
	if p == record.MisfireCatchUp {
		return fmt.Sprintf("%s:%d", p, k)
	}
	return string(p)
}

// ParseDuration reads an optional Go duration. Absent is zero (the
// default, once normalized); a value given must be positive, or zero where
// zeroOK says zero means something, so that "0s" never silently turns into
// a default. Ranges are Normalize's.
func ParseDuration(field, s string, zeroOK bool) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, invalidValue(field, "%q: not a duration (use e.g. 90s, 15m, 24h)", s)
	}
	if d < 0 || (d == 0 && !zeroOK) {
		return 0, invalidValue(field, "%q: must be positive (leave it out for the default)", s)
	}
	return d, nil
}
