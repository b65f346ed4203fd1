package schedule

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// ChangeOptions is schedctl pause, resume and cancel.
type ChangeOptions struct {
	IO   *cmdutil.Factory
	API  func() (cmdutil.API, error)
	Ctx  context.Context
	JSON bool
	Verb string // pause, resume or cancel
	Ref  string
}

// NewCmdPause builds schedctl pause.
func NewCmdPause(f *cmdutil.Factory, runF func(*ChangeOptions) error) *cobra.Command {
	return newChangeCmd(f, "pause", runF)
}

// NewCmdResume builds schedctl resume.
func NewCmdResume(f *cmdutil.Factory, runF func(*ChangeOptions) error) *cobra.Command {
	return newChangeCmd(f, "resume", runF)
}

// NewCmdCancel builds schedctl cancel.
func NewCmdCancel(f *cmdutil.Factory, runF func(*ChangeOptions) error) *cobra.Command {
	return newChangeCmd(f, "cancel", runF)
}

// newChangeCmd builds pause, resume or cancel (verb): one command each,
// the same but for their words.
func newChangeCmd(f *cmdutil.Factory, verb string, runF func(*ChangeOptions) error) *cobra.Command {
	opts := &ChangeOptions{IO: f, API: f.API, Verb: verb}
	cmd := &cobra.Command{
		Use:  verb + " ID|NAME",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return changeRun(opts)
		},
	}
	counts := `
The version grows and unclaimed occurrences of older versions are canceled;
the answer counts them, and those still in flight (claimed ones cannot be
recalled: their worker's heartbeat says the schedule changed).`
	switch verb {
	case "pause":
		cmd.Short = "Stop a schedule's firings until it is resumed"
		cmd.Long = "Pause stops new firings of a schedule. Pausing a paused schedule changes nothing.\n" + counts
		cmd.Example = "  schedctl pause nightly-report\n  schedctl pause sch_01J5Z8M4 -o json | jq .canceled"
		cmd.SuggestFor = []string{"stop", "suspend", "disable"}
	case "resume":
		cmd.Short = "Restart a paused schedule"
		cmd.Long = `Resume restarts a paused schedule from its first firing after now: firings
missed while it was paused do not run. Resuming an active schedule changes
nothing.`
		cmd.Example = "  schedctl resume nightly-report"
		cmd.SuggestFor = []string{"start", "unpause", "enable"}
	case "cancel":
		cmd.Short = "End a schedule for good (also: delete)"
		cmd.Long = "Cancel ends a schedule; it stays as history, and its name is free again.\n" +
			"delete is another name for it: nothing is erased.\n" + counts
		cmd.Example = "  schedctl cancel nightly-report\n  schedctl delete nightly-report\n  schedctl cancel sch_01J5Z8M4 -o json"
		cmd.Aliases = []string{"delete"}
		cmd.SuggestFor = []string{"remove", "rm", "destroy"}
	}
	return cmd
}

var changeDone = map[string]string{"pause": "paused", "resume": "resumed", "cancel": "canceled"}

func changeRun(opts *ChangeOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	do := map[string]func(context.Context, string) (*api.ChangeResult, error){
		"pause": c.PauseSchedule, "resume": c.ResumeSchedule, "cancel": c.CancelSchedule,
	}[opts.Verb]
	res, err := do(opts.Ctx, opts.Ref)
	if err != nil {
		return fmt.Errorf("%s %s: %w", opts.Verb, opts.Ref, err)
	}
	return printChange(opts.IO, opts.JSON, changeDone[opts.Verb], res)
}
