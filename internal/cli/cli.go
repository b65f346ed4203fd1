// Package cli holds schedctl's cobra commands. Every command is built from a
// Factory that carries its I/O streams and clock, so tests drive the real
// command through its real flags and output.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/spec"
)

// Exit statuses: a contract for scripts.
const (
	ExitOK      = 0
	ExitFailure = 1 // anything that is not the caller's fault
	ExitInvalid = 2 // invalid input: a bad flag, field, zone or expression
	// ExitTrouble is diff's status for an error that is not invalid input
	// (schedd unreachable, a refused request): diff gives 1 its diff(1)
	// meaning, "differences found", so its other failures need another
	// number. Every other command says 1 for those.
	ExitTrouble = 3
)

// Factory carries what commands need from the outside world.
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

	// Set by the root command's global flags.
	output      outputFormat
	addr, token string
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

// Styled reports whether output may carry colour and styles.
func (f *Factory) Styled() bool { return f.IsTTY && !f.NoColor }

// CanPrompt reports whether schedctl may ask a question and read the
// answer: both standard input and output are a terminal.
func (f *Factory) CanPrompt() bool { return f.IsTTY && f.InTTY }

// renderer returns a lipgloss renderer for Out that honours Styled.
func (f *Factory) renderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(f.Out)
	if !f.Styled() {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

// UsageError is invalid input: exit status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// StatusError ends schedctl with exit status Status. A Silent one prints
// no error line: the command's output already said what happened (diff's
// "differences found" is a result, not an error).
type StatusError struct {
	Status int
	Err    error
	Silent bool
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// ExitCode maps an error to schedctl's exit status, in one place. A
// StatusError says its own status (diff's 1 and 3). schedd's 400 answers
// (invalid_argument, cron_never_fires, invalid_time_zone, bad_request) are
// invalid input too; every other answer, 404 and 409 (conflict, stale
// attempt) included, is a failure.
func ExitCode(err error) int {
	var se *StatusError
	var ue *UsageError
	var ie *spec.InvalidError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.Status
	case errors.As(err, &ue), errors.As(err, &ie), client.IsInvalid(err):
		return ExitInvalid
	}
	return ExitFailure
}

// Run executes schedctl with args and returns the exit status. Errors are
// printed as one line on ErrOut, but for a silent StatusError.
func Run(f *Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	var se *StatusError
	if err != nil && !(errors.As(err, &se) && se.Silent) {
		msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
		fmt.Fprintf(f.ErrOut, "schedctl: %s\n", msg)
	}
	return ExitCode(err)
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

// NewRootCmd builds the schedctl command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	if f.LookupEnv == nil {
		f.LookupEnv = os.LookupEnv
	}
	f.output = outTable
	root := &cobra.Command{
		Use:   "schedctl",
		Short: "Drive the sched scheduler from a terminal or a script",
		Long: `schedctl previews schedules offline and manages them on a running schedd:
schedules, their occurrences, workers, the dead-letter queue, and schedules
kept as code in YAML files.

It talks to schedd over the Unix socket schedd listens on by default, or the
address in --addr / SCHED_ADDR, with the token in --token / SCHED_TOKEN.
Over a Unix socket it talks only to a daemon run by your own user.

Output is a table for people (-o table, the default) or JSON for scripts
(-o json); the JSON field names are a stable contract.

Lists (list, occurrences, attempts, dlq list) show one page, schedd's
default of 100 unless --limit says otherwise; --all follows every page, and
a footer says when more exist. occurrences, get and status take -w to watch;
top is a live dashboard of the whole cluster.

Exit status: 0 on success, 2 on invalid input (a bad flag, field, zone or
expression, offline or as schedd judged it), 1 on any other failure (an
unknown schedule, a conflict, a stale attempt, schedd unreachable); errors
are one line on stderr. diff alone differs, like diff(1): 1 means
differences found, and its other failures exit 3.`,
		Example: `  # start the daemon in one terminal, then:
  schedctl create --name nightly --queue reports --cron '0 2 * * *' --tz Europe/Berlin
  schedctl list
  schedctl status -w
  schedctl worker --queue reports -- ./make-report.sh
  schedctl apply -f schedules.yaml`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       f.Version,
	}
	root.SetIn(f.In)
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	pf := root.PersistentFlags()
	pf.VarP(&f.output, "output", "o", "output format: table or json")
	pf.StringVar(&f.addr, "addr", "", "schedd's address: unix:PATH, tcp:HOST:PORT or https://HOST:PORT (env SCHED_ADDR; default: the socket schedd listens on)")
	pf.StringVar(&f.token, "token", "", "API token (env SCHED_TOKEN, which unlike the flag does not show in ps)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newPreviewCmd(f),
		newVersionCmd(f),
		NewCmdStatus(f, nil),
		NewCmdTop(f, nil),
		NewCmdCluster(f, nil),
		NewCmdCreate(f, nil),
		NewCmdUpdate(f, nil),
		NewCmdGet(f, nil),
		NewCmdList(f, nil),
		NewCmdChange(f, "pause", nil),
		NewCmdChange(f, "resume", nil),
		NewCmdChange(f, "cancel", nil),
		NewCmdTrigger(f, nil),
		NewCmdOccurrences(f, nil),
		NewCmdAttempts(f, nil),
		NewCmdClaim(f, nil),
		NewCmdHeartbeat(f, nil),
		NewCmdAck(f, nil),
		NewCmdNack(f, nil),
		NewCmdWorker(f, nil),
		newDLQCmd(f),
		NewCmdApply(f, nil),
		NewCmdDiff(f, nil),
		NewCmdValidate(f, nil),
		newCompletionCmd(f),
	)
	root.InitDefaultHelpCmd()
	// Unknown commands and bad arguments are invalid input too.
	var wrap func(c *cobra.Command)
	wrap = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			wrapArgs(sub)
			if sub.Name() == "help" && sub.Example == "" {
				sub.Example = "  schedctl help create\n  schedctl help dlq replay"
			}
			wrap(sub)
		}
	}
	wrap(root)
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q for schedctl; see schedctl --help", args[0])
		}
		return cmd.Help()
	}
	return root
}

// groupCmd is a command that only holds subcommands: run with an unknown
// one, it is invalid input.
func groupCmd(use, short, example string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Example: example,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %s; see %s --help", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
}

// wrapArgs makes positional-argument errors usage errors.
func wrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	inner := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := inner(cmd, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
}
