// Package simulate is schedctl simulate: rehearsals of what the schedules
// do in circumstances an operator would rather not wait for. With -f it
// asks schedd for a what-if run of a schedules file on a private store
// (whatif.go); its subcommands start, show and end a live simulated outage
// of the connected daemons (outage.go).
package simulate

import (
	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// NewCmdSimulate builds schedctl simulate: the what-if form on the root
// (-f FILE --from --to ...), and the live outage as its subcommands.
func NewCmdSimulate(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate -f FILE --from TIME --to TIME",
		Short: "Rehearse what the schedules do in an outage, with slow workers or a node down",
	}
	AddWhatIf(cmd, f, nil)
	cmd.Example += "  schedctl simulate outage --for 10m\n  schedctl simulate status\n  schedctl simulate cancel"
	cmd.AddCommand(NewCmdOutage(f, nil), NewCmdCancel(f, nil), NewCmdStatus(f, nil))
	return cmd
}
