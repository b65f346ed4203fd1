package schedule

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

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
