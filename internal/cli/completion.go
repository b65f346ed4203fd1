package cli

import (
	"github.com/spf13/cobra"
)

func newCompletionCmd(f *Factory) *cobra.Command {
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
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(f.Out, true)
			case "zsh":
				return root.GenZshCompletion(f.Out)
			case "fish":
				return root.GenFishCompletion(f.Out, true)
			default:
				return root.GenPowerShellCompletionWithDesc(f.Out)
			}
		},
	}
}
