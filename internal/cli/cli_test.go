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

// TestDidYouMean: a mistyped command or long flag is invalid input that
// names what was probably meant; delete is cancel under another name.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"lsit"}, `unknown command "lsit" for schedctl; did you mean list?`},
		{[]string{"statsu"}, "did you mean status?"},
		{[]string{"remove", "nightly"}, "did you mean cancel?"},
		{[]string{"stop", "nightly"}, "did you mean pause or top?"},
		{[]string{"dlq", "lsit"}, `unknown command "lsit" for schedctl dlq; did you mean list?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for schedctl; see schedctl --help`},
		{[]string{"list", "--staet", "ACTIVE"}, "unknown flag: --staet (did you mean --state?)"},
		{[]string{"list", "--lim", "3"}, "(did you mean --limit?)"},
		{[]string{"list", "--outptu", "json"}, "(did you mean --output?)"}, // an inherited flag
		{[]string{"list", "--zzzzzz"}, "unknown flag: --zzzzzz"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, _, _ := clitest.NewFactory(false)
			err := clitest.Exec(t, NewCmdRoot(f), tc.args...)
			clitest.WantErr(t, err, tc.err, cmdutil.ExitInvalid)
			if strings.HasPrefix(tc.err, "unknown flag: --zzzzzz") && strings.Contains(err.Error(), "did you mean") {
				t.Errorf("%v: suggested something for a flag like none: %v", tc.args, err)
			}
		})
	}
	f, _, _ := clitest.NewFactory(false)
	root := NewCmdRoot(f)
	if c, _, err := root.Find([]string{"delete", "nightly"}); err != nil || c.Name() != "cancel" {
		t.Errorf("delete finds %v (%v), want cancel", c, err)
	}
}
