// Package simulate is schedctl simulate: what-if simulations that schedd
// runs on a private store (whatif.go).
package simulate

import (
	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// NewCmdSimulate builds schedctl simulate.
func NewCmdSimulate(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate -f FILE --from TIME --to TIME",
		Short: "Ask schedd what schedules would do through an outage, slow workers or a node down",
	}
	AddWhatIf(cmd, f, nil)
	return cmd
}
