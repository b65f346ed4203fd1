// Package reconcile is schedctl reconcile: schedd's audit of what every
// schedule's timetable promised over a range of time against the
// occurrences its store records.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/reconcile/report"
)

// API is what the command needs of schedd.
type API interface {
	Reconcile(ctx context.Context, o client.ReconcileOptions) (*api.ReconcileReport, error)
}

// ReconcileOptions is schedctl reconcile.
type ReconcileOptions struct {
	IO   *cmdutil.Factory
	API  func() (API, error)
	Ctx  context.Context
	JSON bool

	From, To string // RFC 3339; empty: schedd's default
	Schedule string
	Tenant   string
}

// NewCmdReconcile builds schedctl reconcile.
func NewCmdReconcile(f *cmdutil.Factory, runF func(*ReconcileOptions) error) *cobra.Command {
	opts := &ReconcileOptions{IO: f, API: func() (API, error) { return f.Client() }}
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Check every firing the schedules promised against the occurrences stored",
		Long: `Reconcile asks schedd to audit its store: for every schedule, version by
version, the firings its timetable promised in the range (by default the
last 24 hours up to now) against the occurrences the store records.

Each expected firing is succeeded, dead, canceled, missed (a MISSED row),
missed_counted (no row: the misfire rule counted it), skipped_overlap,
pending (not finished, or not yet planned) or absent (planned, but no row
says what became of it). An occurrence no version explains is unexpected;
manual triggers are listed apart. docs/api.md says more of each class.

A cron schedule whose zone's rules differ between the tz database its shard
was planned under and the one schedd computes the audit with cannot be
judged: what would be absent or unexpected of it is listed as unverifiable,
after a warning naming the zone and both versions; it is not a problem and
does not change the exit status.

It prints a summary per schedule, then the absent and unexpected firings.
Exit status, as diff's: 0 when all is explained, 1 when anything is absent
or unexpected, 2 on a bad flag or range, or a --schedule that names no
schedule, 3 when the audit could not run (schedd unreachable, a refused
request). Without a running daemon, schedd
reconcile --store reads the store itself.`,
		Example: "  schedctl reconcile\n  schedctl reconcile --from 2026-03-29T00:00:00Z --to 2026-03-30T00:00:00Z --schedule nightly\n" +
			"  schedctl reconcile -o json | jq '.absent[]'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return reconcileRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", "", "the range's `start`, RFC 3339 (default 24 hours before its end)")
	fl.StringVar(&opts.To, "to", "", "the range's `end`, RFC 3339 (default now)")
	fl.StringVar(&opts.Schedule, "schedule", "", "one schedule, by id or `name`")
	fl.StringVar(&opts.Tenant, "tenant", "", "one `tenant` (default every tenant)")
	return cmd
}

func reconcileRun(opts *ReconcileOptions) error {
	return cmdutil.FindingsError(reconcileReport(opts))
}

// reconcileReport asks for the report and prints it; its error is a
// ProblemError when the report found something.
func reconcileReport(opts *ReconcileOptions) error {
	var o client.ReconcileOptions
	for _, p := range []struct {
		flag string
		s    string
		t    *time.Time
	}{{"--from", opts.From, &o.From}, {"--to", opts.To, &o.To}} {
		if p.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, p.s)
		if err != nil {
			return cmdutil.UsageErrorf("%s %q: want an RFC 3339 time such as 2027-03-14T07:00:00Z", p.flag, p.s)
		}
		*p.t = t
	}
	o.Schedule, o.Tenant = opts.Schedule, opts.Tenant
	c, err := opts.API()
	if err != nil {
		return err
	}
	rep, err := c.Reconcile(opts.Ctx, o)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if opts.JSON {
		err = cmdutil.WriteJSON(opts.IO.Out, rep)
	} else {
		err = report.Write(opts.IO.Stream(), rep)
	}
	if err != nil {
		return err
	}
	return ProblemError(rep)
}

// ProblemError is the error that makes a reconcile's exit status 1 when
// its report found something absent or unexpected (the report already
// says what), nil otherwise.
func ProblemError(rep *api.ReconcileReport) error {
	if !rep.Problem {
		return nil
	}
	return &cmdutil.StatusError{Status: cmdutil.ExitFailure, Silent: true,
		Err: errors.New("reconcile found firings absent or occurrences unexpected")}
}
