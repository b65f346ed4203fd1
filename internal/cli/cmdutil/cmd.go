package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/suggest"
)

// GroupCmd is a command that only holds subcommands (dlq): run with an
// unknown one, it is invalid input.
func GroupCmd(use, short, example string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Example: example,
		Args: cobra.ArbitraryArgs,
		RunE: RunGroup,
	}
}

// RunGroup runs a command that only holds subcommands (the root, dlq):
// its help without an argument; an unknown subcommand is invalid input,
// with the subcommands whose names are close to it ("did you mean list?",
// by edit distance, prefix or a SuggestFor alias).
func RunGroup(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	path := cmd.CommandPath()
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, set only on its path
	}
	hint := ""
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		hint = "did you mean " + strings.Join(s, " or ") + "? "
	}
	return UsageErrorf("unknown command %q for %s; %ssee %s --help", args[0], path, hint, path)
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

// FlagError is schedctl's answer to a bad flag: invalid input, and for an
// unknown long flag the command's flag closest to it, as for commands
// ("unknown flag: --staet (did you mean --state?)").
func FlagError(cmd *cobra.Command, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if s := closestFlag(cmd, name); s != "" {
			err = fmt.Errorf("%w (did you mean --%s?)", err, s)
		}
	}
	return &UsageError{Err: err}
}

// closestFlag is the name of cmd's flag (its own or inherited) nearest to
// name: within two edits, or the only one name begins; "" when none is.
func closestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	var prefixed []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if f.Hidden || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		if d := suggest.Distance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			prefixed = append(prefixed, f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" && len(prefixed) == 1 {
		best = prefixed[0]
	}
	return best
}
