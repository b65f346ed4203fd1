package cmdutil

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/sched-dev/sched/client"
)

// Factory carries what commands need from the outside world: the I/O
// streams and whether they are terminals, the clock, the environment, and
// the global flags (-o, --addr, --token) that say how to print and which
// schedd to reach.
type Factory struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTTY reports whether Out is a terminal; tables are styled only then.
	IsTTY bool
	// InTTY reports whether In is a terminal: with IsTTY, schedctl may ask
	// a question (dlq purge's confirmation).
	InTTY bool
	// NoColor is set when NO_COLOR is present or TERM is dumb.
	NoColor bool
	// Now is the clock; tests pin it.
	Now func() time.Time
	// Version is the build's version string.
	Version string
	// LookupEnv reads the environment (SCHED_ADDR, SCHED_TOKEN, the
	// default socket's XDG_RUNTIME_DIR); os.LookupEnv in production.
	LookupEnv func(string) (string, bool)
	// NoHeaders drops tables' header lines and the summary lines around
	// them (--no-headers), for a script that wants the rows alone.
	NoHeaders bool

	// Set by the root command's global flags (AddGlobalFlags).
	output      outputFormat
	addr, token string
	tls         client.TLSFiles // --tls-ca, --tls-client-cert, --tls-client-key
	contextName string          // --context (connection.go)
}

// SystemFactory returns a Factory on the process's real streams and clock.
func SystemFactory(version string) *Factory {
	_, noColor := os.LookupEnv("NO_COLOR")
	return &Factory{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		IsTTY:     term.IsTerminal(int(os.Stdout.Fd())),
		InTTY:     term.IsTerminal(int(os.Stdin.Fd())),
		NoColor:   noColor || os.Getenv("TERM") == "dumb",
		Now:       time.Now,
		Version:   version,
		LookupEnv: os.LookupEnv,
	}
}

// Decorated reports whether tables print their header line and the
// summary lines around them (output.Stream.Decorated).
func (f *Factory) Decorated() bool { return f.Stream().Decorated() }

// Styled reports whether output may carry colour and styles.
func (f *Factory) Styled() bool { return f.IsTTY && !f.NoColor }

// CanPrompt reports whether schedctl may ask a question and read the
// answer: both standard input and output are a terminal.
func (f *Factory) CanPrompt() bool { return f.IsTTY && f.InTTY }

// AddGlobalFlags registers the flags every command inherits from the root
// (-o, --addr, --token, and the TLS files: tls.go) on pf, storing their values in f. -o starts
// as table.
func (f *Factory) AddGlobalFlags(pf *pflag.FlagSet) {
	f.output = outTable
	pf.VarP(&f.output, "output", "o", "output format: table or json")
	pf.StringVar(&f.addr, "addr", "", "schedd's address: unix:PATH, tcp:HOST:PORT, tls:HOST:PORT or https://HOST:PORT (env SCHED_ADDR; default: the socket schedd listens on)")
	pf.StringVar(&f.token, "token", "", "API token (env SCHED_TOKEN, which unlike the flag does not show in ps)")
	pf.BoolVar(&f.NoHeaders, "no-headers", false, "print tables' rows alone: no header line, no summary lines")
	f.addTLSFlags(pf)
	f.addContextFlag(pf)
}

// JSONOut reports whether -o json was given.
func (f *Factory) JSONOut() bool { return f.output == outJSON }

// Client connects to schedd with the global --addr and --token, falling
// back to SCHED_ADDR and SCHED_TOKEN, then to the context (--context,
// SCHED_CONTEXT, the config file's current_context), and to the default
// socket; a tls: or https:// address uses the TLS flags (SCHED_TLS_*, the
// context's files). Connection (connection.go) says the rules. An
// address it cannot read, TLS files it cannot load, or a context that is
// wrong are invalid input.
func (f *Factory) Client() (*client.Client, error) {
	conn, err := f.Connection()
	if err != nil {
		return nil, err
	}
	return conn.newClient(f)
}

// API is Client as the API interface.
func (f *Factory) API() (API, error) {
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// outputFormat is the value of the global -o flag.
type outputFormat string

const (
	outTable outputFormat = "table"
	outJSON  outputFormat = "json"
)

func (o *outputFormat) String() string {
	if *o == "" {
		return string(outTable)
	}
	return string(*o)
}
func (o *outputFormat) Type() string { return "table|json" }
func (o *outputFormat) Set(s string) error {
	switch outputFormat(s) {
	case outTable, outJSON:
		*o = outputFormat(s)
		return nil
	}
	return fmt.Errorf("want table or json")
}
