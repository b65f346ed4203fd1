package schedule

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/timetable"
)

// CreateOptions is schedctl create.
type CreateOptions struct {
	IO      *cmdutil.Factory
	API     func() (cmdutil.API, error)
	Ctx     context.Context
	JSON    bool
	Request api.ScheduleRequest
	// DryRun asks schedd whether it would create the schedule, and
	// creates nothing.
	DryRun bool
}

// NewCmdCreate builds schedctl create.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f, API: f.API}
	var sf scheduleFlags
	var idem string
	cmd := &cobra.Command{
		Use:   "create --name NAME (--queue Q | --target T) (--cron EXPR --tz ZONE | --at RFC3339 | --every DURATION) [flags]",
		Short: "Create a schedule",
		Long: `Create a schedule and print it, with its next firings.

Exactly one of --cron, --at and --every. Cron is wall-clock time in --tz;
--dst-gap and --dst-repeat say what a wall time that does not exist or that
happens twice does. --every is elapsed time from --anchor. Settings not given
take schedd's defaults: misfire fire_once with max lateness 1m, overlap
allow, no flexible window, 10 attempts.

With --idempotency-key the create is safe to retry: the same key and
settings return the schedule created the first time ("created": false).

The settings are checked before anything is sent; invalid input exits 2.
--dry-run sends them for schedd to check as it would create them (its
names, quotas and targets included) and prints the schedule as it would
be, with its next firings; nothing is created.`,
		Example: `  schedctl create --name nightly-report --queue reports --cron '0 2 * * *' --tz Europe/Berlin
  schedctl create --name launch --queue mail --at 2027-03-14T09:00:00-04:00 --payload '{"campaign":"spring"}'
  schedctl create --name sync --queue sync --every 15m --overlap skip_if_running --flex-window 1m
  schedctl create --name sync --queue sync --every 15m --dry-run
  schedctl create --name billing --queue billing --cron '0 9 1 * *' --tz America/New_York \
      --misfire catch_up:3 --max-attempts 5 --payload @billing.json --idempotency-key billing-v1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			if !fl.Changed("name") {
				return cmdutil.UsageErrorf("--name is required")
			}
			switch q, t := fl.Changed("queue"), fl.Changed("target"); {
			case !q && !t:
				return cmdutil.UsageErrorf("--queue is required (or --target, to deliver to one of your targets)")
			case q && t:
				return cmdutil.UsageErrorf("give --queue or --target, not both: a schedule's firings go to a queue or to a target")
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
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check the schedule with schedd and show it; create nothing")
	return cmd
}

func createRun(opts *CreateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	create := c.CreateSchedule
	if opts.DryRun {
		create = c.CheckCreateSchedule
	}
	res, err := create(opts.Ctx, opts.Request)
	if err != nil {
		return fmt.Errorf("create %q: %w", opts.Request.Name, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	if !res.Created && opts.IO.Decorated() {
		fmt.Fprintf(opts.IO.Out, "Schedule %s already existed with idempotency key %q; nothing was created.\n", res.ScheduleID, opts.Request.IdempotencyKey)
	}
	if err := printSchedule(opts.IO, &res.Schedule); err != nil || !opts.DryRun {
		return err
	}
	_, err = fmt.Fprintln(opts.IO.Out, "Nothing was created (--dry-run); the id above is not kept.")
	return err
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
	if sc.Kind == string(timetable.KindCron) {
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
	if sc.Target != "" {
		t.Row("target", sc.Target)
	} else {
		t.Row("queue", sc.Queue)
	}
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
