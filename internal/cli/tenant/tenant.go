// Package tenant is schedctl tenant (create, list, get, update, enable,
// disable, delete, and the tenant's tokens: token create, list, revoke)
// and schedctl whoami.
//
// Managing tenants is an admin's work: a token of the default tenant with
// the admin role, or schedd's Unix socket without a token. A token is
// printed once, when it is made; schedd keeps only its hash, so no command
// can show it again.
package tenant

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
)

// API is what these commands need of schedd: the tenant methods of
// *client.Client. It is kept apart from cmdutil.API, which the other
// nouns share, so that adding tenants changes none of them.
type API interface {
	CreateTenant(ctx context.Context, req api.TenantRequest) (*api.TenantCreated, error)
	ListTenants(ctx context.Context) (*api.TenantList, error)
	GetTenant(ctx context.Context, name string) (*api.Tenant, error)
	UpdateTenant(ctx context.Context, name string, req api.TenantRequest) (*api.Tenant, error)
	SetTenantEnabled(ctx context.Context, name string, enabled bool) (*api.Tenant, error)
	DeleteTenant(ctx context.Context, name string) (*api.Tenant, error)
	CreateToken(ctx context.Context, tenant string, req api.TokenRequest) (*api.TokenCreated, error)
	ListTokens(ctx context.Context, tenant string) (*api.TokenList, error)
	RevokeToken(ctx context.Context, tenant, name string) (*api.TokenInfo, error)
	Whoami(ctx context.Context) (*api.Whoami, error)
}

var _ API = (*client.Client)(nil)

