package schedule

import (
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/schedfile"
	rules "github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

// Offline validation of a schedule request, and the normal form that
// apply and diff compare. The rules, defaults and limits are schedd's own:
// package internal/schedule (imported as rules) is what schedd runs, and
// it links neither the engine nor a store, so schedctl can run it too. A
// check that passes here can still be refused by schedd for what needs its
// store or clock (a name taken, an at instant already past, a quota),
// never for the rules themselves.

// normalForm is a schedule's settings in a normal form: defaults filled
// in, times in UTC, durations parsed, the payload as canonical JSON. Two
// schedules with the same normal form behave the same.
type normalForm struct {
	Name, Queue   string
	Kind          timetable.Kind
	Expr          string // cron: fields joined by one space; at: RFC 3339 UTC; every: a Go duration
	canonicalCron string // cron: the six-field numeric form, to compare meaning
	TimeZone      string
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

// checkRequest validates r with schedd's rules and returns its normal
// form. Errors are *rules.ValidationError.
func checkRequest(r api.ScheduleRequest) (*normalForm, error) {
	set, sp, err := schedfile.Check(r)
	if err != nil {
		return nil, err
	}
	s := &normalForm{Name: set.Name, Queue: set.Queue, TimeZone: set.TimeZone,
		Misfire: rules.FormatMisfire(set.MisfirePolicy, set.CatchUpK), MaxLateness: set.MaxLateness,
		Overlap: string(set.OverlapPolicy), FlexWindow: set.FlexibleWindow, MaxAttempts: set.Retry.MaxAttempts,
		RetryBase: set.Retry.BackoffBase, RetryCap: set.Retry.BackoffCap, RetryDeadline: set.Retry.Deadline}
	s.normalTiming(sp.Definition(), sp.Canonical())
	// The payload is valid JSON by now (FromRequest checked it); the
	// canonical form sorts its keys so that a reordered object is no change.
	if s.Payload, err = rules.CanonicalPayload(set.Payload); err != nil {
		return nil, rules.Invalid("payload", "not valid JSON: %v", err)
	}
	return s, nil
}

// normalTiming fills the timing fields from a parsed definition.
func (s *normalForm) normalTiming(d timetable.Definition, canonical string) {
	s.Kind = d.Kind
	switch d.Kind {
	case timetable.KindCron:
		s.Expr = strings.Join(strings.Fields(d.Expr), " ")
		s.canonicalCron = canonical
		s.Gap, s.Repeat = string(d.DSTGap), string(d.DSTRepeat)
	case timetable.KindAt:
		if t, err := timetable.ParseInstant("at", d.Expr); err == nil {
			s.Expr = t.UTC().Format(time.RFC3339)
		}
	case timetable.KindEvery:
		if iv, err := timetable.ParseEvery(d.Expr); err == nil {
			s.Expr = iv.String()
		}
		a := d.Anchor
		if a.IsZero() {
			a = epoch
		}
		s.Anchor = a.UTC().Format(time.RFC3339)
	}
}

// fromLive is the normal form of a schedule as schedd returns it. It does
// not judge: schedd already did, and a field it spells in a way this
// schedctl cannot read is kept as is, so it shows up in a diff rather
// than being hidden.
func fromLive(sc api.Schedule) *normalForm {
	s := &normalForm{Name: sc.Name, Queue: sc.Queue, Kind: timetable.Kind(sc.Kind), Expr: sc.Expression, TimeZone: sc.TimeZone,
		Misfire: sc.MisfirePolicy, Overlap: sc.OverlapPolicy, MaxAttempts: sc.MaxAttempts}
	def := timetable.Definition{Kind: s.Kind, Expr: sc.Expression, TimeZone: "UTC", DSTGap: timetable.GapPolicy(sc.DSTGap), DSTRepeat: timetable.RepeatPolicy(sc.DSTRepeat)}
	if sc.Anchor != "" {
		if a, err := timetable.ParseInstant("anchor", sc.Anchor); err == nil {
			def.Anchor = a
		}
	}
	// The zone only matters for local times, not for the normal form; UTC
	// keeps a zone this host does not know from hiding the rest.
	if sp, err := timetable.Parse(def); err == nil {
		s.normalTiming(sp.Definition(), sp.Canonical())
	} else if s.Kind == timetable.KindCron {
		s.Gap, s.Repeat = sc.DSTGap, sc.DSTRepeat
	}
	if p, err := rules.CanonicalPayload(sc.Payload); err == nil {
		s.Payload = p
	} else if len(sc.Payload) > 0 {
		s.Payload = string(sc.Payload)
	}
	if s.Misfire == "" {
		s.Misfire = string(record.MisfireFireOnce)
	} else if p, k, err := rules.ParseMisfire(s.Misfire); err == nil {
		s.Misfire = rules.FormatMisfire(p, k)
	}
	if s.Overlap == "" {
		s.Overlap = "allow"
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = rules.DefaultMaxAttempts
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
	s.MaxLateness = liveDur(sc.MaxLateness, rules.DefaultMaxLateness)
	s.FlexWindow = liveDur(sc.FlexibleWindow, 0)
	s.RetryBase = liveDur(sc.RetryBase, rules.DefaultRetryBase)
	s.RetryCap = liveDur(sc.RetryCap, rules.DefaultRetryCap)
	s.RetryDeadline = liveDur(sc.RetryDeadline, rules.DefaultRetryDeadline)
	return s
}

// change is one field that differs between a file and schedd.
type change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// fields lists the compared settings in a fixed order, as text.
func (s *normalForm) fields() []change {
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
		{Field: "time_zone", To: s.TimeZone},
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
func diffSchedules(live, want *normalForm) []change {
	lf, wf := live.fields(), want.fields()
	var out []change
	for i := range wf {
		if lf[i].To == wf[i].To {
			continue
		}
		if wf[i].Field == "cron" && live.Kind == timetable.KindCron && want.Kind == timetable.KindCron &&
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
