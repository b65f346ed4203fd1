package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
)

// GroupCmd is a command that only holds subcommands (dlq): run with an
// unknown one, it is invalid input.
func GroupCmd(use, short, example string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Example: example,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return UsageErrorf("unknown command %q for %s; see %s --help", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
}

// WrapArgs makes positional-argument errors usage errors.
func WrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	inner := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := inner(cmd, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
}

// CheckState upper-cases a --state value and checks it is one of states.
func CheckState(v string, states []string) (string, error) {
	if v == "" {
		return "", nil
	}
	u := strings.ToUpper(v)
	for _, s := range states {
		if s == u {
			return u, nil
		}
	}
	return "", UsageErrorf("--state %q: want one of %s", v, strings.Join(states, ", "))
}
