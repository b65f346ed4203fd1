package schedule

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/sched-dev/sched/internal/record"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	rules "github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

// scheduleFlags are the settings flags of create and update.
type scheduleFlags struct {
	Name, Queue, Target, Cron, At, Every, TimeZone string
	Anchor                                         string
	Payload, Misfire, MaxLateness, Overlap         string
	FlexWindow, DSTGap, DSTRepeat                  string
	MaxAttempts                                    int
}

// flagField maps a flag to the request field it sets, and back.
var flagField = map[string]string{
	"name": "name", "queue": "queue", "target": "target", "cron": "cron", "at": "at", "every": "every",
	"tz": "time_zone", "anchor": "anchor", "payload": "payload", "misfire": "misfire_policy",
	"max-lateness": "max_lateness", "overlap": "overlap_policy", "flex-window": "flexible_window",
	"dst-gap": "dst_gap", "dst-repeat": "dst_repeat", "max-attempts": "max_attempts",
	"idempotency-key": "idempotency_key",
}

func fieldFlag(field string) string {
	for fl, f := range flagField {
		if f == field {
			return "--" + fl
		}
	}
	return field
}

func (sf *scheduleFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&sf.Name, "name", "", "name of the schedule, unique among your live schedules")
	fl.StringVar(&sf.Queue, "queue", "", "queue its occurrences go to (letters, digits and . _ - :)")
	fl.StringVar(&sf.Target, "target", "", "deliver the firings to this target (schedctl target list) instead of a queue")
	fl.StringVar(&sf.Cron, "cron", "", "cron expression: 5 fields, or 6 with leading seconds, or a macro such as @daily")
	fl.StringVar(&sf.At, "at", "", "one instant, RFC 3339 with any offset")
	fl.StringVar(&sf.Every, "every", "", "fixed interval of elapsed time, e.g. 90s, 15m, 24h")
	fl.StringVar(&sf.TimeZone, "tz", "", "IANA time zone, e.g. Europe/Berlin (required with --cron; default UTC otherwise)")
	fl.StringVar(&sf.Anchor, "anchor", "", "instant an --every interval counts from (default: the Unix epoch)")
	fl.StringVar(&sf.Payload, "payload", "", "JSON handed to the worker; @FILE reads a file, @- standard input")
	fl.StringVar(&sf.Misfire, "misfire", "", "firings later than --max-lateness: skip, fire_once or catch_up:K (default fire_once)")
	fl.StringVar(&sf.MaxLateness, "max-lateness", "", "how late a firing may still fire normally (default 1m)")
	fl.StringVar(&sf.Overlap, "overlap", "", "while an occurrence runs: allow, skip_if_running or queue_one (default allow)")
	fl.StringVar(&sf.FlexWindow, "flex-window", "", "spread each firing over this window, e.g. 5m (default 0: strict)")
	fl.IntVar(&sf.MaxAttempts, "max-attempts", 0, "attempts before an occurrence goes to the dead-letter queue (default 10)")
	fl.StringVar(&sf.DSTGap, "dst-gap", "", "cron wall time that does not exist: skip or shift (default skip)")
	fl.StringVar(&sf.DSTRepeat, "dst-repeat", "", "cron wall time that happens twice: first, last or all (default first)")
}

// schedulePatch is the settings given on the command line: the values of
// the flags that were set, the payload already read and checked.
type schedulePatch struct {
	Values  scheduleFlags
	Changed map[string]bool // flag names
	Payload json.RawMessage
}

// readPatch collects the set flags. It refuses what is wrong whatever the
// schedule: two kinds at once, a payload that is not JSON.
func readPatch(fl *pflag.FlagSet, sf scheduleFlags, stdin io.Reader) (*schedulePatch, error) {
	p := &schedulePatch{Values: sf, Changed: map[string]bool{}}
	fl.Visit(func(f *pflag.Flag) {
		if _, ok := flagField[f.Name]; ok && f.Name != "idempotency-key" {
			p.Changed[f.Name] = true
		}
	})
	var kinds []string
	for _, k := range []string{"cron", "at", "every"} {
		if p.Changed[k] {
			kinds = append(kinds, "--"+k)
		}
	}
	if len(kinds) > 1 {
		return nil, cmdutil.UsageErrorf("give only one of --cron, --at or --every, not %s", strings.Join(kinds, " and "))
	}
	if p.Changed["payload"] {
		raw, err := readPayload(sf.Payload, stdin)
		if err != nil {
			return nil, err
		}
		p.Payload = raw
	}
	return p, nil
}

