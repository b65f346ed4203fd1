package tenant

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// WhoamiOptions is schedctl whoami.
type WhoamiOptions struct{ Options }

// NewCmdWhoami builds schedctl whoami.
func NewCmdWhoami(f *cmdutil.Factory, runF func(*WhoamiOptions) error) *cobra.Command {
	opts := &WhoamiOptions{Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Show whom schedd takes your credentials for",
		Long: `Whoami asks schedd whom the credentials schedctl sends stand for (--token,
SCHED_TOKEN, or none over the Unix socket): the tenant, the token's name
("-" for schedd's operator token or none), the role (tenant or admin), and
whether the request came over schedd's Unix socket without a token
(local). Any credentials may ask.`,
		Example: `  schedctl whoami
  SCHED_TOKEN=$(cat acme.token) schedctl --addr tcp:sched.internal:7070 whoami -o json | jq -r .tenant`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return whoamiRun(opts)
		},
	}
	return cmd
}

func whoamiRun(opts *WhoamiOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	w, err := c.Whoami(opts.Ctx)
	if err != nil {
		return fmt.Errorf("whoami: %w", err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, w)
	}
	local := "no"
	if w.Local {
		local = "yes"
	}
	t := cmdutil.NewTable(opts.IO)
	t.Row("tenant", w.Tenant)
	t.Row("token", w.Token)
	t.Row("role", w.Role)
	t.Row("local", local)
	return t.Print()
}
