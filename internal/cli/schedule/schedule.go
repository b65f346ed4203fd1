// Package schedule is the commands on schedules: create, get, list,
// update, pause, resume, cancel and trigger, and schedules kept as code in
// YAML files (apply, diff, validate) with the offline checks and normal
// form they share.
package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/spec"
)

// scheduleFlags are the settings flags of create and update.
type scheduleFlags struct {
	Name, Queue, Cron, At, Every, TZ, Anchor string
	Payload, Misfire, MaxLateness, Overlap   string
	FlexWindow, DSTGap, DSTRepeat            string
	MaxAttempts                              int
}

// flagField maps a flag to the request field it sets, and back.
var flagField = map[string]string{
	"name": "name", "queue": "queue", "cron": "cron", "at": "at", "every": "every",
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
	fl.StringVar(&sf.Cron, "cron", "", "cron expression: 5 fields, or 6 with leading seconds, or a macro such as @daily")
	fl.StringVar(&sf.At, "at", "", "one instant, RFC 3339 with any offset")
	fl.StringVar(&sf.Every, "every", "", "fixed interval of elapsed time, e.g. 90s, 15m, 24h")
	fl.StringVar(&sf.TZ, "tz", "", "IANA time zone, e.g. Europe/Berlin (required with --cron; default UTC otherwise)")
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
			b, err = io.ReadAll(io.LimitReader(stdin, maxPayload+1))
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
	if len(b) > maxPayload {
		return nil, cmdutil.UsageErrorf("--payload: %d bytes is over the limit of %d (256 KiB)", len(b), maxPayload)
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return nil, cmdutil.UsageErrorf("--payload: not valid JSON: %v", err)
	}
	return json.RawMessage(b), nil
}

// apply sets the patch's settings on r. A new kind drops the old one and
// the options that only applied to it.
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
		"name": v.Name, "queue": v.Queue, "tz": v.TZ, "anchor": v.Anchor, "misfire": v.Misfire,
		"max-lateness": v.MaxLateness, "overlap": v.Overlap, "flex-window": v.FlexWindow,
		"dst-gap": v.DSTGap, "dst-repeat": v.DSTRepeat,
	}
	for name, ptr := range str {
		if set[name] {
			*ptr = val[name]
		}
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
		var fe *fieldError
		if errors.As(err, &fe) {
			return cmdutil.UsageErrorf("%s: %s", fieldFlag(fe.Field), fe.Msg)
		}
		return &cmdutil.UsageError{Err: err}
	}
	return nil
}

// requestFromSchedule is the request that would recreate sc as it is.
func requestFromSchedule(sc api.Schedule) api.ScheduleRequest {
	r := api.ScheduleRequest{
		Name: sc.Name, Queue: sc.Queue, TimeZone: sc.TimeZone, Anchor: sc.Anchor,
		Payload: sc.Payload, MisfirePolicy: sc.MisfirePolicy, MaxLateness: sc.MaxLateness,
		OverlapPolicy: sc.OverlapPolicy, FlexibleWindow: sc.FlexibleWindow, MaxAttempts: sc.MaxAttempts,
		RetryBase: sc.RetryBase, RetryCap: sc.RetryCap, RetryDeadline: sc.RetryDeadline,
	}
	if string(r.Payload) == "null" {
		r.Payload = nil
	}
	switch spec.Kind(sc.Kind) {
	case spec.KindCron:
		r.Cron, r.DSTGap, r.DSTRepeat = sc.Expression, sc.DSTGap, sc.DSTRepeat
	case spec.KindAt:
		r.At = sc.Expression
	case spec.KindEvery:
		r.Every = sc.Expression
	}
	if spec.Kind(sc.Kind) != spec.KindEvery {
		r.Anchor = ""
	}
	return r
}

// CreateOptions is schedctl create.
type CreateOptions struct {
	IO      *cmdutil.Factory
	API     func() (cmdutil.API, error)
	Ctx     context.Context
	JSON    bool
	Request api.ScheduleRequest
}

