package simulate

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/schedfile"
	"github.com/sched-dev/sched/internal/whatif"
)

// WhatIfAPI is what the what-if needs of schedd (a *client.Client).
type WhatIfAPI interface {
	Simulate(ctx context.Context, req api.SimulateRequest) (*api.SimulateResult, error)
}

// WhatIfOptions is schedctl simulate -f FILE --from T --to T: the offline
// what-if, run by schedd on a private store.
type WhatIfOptions struct {
	IO    *cmdutil.Factory
	API   func() (WhatIfAPI, error)
	Ctx   context.Context
	JSON  bool
	Flags whatif.Flags
}

const whatIfHelp = `With -f, simulate asks schedd what the schedules of a file (the format of
schedctl apply) would do between --from and --to: schedd runs its real
engine (planner, queue, misfire, overlap and retry policies, shard leases)
on a virtual clock against a private throwaway store, never its own, and
answers with a timeline per schedule and a summary. It changes nothing.

  --outage START/END      schedd is down in the window (no planning, no
                          claims); afterwards the misfire policies apply as
                          after a real outage (repeatable)
  --worker-duration DUR   each attempt takes DUR (default 1s), so a slow
                          worker shows the overlap policies at work
  --worker-fail-rate P    each attempt fails, retryably, with probability P
                          (decided by the seed: the same run fails the same)
  --nodes N, --node-down NODE@START/END
                          N nodes on the one store; a node down stops its
                          planning and lease renewals, and its shards move

Each firing's outcome is ON_TIME, LATE, CAUGHT_UP, RETRIED, MISSED,
SKIPPED_OVERLAP, DEAD, CANCELED or PENDING (still open at the end), with its
delivery lag and the time engine's DST note. The table folds runs of on-time
firings; -o json lists every firing (docs/api.md). The same input gives the
same answer. Limits: 31 days, 1,000,000 firings, 10,000 schedules, 25 s of
schedd's time; over one, the exit status is 2. schedd simulate runs the same
without a daemon.`

// AddWhatIf makes cmd (schedctl's simulate) run the what-if when given
// -f: it adds the flags and the RunE. runF, when set, gets the options
// instead (tests).
func AddWhatIf(cmd *cobra.Command, f *cmdutil.Factory, runF func(*WhatIfOptions) error) {
	opts := &WhatIfOptions{IO: f, API: func() (WhatIfAPI, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return c, nil
	}}
	opts.Flags.Bind(cmd.Flags())
	if cmd.Long != "" {
		cmd.Long += "\n\n"
	}
	cmd.Long += whatIfHelp
	cmd.Example += "  schedctl simulate -f schedules.yaml --from 2027-03-15T09:00:00Z --to 2027-03-15T11:00:00Z \\\n" +
		"      --outage 2027-03-15T09:55:00Z/2027-03-15T10:05:00Z\n" +
		"  schedctl simulate -f schedules.yaml --from 2027-03-15T00:00:00Z --to 2027-03-16T00:00:00Z --worker-duration 90s -o json\n"
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
		if runF != nil {
			return runF(opts)
		}
		return whatIfRun(opts)
	}
}

func whatIfRun(opts *WhatIfOptions) error {
	req, err := opts.Flags.Request(opts.IO.In)
	if err != nil {
		var fe *schedfile.Error
		if errors.As(err, &fe) {
			return &cmdutil.UsageError{Err: err}
		}
		return cmdutil.UsageErrorf("%v", err)
	}
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.Simulate(opts.Ctx, *req)
	if err != nil {
		return err // a refusal is invalid input (exit 2), as schedd judged it
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	return whatif.WriteTable(opts.IO.Out, res)
}
