// Package occurrence is schedctl occurrences and attempts: the firings of
// schedules, their delivery state and lag, and the deliveries of each.
package occurrence

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

var occurrenceStates = []string{"SCHEDULED", "ENQUEUED", "RUNNING", "SUCCEEDED", "RETRY_WAIT", "DEAD", "MISSED", "CANCELED", "SKIPPED_OVERLAP"}

// OccurrencesOptions is schedctl occurrences.
type OccurrencesOptions struct {
	IO       *cmdutil.Factory
	API      func() (cmdutil.API, error)
	Ctx      context.Context
	JSON     bool
	Schedule string
	State    string
	Queue    string
	Paging   cmdutil.PageFlags
	Watch    cmdutil.WatchFlags
}

// NewCmdOccurrences builds schedctl occurrences.
func NewCmdOccurrences(f *cmdutil.Factory, runF func(*OccurrencesOptions) error) *cobra.Command {
	opts := &OccurrencesOptions{IO: f, API: f.API}
	var state string
	cmd := &cobra.Command{
		Use:   "occurrences [--schedule ID|NAME] [--state S] [--queue Q] [--limit N] [--all] [--reverse] [-w]",
		Short: "List occurrences: the firings of schedules, their delivery state and lag",
		Long: `Occurrences lists occurrences, one per scheduled time of a schedule version,
oldest scheduled time first (--reverse: newest first), one page at a time:
schedd's 100 unless --limit says otherwise. A footer says when more exist;
--all follows every page, --page TOKEN starts at the one the footer names.

The table shows, for each occurrence:
  STATE      SCHEDULED, ENQUEUED, RUNNING, SUCCEEDED, RETRY_WAIT, DEAD,
             MISSED, CANCELED or SKIPPED_OVERLAP
  DUE/WAIT   "in 12s" while it is not yet due (on the queue, but no worker
             may take it yet); "waiting 3m" when it is due and no worker
             has claimed it; "due" for a retry that may be taken again
  SCHED LAG  how late it was put on the queue (enqueued - scheduled for);
             "ahead" when the planner queued it before its time
             (as it does), "manual" for one fired by schedctl trigger
  DELIV LAG  how late a worker first had it (first claim - scheduled for)
  TRIES      deliveries so far (attempt_count)

With -w it keeps watching: it asks again every --interval (2s) and redraws
when the output changes, until Ctrl-C (exit 0).

JSON output is an array of occurrences (one page, or every one with
--all; when more exist the footer, with the next page's token, goes to
stderr). Each occurrence carries due, schedule_lag, delivery_lag,
claim_lag, waiting and manual.`,
		Example: `  schedctl occurrences --schedule nightly-report
  schedctl occurrences --schedule nightly-report --reverse --limit 10
  schedctl occurrences --state enqueued --queue reports -w
  schedctl occurrences --schedule sch_01J5Z8M4 --all -o json | jq -r '.[].delivery_lag'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := cmdutil.CheckState(state, occurrenceStates)
			if err != nil {
				return err
			}
			if err := opts.Paging.Check(); err != nil {
				return err
			}
			if err := opts.Watch.Check(cmd.Flags()); err != nil {
				return err
			}
			opts.State, opts.Ctx, opts.JSON = s, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return occurrencesRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Schedule, "schedule", "", "only occurrences of this schedule (id or name)")
	fl.StringVar(&state, "state", "", "only occurrences in this state")
	fl.StringVar(&opts.Queue, "queue", "", "only occurrences of this queue")
	opts.Paging.Register(fl, "occurrences", true)
	opts.Watch.Register(fl)
	return cmd
}

func occurrencesRun(opts *OccurrencesOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	return opts.Watch.Run(opts.Ctx, opts.IO, "schedctl occurrences", func(ctx context.Context, f *cmdutil.Factory) error {
		occs, next, err := cmdutil.FetchPages(ctx, opts.Paging, func(ctx context.Context, page string) ([]api.Occurrence, string, error) {
			l, err := c.ListOccurrences(ctx, client.ListOccurrencesOptions{Schedule: opts.Schedule, State: opts.State, Queue: opts.Queue,
				Limit: opts.Paging.Limit, Page: page, Reverse: opts.Paging.Reverse})
			if err != nil {
				return nil, "", err
			}
			return l.Occurrences, l.NextPage, nil
		})
		if err != nil {
			return fmt.Errorf("occurrences: %w", err)
		}
		if opts.JSON {
			return cmdutil.WriteJSONPage(f, occs, "occurrence", "occurrences", next)
		}
		if err := printOccurrences(f, occs, "No occurrences."); err != nil {
			return err
		}
		return cmdutil.PrintMore(f, false, "occurrence", "occurrences", len(occs), next)
	})
}

// printOccurrences prints the occurrence table. The columns are chosen to
// fit 120 columns with real ids: OCCURRENCE (28, a manual one 29),
// SCHEDULED FOR (20), STATE (up to 15), DUE/WAIT (up to 12), SCHED LAG
// and DELIV LAG (9 each, the headers), TRIES (5) and QUEUE: at most 113
// columns and the queue's name, 120 for a queue of 7 characters. The
// schedule id (30 characters), version and available_at did not fit: they
// are in -o json, and DUE/WAIT says what available_at means now.
func printOccurrences(f *cmdutil.Factory, occs []api.Occurrence, none string) error {
	if len(occs) == 0 && f.IsTTY {
		_, err := fmt.Fprintln(f.Out, none)
		return err
	}
	now := f.Now()
	t := cmdutil.NewTable(f, "OCCURRENCE", "SCHEDULED FOR", "STATE", "DUE/WAIT", "SCHED LAG", "DELIV LAG", "TRIES", "QUEUE")
	for _, o := range occs {
		lag := cmdutil.ShortDur(o.ScheduleLag)
		if d, err := time.ParseDuration(ptrOr(o.ScheduleLag)); err == nil && d < 0 {
			// On the queue before its time, as the planner means it to
			// be: not a lag at all.
			lag = "ahead"
		}
		if o.Manual {
			// A manual occurrence has no timetable to be late against:
			// it is scheduled for the moment it was triggered, so its
			// schedule lag says nothing and the column marks it instead.
			lag = "manual"
		}
		t.Row(o.OccurrenceID, cmdutil.TSV(o.ScheduledFor), o.State, dueWait(o, now), lag, cmdutil.ShortDur(o.DeliveryLag),
			strconv.Itoa(o.AttemptCount), o.Queue)
	}
	return t.Print()
}

// dueWait tells a not-yet-due occurrence from a due one: "in 12s" until
// available_at, "waiting 3m" once due and never claimed (schedd's waiting),
// "due" for a due retry; "-" for the rest (running or finished).
func dueWait(o api.Occurrence, now time.Time) string {
	switch o.State {
	case "SCHEDULED", "ENQUEUED", "RETRY_WAIT":
	default:
		return "-"
	}
	if o.Waiting != nil {
		return "waiting " + cmdutil.ShortDur(o.Waiting)
	}
	if !o.Due {
		if d := o.AvailableAt.Sub(now); d > 0 {
			return "in " + cmdutil.Short(d.Round(time.Second))
		}
	}
	return "due"
}

// AttemptsOptions is schedctl attempts.
type AttemptsOptions struct {
	IO     *cmdutil.Factory
	API    func() (cmdutil.API, error)
	Ctx    context.Context
	JSON   bool
	ID     string
	Paging cmdutil.PageFlags
}

// NewCmdAttempts builds schedctl attempts.
func NewCmdAttempts(f *cmdutil.Factory, runF func(*AttemptsOptions) error) *cobra.Command {
	opts := &AttemptsOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "attempts OCC [--limit N] [--all]",
		Short: "List the deliveries of an occurrence",
		Long: `Attempts lists every delivery of an occurrence to a worker, first first: the
attempt number (the fencing token), the worker, the lease, and the result
(SUCCEEDED, FAILED_RETRYABLE, FAILED_PERMANENT, LEASE_EXPIRED) with its error.

It shows one page (schedd's 100 unless --limit says otherwise) and a footer
when more exist; --all follows every page.

JSON output is an array of attempts (the footer, when more exist, goes
to stderr).`,
		Example: "  schedctl attempts occ_5kq2x7h3m4\n  schedctl attempts occ_5kq2x7h3m4 --all -o json | jq -r '.[].result'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Paging.Check(); err != nil {
				return err
			}
			opts.ID, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return attemptsRun(opts)
		},
	}
	opts.Paging.Register(cmd.Flags(), "attempts", false)
	return cmd
}

func attemptsRun(opts *AttemptsOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	as, next, err := cmdutil.FetchPages(opts.Ctx, opts.Paging, func(ctx context.Context, page string) ([]api.Attempt, string, error) {
		l, err := c.ListAttempts(ctx, opts.ID, client.ListAttemptsOptions{Limit: opts.Paging.Limit, Page: page})
		if err != nil {
			return nil, "", err
		}
		return l.Attempts, l.NextPage, nil
	})
	if err != nil {
		return fmt.Errorf("attempts %s: %w", opts.ID, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSONPage(opts.IO, as, "attempt", "attempts", next)
	}
	t := cmdutil.NewTable(opts.IO, "ATTEMPT", "WORKER", "CLAIMED AT", "LEASE EXPIRES AT", "FINISHED AT", "RESULT", "ERROR")
	for _, a := range as {
		result := a.Result
		if result == "" && a.FinishedAt == nil {
			result = "RUNNING"
		}
		t.Row(strconv.FormatInt(a.Attempt, 10), a.WorkerID, cmdutil.TSV(a.ClaimedAt), cmdutil.TSV(a.LeaseExpiresAt), cmdutil.TS(a.FinishedAt), result, firstLine(a.Error))
	}
	if err := t.Print(); err != nil {
		return err
	}
	return cmdutil.PrintMore(opts.IO, false, "attempt", "attempts", len(as), next)
}

// firstLine shortens an error for a table cell.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// PrintOccurrence prints one occurrence after an action on it (ack, nack,
// dlq replay): the occurrence as JSON, or one line saying what was done.
func PrintOccurrence(f *cmdutil.Factory, asJSON bool, did string, o *api.Occurrence) error {
	if asJSON {
		return cmdutil.WriteJSON(f.Out, o)
	}
	_, err := fmt.Fprintf(f.Out, "%s %s: %s, %s\n", did, o.OccurrenceID, o.State, cmdutil.Plural(o.AttemptCount, "attempt", "attempts"))
	return err
}

// ptrOr is *s, or "" for nil.
func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
