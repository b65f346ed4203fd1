// Package contextcmd is schedctl context: the named contexts of
// schedctl's config file (package config), each a schedd and how to reach
// it (address, TLS files, where its token comes from, the tenant to act
// as): list, use, set, delete and current. The global --context flag (and
// SCHED_CONTEXT) picks one for a single command; the Factory applies it
// (cmdutil's connection.go). The package is not named context, which
// would shadow the standard library's in the files that import both.
package contextcmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/config"
)

// Options is what every context command holds.
type Options struct {
	IO   *cmdutil.Factory
	JSON bool
}

// Context is a context as -o json prints it. It never holds a token, nor
// a token_command's words (which someone may have made hold one); token
// says where the token comes from.
type Context struct {
	Name          string `json:"name"`
	Current       bool   `json:"current"` // the context in use now (see current)
	Addr          string `json:"addr"`
	Token         string `json:"token"` // file, command or none
	TokenFile     string `json:"token_file"`
	TLSCA         string `json:"tls_ca"`
	TLSClientCert string `json:"tls_client_cert"`
	TLSClientKey  string `json:"tls_client_key"`
	Tenant        string `json:"tenant"`
}

const groupLong = `A context is a schedd and how to reach it, kept by name in schedctl's config
file: its address (as --addr takes it), the TLS files (as --tls-ca,
--tls-client-cert and --tls-client-key take them), where its token comes
from, and optionally a tenant to act as (an admin's Sched-Tenant header).
The file is $XDG_CONFIG_HOME/sched/config.yaml, else
~/.config/sched/config.yaml; SCHED_CONFIG names another. It holds no token:

  current_context: local
  contexts:
    local:
      addr: unix:/run/user/1000/sched/schedd.sock
    prod:
      addr: tls:sched.example.com:7443
      tls_ca: /etc/sched/ca.pem
      token_command: [secret-tool, lookup, service, sched, context, prod]
      tenant: billing

A token_file is read at each use and refused when group or others may read
it (chmod 600), as ssh refuses such a key. A token_command runs at each use,
without a shell, and its standard output (trimmed) is the token: that is
how a keyring is used. With GNOME Keyring or KWallet (libsecret):

  secret-tool store --label 'sched prod' service sched context prod
  schedctl context set prod --token-command 'secret-tool lookup service sched context prod'

or 'pass show sched/prod', or on macOS 'security find-generic-password -s
sched-prod -w'. Relative paths in the file are relative to its directory.

` + cmdutil.ContextHelp + `

schedctl writes the file with mode 0600 and atomically, keeping comments on
what a change leaves alone, and refuses one that group or others may write
(a token_command runs as you), or that holds an unknown field. A context
that does not exist, given to --context or to these commands, is invalid
input (exit status 2).`

// NewCmdContext builds schedctl context, the group of the context
// commands.
func NewCmdContext(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.GroupCmd("context", "Named schedds and how to reach them: list, use, set, delete, current",
		"  schedctl context set local --addr unix:$XDG_RUNTIME_DIR/sched/schedd.sock\n"+
			"  schedctl context set prod --addr tls:sched.example.com:7443 --tls-ca ca.pem --token-file ~/.config/sched/prod.token\n"+
			"  schedctl context use prod\n  schedctl --context local status\n  schedctl context list")
	cmd.Long = groupLong
	cmd.AddCommand(NewCmdList(f, nil), NewCmdUse(f, nil), NewCmdSet(f, nil), NewCmdDelete(f, nil), NewCmdCurrent(f, nil))
	return cmd
}

