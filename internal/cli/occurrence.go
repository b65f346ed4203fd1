package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

var occurrenceStates = []string{"SCHEDULED", "ENQUEUED", "RUNNING", "SUCCEEDED", "RETRY_WAIT", "DEAD", "MISSED", "CANCELED", "SKIPPED_OVERLAP"}

// maxLimit is the most a list answers at once.
const maxLimit = 1000

func checkLimit(n int) error {
	if n < 0 || n > maxLimit {
		return usageErrorf("--limit %d: must be from 1 to %d", n, maxLimit)
	}
	return nil
}

// OccurrencesOptions is schedctl occurrences.
type OccurrencesOptions struct {
	IO       *Factory
	API      func() (API, error)
	Ctx      context.Context
	JSON     bool
	Schedule string
	State    string
	Queue    string
	Limit    int
}

// NewCmdOccurrences builds schedctl occurrences.
func NewCmdOccurrences(f *Factory, runF func(*OccurrencesOptions) error) *cobra.Command {
	opts := &OccurrencesOptions{IO: f, API: f.API}
	var state string
	cmd := &cobra.Command{
		Use:   "occurrences [--schedule ID|NAME] [--state S] [--queue Q] [--limit N]",
		Short: "List occurrences: the firings of schedules and their delivery state",
		Long: `Occurrences lists occurrences, one per scheduled time of a schedule version,
with their state (SCHEDULED, ENQUEUED, RUNNING, SUCCEEDED, RETRY_WAIT, DEAD,
MISSED, CANCELED, SKIPPED_OVERLAP) and how many attempts were made. JSON
output is an array of occurrences.`,
		Example: `  schedctl occurrences --schedule nightly-report
  schedctl occurrences --state running --queue reports
  schedctl occurrences --schedule sch_01J5Z8M4 --limit 5 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := checkState(state, occurrenceStates)
			if err != nil {
				return err
			}
			if err := checkLimit(opts.Limit); err != nil {
				return err
			}
			opts.State, opts.Ctx, opts.JSON = s, cmd.Context(), f.jsonOut()
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
	fl.IntVar(&opts.Limit, "limit", 0, "at most this many (default: schedd's)")
	return cmd
}

func occurrencesRun(opts *OccurrencesOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	l, err := c.ListOccurrences(opts.Ctx, client.ListOccurrencesOptions{Schedule: opts.Schedule, State: opts.State, Queue: opts.Queue, Limit: opts.Limit})
	if err != nil {
		return fmt.Errorf("occurrences: %w", err)
	}
	return printOccurrences(opts.IO, opts.JSON, l.Occurrences, "No occurrences.")
}

func printOccurrences(f *Factory, asJSON bool, occs []api.Occurrence, none string) error {
	if occs == nil {
		occs = []api.Occurrence{}
	}
	if asJSON {
		return writeJSON(f.Out, occs)
	}
	if len(occs) == 0 && f.IsTTY {
		_, err := fmt.Fprintln(f.Out, none)
		return err
	}
	t := newTable(f, "OCCURRENCE", "SCHEDULE", "VERSION", "SCHEDULED FOR", "STATE", "ATTEMPTS", "AVAILABLE AT", "QUEUE")
	for _, o := range occs {
		t.row(o.OccurrenceID, o.ScheduleID, strconv.FormatInt(o.ScheduleVersion, 10), tsv(o.ScheduledFor), o.State,
			strconv.Itoa(o.AttemptCount), tsv(o.AvailableAt), o.Queue)
	}
	return t.print()
}

// AttemptsOptions is schedctl attempts.
type AttemptsOptions struct {
	IO   *Factory
	API  func() (API, error)
	Ctx  context.Context
	JSON bool
	ID   string
}

// NewCmdAttempts builds schedctl attempts.
func NewCmdAttempts(f *Factory, runF func(*AttemptsOptions) error) *cobra.Command {
	opts := &AttemptsOptions{IO: f, API: f.API}
	return &cobra.Command{
		Use:   "attempts OCC",
		Short: "List the deliveries of an occurrence",
		Long: `Attempts lists every delivery of an occurrence to a worker: the attempt
number (the fencing token), the worker, the lease, and the result
(SUCCEEDED, FAILED_RETRYABLE, FAILED_PERMANENT, LEASE_EXPIRED) with its error.
JSON output is an array of attempts.`,
		Example: "  schedctl attempts occ_5kq2x7h3m4\n  schedctl attempts occ_5kq2x7h3m4 -o json | jq -r '.[].result'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.jsonOut()
			if runF != nil {
				return runF(opts)
			}
			return attemptsRun(opts)
		},
	}
}

func attemptsRun(opts *AttemptsOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	as, err := c.ListAttempts(opts.Ctx, opts.ID)
	if err != nil {
		return fmt.Errorf("attempts %s: %w", opts.ID, err)
	}
	if as == nil {
		as = []api.Attempt{}
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, as)
	}
	t := newTable(opts.IO, "ATTEMPT", "WORKER", "CLAIMED AT", "LEASE EXPIRES AT", "FINISHED AT", "RESULT", "ERROR")
	for _, a := range as {
		result := a.Result
		if result == "" && a.FinishedAt == nil {
			result = "RUNNING"
		}
		t.row(strconv.FormatInt(a.Attempt, 10), a.WorkerID, tsv(a.ClaimedAt), tsv(a.LeaseExpiresAt), ts(a.FinishedAt), result, firstLine(a.Error))
	}
	return t.print()
}

// firstLine shortens an error for a table cell.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func newDLQCmd(f *Factory) *cobra.Command {
	cmd := groupCmd("dlq", "The dead-letter queue: occurrences that failed for good",
		"  schedctl dlq list --queue reports\n  schedctl dlq replay occ_5kq2x7h3m4")
	cmd.Long = `Occurrences go DEAD when a worker nacks them as permanent, or when their
retries run out (attempts, deadline or the tenant's retry budget). dlq list
shows them; dlq replay puts one back on its queue with the same occurrence id
and a fresh set of retries.`
	cmd.AddCommand(NewCmdDLQList(f, nil), NewCmdReplay(f, nil))
	return cmd
}

// DLQListOptions is schedctl dlq list.
type DLQListOptions struct {
	IO    *Factory
	API   func() (API, error)
	Ctx   context.Context
	JSON  bool
	Queue string
	Limit int
}

// NewCmdDLQList builds schedctl dlq list.
func NewCmdDLQList(f *Factory, runF func(*DLQListOptions) error) *cobra.Command {
	opts := &DLQListOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:     "list [--queue Q] [--limit N]",
		Short:   "List DEAD occurrences",
		Long:    "dlq list prints the dead-letter queue: DEAD occurrences. JSON output is an array of occurrences.",
		Example: "  schedctl dlq list\n  schedctl dlq list --queue reports -o json | jq -r '.[].occurrence_id'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLimit(opts.Limit); err != nil {
				return err
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.jsonOut()
			if runF != nil {
				return runF(opts)
			}
			return dlqListRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Queue, "queue", "", "only this queue")
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "at most this many (default: schedd's)")
	return cmd
}

func dlqListRun(opts *DLQListOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	l, err := c.ListDLQ(opts.Ctx, client.ListDLQOptions{Queue: opts.Queue, Limit: opts.Limit})
	if err != nil {
		return fmt.Errorf("dlq list: %w", err)
	}
	return printOccurrences(opts.IO, opts.JSON, l.Occurrences, "The dead-letter queue is empty.")
}

// ReplayOptions is schedctl dlq replay.
type ReplayOptions struct {
	IO   *Factory
	API  func() (API, error)
	Ctx  context.Context
	JSON bool
	ID   string
}

// NewCmdReplay builds schedctl dlq replay.
func NewCmdReplay(f *Factory, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{IO: f, API: f.API}
	return &cobra.Command{
		Use:   "replay OCC",
		Short: "Put a DEAD occurrence back on its queue",
		Long: `Replay puts a DEAD occurrence back on its queue: the same occurrence id (so
handlers that deduplicate on it still do), the next attempt number, and a
fresh set of retries. It carries the schedule's current payload.`,
		Example: "  schedctl dlq replay occ_5kq2x7h3m4\n  schedctl dlq list -o json | jq -r '.[].occurrence_id' | xargs -n1 schedctl dlq replay",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.jsonOut()
			if runF != nil {
				return runF(opts)
			}
			return replayRun(opts)
		},
	}
}

func replayRun(opts *ReplayOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	o, err := c.Replay(opts.Ctx, opts.ID)
	if err != nil {
		return fmt.Errorf("replay %s: %w", opts.ID, err)
	}
	return printOccurrence(opts.IO, opts.JSON, "replayed", o)
}

// printOccurrence prints one occurrence after an action on it.
func printOccurrence(f *Factory, asJSON bool, did string, o *api.Occurrence) error {
	if asJSON {
		return writeJSON(f.Out, o)
	}
	_, err := fmt.Fprintf(f.Out, "%s %s: %s, %s\n", did, o.OccurrenceID, o.State, plural(o.AttemptCount, "attempt", "attempts"))
	return err
}