// readPayload reads --payload: inline JSON, @FILE or @-; "" is none.
func readPayload(v string, stdin io.Reader) (json.RawMessage, error) {
	b := []byte(v)
	if name, ok := strings.CutPrefix(v, "@"); ok {
		var err error
		if name == "-" {
			b, err = io.ReadAll(io.LimitReader(stdin, record.MaxPayload+1))
		} else {
			b, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, cmdutil.UsageErrorf("--payload: %v", err)
		}
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil
	}
	if len(b) > record.MaxPayload {
		return nil, cmdutil.UsageErrorf("--payload: %d bytes is over the limit of %d (256 KiB)", len(b), record.MaxPayload)
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return nil, cmdutil.UsageErrorf("--payload: not valid JSON: %v", err)
	}
	return json.RawMessage(b), nil
}

// apply sets the patch's settings on r. A new kind drops the old one and
// the options that only applied to it; a new cron expression with a zone
// prefix drops the old zone unless --tz is given too. It is the one place
// schedctl update merges what the user gave into the schedule read back
// (the API's update is a PUT of the whole schedule, so schedd has no
// merge of its own).
func (p *schedulePatch) apply(r *api.ScheduleRequest) {
	v, set := p.Values, p.Changed
	for _, k := range []string{"cron", "at", "every"} {
		if !set[k] {
			continue
		}
		r.Cron, r.At, r.Every = "", "", ""
		switch k {
		case "cron":
			r.Cron, r.Anchor = v.Cron, ""
			// A CRON_TZ=/TZ= prefix names the new expression's zone. The
			// zone kept from the stored schedule was not asked for in this
			// change, so it gives way; a --tz given with the prefix stays,
			// and Normalize refuses it if it names another zone.
			if _, prefixed := timetable.ZonePrefix(v.Cron); prefixed && !set["tz"] {
				r.TimeZone = ""
			}
		case "at":
			r.At, r.DSTGap, r.DSTRepeat, r.Anchor = v.At, "", "", ""
		case "every":
			r.Every, r.DSTGap, r.DSTRepeat = v.Every, "", ""
		}
	}
	str := map[string]*string{
		"name": &r.Name, "queue": &r.Queue, "tz": &r.TimeZone, "anchor": &r.Anchor, "misfire": &r.MisfirePolicy,
		"max-lateness": &r.MaxLateness, "overlap": &r.OverlapPolicy, "flex-window": &r.FlexibleWindow,
		"dst-gap": &r.DSTGap, "dst-repeat": &r.DSTRepeat,
	}
	val := map[string]string{
		"name": v.Name, "queue": v.Queue, "tz": v.TimeZone, "anchor": v.Anchor, "misfire": v.Misfire,
		"max-lateness": v.MaxLateness, "overlap": v.Overlap, "flex-window": v.FlexWindow,
		"dst-gap": v.DSTGap, "dst-repeat": v.DSTRepeat,
	}
	for name, ptr := range str {
		if set[name] {
			*ptr = val[name]
		}
	}
	// A schedule has a queue or a target: giving one drops the other.
	switch {
	case set["target"]:
		r.Target = v.Target
		if !set["queue"] {
			r.Queue = ""
		}
	case set["queue"]:
		r.Target = ""
	}
	if set["payload"] {
		r.Payload = p.Payload
	}
	if set["max-attempts"] {
		r.MaxAttempts = v.MaxAttempts
	}
}

// checkFlags validates a request built from flags; errors name the flag.
func checkFlags(r api.ScheduleRequest) error {
	if _, err := checkRequest(r); err != nil {
		var fe *rules.ValidationError
		if errors.As(err, &fe) {
			return cmdutil.UsageErrorf("%s: %s", fieldFlag(fe.Field), fe.Reason())
		}
		return &cmdutil.UsageError{Err: err}
	}
	return nil
}

// requestFromSchedule is the request that would recreate sc as it is.
func requestFromSchedule(sc api.Schedule) api.ScheduleRequest {
	r := api.ScheduleRequest{
		Name: sc.Name, Queue: sc.Queue, Target: sc.Target, TimeZone: sc.TimeZone, Anchor: sc.Anchor,
		Payload: sc.Payload, MisfirePolicy: sc.MisfirePolicy, MaxLateness: sc.MaxLateness,
		OverlapPolicy: sc.OverlapPolicy, FlexibleWindow: sc.FlexibleWindow, MaxAttempts: sc.MaxAttempts,
		RetryBase: sc.RetryBase, RetryCap: sc.RetryCap, RetryDeadline: sc.RetryDeadline,
	}
	if string(r.Payload) == "null" {
		r.Payload = nil
	}
	switch timetable.Kind(sc.Kind) {
	case timetable.KindCron:
		r.Cron, r.DSTGap, r.DSTRepeat = sc.Expression, sc.DSTGap, sc.DSTRepeat
	case timetable.KindAt:
		r.At = sc.Expression
	case timetable.KindEvery:
		r.Every = sc.Expression
	}
	if timetable.Kind(sc.Kind) != timetable.KindEvery {
		r.Anchor = ""
	}
	return r
}