// CompleteNames completes the name of a context of the config file (for
// --context, and the argument of use and delete); nothing when the file
// cannot be read.
func CompleteNames(f *cmdutil.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		cf, err := f.Config()
		if err != nil || len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range cf.Names() {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// inUse is the context the commands that reach schedd would use now (see
// cmdutil.ContextHelp), and a note for standard error when what the file
// says current is not it.
func inUse(f *cmdutil.Factory, cf *config.File) (name, note string) {
	if n, from := f.NamedContext(); n != "" {
		if _, ok := cf.Contexts[n]; !ok {
			return "", fmt.Sprintf("note: %s names %q, which is not a context of %s", from, n, cf.Path)
		}
		if n != cf.CurrentContext && cf.CurrentContext != "" {
			note = fmt.Sprintf("note: %s chooses %q over current_context %q", from, n, cf.CurrentContext)
		}
		return n, note
	}
	if over := f.AddrOverride(); over != "" && cf.CurrentContext != "" {
		return "", fmt.Sprintf("note: %s gives the address, so current_context %q is not used (--context %s uses it anyway)", over, cf.CurrentContext, cf.CurrentContext)
	}
	return cf.CurrentContext, ""
}

// view is the context name of cf as printed, its paths resolved.
func view(cf *config.File, name, current string) Context {
	c, _ := cf.Get(name)
	return Context{Name: name, Current: name == current, Addr: c.Addr, Token: c.TokenSource(), TokenFile: c.TokenFile,
		TLSCA: c.TLSCA, TLSClientCert: c.TLSClientCert, TLSClientKey: c.TLSClientKey, Tenant: c.Tenant}
}

func printTable(f *cmdutil.Factory, cs []Context) error {
	t := cmdutil.NewTable(f, "CURRENT", "NAME", "ADDR", "TOKEN", "TENANT")
	for _, c := range cs {
		mark := ""
		if c.Current {
			mark = "*"
		}
		t.Row(mark, c.Name, c.Addr, c.Token, c.Tenant)
	}
	return t.Print()
}

func printNote(f *cmdutil.Factory, note string) {
	if note != "" {
		fmt.Fprintln(f.ErrOut, note)
	}
}

// ListOptions is schedctl context list.
type ListOptions struct{ Options }

// NewCmdList builds schedctl context list.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Options{IO: f}}
	return &cobra.Command{
		Use:   "list",
		Short: "List the contexts of schedctl's config file",
		Long: `List prints every context by name. Columns: CURRENT ("*" on the context in
use now: --context, SCHED_CONTEXT, else current_context), NAME, ADDR, TOKEN
(where the token comes from: file, command or none; never the token) and
TENANT (the tenant it acts as, "-" for the token's own). JSON output is an
array of contexts with their TLS files and token_file too.`,
		Example: `  schedctl context list
  schedctl context list -o json | jq -r '.[] | select(.current) | .addr'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
}

func listRun(opts *ListOptions) error {
	f := opts.IO
	cf, err := f.Config()
	if err != nil {
		return err
	}
	current, note := inUse(f, cf)
	cs := []Context{}
	for _, n := range cf.Names() {
		cs = append(cs, view(cf, n, current))
	}
	if opts.JSON {
		printNote(f, note)
		return cmdutil.WriteJSON(f.Out, cs)
	}
	if err := printTable(f, cs); err != nil {
		return err
	}
	if len(cs) == 0 {
		fmt.Fprintf(f.ErrOut, "no contexts in %s; make one with schedctl context set NAME --addr ADDR\n", cf.Path)
	}
	printNote(f, note)
	return nil
}

// NameOptions is schedctl context use and delete: one context by name.
type NameOptions struct {
	Options
	Name string
}

// NewCmdUse builds schedctl context use.
func NewCmdUse(f *cmdutil.Factory, runF func(*NameOptions) error) *cobra.Command {
	opts := &NameOptions{Options: Options{IO: f}}
	return &cobra.Command{
		Use:   "use NAME",
		Short: "Make a context the current one",
		Long: `Use makes NAME the config file's current_context: the context every command
uses unless --context or SCHED_CONTEXT names another, or --addr or
SCHED_ADDR gives an address. It prints one line; JSON output is the context.`,
		Example:           "  schedctl context use prod",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.JSON = args[0], f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return useRun(opts)
		},
	}
}

func useRun(opts *NameOptions) error {
	f := opts.IO
	cf, err := f.Config()
	if err != nil {
		return err
	}
	if _, ok := cf.Contexts[opts.Name]; !ok {
		return &cmdutil.UsageError{Err: cf.Unknown("context use", opts.Name)}
	}
	cf.CurrentContext = opts.Name
	if err := cf.Save(); err != nil {
		return err
	}
	current, note := inUse(f, cf)
	c := view(cf, opts.Name, current)
	printNote(f, note)
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, c)
	}
	_, err = fmt.Fprintf(f.Out, "Switched to context %q (%s).\n", opts.Name, cmdutil.Cell(c.Addr))
	return err
}

// NewCmdDelete builds schedctl context delete.
func NewCmdDelete(f *cmdutil.Factory, runF func(*NameOptions) error) *cobra.Command {
	opts := &NameOptions{Options: Options{IO: f}}
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Remove a context from the config file",
		Long: `Delete removes the context NAME from the config file; if it was the current
one, none is current afterwards. Its token file, and a token in a keyring,
are left as they are. It prints one line; JSON output is the context as it
was.`,
		Example:           "  schedctl context delete staging",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.JSON = args[0], f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return deleteRun(opts)
		},
	}
}

func deleteRun(opts *NameOptions) error {
	f := opts.IO
	cf, err := f.Config()
	if err != nil {
		return err
	}
	if _, ok := cf.Contexts[opts.Name]; !ok {
		return &cmdutil.UsageError{Err: cf.Unknown("context delete", opts.Name)}
	}
	current, _ := inUse(f, cf)
	c := view(cf, opts.Name, current)
	wasCurrent := cf.CurrentContext == opts.Name
	cf.Delete(opts.Name)
	if err := cf.Save(); err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, c)
	}
	msg := fmt.Sprintf("Context %q deleted.", opts.Name)
	if wasCurrent {
		msg += " It was the current context; none is now (schedctl context use NAME)."
	}
	_, err = fmt.Fprintln(f.Out, msg)
	return err
}

// CurrentOptions is schedctl context current.
type CurrentOptions struct{ Options }

// NewCmdCurrent builds schedctl context current.
func NewCmdCurrent(f *cmdutil.Factory, runF func(*CurrentOptions) error) *cobra.Command {
	opts := &CurrentOptions{Options{IO: f}}
	return &cobra.Command{
		Use:   "current",
		Short: "Print the name of the context in use",
		Long: `Current prints the name of the context commands use now: the one --context
or SCHED_CONTEXT names, else the config file's current_context. When --addr
or SCHED_ADDR gives the address, current_context is not used, and a note on
standard error says so. It exits 1 when no context is chosen at all. JSON
output is the context.`,
		Example: `  schedctl context current
  schedctl --context prod context current -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return currentRun(opts)
		},
	}
}