// NewCmdCreate builds schedctl create.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f, API: f.API}
	var sf scheduleFlags
	var idem string
	cmd := &cobra.Command{
		Use:   "create --name NAME --queue Q (--cron EXPR --tz ZONE | --at RFC3339 | --every DURATION) [flags]",
		Short: "Create a schedule",
		Long: `Create a schedule and print it, with its next firings.

Exactly one of --cron, --at and --every. Cron is wall-clock time in --tz;
--dst-gap and --dst-repeat say what a wall time that does not exist or that
happens twice does. --every is elapsed time from --anchor. Settings not given
take schedd's defaults: misfire fire_once with max lateness 1m, overlap
allow, no flexible window, 10 attempts.

With --idempotency-key the create is safe to retry: the same key and
settings return the schedule created the first time ("created": false).

The settings are checked before anything is sent; invalid input exits 2.`,
		Example: `  schedctl create --name nightly-report --queue reports --cron '0 2 * * *' --tz Europe/Berlin
  schedctl create --name launch --queue mail --at 2027-03-14T09:00:00-04:00 --payload '{"campaign":"spring"}'
  schedctl create --name sync --queue sync --every 15m --overlap skip_if_running --flex-window 1m
  schedctl create --name billing --queue billing --cron '0 9 1 * *' --tz America/New_York \
      --misfire catch_up:3 --max-attempts 5 --payload @billing.json --idempotency-key billing-v1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			for _, req := range []string{"name", "queue"} {
				if !fl.Changed(req) {
					return cmdutil.UsageErrorf("--%s is required", req)
				}
			}
			p, err := readPatch(fl, sf, f.In)
			if err != nil {
				return err
			}
			if !p.Changed["cron"] && !p.Changed["at"] && !p.Changed["every"] {
				return cmdutil.UsageErrorf("give exactly one of --cron, --at or --every")
			}
			var r api.ScheduleRequest
			p.apply(&r)
			r.IdempotencyKey = idem
			if err := checkFlags(r); err != nil {
				return err
			}
			opts.Request, opts.Ctx, opts.JSON = r, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return createRun(opts)
		},
	}
	sf.register(cmd.Flags())
	cmd.Flags().StringVar(&idem, "idempotency-key", "", "makes the create safe to retry: the same key returns the first schedule")
	return cmd
}

func createRun(opts *CreateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.CreateSchedule(opts.Ctx, opts.Request)
	if err != nil {
		return fmt.Errorf("create %q: %w", opts.Request.Name, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	if !res.Created && opts.IO.IsTTY {
		fmt.Fprintf(opts.IO.Out, "Schedule %s already existed with idempotency key %q; nothing was created.\n", res.ScheduleID, opts.Request.IdempotencyKey)
	}
	return printSchedule(opts.IO, &res.Schedule)
}

// printSchedule prints one schedule as field/value rows, then its next
// firings.
func printSchedule(f *cmdutil.Factory, sc *api.Schedule) error {
	t := cmdutil.NewTable(f)
	t.Row("schedule_id", sc.ScheduleID)
	t.Row("name", sc.Name)
	t.Row("state", sc.State)
	t.Row("version", strconv.FormatInt(sc.Version, 10))
	t.Row(sc.Kind, sc.Expression)
	t.Row("time_zone", sc.TimeZone)
	if sc.Anchor != "" {
		t.Row("anchor", sc.Anchor)
	}
	if sc.Kind == string(spec.KindCron) {
		t.Row("dst", fmt.Sprintf("gap %s, repeat %s", sc.DSTGap, sc.DSTRepeat))
	}
	// Two instants that used to look contradictory: the next firing a
	// worker will get, and the planner's cursor, which runs up to a horizon
	// ahead of it because the planner queues firings before they are due.
	t.Row("next_fire_at", cmdutil.TS(sc.NextFireAt))
	cursor := cmdutil.TS(sc.NextRunAt)
	if sc.NextRunAt != nil {
		cursor += " (next_run_at: firings before it are already queued)"
	}
	t.Row("planner_cursor", cursor)
	t.Row("queue", sc.Queue)
	t.Row("payload", cmdutil.CompactJSON(sc.Payload))
	t.Row("misfire", fmt.Sprintf("%s, max lateness %s", sc.MisfirePolicy, sc.MaxLateness))
	t.Row("overlap", sc.OverlapPolicy)
	t.Row("flexible_window", sc.FlexibleWindow)
	t.Row("retries", fmt.Sprintf("%d attempts, backoff %s to %s, deadline %s", sc.MaxAttempts, sc.RetryBase, sc.RetryCap, sc.RetryDeadline))
	t.Row("missed_count", strconv.FormatInt(sc.MissedCount, 10))
	t.Row("created_at", cmdutil.TSV(sc.CreatedAt))
	t.Row("updated_at", cmdutil.TSV(sc.UpdatedAt))
	for _, p := range sc.Preview {
		line := cmdutil.TSV(p.ScheduledFor) + "  " + p.Local
		if p.Note != "" {
			line += "  " + p.Note
		}
		t.Row("next", line)
	}
	return t.Print()
}

// UpdateOptions is schedctl update.
type UpdateOptions struct {
	IO    *cmdutil.Factory
	API   func() (cmdutil.API, error)
	Ctx   context.Context
	JSON  bool
	Ref   string
	Patch *schedulePatch
}

// NewCmdUpdate builds schedctl update.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f, API: f.API}
	var sf scheduleFlags
	cmd := &cobra.Command{
		Use:   "update ID|NAME [flags]",
		Short: "Change settings of a schedule",
		Long: `Update fetches the schedule, changes the settings given, and sends the whole
schedule back (the API's update is a PUT). Settings not given keep their
current values; a new --cron, --at or --every replaces the old kind, and the
options that only applied to it.

The schedule's version grows, and unclaimed occurrences of older versions are
canceled; the answer counts them, and the occurrences still in flight (a
worker holds them; their heartbeat tells them the schedule was superseded).
A paused schedule stays paused.`,
		Example: `  schedctl update nightly-report --cron '30 2 * * *'
  schedctl update sch_01J5Z8M4 --payload '{"format":"pdf"}' --max-attempts 3
  schedctl update sync --every 5m -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := readPatch(cmd.Flags(), sf, f.In)
			if err != nil {
				return err
			}
			if len(p.Changed) == 0 {
				return cmdutil.UsageErrorf("nothing to update: give at least one setting, e.g. --cron or --payload")
			}
			opts.Ref, opts.Patch, opts.Ctx, opts.JSON = args[0], p, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return updateRun(opts)
		},
	}
	sf.register(cmd.Flags())
	return cmd
}