// apiOf is the constructor of a command's API: the client the global
// --addr and --token make.
func apiOf(f *cmdutil.Factory) func() (API, error) {
	return func() (API, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// Options is what every tenant command holds: its streams, the API, the
// context and -o json.
type Options struct {
	IO   *cmdutil.Factory
	API  func() (API, error)
	Ctx  context.Context
	JSON bool
}

// TokenNotice goes to standard error whenever a token is printed: it
// cannot be shown again.
const TokenNotice = "Store this token now: it is shown only once (schedd keeps only its hash)."

// NewCmdTenant builds schedctl tenant, the group of the tenant commands.
func NewCmdTenant(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.GroupCmd("tenant", "Tenants: who shares this schedd, their weights, quotas and tokens",
		"  schedctl tenant create acme --weight 2 --quota-running 50\n  schedctl tenant list\n  schedctl tenant token create acme --name ci\n  schedctl tenant disable acme")
	cmd.Long = `A tenant owns schedules, occurrences and queues that no other tenant sees.
Each reaches schedd with its own tokens; its weight is its share of a
worker pool claiming across tenants, and its quotas cap what it may use.
A quota of 0 in a tenant's own settings means the daemon's default (set by
schedd's flags); in force, 0 means unlimited.

These commands are an admin's: a token of the default tenant with the
admin role, or schedd's Unix socket without a token. Any other token is
refused (forbidden, exit status 1). A token is printed once, when it is
made: schedd keeps only its hash.`
	cmd.AddCommand(
		NewCmdCreate(f, nil), NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdUpdate(f, nil),
		NewCmdEnable(f, nil), NewCmdDisable(f, nil), NewCmdDelete(f, nil),
		NewCmdToken(f),
	)
	return cmd
}

// quotaFlags are --weight and the --quota-* flags of create and update.
type quotaFlags struct {
	weight    int
	quotas    [len(quotaNames)]int64
	retention time.Duration
}

// quotaNames are the quota flags, in the order of api.Quotas.
var quotaNames = [...]struct{ flag, help string }{
	{"quota-active-schedules", "schedules ACTIVE or PAUSED at once"},
	{"quota-firings-per-second", "firings a second; later ones are delayed, never dropped"},
	{"quota-running", "occurrences RUNNING at once"},
	{"quota-catch-up-per-second", "catch-up firings released a second after an outage"},
	{"quota-api-requests-per-second", "API requests a second (beyond: 429 with Retry-After)"},
}

// register adds the flags, their help saying what a flag not given
// means: weight 1 and the daemon's defaults on create, unchanged on
// update.
func (q *quotaFlags) register(fl *pflag.FlagSet, update bool) {
	weight, quota := "not given: 1", "0 or not given: the daemon's default"
	if update {
		weight, quota = "not given: unchanged", "0: back to the daemon's default; not given: unchanged"
	}
	fl.IntVar(&q.weight, "weight", 0, fmt.Sprintf("share of a worker pool claiming across tenants, 1 to %d (%s)", record.MaxTenantWeight, weight))
	for i, n := range quotaNames {
		fl.Int64Var(&q.quotas[i], n.flag, 0, n.help+" ("+quota+")")
	}
	fl.DurationVar(&q.retention, "retention", 0, "how long finished occurrences are kept, by scheduled time, 1h or more; DEAD ones stay until replayed or purged ("+quota+")")
}

// request is the request the given flags make: a flag not given sends
// nothing (the weight stays, or is 1 on create; a quota stays, or is the
// daemon's default), and --quota-X 0 sends 0, back to the daemon's default.
// It reports whether any flag was given.
func (q *quotaFlags) request(fl *pflag.FlagSet) (api.TenantRequest, bool, error) {
	var r api.TenantRequest
	given := false
	if fl.Changed("weight") {
		if q.weight < 1 || q.weight > record.MaxTenantWeight {
			return r, false, cmdutil.UsageErrorf("--weight %d: must be 1 to %d", q.weight, record.MaxTenantWeight)
		}
		w := q.weight
		r.Weight, given = &w, true
	}
	ptrs := [len(quotaNames)]**int64{&r.Quotas.ActiveSchedules, &r.Quotas.FiringsPerSecond, &r.Quotas.Running,
		&r.Quotas.CatchUpPerSecond, &r.Quotas.APIRequestsPerSecond}
	for i, n := range quotaNames {
		if !fl.Changed(n.flag) {
			continue
		}
		if q.quotas[i] < 0 {
			return r, false, cmdutil.UsageErrorf("--%s %d: must be 0 (the daemon's default) or more", n.flag, q.quotas[i])
		}
		v := q.quotas[i]
		*ptrs[i], given = &v, true
	}
	if fl.Changed("retention") {
		if q.retention != 0 && (q.retention < time.Hour || q.retention%time.Second != 0) {
			return r, false, cmdutil.UsageErrorf("--retention %s: must be whole seconds, 1h or more, or 0 (the daemon's default)", q.retention)
		}
		v := int64(q.retention / time.Second)
		r.Quotas.RetentionSeconds, given = &v, true
	}
	return r, given, nil
}

// wrapErr names the command and, when the credentials' role is refused,
// says whose these commands are.
func wrapErr(what string, err error) error {
	if client.IsForbidden(err) {
		return fmt.Errorf("%s: %w (tenants and tokens are managed with an admin token of the default tenant, or over schedd's Unix socket)", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// CreateOptions is schedctl tenant create.
type CreateOptions struct {
	Options
	Request api.TenantRequest
}

// NewCmdCreate builds schedctl tenant create.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{Options: Options{IO: f, API: apiOf(f)}}
	var qf quotaFlags
	cmd := &cobra.Command{
		Use:   "create NAME [--weight W] [--quota-* N]",
		Short: "Create a tenant and its first token",
		Long: `Create makes an ACTIVE tenant and its first token, named "initial", and
prints the token once: on the first line of standard output as
"token: sched_...", then the tenant. schedd keeps only the token's hash;
store it now. With -o json the whole answer is one object: tenant, token
and token_info.

Settings not given take the defaults: weight 1, and each quota the
daemon's default (a quota of 0 says the same). A tenant's name is never
reused, not even after it is deleted.`,
		Example: `  schedctl tenant create acme
  schedctl tenant create acme --weight 2 --quota-active-schedules 500 --quota-running 50
  schedctl tenant create acme -o json | jq -r .token > acme.token`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNewName("tenant name", schedule.CheckNewTenant, args[0]); err != nil {
				return err
			}
			r, _, err := qf.request(cmd.Flags())
			if err != nil {
				return err
			}
			r.Name = args[0]
			opts.Request, opts.Ctx, opts.JSON = r, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return createRun(opts)
		},
	}
	qf.register(cmd.Flags(), false)
	return cmd
}

func createRun(opts *CreateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.CreateTenant(opts.Ctx, opts.Request)
	if err != nil {
		return wrapErr(fmt.Sprintf("tenant create %s", opts.Request.Name), err)
	}
	f := opts.IO
	fmt.Fprintln(f.ErrOut, TokenNotice)
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, res)
	}
	if err := printToken(f, res.Token); err != nil {
		return err
	}
	return printTenants(f, []api.Tenant{res.Tenant})
}

// printToken prints a new token alone on a line, plainly marked, so a
// person sees it and a script can take it from the first line.
func printToken(f *cmdutil.Factory, token string) error {
	_, err := fmt.Fprintf(f.Out, "token: %s\n", cmdutil.Cell(token))
	return err
}

// quota formats a quota in force: 0 is unlimited.
func quota(n int64) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

// printTenants prints tenants as a table: name, state, weight and the
// quotas in force.
func printTenants(f *cmdutil.Factory, ts []api.Tenant) error {
	t := cmdutil.NewTable(f, "NAME", "STATE", "WEIGHT", "SCHEDULES", "FIRINGS/S", "RUNNING", "CATCH-UP/S", "API REQ/S")
	for _, tn := range ts {
		e := tn.Effective
		t.Row(tn.Name, tn.State, strconv.Itoa(tn.Weight), quota(e.ActiveSchedules), quota(e.FiringsPerSecond),
			quota(e.Running), quota(e.CatchUpPerSecond), quota(e.APIRequestsPerSecond))
	}
	return t.Print()
}

const tableHelp = `
Columns: NAME, STATE (ACTIVE, DISABLED or DELETED), WEIGHT, and the quotas
in force, the tenant's own or else the daemon's default: SCHEDULES (ACTIVE
or PAUSED at once), FIRINGS/S, RUNNING (occurrences at once), CATCH-UP/S
and API REQ/S; "unlimited" where there is none. -o json shows the tenant's
own overrides (quotas, 0 for the default) beside those in force
(effective_quotas).`

// ListOptions is schedctl tenant list.
type ListOptions struct{ Options }

// NewCmdList builds schedctl tenant list.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every tenant, deleted ones too",
		Long:  "List prints every tenant by name, deleted ones too (their names stay taken).\n" + tableHelp + "\nJSON output is an array of tenants.",
		Example: `  schedctl tenant list
  schedctl tenant list -o json | jq -r '.[] | select(.state == "DISABLED") | .name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	return cmd
}

func listRun(opts *ListOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	l, err := c.ListTenants(opts.Ctx)
	if err != nil {
		return wrapErr("tenant list", err)
	}
	ts := l.Tenants
	if ts == nil {
		ts = []api.Tenant{}
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, ts)
	}
	return printTenants(opts.IO, ts)
}

// GetOptions is schedctl tenant get.
type GetOptions struct {
	Options
	Name string
}

// NewCmdGet builds schedctl tenant get.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{Options: Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a tenant, its weight and quotas",
		Long:  "Get prints one tenant.\n" + tableHelp,
		Example: `  schedctl tenant get acme
  schedctl tenant get acme -o json | jq .effective_quotas`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return getRun(opts)
		},
	}
	return cmd
}

func getRun(opts *GetOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	tn, err := c.GetTenant(opts.Ctx, opts.Name)
	if err != nil {
		return wrapErr("tenant get "+opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, tn)
	}
	return printTenants(opts.IO, []api.Tenant{*tn})
}

// UpdateOptions is schedctl tenant update.
type UpdateOptions struct {
	Options
	Name    string
	Request api.TenantRequest
}

// NewCmdUpdate builds schedctl tenant update.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{Options: Options{IO: f, API: apiOf(f)}}
	var qf quotaFlags
	cmd := &cobra.Command{
		Use:   "update NAME [--weight W] [--quota-* N]",
		Short: "Change a tenant's weight or quotas",
		Long: `Update changes what its flags say and nothing else: a flag not given leaves
that setting as it is; --quota-X 0 returns that quota to the daemon's
default. Every node applies the change within a few seconds. It prints the
tenant as get does.`,
		Example: `  schedctl tenant update acme --weight 3
  schedctl tenant update acme --quota-running 100 --quota-firings-per-second 0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, given, err := qf.request(cmd.Flags())
			if err != nil {
				return err
			}
			if !given {
				return cmdutil.UsageErrorf("nothing to change: give --weight or a --quota-* flag")
			}
			opts.Name, opts.Request, opts.Ctx, opts.JSON = args[0], r, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return updateRun(opts)
		},
	}
	qf.register(cmd.Flags(), true)
	return cmd
}

