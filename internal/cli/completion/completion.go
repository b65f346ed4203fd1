// Package completion is schedctl completion: shell completion scripts.
package completion

import (
	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// CompletionOptions is schedctl completion.
type CompletionOptions struct {
	IO *cmdutil.Factory
	// Root is the command tree the script completes.
	Root  *cobra.Command
	Shell string // bash, zsh, fish or powershell
}

// NewCmdCompletion builds schedctl completion.
func NewCmdCompletion(f *cmdutil.Factory, runF func(*CompletionOptions) error) *cobra.Command {
	opts := &CompletionOptions{IO: f}
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Completion prints a script that makes your shell complete schedctl's commands
and flags. Load it in your shell's start-up file.`,
		Example: `  # bash: in ~/.bashrc
  source <(schedctl completion bash)

  # zsh: in ~/.zshrc (after compinit)
  source <(schedctl completion zsh)

  # fish
  schedctl completion fish > ~/.config/fish/completions/schedctl.fish`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Root, opts.Shell = cmd.Root(), args[0]
			if runF != nil {
				return runF(opts)
			}
			return completionRun(opts)
		},
	}
}

func completionRun(opts *CompletionOptions) error {
	root, out := opts.Root, opts.IO.Out
	switch opts.Shell {
	case "bash":
		return root.GenBashCompletionV2(out, true)
	case "zsh":
		return root.GenZshCompletion(out)
	case "fish":
		return root.GenFishCompletion(out, true)
	default:
		return root.GenPowerShellCompletionWithDesc(out)
	}
}
