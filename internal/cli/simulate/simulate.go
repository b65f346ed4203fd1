// Package simulate is schedctl simulate: rehearsals of what the schedules
// do in circumstances an operator would rather not wait for, such as an
// outage of the engine (outage.go).
package simulate

import (
	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// NewCmdSimulate builds schedctl simulate, the root of the simulations.
// It runs nothing by itself (it prints its help); its subcommands do.
func NewCmdSimulate(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Rehearse what the schedules do in an outage, without one",
		Example: `  schedctl simulate outage --for 10m
  schedctl simulate status
  schedctl simulate cancel`,
	}
	cmd.AddCommand(NewCmdOutage(f, nil), NewCmdCancel(f, nil), NewCmdStatus(f, nil))
	return cmd
}
