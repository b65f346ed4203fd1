// Package cli holds schedctl's cobra commands. Every command is built from a
// Factory that carries its I/O streams and clock, so tests drive the real
// command through its real flags and output.
package cli

import (
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

	"github.com/sched-dev/sched/internal/spec"
)

// Exit statuses: a contract for scripts.
const (
	ExitOK      = 0
	ExitFailure = 1 // anything that is not the caller's fault
	ExitInvalid = 2 // invalid input: a bad flag, field, zone or expression
)

// Factory carries what commands need from the outside world.
type Factory struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTTY reports whether Out is a terminal; tables are styled only then.
	IsTTY bool
	// NoColor is set when NO_COLOR is present or TERM is dumb.
	NoColor bool
	// Now is the clock; tests pin it.
	Now func() time.Time
	// Version is the build's version string.
	Version string
}

// SystemFactory returns a Factory on the process's real streams and clock.
func SystemFactory(version string) *Factory {
	_, noColor := os.LookupEnv("NO_COLOR")
	return &Factory{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		IsTTY:   term.IsTerminal(int(os.Stdout.Fd())),
		NoColor: noColor || os.Getenv("TERM") == "dumb",
		Now:     time.Now,
		Version: version,
	}
}

// Styled reports whether output may carry colour and styles.
func (f *Factory) Styled() bool { return f.IsTTY && !f.NoColor }

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

// ExitCode maps an error to schedctl's exit status, in one place.
func ExitCode(err error) int {
	var ue *UsageError
	var ie *spec.InvalidError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue), errors.As(err, &ie):
		return ExitInvalid
	}
	return ExitFailure
}

// Run executes schedctl with args and returns the exit status. Errors are
// printed as one line on ErrOut.
func Run(f *Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
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

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "table|json" }
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
	out := outTable
	root := &cobra.Command{
		Use:   "schedctl",
		Short: "Drive the sched scheduler from a terminal or a script",
		Long: `schedctl previews schedules offline and manages them on a running schedd.

Exit status: 0 on success, 2 on invalid input (a bad flag, field, zone or
expression), 1 on any other failure; errors are one line on stderr.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       f.Version,
	}
	root.SetIn(f.In)
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	root.PersistentFlags().VarP(&out, "output", "o", "output format: table or json")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.AddCommand(
		newPreviewCmd(f, &out),
		newVersionCmd(f, &out),
	)
	// Unknown commands and bad arguments are invalid input too.
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q for schedctl; see schedctl --help", args[0])
		}
		return cmd.Help()
	}
	return root
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
