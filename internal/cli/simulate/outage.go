package simulate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// OutageAPI is what the outage commands ask of schedd (client.Client).
type OutageAPI interface {
	StartOutage(ctx context.Context, req api.SimulateOutageRequest) (*api.SimulatedOutageStatus, error)
	CancelOutage(ctx context.Context) (*api.SimulatedOutageStatus, error)
	Outage(ctx context.Context) (*api.SimulatedOutageStatus, error)
}

// clientAPI is the factory's client as an OutageAPI.
func clientAPI(f *cmdutil.Factory) func() (OutageAPI, error) {
	return func() (OutageAPI, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// OutageOptions is schedctl simulate outage, cancel and status: Action
// says which ("start", "cancel" or "status").
type OutageOptions struct {
	IO     *cmdutil.Factory
	API    func() (OutageAPI, error)
	Ctx    context.Context
	JSON   bool
	Action string
	For    time.Duration
	Shards []int
}

const outageLong = `A simulated outage makes every schedd on the store behave, as the
schedules see it, as if the engine were down: the planners materialize no
firing and claims answer nothing (a long poll waits), while acks, nacks and
heartbeats of work already claimed still work, and shard leases and node
heartbeats go on, so no shard moves. When it ends (after --for, or at
simulate cancel) the planners resume from where their cursors were, and the
firings they passed over are late: each schedule's misfire policy settles
them exactly as after a real outage. With --shards only those shards'
planning stops and only their occurrences are withheld from claims.

A restart of any schedd ends the outage in progress, so that a forgotten
one cannot outlive the daemons. Only one may be in progress at a time.

The answer, and simulate status, show the outage: its id, the shards it
covers (all, or a list), when it started and ends, how long it has left,
and the node that took the request. -o json prints {now, outage}, outage
null when none is in progress.`

// NewCmdOutage builds schedctl simulate outage; without --for it shows
// the outage in progress, as simulate status does.
func NewCmdOutage(f *cmdutil.Factory, runF func(*OutageOptions) error) *cobra.Command {
	opts := &OutageOptions{IO: f, API: clientAPI(f)}
	var shards string
	cmd := &cobra.Command{
		Use:   "outage [--for DURATION [--shards LIST]]",
		Short: "Stop planning and claims on every node for a while, then resume as after an outage",
		Long:  outageLong,
		Example: `  schedctl simulate outage --for 10m
  schedctl simulate outage --for 90s --shards 0
  schedctl simulate outage            # the outage in progress, if any`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON, opts.Action = cmd.Context(), f.JSONOut(), "status"
			if cmd.Flags().Changed("for") {
				opts.Action = "start" // schedd judges the duration
			}
			if cmd.Flags().Changed("shards") {
				if opts.Action != "start" {
					return cmdutil.UsageErrorf("--shards needs --for")
				}
				var err error
				if opts.Shards, err = parseShards(shards); err != nil {
					return err
				}
			}
			return run(opts, runF)
		},
	}
	cmd.Flags().DurationVar(&opts.For, "for", 0, "how long the outage lasts (1s to 24h), e.g. 10m")
	cmd.Flags().StringVar(&shards, "shards", "", "only these shards, a comma-separated list such as 0,3 (default: all)")
	return cmd
}

// NewCmdCancel builds schedctl simulate cancel.
func NewCmdCancel(f *cmdutil.Factory, runF func(*OutageOptions) error) *cobra.Command {
	opts := &OutageOptions{IO: f, API: clientAPI(f)}
	return &cobra.Command{
		Use:   "cancel",
		Short: "End the simulated outage in progress now",
		Long: `simulate cancel ends the simulated outage in progress at once, on every
node, and shows it as canceled; with none in progress it says so and
succeeds.`,
		Example: "  schedctl simulate cancel",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON, opts.Action = cmd.Context(), f.JSONOut(), "cancel"
			return run(opts, runF)
		},
	}
}

// NewCmdStatus builds schedctl simulate status.
func NewCmdStatus(f *cmdutil.Factory, runF func(*OutageOptions) error) *cobra.Command {
	opts := &OutageOptions{IO: f, API: clientAPI(f)}
	return &cobra.Command{
		Use:     "status",
		Short:   "Show the simulated outage in progress",
		Example: "  schedctl simulate status\n  schedctl simulate status -o json | jq .outage.ends_at",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON, opts.Action = cmd.Context(), f.JSONOut(), "status"
			return run(opts, runF)
		},
	}
}

func run(opts *OutageOptions, runF func(*OutageOptions) error) error {
	if runF != nil {
		return runF(opts)
	}
	return outageRun(opts)
}

// parseShards reads --shards: shard numbers separated by commas.
func parseShards(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return nil, cmdutil.UsageErrorf("--shards %q: %q is not a shard number; want e.g. 0,3", s, part)
		}
		out = append(out, n)
	}
	return out, nil
}

func outageRun(opts *OutageOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	var st *api.SimulatedOutageStatus
	switch opts.Action {
	case "start":
		st, err = c.StartOutage(opts.Ctx, api.SimulateOutageRequest{For: opts.For.String(), Shards: opts.Shards})
	case "cancel":
		st, err = c.CancelOutage(opts.Ctx)
	default:
		st, err = c.Outage(opts.Ctx)
	}
	if err != nil {
		return fmt.Errorf("simulate %s: %w", commandOf[opts.Action], err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, st)
	}
	return printOutage(opts.IO, opts.Action, st)
}

// commandOf names each action's command in errors.
var commandOf = map[string]string{"start": "outage", "cancel": "cancel", "status": "status"}

// printOutage writes the outage as a one-row table (tab-separated off a
// terminal); with none, a sentence (unless --no-headers, which leaves
// nothing to print).
func printOutage(f *cmdutil.Factory, action string, st *api.SimulatedOutageStatus) error {
	o := st.Outage
	if o == nil {
		if !f.Decorated() {
			return nil
		}
		msg := "No simulated outage is in progress."
		if action == "cancel" {
			msg = "No simulated outage was in progress."
		}
		_, err := fmt.Fprintln(f.Out, msg)
		return err
	}
	state := "ended"
	switch {
	case o.Active:
		state = "active"
	case o.CanceledAt != nil:
		state = "canceled"
	}
	shards := "all"
	if len(o.Shards) > 0 {
		parts := make([]string, len(o.Shards))
		for i, s := range slices.Sorted(slices.Values(o.Shards)) {
			parts[i] = strconv.Itoa(s)
		}
		shards = strings.Join(parts, ",")
	}
	t := cmdutil.NewTable(f, "OUTAGE", "STATE", "SHARDS", "STARTED AT", "ENDS AT", "LEFT", "CANCELED AT", "BY")
	t.Row(strconv.FormatInt(o.ID, 10), state, shards, cmdutil.TSV(o.StartedAt), cmdutil.TSV(o.EndsAt), o.Remaining,
		cmdutil.TS(o.CanceledAt), o.CreatedBy)
	return t.Print()
}
