// Package reconcile is schedctl reconcile: schedd's audit of what every
// schedule's timetable promised over a range of time against the
// occurrences its store records.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
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
		err = WriteReport(opts.IO, rep)
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

// WriteReport prints a report on f: its verdict line, then as tables a
// summary per schedule and the absent, unexpected, manual and
// unverifiable occurrences. On a terminal the tz warnings come first, as
// sentences, and each list has a title; otherwise every row is
// tab-separated and starts with its kind (schedule, total, absent,
// unexpected, manual, unverifiable, and last tz_warning), each table
// under a header line starting with KIND, for cut and awk. --no-headers
// leaves the rows alone. schedd reconcile prints with it too.
func WriteReport(f *cmdutil.Factory, rep *api.ReconcileReport) error {
	w, tty := f.Out, f.IsTTY
	n := strconv.Itoa
	counts := func(c api.ReconcileCounts) []string {
		return []string{n(c.Succeeded), n(c.Dead), n(c.Canceled), n(c.Missed), n(c.MissedCounted), n(c.SkippedOverlap),
			n(c.Pending), n(c.Absent), n(c.CanceledByChange), n(c.Manual), n(c.Unexpected)}
	}
	if f.Decorated() {
		// The verdict, on a terminal or not: a report mailed from cron
		// says what it found in its first line.
		fmt.Fprintf(w, "Reconciled %s to %s: %s.\n", rep.From.UTC().Format(time.RFC3339), rep.To.UTC().Format(time.RFC3339),
			verdict(rep))
		if tty {
			fmt.Fprintln(w)
		}
	}
	if tty {
		if rep.CompleteFrom != nil {
			fmt.Fprintf(w, "History is complete from %s: retention removed finished occurrences before it, which were not audited.\n\n",
				rep.CompleteFrom.UTC().Format(time.RFC3339))
		}
		for _, x := range rep.TZWarnings {
			fmt.Fprintf(w, "Warning: %s.\n\n", x.Message)
		}
	}
	sums := cmdutil.NewTable(f, "SCHEDULE", "NAME", "TENANT", "VERSIONS", "SUCCEEDED", "DEAD", "CANCELED", "MISSED", "COUNTED",
		"SKIPPED", "PENDING", "ABSENT", "BY CHANGE", "MANUAL", "UNEXPECTED").Tag("schedule")
	for _, s := range rep.Schedules {
		sums.Row(append([]string{s.ScheduleID, s.Name, s.TenantID, n(s.Versions)}, counts(s.ReconcileCounts)...)...)
	}
	sums.RowOf("total", append([]string{"total", "", "", ""}, counts(rep.Totals)...)...)
	if err := sums.Print(); err != nil {
		return err
	}
	for _, l := range []struct {
		title string
		rows  []api.ReconcileFinding
	}{{"absent", rep.Absent}, {"unexpected", rep.Unexpected}, {"manual", rep.Manual}, {"unverifiable", rep.Unverifiable}} {
		if len(l.rows) == 0 {
			continue
		}
		if tty {
			fmt.Fprintf(w, "\n%s (%d):\n", l.title, len(l.rows))
		}
		t := cmdutil.NewTable(f, "SCHEDULE", "NAME", "VERSION", "SCHEDULED FOR", "OCCURRENCE", "STATE", "REASON").Tag(l.title)
		for _, x := range l.rows {
			t.Row(x.ScheduleID, x.Name, strconv.FormatInt(x.Version, 10), cmdutil.TSV(x.ScheduledFor), x.OccurrenceID, x.State, x.Reason)
		}
		if err := t.Print(); err != nil {
			return err
		}
	}
	if tty || len(rep.TZWarnings) == 0 {
		return nil
	}
	// Off a terminal the warnings are lines of their own kind too, last,
	// so the lines of the other kinds keep their places.
	t := cmdutil.NewTable(f, "ZONE", "STORE TZ", "TZ", "SHARDS", "SCHEDULES", "UNVERIFIABLE", "MESSAGE").Tag("tz_warning")
	for _, x := range rep.TZWarnings {
		shards := make([]string, len(x.Shards))
		for i, sh := range x.Shards {
			shards[i] = n(sh)
		}
		t.Row(x.Zone, x.StoreTZVersion, x.TZVersion, strings.Join(shards, ","), n(x.Schedules), n(x.Unverifiable), x.Message)
	}
	return t.Print()
}

func verdict(rep *api.ReconcileReport) string {
	unverifiable := ""
	if n := rep.Totals.Unverifiable; n > 0 {
		unverifiable = fmt.Sprintf("; %d unverifiable (the tz rules differ, see the warnings)", n)
	}
	if !rep.Problem {
		if unverifiable != "" {
			return "every firing and occurrence checked is explained" + unverifiable
		}
		return "every firing and occurrence is explained"
	}
	return fmt.Sprintf("%s absent, %s unexpected%s", cmdutil.Plural(rep.Totals.Absent, "firing", "firings"),
		cmdutil.Plural(rep.Totals.Unexpected, "occurrence", "occurrences"), unverifiable)
}
