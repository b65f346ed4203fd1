package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/limits"
	"github.com/sched-dev/sched/internal/spec"
)

// Offline validation of a schedule request, and the normal form that
// apply and diff compare. The rules and defaults are schedd's (those of
// internal/engine's ScheduleSpec.normalize), repeated here because
// schedctl must not link the engine: a check that passes here can still be
// refused by schedd (an at instant already past, a quota), never the
// other way round for the same rules.

// Defaults and limits, as schedd applies them (package limits is their
// one source).
const (
	defaultMaxLateness   = limits.DefaultMaxLateness
	defaultMaxAttempts   = limits.DefaultMaxAttempts
	defaultRetryBase     = limits.DefaultRetryBase
	defaultRetryCap      = limits.DefaultRetryCap
	defaultRetryDeadline = limits.DefaultRetryDeadline
	maxCatchUpK          = limits.MaxCatchUpK
	maxNameLen           = limits.MaxNameLen
	maxQueueLen          = limits.MaxQueueLen
	maxIdempotencyKey    = limits.MaxIdempotencyKey
	maxSettingDuration   = limits.MaxSettingDuration
	maxFlexibleWindow    = limits.MaxFlexibleWindow
	maxAttemptsLimit     = limits.MaxAttempts
	maxPayload           = limits.MaxPayload
)

// fieldError is one invalid field of a schedule request; Field is the
// request's JSON/YAML name of it.
type fieldError struct {
	Field string
	Msg   string
}

