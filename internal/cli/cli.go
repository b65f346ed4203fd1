// Package cli is schedctl's root command: it wires the commands, kept in
// one package per noun (schedule, occurrence, worker, dlq, status,
// cluster, preview, version, completion), under one root with the global
// flags, and turns an error into one line and an exit status.
//
// Every command is built as NewCmdX(f *cmdutil.Factory, runF
// func(*XOptions) error) from a Factory that carries its I/O streams and
// clock, so tests drive the real command through its real flags and
// output; package cmdutil says more.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/admin"
	"github.com/sched-dev/sched/internal/cli/audit"
	"github.com/sched-dev/sched/internal/cli/bench"
	"github.com/sched-dev/sched/internal/cli/cluster"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/complete"
	"github.com/sched-dev/sched/internal/cli/completion"
	"github.com/sched-dev/sched/internal/cli/contextcmd"
	"github.com/sched-dev/sched/internal/cli/dlq"
	"github.com/sched-dev/sched/internal/cli/importcmd"
	"github.com/sched-dev/sched/internal/cli/occurrence"
	"github.com/sched-dev/sched/internal/cli/preview"
	"github.com/sched-dev/sched/internal/cli/reconcile"
	"github.com/sched-dev/sched/internal/cli/schedule"
	"github.com/sched-dev/sched/internal/cli/simulate"
	"github.com/sched-dev/sched/internal/cli/status"
	"github.com/sched-dev/sched/internal/cli/target"
	"github.com/sched-dev/sched/internal/cli/tenant"
	"github.com/sched-dev/sched/internal/cli/version"
	"github.com/sched-dev/sched/internal/cli/worker"
)

// Run executes schedctl with args and returns the exit status. Errors are
// printed as one line on ErrOut, but for a silent StatusError.
func Run(f *cmdutil.Factory, args []string) int {
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	var se *cmdutil.StatusError
	if err != nil && !(errors.As(err, &se) && se.Silent) {
		msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
		fmt.Fprintf(f.ErrOut, "schedctl: %s\n", msg)
	}
	return cmdutil.ExitCode(err)
}

// NewCmdRoot builds the schedctl command tree.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	if f.LookupEnv == nil {
		f.LookupEnv = os.LookupEnv
	}
	root := &cobra.Command{
		Use:   "schedctl",
		Short: "Drive the sched scheduler from a terminal or a script",
		Long: `schedctl previews schedules offline and manages them on a running schedd:
schedules, their occurrences, workers, the dead-letter queue, and schedules
kept as code in YAML files.

It talks to schedd over the Unix socket schedd listens on by default, or the
address in --addr / SCHED_ADDR, with the token in --token / SCHED_TOKEN, or
those of a named context (schedctl context --help). Over a Unix socket it
talks only to a daemon run by your own user, or to one whose socket is
shared with a group of yours (schedd --socket-group).

` + cmdutil.ContextHelp + `

Output is a table for people (-o table, the default) or JSON for scripts
(-o json); the JSON field names are a stable contract.

Lists (list, occurrences, attempts, dlq list) show one page, schedd's
default of 100 unless --limit says otherwise; --all follows every page, and
a footer says when more exist. occurrences, get and status take -w to watch;
top is a live dashboard of the whole cluster.

Exit status: 0 on success, 2 on invalid input (a bad flag, field, zone or
expression, offline or as schedd judged it), 1 on any other failure (an
unknown schedule, a conflict, a stale attempt, schedd unreachable); errors
are one line on stderr. diff and reconcile differ, like diff(1): 1 means
they found differences or problems, and their other failures exit 3.

A mistyped command or long flag is answered with the closest ones ("did
you mean list?"); delete is another name for cancel.`,
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
	f.AddGlobalFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(cmdutil.FlagError)
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		preview.NewCmdPreview(f, nil),
		version.NewCmdVersion(f, nil),
		status.NewCmdStatus(f, nil),
		status.NewCmdTop(f, nil),
		cluster.NewCmdCluster(f, nil),
		schedule.NewCmdCreate(f, nil),
		schedule.NewCmdUpdate(f, nil),
		schedule.NewCmdGet(f, nil),
		schedule.NewCmdList(f, nil),
		schedule.NewCmdPause(f, nil),
		schedule.NewCmdResume(f, nil),
		schedule.NewCmdCancel(f, nil),
		schedule.NewCmdTrigger(f, nil),
		occurrence.NewCmdOccurrences(f, nil),
		occurrence.NewCmdAttempts(f, nil),
		worker.NewCmdClaim(f, nil),
		worker.NewCmdHeartbeat(f, nil),
		worker.NewCmdAck(f, nil),
		worker.NewCmdNack(f, nil),
		worker.NewCmdWorker(f, nil),
		dlq.NewCmdDLQ(f),
		schedule.NewCmdApply(f, nil),
		importcmd.NewCmdImport(f, nil),
		schedule.NewCmdDiff(f, nil),
		schedule.NewCmdValidate(f, nil),
		simulate.NewCmdSimulate(f),
		completion.NewCmdCompletion(f, nil),
		reconcile.NewCmdReconcile(f, nil),
		tenant.NewCmdTenant(f),
		target.NewCmdTarget(f),
		tenant.NewCmdWhoami(f, nil),
		audit.NewCmdAudit(f, nil),
		bench.NewCmdBench(f, nil),
		admin.NewCmdAdmin(f),
		contextcmd.NewCmdContext(f),
	)
	root.InitDefaultHelpCmd()
	// Unknown commands and bad arguments are invalid input too.
	var wrap func(c *cobra.Command)
	wrap = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			cmdutil.WrapArgs(sub)
			if sub.Name() == "help" && sub.Example == "" {
				sub.Example = "  schedctl help create\n  schedctl help dlq replay"
			}
			wrap(sub)
		}
	}
	wrap(root)
	complete.Register(root, func() (complete.Source, error) { return f.Client() })
	_ = root.RegisterFlagCompletionFunc("context", contextcmd.CompleteNames(f))
	root.Args = cobra.ArbitraryArgs
	root.RunE = cmdutil.RunGroup
	return root
}
