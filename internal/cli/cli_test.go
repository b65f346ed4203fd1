package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestEveryCommandHasHelpAndExample: --help text and an example on every
// command, completion included.
func TestEveryCommandHasHelpAndExample(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	root := NewCmdRoot(f)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		if c.Short == "" || c.Example == "" {
			t.Errorf("%s: Short %q, Example %q", c.CommandPath(), c.Short, c.Example)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 25 {
		t.Errorf("only %d commands", n)
	}
}

// TestTopRootRefusals: what schedctl itself refuses before top runs: -o
// json (the error points to the command that has the figures as JSON), an
// interval that is not a duration, an argument.
func TestTopRootRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-o", "json", "top"}, "for JSON use `schedctl status -o json`"},
		{[]string{"top", "--interval", "often"}, `invalid argument "often" for "--interval"`},
		{[]string{"top", "now"}, `unknown command "now"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, _, _ := clitest.NewFactory(true)
			clitest.WantErr(t, clitest.Exec(t, NewCmdRoot(f), tc.args...), tc.err, cmdutil.ExitInvalid)
		})
	}
}

// TestWatchOnlyWhereWatched: list, attempts and dlq list have no -w.
func TestWatchOnlyWhereWatched(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	for _, name := range []string{"list", "attempts", "dlq list"} {
		root := NewCmdRoot(f)
		args := append(strings.Fields(name), "-w")
		if name == "attempts" {
			args = append(args, "occ_1")
		}
		root.SetArgs(args)
		if err := root.Execute(); err == nil || cmdutil.ExitCode(err) != cmdutil.ExitInvalid {
			t.Errorf("%s -w: %v, want an unknown flag", name, err)
		}
	}
}

// TestReverseOnlyWhereSupported: schedd sorts schedules and attempts one
// way only, so list and attempts have no --reverse.
func TestReverseOnlyWhereSupported(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	for _, args := range [][]string{{"list", "--reverse"}, {"attempts", "occ_1", "--reverse"}} {
		root := NewCmdRoot(f)
		root.SetArgs(args)
		if err := root.Execute(); err == nil || cmdutil.ExitCode(err) != cmdutil.ExitInvalid || !strings.Contains(err.Error(), "unknown flag: --reverse") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