func (e *fieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErrorf(field, format string, args ...any) error {
	return &fieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// schedule is a schedule's settings in a normal form: defaults filled in,
// times in UTC, durations parsed, the payload as canonical JSON. Two
// schedules with the same normal form behave the same.
type schedule struct {
	Name, Queue   string
	Kind          spec.Kind
	Expr          string // cron: fields joined by one space; at: RFC 3339 UTC; every: a Go duration
	canonicalCron string // cron: the six-field numeric form, to compare meaning
	Zone          string
	Anchor        string // every: RFC 3339 UTC (the epoch when not given); else ""
	Gap, Repeat   string // cron only; else ""
	Payload       string // canonical JSON; "" for none
	Misfire       string
	MaxLateness   time.Duration
	Overlap       string
	FlexWindow    time.Duration
	MaxAttempts   int
	RetryBase     time.Duration
	RetryCap      time.Duration
	RetryDeadline time.Duration
}

var epoch = time.Unix(0, 0).UTC()

// checkRequest validates r as schedd would and returns its normal form.
// Errors are *fieldError.
func checkRequest(r api.ScheduleRequest) (*schedule, error) {
	s := &schedule{Name: r.Name, Queue: r.Queue}
	if err := checkText("name", r.Name, maxNameLen, false); err != nil {
		return nil, err
	}
	if err := checkText("queue", r.Queue, maxQueueLen, true); err != nil {
		return nil, err
	}
	var kinds []string
	for _, k := range []struct {
		kind spec.Kind
		expr string
	}{{spec.KindCron, r.Cron}, {spec.KindAt, r.At}, {spec.KindEvery, r.Every}} {
		if k.expr != "" {
			kinds = append(kinds, string(k.kind))
			s.Kind, s.Expr = k.kind, k.expr
		}
	}
	switch len(kinds) {
	case 0:
		return nil, fieldErrorf("cron", "give one of cron, at or every")
	case 1:
	default:
		return nil, fieldErrorf(kinds[1], "give only one of cron, at or every, not %s", strings.Join(kinds, " and "))
	}
	s.Zone = r.TimeZone
	if s.Zone == "" {
		if s.Kind == spec.KindCron {
			return nil, fieldErrorf("time_zone", "a cron schedule needs a time zone (an IANA name such as Europe/Berlin, or UTC)")
		}
		s.Zone = "UTC"
	}
	if r.Anchor != "" && s.Kind != spec.KindEvery {
		return nil, fieldErrorf("anchor", "an anchor only applies to an every schedule")
	}
	if s.Kind != spec.KindCron {
		if r.DSTGap != "" {
			return nil, fieldErrorf("dst_gap", "DST options only apply to a cron schedule")
		}
		if r.DSTRepeat != "" {
			return nil, fieldErrorf("dst_repeat", "DST options only apply to a cron schedule")
		}
	}
	def := spec.Definition{Kind: s.Kind, Expr: s.Expr, Zone: s.Zone,
		Gap: spec.GapPolicy(r.DSTGap), Repeat: spec.RepeatPolicy(r.DSTRepeat)}
	if r.Anchor != "" {
		a, err := spec.ParseInstant("anchor", r.Anchor)
		if err != nil {
			return nil, fromSpec(s.Kind, err)
		}
		def.Anchor = a
	}
	sp, err := spec.Parse(def)
	if err != nil {
		return nil, fromSpec(s.Kind, err)
	}
	s.normalTiming(sp.Definition(), sp.Canonical())

	if len(r.Payload) > 0 {
		if len(r.Payload) > maxPayload {
			return nil, fieldErrorf("payload", "%d bytes is over the limit of %d (256 KiB)", len(r.Payload), maxPayload)
		}
		p, err := canonicalJSON(r.Payload)
		if err != nil {
			return nil, fieldErrorf("payload", "not valid JSON: %v", err)
		}
		s.Payload = p
	}
	if s.Misfire, err = checkMisfire(r.MisfirePolicy); err != nil {
		return nil, err
	}
	if s.MaxLateness, err = checkDuration("max_lateness", r.MaxLateness, defaultMaxLateness, time.Second, maxSettingDuration, time.Millisecond); err != nil {
		return nil, err
	}
	switch r.OverlapPolicy {
	case "":
		s.Overlap = "allow"
	case "allow", "skip_if_running", "queue_one":
		s.Overlap = r.OverlapPolicy
	default:
		return nil, fieldErrorf("overlap_policy", "%q: want allow, skip_if_running or queue_one", r.OverlapPolicy)
	}
	if s.FlexWindow, err = checkDuration("flexible_window", r.FlexibleWindow, 0, 0, maxFlexibleWindow, time.Second); err != nil {
		return nil, err
	}
	switch {
	case r.MaxAttempts == 0:
		s.MaxAttempts = defaultMaxAttempts
	case r.MaxAttempts < 0 || r.MaxAttempts > maxAttemptsLimit:
		return nil, fieldErrorf("max_attempts", "%d: must be 1 to %d", r.MaxAttempts, maxAttemptsLimit)
	default:
		s.MaxAttempts = r.MaxAttempts
	}
	if s.RetryBase, err = checkDuration("retry_base", r.RetryBase, defaultRetryBase, time.Millisecond, time.Hour, time.Millisecond); err != nil {
		return nil, err
	}
	if s.RetryCap, err = checkDuration("retry_cap", r.RetryCap, defaultRetryCap, time.Millisecond, 24*time.Hour, time.Millisecond); err != nil {
		return nil, err
	}
	if s.RetryCap < s.RetryBase {
		return nil, fieldErrorf("retry_cap", "%s is less than retry_base %s", s.RetryCap, s.RetryBase)
	}
	if s.RetryDeadline, err = checkDuration("retry_deadline", r.RetryDeadline, defaultRetryDeadline, time.Second, maxSettingDuration, time.Millisecond); err != nil {
		return nil, err
	}
	if r.IdempotencyKey != "" {
		if err := checkText("idempotency_key", r.IdempotencyKey, maxIdempotencyKey, false); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// normalTiming fills the timing fields from a parsed definition.
func (s *schedule) normalTiming(d spec.Definition, canonical string) {
	s.Kind = d.Kind
	switch d.Kind {
	case spec.KindCron:
		s.Expr = strings.Join(strings.Fields(d.Expr), " ")
		s.canonicalCron = canonical
		s.Gap, s.Repeat = string(d.Gap), string(d.Repeat)
	case spec.KindAt:
		if t, err := spec.ParseInstant("at", d.Expr); err == nil {
			s.Expr = t.UTC().Format(time.RFC3339)
		}
	case spec.KindEvery:
		if iv, err := spec.ParseEvery(d.Expr); err == nil {
			s.Expr = iv.String()
		}
		a := d.Anchor
		if a.IsZero() {
			a = epoch
		}
		s.Anchor = a.UTC().Format(time.RFC3339)
	}
}

// fromSpec turns the time engine's error into a field error: parts of a
// cron expression ("minute field") are the cron field.
func fromSpec(kind spec.Kind, err error) error {
	var ie *spec.InvalidError
	if !errors.As(err, &ie) {
		return err
	}
	switch ie.Field {
	case "cron", "at", "every", "anchor", "time_zone", "dst_gap", "dst_repeat":
		return &fieldError{Field: ie.Field, Msg: ie.Msg}
	}
	return &fieldError{Field: string(kind), Msg: ie.Msg}
}

func checkMisfire(p string) (string, error) {
	switch {
	case p == "":
		return "fire_once", nil
	case p == "skip" || p == "fire_once":
		return p, nil
	case strings.HasPrefix(p, "catch_up:"):
		k, err := strconv.Atoi(strings.TrimPrefix(p, "catch_up:"))
		if err != nil || k < 1 || k > maxCatchUpK {
			return "", fieldErrorf("misfire_policy", "%q: K must be a number from 1 to %d", p, maxCatchUpK)
		}
		return "catch_up:" + strconv.Itoa(k), nil
	case p == "catch_up":
		return "", fieldErrorf("misfire_policy", "catch_up needs K, the most recent firings to run: catch_up:K with K from 1 to %d", maxCatchUpK)
	}
	return "", fieldErrorf("misfire_policy", "%q: want skip, fire_once or catch_up:K", p)
}

// checkDuration parses a setting: "" is the default; a value given must be
// within lo..hi and a whole multiple of unit. Zero is refused unless lo is
// zero (flexible_window: strict), as schedd does: "0s" never silently
// means the default.
func checkDuration(field, s string, def, lo, hi, unit time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fieldErrorf(field, "%q: not a duration (use e.g. 90s, 5m, 24h)", s)
	}
	if d <= 0 && lo > 0 || d < 0 {
		return 0, fieldErrorf(field, "%q: must be positive (leave it out for the default)", s)
	}
	if d < lo || d > hi {
		return 0, fieldErrorf(field, "%s: must be from %s to %s", d, lo, hi)
	}
	if d%unit != 0 {
		what := "whole seconds"
		if unit == time.Millisecond {
			what = "whole milliseconds"
		}
		return 0, fieldErrorf(field, "%s: must be %s", d, what)
	}
	return d, nil
}

// checkText refuses empty, over-long, invalid UTF-8 and control
// characters; strict also limits the text to letters, digits and . _ - :
// (queue names end up in metric labels and URLs).
func checkText(field, s string, max int, strict bool) error {
	switch {
	case s == "":
		return fieldErrorf(field, "must not be empty")
	case len(s) > max:
		return fieldErrorf(field, "%d bytes is over the limit of %d", len(s), max)
	case !utf8.ValidString(s):
		return fieldErrorf(field, "is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fieldErrorf(field, "%q contains a control character", s)
		}
		if strict && !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-:", r))) {
			return fieldErrorf(field, "%q: use only letters, digits and . _ - :", s)
		}
	}
	if s != strings.TrimSpace(s) {
		return fieldErrorf(field, "%q has leading or trailing space", s)
	}
	return nil
}

// canonicalJSON decodes and re-encodes a JSON value: object keys sorted,
// no insignificant space, numbers as written. "null" is no payload.
func canonicalJSON(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
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

// fromLive is the normal form of a schedule as schedd returns it. It does
// not judge: schedd already did, and a field it spells in a way this
// schedctl cannot read is kept as is, so it shows up in a diff rather
// than being hidden.
func fromLive(sc api.Schedule) *schedule {
	s := &schedule{Name: sc.Name, Queue: sc.Queue, Kind: spec.Kind(sc.Kind), Expr: sc.Expression, Zone: sc.TimeZone,
		Misfire: sc.MisfirePolicy, Overlap: sc.OverlapPolicy, MaxAttempts: sc.MaxAttempts}
	def := spec.Definition{Kind: s.Kind, Expr: sc.Expression, Zone: "UTC", Gap: spec.GapPolicy(sc.DSTGap), Repeat: spec.RepeatPolicy(sc.DSTRepeat)}
	if sc.Anchor != "" {
		if a, err := spec.ParseInstant("anchor", sc.Anchor); err == nil {
			def.Anchor = a
		}
	}
	// The zone only matters for local times, not for the normal form; UTC
	// keeps a zone this host does not know from hiding the rest.
	if sp, err := spec.Parse(def); err == nil {
		s.normalTiming(sp.Definition(), sp.Canonical())
	} else if s.Kind == spec.KindCron {
		s.Gap, s.Repeat = sc.DSTGap, sc.DSTRepeat
	}
	if p, err := canonicalJSON(sc.Payload); err == nil {
		s.Payload = p
	} else if len(sc.Payload) > 0 {
		s.Payload = string(sc.Payload)
	}
	if m, err := checkMisfire(sc.MisfirePolicy); err == nil {
		s.Misfire = m
	}
	if s.Overlap == "" {
		s.Overlap = "allow"
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = defaultMaxAttempts
	}
	liveDur := func(v string, def time.Duration) time.Duration {
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return -1 // unreadable: differs from anything a file can say
		}
		if d == 0 {
			return def
		}
		return d
	}
	s.MaxLateness = liveDur(sc.MaxLateness, defaultMaxLateness)
	s.FlexWindow = liveDur(sc.FlexibleWindow, 0)
	s.RetryBase = liveDur(sc.RetryBase, defaultRetryBase)
	s.RetryCap = liveDur(sc.RetryCap, defaultRetryCap)
	s.RetryDeadline = liveDur(sc.RetryDeadline, defaultRetryDeadline)
	return s
}

// change is one field that differs between a file and schedd.
type change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// fields lists the compared settings in a fixed order, as text.
func (s *schedule) fields() []change {
	dur := func(d time.Duration) string {
		if d < 0 {
			return "(unreadable)"
		}
		return d.String()
	}
	return []change{
		{Field: "queue", To: s.Queue},
		{Field: "kind", To: string(s.Kind)},
		{Field: string(s.Kind), To: s.Expr},
		{Field: "time_zone", To: s.Zone},
		{Field: "anchor", To: s.Anchor},
		{Field: "dst_gap", To: s.Gap},
		{Field: "dst_repeat", To: s.Repeat},
		{Field: "payload", To: s.Payload},
		{Field: "misfire_policy", To: s.Misfire},
		{Field: "max_lateness", To: dur(s.MaxLateness)},
		{Field: "overlap_policy", To: s.Overlap},
		{Field: "flexible_window", To: dur(s.FlexWindow)},
		{Field: "max_attempts", To: strconv.Itoa(s.MaxAttempts)},
		{Field: "retry_base", To: dur(s.RetryBase)},
		{Field: "retry_cap", To: dur(s.RetryCap)},
		{Field: "retry_deadline", To: dur(s.RetryDeadline)},
	}
}

// diffSchedules lists what changes from live to want. A cron expression
// rewritten with the same meaning ("@daily" and "0 0 * * *") is not a
// change; the name is the key and never differs.
func diffSchedules(live, want *schedule) []change {
	lf, wf := live.fields(), want.fields()
	var out []change
	for i := range wf {
		if lf[i].To == wf[i].To {
			continue
		}
		if wf[i].Field == "cron" && live.Kind == spec.KindCron && want.Kind == spec.KindCron &&
			live.canonicalCron != "" && live.canonicalCron == want.canonicalCron {
			continue
		}
		if lf[i].Field != wf[i].Field { // the kind changed: show the old expression under its kind
			out = append(out, change{Field: wf[i].Field, From: lf[i].Field + " " + lf[i].To, To: wf[i].To})
			continue
		}
		out = append(out, change{Field: wf[i].Field, From: lf[i].To, To: wf[i].To})
	}
	return out
}
