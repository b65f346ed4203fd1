package tenant

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/schedule"
)

// NewCmdToken builds schedctl tenant token, the group of a tenant's
// token commands.
func NewCmdToken(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.GroupCmd("token", "A tenant's API tokens: create, list, revoke",
		"  schedctl tenant token create acme --name ci\n  schedctl tenant token list acme\n  schedctl tenant token revoke acme ci")
	cmd.Long = `Each tenant reaches schedd with its own tokens, named so that one can be
revoked without the others. A token is printed once, when it is made:
schedd keeps only its hash, so list shows names and dates, never a token.`
	cmd.AddCommand(NewCmdTokenCreate(f, nil), NewCmdTokenList(f, nil), NewCmdTokenRevoke(f, nil))
	return cmd
}

// TokenCreateOptions is schedctl tenant token create.
type TokenCreateOptions struct {
	Options
	Tenant  string
	Request api.TokenRequest
}

// NewCmdTokenCreate builds schedctl tenant token create.
func NewCmdTokenCreate(f *cmdutil.Factory, runF func(*TokenCreateOptions) error) *cobra.Command {
	opts := &TokenCreateOptions{Options: Options{IO: f, API: apiOf(f)}}
	var admin bool
	cmd := &cobra.Command{
		Use:   "create TENANT --name NAME [--admin]",
		Short: "Mint a token for a tenant, shown once",
		Long: `Token create mints a token for TENANT and prints it once: on the first line
of standard output as "token: sched_...", then the token's name, role and
creation time. schedd keeps only its hash; store it now. With -o json the
answer is one object: token and token_info.

--name is unique among the tenant's tokens that are not revoked. --admin
makes an admin token, which manages tenants; only the default tenant may
have one.`,
		Example: `  schedctl tenant token create acme --name ci
  schedctl tenant token create default --name ops --admin
  schedctl tenant token create acme --name deploy -o json | jq -r .token`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Request.Name == "" {
				return cmdutil.UsageErrorf("--name is required: the token's name, to list or revoke it by")
			}
			if err := checkNewName("--name", schedule.CheckTokenName, opts.Request.Name); err != nil {
				return err
			}
			if admin {
				opts.Request.Role = "admin"
			}
			opts.Tenant, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return tokenCreateRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Request.Name, "name", "", "the token's name, unique among the tenant's live tokens (required)")
	cmd.Flags().BoolVar(&admin, "admin", false, "an admin token, which manages tenants (default tenant only)")
	return cmd
}

func tokenCreateRun(opts *TokenCreateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.CreateToken(opts.Ctx, opts.Tenant, opts.Request)
	if err != nil {
		return wrapErr(fmt.Sprintf("tenant token create %s --name %s", opts.Tenant, opts.Request.Name), err)
	}
	f := opts.IO
	fmt.Fprintln(f.ErrOut, TokenNotice)
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, res)
	}
	if err := printToken(f, res.Token); err != nil {
		return err
	}
	return printTokens(f, []api.TokenInfo{res.Info})
}

// printTokens prints tokens as a table, never the token itself (schedd
// does not have it).
func printTokens(f *cmdutil.Factory, ts []api.TokenInfo) error {
	t := cmdutil.NewTable(f, "NAME", "ROLE", "CREATED", "LAST USED", "REVOKED")
	for _, tk := range ts {
		t.Row(tk.Name, tk.Role, cmdutil.TSV(tk.CreatedAt), cmdutil.TS(tk.LastUsedAt), cmdutil.TS(tk.RevokedAt))
	}
	return t.Print()
}

// TokenListOptions is schedctl tenant token list.
type TokenListOptions struct {
	Options
	Tenant string
}

// NewCmdTokenList builds schedctl tenant token list.
func NewCmdTokenList(f *cmdutil.Factory, runF func(*TokenListOptions) error) *cobra.Command {
	opts := &TokenListOptions{Options: Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "list TENANT",
		Short: "List a tenant's tokens, revoked ones too",
		Long: `Token list prints every token of TENANT, revoked ones too: NAME, ROLE
(tenant or admin), CREATED, LAST USED and REVOKED (RFC 3339 in UTC, "-" for
never). It never shows a token: schedd keeps only its hash. JSON output is
an array of token_info objects.`,
		Example: `  schedctl tenant token list acme
  schedctl tenant token list acme -o json | jq -r '.[] | select(.revoked_at == null) | .name'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Tenant, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return tokenListRun(opts)
		},
	}
	return cmd
}

func tokenListRun(opts *TokenListOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	l, err := c.ListTokens(opts.Ctx, opts.Tenant)
	if err != nil {
		return wrapErr("tenant token list "+opts.Tenant, err)
	}
	ts := l.Tokens
	if ts == nil {
		ts = []api.TokenInfo{}
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, ts)
	}
	return printTokens(opts.IO, ts)
}

// TokenRevokeOptions is schedctl tenant token revoke.
type TokenRevokeOptions struct {
	Options
	Tenant, Name string
}

// NewCmdTokenRevoke builds schedctl tenant token revoke.
func NewCmdTokenRevoke(f *cmdutil.Factory, runF func(*TokenRevokeOptions) error) *cobra.Command {
	opts := &TokenRevokeOptions{Options: Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "revoke TENANT NAME",
		Short: "Revoke a tenant's token by name",
		Long: `Token revoke refuses the token NAME of TENANT from now on, on every node.
Its name is free again for a new token. It prints one line; JSON output is
the token's token_info.`,
		Example: `  schedctl tenant token revoke acme ci
  schedctl tenant token revoke acme ci -o json | jq .revoked_at`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Tenant, opts.Name, opts.Ctx, opts.JSON = args[0], args[1], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return tokenRevokeRun(opts)
		},
	}
	return cmd
}

func tokenRevokeRun(opts *TokenRevokeOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	tk, err := c.RevokeToken(opts.Ctx, opts.Tenant, opts.Name)
	if err != nil {
		return wrapErr(fmt.Sprintf("tenant token revoke %s %s", opts.Tenant, opts.Name), err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, tk)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "revoked token %s of tenant %s at %s\n", cmdutil.Cell(tk.Name), cmdutil.Cell(tk.Tenant), cmdutil.TS(tk.RevokedAt))
	return err
}