func updateRun(opts *UpdateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	tn, err := c.UpdateTenant(opts.Ctx, opts.Name, opts.Request)
	if err != nil {
		return wrapErr("tenant update "+opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, tn)
	}
	return printTenants(opts.IO, []api.Tenant{*tn})
}

// StateOptions is schedctl tenant enable, disable and delete.
type StateOptions struct {
	Options
	Verb string // enable, disable or delete
	Name string
	Yes  bool // delete without asking
}

// errNotConfirmed is delete's answer to anything but "yes": nothing done,
// exit 1.
var errNotConfirmed = errors.New("not confirmed; nothing was deleted")

// NewCmdEnable builds schedctl tenant enable.
func NewCmdEnable(f *cmdutil.Factory, runF func(*StateOptions) error) *cobra.Command {
	return newStateCmd(f, "enable", runF)
}

// NewCmdDisable builds schedctl tenant disable.
func NewCmdDisable(f *cmdutil.Factory, runF func(*StateOptions) error) *cobra.Command {
	return newStateCmd(f, "disable", runF)
}

// NewCmdDelete builds schedctl tenant delete.
func NewCmdDelete(f *cmdutil.Factory, runF func(*StateOptions) error) *cobra.Command {
	return newStateCmd(f, "delete", runF)
}

// newStateCmd builds enable, disable or delete (verb): one command each,
// the same but for their words and delete's confirmation.
func newStateCmd(f *cmdutil.Factory, verb string, runF func(*StateOptions) error) *cobra.Command {
	opts := &StateOptions{Options: Options{IO: f, API: apiOf(f)}, Verb: verb}
	cmd := &cobra.Command{
		Use:  verb + " NAME",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if verb == "delete" && !opts.Yes && !f.CanPrompt() {
				return cmdutil.UsageErrorf("tenant delete: not on a terminal to ask for confirmation; pass --yes to delete without asking")
			}
			opts.Name, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return stateRun(opts)
		},
	}
	switch verb {
	case "enable":
		cmd.Short = "Let a disabled tenant's tokens in and its schedules fire again"
		cmd.Long = `Enable makes a DISABLED tenant ACTIVE: its tokens work again and its
schedules fire and deliver again. Enabling an active tenant changes nothing.
It prints one line; JSON output is the tenant.`
		cmd.Example = "  schedctl tenant enable acme"
	case "disable":
		cmd.Short = "Refuse a tenant's tokens and stop its schedules"
		cmd.Long = `Disable makes a tenant DISABLED: its tokens are refused at once on every
node, and its schedules neither fire nor deliver until it is enabled
again. Nothing is deleted. It prints one line; JSON output is the tenant.`
		cmd.Example = "  schedctl tenant disable acme\n  schedctl tenant disable acme -o json | jq .state"
	case "delete":
		cmd.Short = "Delete a tenant for good"
		cmd.Long = `Delete makes a tenant DELETED, for good: its tokens are revoked and its
name is never given to another tenant. schedd refuses (conflict) while the
tenant has ACTIVE or PAUSED schedules: cancel them first. Its history is
kept.

On a terminal it asks you to type "yes". Anywhere else (a script, a pipe)
it refuses with exit status 2 unless --yes is given. It prints one line;
JSON output is the tenant.`
		cmd.Example = "  schedctl tenant delete acme\n  schedctl tenant delete acme --yes -o json"
		cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	}
	return cmd
}