func currentRun(opts *CurrentOptions) error {
	f := opts.IO
	cf, err := f.Config()
	if err != nil {
		return err
	}
	name, from := f.NamedContext()
	if name != "" {
		if _, ok := cf.Contexts[name]; !ok {
			return &cmdutil.UsageError{Err: cf.Unknown(from, name)}
		}
	} else if name = cf.CurrentContext; name == "" {
		return fmt.Errorf("no context is in use: %s sets no current_context (schedctl context use NAME)", cf.Path)
	} else if _, ok := cf.Contexts[name]; !ok {
		return &cmdutil.UsageError{Err: cf.Unknown("current_context", name)}
	}
	_, note := inUse(f, cf)
	printNote(f, note)
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, view(cf, name, name))
	}
	_, err = fmt.Fprintln(f.Out, name)
	return err
}

// SetOptions is schedctl context set.
type SetOptions struct {
	Options
	Name string
	// Context is what the flags given say, applied to the context as it
	// is (or to none, for a new one); Given names the flags given.
	Context config.Context
	Given   map[string]bool
}

// setFlags are context set's flags, and the field of the file each sets.
var setFlags = []struct{ flag, field, help string }{
	{"addr", "addr", "schedd's `ADDRESS`: unix:PATH, tcp:HOST:PORT, tls:HOST:PORT or https://HOST:PORT (required for a new context)"},
	{"token-file", "token_file", "read the token from `FILE` at each use; it must be yours alone (chmod 600); \"\" for no token"},
	{"token-command", "token_command", "run `COMMAND` (its words split as a shell would, run without one) at each use; its output is the token; \"\" for no token"},
	{"tls-ca", "tls_ca", "PEM `FILE` of the CA(s) that sign schedd's certificate (\"\": the system's roots)"},
	{"tls-client-cert", "tls_client_cert", "PEM `FILE` of the client certificate, with --tls-client-key (\"\" for none)"},
	{"tls-client-key", "tls_client_key", "PEM `FILE` of the client certificate's key"},
	{"tenant", "tenant", "act as the tenant `NAME` (the Sched-Tenant header; an admin's token, or the Unix socket, may; \"\": the token's own)"},
}

// NewCmdSet builds schedctl context set.
func NewCmdSet(f *cmdutil.Factory, runF func(*SetOptions) error) *cobra.Command {
	opts := &SetOptions{Options: Options{IO: f}}
	vals := make([]string, len(setFlags))
	cmd := &cobra.Command{
		Use:   "set NAME [--addr ADDRESS] [--token-file FILE | --token-command COMMAND] [--tls-ca FILE] [--tenant NAME]",
		Short: "Create a context, or change one",
		Long: `Set creates the context NAME (--addr is then required) or changes what its
flags say of an existing one, leaving the rest. A flag given "" removes that
setting. --token-file and --token-command replace each other.

Files are stored as absolute paths and checked now: a token file must exist
and be yours alone (chmod 600), a token command's program must be found.
The token itself is never stored. The first context made becomes the
current one. It prints one line; JSON output is the context.

These flags are the context's own: here --addr and the --tls-* flags do not
choose a schedd to talk to (set talks to none).`,
		Example: `  schedctl context set local --addr unix:$XDG_RUNTIME_DIR/sched/schedd.sock
  schedctl context set prod --addr tls:sched.example.com:7443 --tls-ca /etc/sched/ca.pem \
      --token-command 'secret-tool lookup service sched context prod'
  schedctl context set ci --addr tcp:127.0.0.1:7070 --token-file ~/.config/sched/ci.token --tenant billing
  schedctl context set prod --tenant ''`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := config.CheckName(args[0]); err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			if cmd.Flag("token-file").Value.String() != "" && cmd.Flag("token-command").Value.String() != "" {
				return cmdutil.UsageErrorf("give --token-file or --token-command, not both")
			}
			opts.Name, opts.JSON, opts.Given = args[0], f.JSONOut(), map[string]bool{}
			for i, s := range setFlags {
				if !cmd.Flags().Changed(s.flag) {
					continue
				}
				opts.Given[s.flag] = true
				if err := setField(&opts.Context, s.flag, vals[i]); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return setRun(opts)
		},
	}
	for i, s := range setFlags {
		cmd.Flags().StringVar(&vals[i], s.flag, "", s.help)
	}
	return cmd
}