func updateRun(opts *UpdateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	sc, err := c.GetSchedule(opts.Ctx, opts.Ref)
	if err != nil {
		return fmt.Errorf("update %s: %w", opts.Ref, err)
	}
	r := requestFromSchedule(*sc)
	opts.Patch.apply(&r)
	if err := checkFlags(r); err != nil {
		return err
	}
	// By id: a rename in the patch must not lose the schedule.
	res, err := c.UpdateSchedule(opts.Ctx, sc.ScheduleID, r)
	if err != nil {
		return fmt.Errorf("update %s: %w", opts.Ref, err)
	}
	return printChange(opts.IO, opts.JSON, "updated", res)
}

// printChange prints the answer of pause, resume, update and cancel.
func printChange(f *cmdutil.Factory, asJSON bool, did string, res *api.ChangeResult) error {
	if asJSON {
		return cmdutil.WriteJSON(f.Out, res)
	}
	sc := res.Schedule
	_, err := fmt.Fprintf(f.Out, "%s %s (%s): %s, version %d; %s canceled, %s still in flight\n",
		did, cmdutil.Cell(sc.Name), sc.ScheduleID, sc.State, sc.Version,
		cmdutil.Plural(res.Canceled, "occurrence", "occurrences"), strconv.Itoa(res.InFlight))
	return err
}

