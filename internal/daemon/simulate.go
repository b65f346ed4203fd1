package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/simulate"
	"github.com/sched-dev/sched/internal/whatif"
)

// APISimulateLimits are the limits of a simulation asked of a running
// schedd (POST /v1/simulate): the default ones, with a wall time that
// answers within the API's request timeout.
var APISimulateLimits = func() simulate.Limits {
	l := simulate.DefaultLimits
	l.MaxWall = 25 * time.Second
	return l
}()

const simulateLong = `schedd simulate runs a what-if simulation without a daemon: the real engine
(planner, queue, misfire, overlap and retry policies, shard leases) on a
virtual clock, against a private throwaway store in a temporary directory
(never the daemon's store; removed at the end), for the schedules of a file
in the format of schedctl apply. It prints a timeline per schedule and a
summary; schedctl simulate -f asks a running schedd for the same.

Exit status: 0 done, 2 bad input or over a limit (31 days, 1,000,000
firings, 10,000 schedules, 60 s of wall time), 1 any other failure.`

// simulateMain is schedd simulate ARGS: it parses the flags, runs the
// simulation in this process and prints its answer on stdout.
func simulateMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var fl whatif.Flags
	cmd := newOfflineCommand("schedd simulate -f FILE --from TIME --to TIME",
		"Run a what-if simulation of a schedules file without a daemon", simulateLong,
		"  schedd simulate -f schedules.yaml --from 2027-03-15T09:00:00Z --to 2027-03-15T11:00:00Z \\\n"+
			"      --outage 2027-03-15T09:55:00Z/2027-03-15T10:05:00Z", stdout)
	fl.Bind(cmd.Flags())
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "schedd simulate: %s\n", oneLine(err.Error()))
		return code
	}
	run, err := cmd.parse(args)
	if err != nil {
		return fail(ExitUsage, err)
	}
	if !run { // cobra printed the help
		return ExitOK
	}
	output := cmd.output
	req, err := fl.Request(stdin)
	if err != nil {
		return fail(ExitUsage, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	res, err := simulate.Simulate(ctx, req, simulate.DefaultLimits)
	var ve *schedule.ValidationError
	switch {
	case errors.As(err, &ve):
		return fail(ExitUsage, err)
	case err != nil:
		return fail(ExitError, err)
	}
	if output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = whatif.WriteTable(stdout, res)
	}
	if err != nil {
		return fail(ExitError, err)
	}
	return ExitOK
}
