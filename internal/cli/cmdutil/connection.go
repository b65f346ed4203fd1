package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/config"
)

// Which schedd a command reaches, and how, comes from four places; for
// each setting the first that gives it wins:
//
//  1. the global flags: --addr, --token, --tls-ca, --tls-client-cert
//     and --tls-client-key;
//  2. the environment: SCHED_ADDR, SCHED_TOKEN, SCHED_TLS_CA,
//     SCHED_TLS_CLIENT_CERT, SCHED_TLS_CLIENT_KEY;
//  3. a context of schedctl's config file (package config): the one
//     --context or SCHED_CONTEXT names, else the file's current_context.
//     Its tenant (an admin acting as that tenant) comes only from here;
//  4. the default socket, and no token.
//
// A client certificate and its key go together: a pair given by a flag
// or variable hides the context's pair. And a context only the file's
// current_context chose is not used at all when --addr or SCHED_ADDR
// gives the address: its token is for its own daemon, and must not go to
// another one because a variable was left set. A context named with
// --context or SCHED_CONTEXT is used under an --addr, as asked.

// ContextHelp says the above for the help of the root and of schedctl
// context.
const ContextHelp = `Which schedd a command reaches, and with which credentials: a flag (--addr,
--token, --tls-*) wins over its variable (SCHED_ADDR, SCHED_TOKEN,
SCHED_TLS_*), which wins over the context (--context NAME or SCHED_CONTEXT,
else the config file's current_context), which wins over the default
socket. A context that only current_context chose is ignored when --addr or
SCHED_ADDR gives the address, so that its token never goes to another daemon.`

// Connection is where and how schedctl reaches schedd once the flags, the
// environment and the context are applied (Factory.Connection).
type Connection struct {
	Addr   string          // "" for the default socket
	Token  string          // "" for none
	TLS    client.TLSFiles // of a tls: or https:// address
	Tenant string          // the tenant to act as (Sched-Tenant), from the context; "" for the token's own
	// Context is the context in use, "" for none; addrFrom and tokenFrom
	// name where the address and the token came from, for messages.
	Context             string
	addrFrom, tokenFrom string
}

// addContextFlag registers the global --context.
func (f *Factory) addContextFlag(pf *pflag.FlagSet) {
	pf.StringVar(&f.contextName, "context", "", "use the context `NAME` of schedctl's config file (env SCHED_CONTEXT; default: the file's current_context); see schedctl context --help")
}

// NamedContext is the context --context, else SCHED_CONTEXT, names, and
// which of them named it; "" when neither did.
func (f *Factory) NamedContext() (name, from string) {
	if f.contextName != "" {
		return f.contextName, "--context"
	}
	if v, ok := f.LookupEnv("SCHED_CONTEXT"); ok && v != "" {
		return v, "SCHED_CONTEXT"
	}
	return "", ""
}

// AddrOverride names the flag or variable that gives the address
// (--addr, SCHED_ADDR), "" when neither does: then a context that only
// current_context chose is not used.
func (f *Factory) AddrOverride() string {
	if f.addr != "" {
		return "--addr"
	}
	if v, ok := f.LookupEnv("SCHED_ADDR"); ok && v != "" {
		return "SCHED_ADDR"
	}
	return ""
}

// Config reads schedctl's config file (config.Open on f's environment); a
// file that is wrong is invalid input.
func (f *Factory) Config() (*config.File, error) {
	cf, err := config.Open(f.LookupEnv)
	return cf, usageIfInvalid(err)
}

func usageIfInvalid(err error) error {
	if err != nil && errors.Is(err, config.ErrInvalid) {
		return &UsageError{Err: err}
	}
	return err
}

// Connection resolves where and how to reach schedd (see ContextHelp). It
// reads the context's token (running its token_command) only when no flag
// or variable gives one. A context that does not exist, a config file
// that is wrong or a token file that group or others may read is invalid
// input.
func (f *Factory) Connection() (Connection, error) {
	conn := Connection{Addr: f.addr, Token: f.token, tokenFrom: "--token"}
	if conn.Addr == "" {
		conn.Addr, _ = f.LookupEnv("SCHED_ADDR")
	}
	if conn.Token == "" {
		conn.Token, _ = f.LookupEnv("SCHED_TOKEN")
		conn.tokenFrom = "SCHED_TOKEN"
	}
	cx, err := f.selectContext()
	if err != nil {
		return conn, err
	}
	if cx != nil {
		conn.Context, conn.Tenant = cx.Name(), cx.Tenant
		if conn.Addr == "" {
			conn.Addr, conn.addrFrom = cx.Addr, "context "+cx.Name()
		}
		if conn.Token == "" {
			if conn.Token, err = cx.Token(context.Background()); err != nil {
				return conn, usageIfInvalid(err)
			}
			conn.tokenFrom = "the token of context " + cx.Name()
		}
	}
	conn.TLS, err = f.tlsFiles(cx)
	return conn, err
}

// selectContext is the context in use (see ContextHelp), nil for none.
func (f *Factory) selectContext() (*config.Context, error) {
	name, from := f.NamedContext()
	if name == "" && f.AddrOverride() != "" {
		return nil, nil
	}
	if name == "" {
		if _, err := config.Path(f.LookupEnv); err != nil {
			return nil, nil // no config file can be found: none is in use
		}
	}
	cf, err := f.Config()
	if err != nil {
		return nil, err
	}
	if name == "" {
		if name, from = cf.CurrentContext, "current_context"; name == "" {
			return nil, nil
		}
	}
	cx, ok := cf.Get(name)
	if !ok {
		return nil, usageIfInvalid(cf.Unknown(from, name))
	}
	return &cx, nil
}

// newClient is the client of conn; an address it cannot read, TLS files
// it cannot load or a token it cannot send are invalid input.
func (conn Connection) newClient(f *Factory) (*client.Client, error) {
	opts := []client.Option{client.WithVersion("schedctl/" + f.Version), client.WithEnv(f.LookupEnv),
		client.WithTLSFiles(conn.TLS)}
	if conn.Tenant != "" {
		opts = append(opts, client.WithActingTenant(conn.Tenant))
	}
	c, err := client.New(conn.Addr, conn.Token, opts...)
	if err != nil {
		if errors.Is(err, client.ErrInvalidAddress) && conn.addrFrom != "" {
			return nil, &UsageError{Err: fmt.Errorf("%s: %w", conn.addrFrom, err)}
		}
		if errors.Is(err, client.ErrInvalidAddress) || errors.Is(err, client.ErrInvalidTLS) {
			return nil, &UsageError{Err: err}
		}
		return nil, &UsageError{Err: errors.New(conn.tokenFrom + ": " + err.Error())}
	}
	return c, nil
}