// GetOptions is schedctl get.
type GetOptions struct {
	IO    *cmdutil.Factory
	API   func() (cmdutil.API, error)
	Ctx   context.Context
	JSON  bool
	Ref   string
	Watch cmdutil.WatchFlags
}

// NewCmdGet builds schedctl get.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "get ID|NAME [-w]",
		Short: "Show a schedule and its next firings",
		Long: `Get prints a schedule: its settings, state, version, and when it fires next,
then its next firings with local times and DST notes. A name works wherever
an ID does.

next_fire_at is the next firing not yet delivered to a worker (it may be
overdue, waiting for one); the firings listed after it start there.
planner_cursor is next_run_at, the planner's cursor: the planner queues
firings up to a horizon ahead, so the cursor is usually later than
next_fire_at, and every firing before it is already on the queue.

With -w it keeps watching: it asks again every --interval (2s) and redraws
when the output changes, until Ctrl-C (exit 0).`,
		Example: `  schedctl get nightly-report
  schedctl get nightly-report -w
  schedctl get sch_01J5Z8M4 -o json | jq .next_fire_at`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Watch.Check(cmd.Flags()); err != nil {
				return err
			}
			opts.Ref, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return getRun(opts)
		},
	}
	opts.Watch.Register(cmd.Flags())
	return cmd
}

func getRun(opts *GetOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	return opts.Watch.Run(opts.Ctx, opts.IO, "schedctl get "+cmdutil.Cell(opts.Ref), func(ctx context.Context, f *cmdutil.Factory) error {
		sc, err := c.GetSchedule(ctx, opts.Ref)
		if err != nil {
			return fmt.Errorf("get %s: %w", opts.Ref, err)
		}
		if opts.JSON {
			return cmdutil.WriteJSON(f.Out, sc)
		}
		return printSchedule(f, sc)
	})
}

var scheduleStates = []string{"ACTIVE", "PAUSED", "CANCELED", "COMPLETED"}

// ListOptions is schedctl list.
type ListOptions struct {
	IO     *cmdutil.Factory
	API    func() (cmdutil.API, error)
	Ctx    context.Context
	JSON   bool
	State  string
	Paging cmdutil.PageFlags
}

