package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/tui"
)

// topMinInterval keeps the dashboard from asking schedd more than four
// times a second: the figures are cached for a few seconds anyway, only
// the clocks on screen move faster.
const topMinInterval = 250 * time.Millisecond

// TopOptions is schedctl top.
type TopOptions struct {
	IO *cmdutil.Factory
	// Source connects to schedd; the client by default.
	Source   func() (tui.Source, error)
	Ctx      context.Context
	Interval time.Duration

	// programOptions come before top's own; tests give what a terminal
	// would (its size, its colour profile) when Out is not one.
	programOptions []tea.ProgramOption
}

// NewCmdTop builds schedctl top, the live dashboard.
func NewCmdTop(f *cmdutil.Factory, runF func(*TopOptions) error) *cobra.Command {
	opts := &TopOptions{IO: f, Source: func() (tui.Source, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return c, nil
	}}
	cmd := &cobra.Command{
		Use:   "top [--interval 1s]",
		Short: "Live dashboard: lag, the next hour's firings, queues, schedules, dead letters",
		Long: `Top is a live dashboard of the cluster schedd belongs to, redrawn every
--interval (1s); the schedule list and its LAG and FAIL figures, which
cost the daemon more, are read every 15s (the header says as of when).
Three views, tab switches between them:

  Overview   schedule and delivery lag p50/p95/p99 over the last minute and
             hour, with the trend of the last minute's p99; the firings due
             in each of the next 60 minutes as a bar chart, so a cliff shows
             before it arrives; claims and acks per second, the oldest ready
             occurrence, the DLQ's size, MISSED and SKIPPED in the last hour;
             the depth of every queue and lane; the nodes, their shards and
             their last planner pass.
  Schedules  every schedule with its next firing, its lag and its recent
             failures, sortable (s cycles lag, next, failures, name; S
             reverses) and filtered by name (/); below, the selected one's
             settings, next firings with their DST notes, and recent
             occurrences with their lag.
  DLQ        the dead letters, newest death first, with why each died and
             its last error; r replays the selected one (after a y/n
             question), f shows only its schedule's.

? shows every key; q or Ctrl-C quits. When schedd stops answering, top keeps
the last figures and says since when; it picks up again when schedd is back.
Top needs a terminal; scripts use schedctl status (-w to keep watching, -o
json for the figures). NO_COLOR turns colours off.`,
		Example: "  schedctl top\n  schedctl top --interval 5s --addr tcp:10.0.3.11:7070",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.JSONOut() {
				return cmdutil.UsageErrorf("top is a dashboard for a terminal; for JSON use `schedctl status -o json`")
			}
			if !f.IsTTY {
				return cmdutil.UsageErrorf("top needs a terminal; use `schedctl status -w` in scripts")
			}
			if opts.Interval < topMinInterval {
				return cmdutil.UsageErrorf("--interval %s: must be at least %s", opts.Interval, topMinInterval)
			}
			opts.Ctx = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return topRun(opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Interval, "interval", tui.DefaultInterval, "how often to ask schedd again (at least 250ms)")
	return cmd
}

func topRun(opts *TopOptions) error {
	f := opts.IO
	src, err := opts.Source()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(opts.Ctx)
	defer cancel() // aborts requests still on their way when top ends
	m := tui.New(src, tui.Options{Interval: opts.Interval, Context: ctx, Now: f.Now})
	popts := append(slices.Clone(opts.programOptions), tea.WithOutput(f.Out), tea.WithContext(ctx))
	if p, ok := topColorProfile(f); ok {
		popts = append(popts, tea.WithColorProfile(p))
	}
	if f.In != os.Stdin {
		// bubbletea reads the terminal itself (opening /dev/tty when
		// stdin is redirected); another reader is used as given.
		popts = append(popts, tea.WithInput(f.In))
	}
	if _, err := tea.NewProgram(m, popts...).Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && opts.Ctx.Err() != nil {
			return nil // canceled from outside: a normal end
		}
		return fmt.Errorf("top: %w", err)
	}
	return nil
}

// topColorProfile is the colour profile top draws with when schedctl
// decides it: none at all (plain text, not even bold) when output is not
// to be styled (NO_COLOR, TERM=dumb), as the tables of the other commands
// are then. Otherwise ok is false and bubbletea works the profile out from
// the terminal and the environment, lowering the dashboard's colours to
// what the terminal shows.
func topColorProfile(f *cmdutil.Factory) (p colorprofile.Profile, ok bool) {
	if !f.Styled() {
		return colorprofile.NoTTY, true
	}
	return 0, false
}