// setField reads flag's value into c, checking what can be checked here:
// the address's form, files that exist (made absolute), a token file's
// mode, a token command's program.
func setField(c *config.Context, flag, v string) error {
	abs := func() (string, error) {
		if v == "" {
			return "", nil
		}
		p, err := filepath.Abs(v)
		if err != nil {
			return "", cmdutil.UsageErrorf("--%s %q: %v", flag, v, err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return "", cmdutil.UsageErrorf("--%s: %v", flag, err)
		}
		if flag == "token-file" {
			if err := config.CheckTokenFile(p, fi); err != nil {
				return "", cmdutil.UsageErrorf("--%s: %v", flag, err)
			}
		}
		return p, nil
	}
	var err error
	switch flag {
	case "addr":
		if v == "" {
			return cmdutil.UsageErrorf("--addr: a context needs an address")
		}
		if _, err := client.New(v, ""); err != nil {
			return cmdutil.UsageErrorf("--addr: %v", err)
		}
		c.Addr = v
	case "token-file":
		c.TokenFile, err = abs()
		if c.TokenFile != "" {
			c.TokenCommand = nil
		}
	case "token-command":
		words, werr := splitWords(v)
		if werr != nil {
			return cmdutil.UsageErrorf("--token-command %q: %v", v, werr)
		}
		if len(words) > 0 {
			if strings.ContainsRune(words[0], '/') {
				if words[0], err = filepath.Abs(words[0]); err != nil {
					return cmdutil.UsageErrorf("--token-command: %v", err)
				}
			}
			if _, err := exec.LookPath(words[0]); err != nil {
				return cmdutil.UsageErrorf("--token-command: %v", err)
			}
			c.TokenFile = ""
		}
		c.TokenCommand = words
	case "tls-ca":
		c.TLSCA, err = abs()
	case "tls-client-cert":
		c.TLSClientCert, err = abs()
	case "tls-client-key":
		c.TLSClientKey, err = abs()
	case "tenant":
		c.Tenant = v
	}
	return err
}

// flagOf is the flag of a field of the file, for messages.
func flagOf(field string) string {
	for _, s := range setFlags {
		if s.field == field {
			return "--" + s.flag
		}
	}
	return field
}

func setRun(opts *SetOptions) error {
	f := opts.IO
	cf, err := f.Config()
	if err != nil {
		return err
	}
	old, exists := cf.Contexts[opts.Name]
	var c config.Context
	switch {
	case exists:
		c = *old
	case !opts.Given["addr"]:
		return cmdutil.UsageErrorf("context %q does not exist yet: give --addr to make it", opts.Name)
	}
	if exists && len(opts.Given) == 0 {
		return cmdutil.UsageErrorf("nothing to change: give --addr, --token-file, --token-command, --tls-ca, --tls-client-cert, --tls-client-key or --tenant")
	}
	n := opts.Context
	for flag := range opts.Given {
		switch flag {
		case "addr":
			c.Addr = n.Addr
		case "token-file", "token-command":
			c.TokenFile, c.TokenCommand = n.TokenFile, n.TokenCommand
		case "tls-ca":
			c.TLSCA = n.TLSCA
		case "tls-client-cert":
			c.TLSClientCert = n.TLSClientCert
		case "tls-client-key":
			c.TLSClientKey = n.TLSClientKey
		case "tenant":
			c.Tenant = n.Tenant
		}
	}
	if field, err := c.Check(); err != nil {
		return cmdutil.UsageErrorf("context %q: %s: %v", opts.Name, flagOf(field), err)
	}
	if err := cf.Set(opts.Name, c); err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	madeCurrent := cf.CurrentContext == ""
	if madeCurrent {
		cf.CurrentContext = opts.Name
	}
	if err := cf.Save(); err != nil {
		return err
	}
	current, note := inUse(f, cf)
	printNote(f, note)
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, view(cf, opts.Name, current))
	}
	msg := fmt.Sprintf("Context %q changed.", opts.Name)
	if !exists {
		msg = fmt.Sprintf("Context %q created.", opts.Name)
	}
	if madeCurrent {
		msg += " It is the current context (there was none)."
	}
	_, err = fmt.Fprintln(f.Out, msg)
	return err
}
