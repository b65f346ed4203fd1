package schedule

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

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
