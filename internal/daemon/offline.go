package daemon

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// offlineCommand is what schedd's two offline subcommands (reconcile,
// simulate) share: a cobra command that parses its flags without running
// anything, with -o table|json.
type offlineCommand struct {
	*cobra.Command
	output string
	ran    bool
}

// newOfflineCommand builds the command; the caller adds its own flags.
func newOfflineCommand(use, short, long, example string, stdout io.Writer) *offlineCommand {
	o := &offlineCommand{}
	o.Command = &cobra.Command{
		Use: use, Short: short, Long: long, Example: example,
		Args:          cobra.NoArgs,
		RunE:          func(*cobra.Command, []string) error { o.ran = true; return nil },
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	o.CompletionOptions.DisableDefaultCmd = true
	o.SetOut(stdout)
	o.SetErr(io.Discard)
	o.Flags().StringVarP(&o.output, "output", "o", "table", "output `format`: table or json")
	return o
}

// parse reads args. run is false when cobra printed the help instead; an
// error is bad input (exit 2), its message without the command's name.
func (o *offlineCommand) parse(args []string) (run bool, err error) {
	o.SetArgs(args)
	if err := o.Execute(); err != nil {
		name := strings.Fields(o.Use)
		return false, fmt.Errorf("%v (see %s --help)", err, strings.Join(name[:min(2, len(name))], " "))
	}
	if !o.ran {
		return false, nil
	}
	if o.output != "table" && o.output != "json" {
		return false, fmt.Errorf("-o %q: want table or json", o.output)
	}
	return true, nil
}