var stateDone = map[string]string{"enable": "enabled", "disable": "disabled", "delete": "deleted"}

func stateRun(opts *StateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	f := opts.IO
	what := "tenant " + opts.Verb + " " + opts.Name
	if opts.Verb == "delete" && !opts.Yes {
		fmt.Fprintf(f.ErrOut, "Delete tenant %s for good? Its tokens are revoked and its name can never be used again.\nType yes to delete: ", cmdutil.Cell(opts.Name))
		line, err := bufio.NewReader(f.In).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: read the answer: %w", what, err)
		}
		if !strings.EqualFold(strings.TrimSpace(line), "yes") {
			return fmt.Errorf("%s: %w", what, errNotConfirmed)
		}
	}
	var tn *api.Tenant
	if opts.Verb == "delete" {
		tn, err = c.DeleteTenant(opts.Ctx, opts.Name)
	} else {
		tn, err = c.SetTenantEnabled(opts.Ctx, opts.Name, opts.Verb == "enable")
	}
	if err != nil {
		return wrapErr(what, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, tn)
	}
	_, err = fmt.Fprintf(f.Out, "%s tenant %s: %s, version %d\n", stateDone[opts.Verb], cmdutil.Cell(tn.Name), tn.State, tn.Version)
	return err
}

// checkNewName checks a name schedctl is about to create with, offline,
// by schedd's own rule (check): a name schedd would refuse is a usage
// error naming what it is (the argument or the flag), and nothing is sent.
func checkNewName(what string, check func(string) error, name string) error {
	err := check(name)
	if ve := (*schedule.ValidationError)(nil); errors.As(err, &ve) {
		return cmdutil.UsageErrorf("%s: %s", what, ve.Reason())
	}
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	return nil
}
