package schedule

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// UpdateOptions is schedctl update.
type UpdateOptions struct {
	IO    *cmdutil.Factory
	API   func() (cmdutil.API, error)
	Ctx   context.Context
	JSON  bool
	Ref   string
	Patch *schedulePatch
	// DryRun asks schedd what the update would do and changes nothing.
	DryRun bool
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
options that only applied to it. A --cron with a CRON_TZ= or TZ= prefix
takes the prefix's zone in place of the current one; with --tz as well, both
must name the same zone.

The schedule's version grows, and unclaimed occurrences of older versions are
canceled; the answer counts them, and the occurrences still in flight (a
worker holds them; their heartbeat tells them the schedule was superseded).
A paused schedule stays paused.

--dry-run sends the update for schedd to check as it would make it, and
prints the schedule as it would be (its new version, next firings and what
it would cancel); nothing changes.`,
		Example: `  schedctl update nightly-report --cron '30 2 * * *'
  schedctl update nightly-report --cron '30 2 * * *' --dry-run
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
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what the update would do; change nothing")
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
	r, err := mergeUpdate(*sc, opts.Patch)
	if err != nil {
		return err
	}
	// By id: a rename in the patch must not lose the schedule.
	update, did := c.UpdateSchedule, "updated"
	if opts.DryRun {
		update, did = c.CheckUpdateSchedule, "would update"
	}
	res, err := update(opts.Ctx, sc.ScheduleID, r)
	if err != nil {
		return fmt.Errorf("update %s: %w", opts.Ref, err)
	}
	if err := printChange(opts.IO, opts.JSON, did, res); err != nil || !opts.DryRun || opts.JSON {
		return err
	}
	// A dry run shows the schedule as it would be, and says so.
	if err := printSchedule(opts.IO, &res.Schedule); err != nil {
		return err
	}
	_, err = fmt.Fprintln(opts.IO.Out, "Nothing was changed (--dry-run).")
	return err
}

// mergeUpdate is the whole request update sends: the schedule as it is,
// with the patch's settings on it, checked offline as schedd would check
// it; errors name the flag.
func mergeUpdate(sc api.Schedule, p *schedulePatch) (api.ScheduleRequest, error) {
	r := requestFromSchedule(sc)
	p.apply(&r)
	if err := checkFlags(r); err != nil {
		return api.ScheduleRequest{}, err
	}
	return r, nil
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