// NewCmdList builds schedctl list.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f, API: f.API}
	var state string
	cmd := &cobra.Command{
		Use:   "list [--state S] [--limit N] [--all]",
		Short: "List schedules",
		Long: `List prints schedules, or those in one state: ACTIVE, PAUSED, CANCELED or
COMPLETED, in creation order, one page at a time: schedd's 100 unless
--limit says otherwise. A footer says when more exist; --all follows every
page, --page TOKEN starts at the one the footer names. NEXT FIRE is the
next firing not yet delivered (next_fire_at).

JSON output is an array of schedules (one page, or every one with --all;
when more exist the footer, with the next page's token, goes to stderr).`,
		Example: `  schedctl list
  schedctl list --state paused --all
  schedctl list --all -o json | jq -r '.[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := cmdutil.CheckState(state, scheduleStates)
			if err != nil {
				return err
			}
			if err := opts.Paging.Check(); err != nil {
				return err
			}
			opts.State, opts.Ctx, opts.JSON = s, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only schedules in this state: "+strings.Join(scheduleStates, ", "))
	opts.Paging.Register(cmd.Flags(), "schedules", false)
	return cmd
}

func listRun(opts *ListOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	all, next, err := cmdutil.FetchPages(opts.Ctx, opts.Paging, func(ctx context.Context, page string) ([]api.Schedule, string, error) {
		l, err := c.ListSchedules(ctx, client.ListSchedulesOptions{State: opts.State, Limit: opts.Paging.Limit, Page: page})
		if err != nil {
			return nil, "", err
		}
		return l.Schedules, l.NextPage, nil
	})
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if opts.JSON {
		return cmdutil.WriteJSONPage(opts.IO, all, "schedule", "schedules", next)
	}
	if len(all) == 0 && opts.IO.IsTTY {
		_, err := fmt.Fprintln(opts.IO.Out, "No schedules.")
		return err
	}
	t := cmdutil.NewTable(opts.IO, "ID", "NAME", "STATE", "VERSION", "KIND", "EXPRESSION", "ZONE", "NEXT FIRE", "QUEUE")
	for _, s := range all {
		t.Row(s.ScheduleID, s.Name, s.State, strconv.FormatInt(s.Version, 10), s.Kind, s.Expression, s.TimeZone, cmdutil.TS(s.NextFireAt), s.Queue)
	}
	if err := t.Print(); err != nil {
		return err
	}
	return cmdutil.PrintMore(opts.IO, false, "schedule", "schedules", len(all), next)
}

// ChangeOptions is schedctl pause, resume and cancel.
type ChangeOptions struct {
	IO   *cmdutil.Factory
	API  func() (cmdutil.API, error)
	Ctx  context.Context
	JSON bool
	Verb string // pause, resume or cancel
	Ref  string
}

// NewCmdPause builds schedctl pause.
func NewCmdPause(f *cmdutil.Factory, runF func(*ChangeOptions) error) *cobra.Command {
	return newChangeCmd(f, "pause", runF)
}

// NewCmdResume builds schedctl resume.
func NewCmdResume(f *cmdutil.Factory, runF func(*ChangeOptions) error) *cobra.Command {
	return newChangeCmd(f, "resume", runF)
}

// NewCmdCancel builds schedctl cancel.
func NewCmdCancel(f *cmdutil.Factory, runF func(*ChangeOptions) error) *cobra.Command {
	return newChangeCmd(f, "cancel", runF)
}

// newChangeCmd builds pause, resume or cancel (verb): one command each,
// the same but for their words.
func newChangeCmd(f *cmdutil.Factory, verb string, runF func(*ChangeOptions) error) *cobra.Command {
	opts := &ChangeOptions{IO: f, API: f.API, Verb: verb}
	cmd := &cobra.Command{
		Use:  verb + " ID|NAME",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return changeRun(opts)
		},
	}
	counts := `
The version grows and unclaimed occurrences of older versions are canceled;
the answer counts them, and those still in flight (claimed ones cannot be
recalled: their worker's heartbeat says the schedule changed).`
	switch verb {
	case "pause":
		cmd.Short = "Stop a schedule's firings until it is resumed"
		cmd.Long = "Pause stops new firings of a schedule. Pausing a paused schedule changes nothing.\n" + counts
		cmd.Example = "  schedctl pause nightly-report\n  schedctl pause sch_01J5Z8M4 -o json | jq .canceled"
	case "resume":
		cmd.Short = "Restart a paused schedule"
		cmd.Long = `Resume restarts a paused schedule from its first firing after now: firings
missed while it was paused do not run. Resuming an active schedule changes
nothing.`
		cmd.Example = "  schedctl resume nightly-report"
	case "cancel":
		cmd.Short = "End a schedule for good"
		cmd.Long = "Cancel ends a schedule; it stays as history, and its name is free again.\n" + counts
		cmd.Example = "  schedctl cancel nightly-report\n  schedctl cancel sch_01J5Z8M4 -o json"
	}
	return cmd
}

var changeDone = map[string]string{"pause": "paused", "resume": "resumed", "cancel": "canceled"}

func changeRun(opts *ChangeOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	do := map[string]func(context.Context, string) (*api.ChangeResult, error){
		"pause": c.PauseSchedule, "resume": c.ResumeSchedule, "cancel": c.CancelSchedule,
	}[opts.Verb]
	res, err := do(opts.Ctx, opts.Ref)
	if err != nil {
		return fmt.Errorf("%s %s: %w", opts.Verb, opts.Ref, err)
	}
	return printChange(opts.IO, opts.JSON, changeDone[opts.Verb], res)
}
