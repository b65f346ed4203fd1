// Package dlq is schedctl dlq: list, replay and purge the dead-letter
// queue.
package dlq

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/occurrence"
)

// NewCmdDLQ builds schedctl dlq, the group of list, replay and purge.
func NewCmdDLQ(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.GroupCmd("dlq", "The dead-letter queue: occurrences that failed for good, and why",
		"  schedctl dlq list --queue reports\n  schedctl dlq replay occ_5kq2x7h3m4\n  schedctl dlq replay --all --schedule nightly-report\n  schedctl dlq purge --queue reports --yes")
	cmd.Long = `Occurrences go DEAD when a worker nacks them as permanent, or when their
retries run out (attempts, deadline or the tenant's retry budget); each
keeps its reason and the last error its worker sent. dlq list shows them;
dlq replay puts one, or every one a filter matches, back on its queue with
the same occurrence id and a fresh set of retries; dlq purge takes them out
of the dead-letter queue for good.`
	cmd.AddCommand(NewCmdDLQList(f, nil), NewCmdReplay(f, nil), NewCmdPurge(f, nil))
	return cmd
}

// DLQListOptions is schedctl dlq list.
type DLQListOptions struct {
	IO       *cmdutil.Factory
	API      func() (cmdutil.API, error)
	Ctx      context.Context
	JSON     bool
	Schedule string
	Queue    string
	Paging   cmdutil.PageFlags
}

// NewCmdDLQList builds schedctl dlq list.
func NewCmdDLQList(f *cmdutil.Factory, runF func(*DLQListOptions) error) *cobra.Command {
	opts := &DLQListOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "list [--schedule S] [--queue Q] [--limit N] [--all] [--reverse]",
		Short: "List DEAD occurrences with why they died",
		Long: `dlq list prints the dead-letter queue, oldest scheduled time first
(--reverse: newest first), one page at a time: schedd's 100 unless --limit
says otherwise. A footer says when more exist; --all follows every page.

Columns: the occurrence, its queue, REASON (permanent_failure: a worker
said it cannot succeed; attempts_exhausted; deadline_passed: the retry
deadline ran out; retry_budget_exhausted: the tenant's retry budget ran
out), DIED AT, and LAST ERROR, the latest attempt's error cut to fit the
table.

JSON output is an array of entries (one page, or every one with --all;
when more exist the footer, with the next page's token, goes to stderr);
each entry carries dead_reason, the whole last_error and finished_at.`,
		Example: `  schedctl dlq list
  schedctl dlq list --schedule nightly-report --reverse --limit 20
  schedctl dlq list --queue reports --all -o json | jq -r '.occurrences[] | [.occurrence_id, .dead_reason, .last_error] | @tsv'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Paging.Check(); err != nil {
				return err
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return dlqListRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Schedule, "schedule", "", "only entries of this schedule (id or name)")
	cmd.Flags().StringVar(&opts.Queue, "queue", "", "only entries of this queue")
	opts.Paging.Register(cmd.Flags(), "entries", true)
	return cmd
}

// lastErrorWidth is how much of LAST ERROR the table shows: with a
// 28-character id, a queue of 7, REASON (up to 22) and DIED AT (20) the
// row stays within 120 columns.
const lastErrorWidth = 36

func dlqListRun(opts *DLQListOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	occs, next, err := cmdutil.FetchPages(opts.Ctx, opts.Paging, func(ctx context.Context, page string) ([]api.Occurrence, string, error) {
		l, err := c.ListDLQ(ctx, client.ListDLQOptions{Schedule: opts.Schedule, Queue: opts.Queue,
			Limit: opts.Paging.Limit, Page: page, Reverse: opts.Paging.Reverse})
		if err != nil {
			return nil, "", err
		}
		return l.Occurrences, l.NextPage, nil
	})
	if err != nil {
		return fmt.Errorf("dlq list: %w", err)
	}
	f := opts.IO
	if opts.JSON {
		return cmdutil.WriteJSONPage(f, occs, "entry", "entries", next)
	}
	if len(occs) == 0 && f.IsTTY {
		_, err := fmt.Fprintln(f.Out, "The dead-letter queue is empty"+describeFilter(opts.Schedule, opts.Queue, " of")+".")
		return err
	}
	t := cmdutil.NewTable(f, "OCCURRENCE", "QUEUE", "REASON", "DIED AT", "LAST ERROR")
	for _, o := range occs {
		t.Row(o.OccurrenceID, o.Queue, o.DeadReason, cmdutil.TS(o.FinishedAt), cmdutil.Truncate(o.LastError, lastErrorWidth))
	}
	if err := t.Print(); err != nil {
		return err
	}
	return cmdutil.PrintMore(f, false, "entry", "entries", len(occs), next)
}

// describeFilter names a DLQ filter for a message: "" for all, else
// " <prep> schedule S, queue Q".
func describeFilter(schedule, queue, prep string) string {
	var parts []string
	if schedule != "" {
		parts = append(parts, "schedule "+cmdutil.Cell(schedule))
	}
	if queue != "" {
		parts = append(parts, "queue "+cmdutil.Cell(queue))
	}
	if len(parts) == 0 {
		return ""
	}
	return prep + " " + strings.Join(parts, ", ")
}

// ReplayOptions is schedctl dlq replay.
type ReplayOptions struct {
	IO   *cmdutil.Factory
	API  func() (cmdutil.API, error)
	Ctx  context.Context
	JSON bool
	ID   string // one occurrence; "" with All
	// All replays every DEAD occurrence Filter matches.
	All    bool
	Filter api.DLQFilter
}

// NewCmdReplay builds schedctl dlq replay.
func NewCmdReplay(f *cmdutil.Factory, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "replay OCC | --all [--schedule S] [--queue Q]",
		Short: "Put DEAD occurrences back on their queue",
		Long: `Replay puts a DEAD occurrence back on its queue: the same occurrence id (so
handlers that deduplicate on it still do), the next attempt number, and a
fresh set of retries. It carries the schedule's current payload.

With --all it replays every DEAD occurrence, or those of --schedule and
--queue, in one request; each keeps its id. Running it again is harmless:
what was replayed is no longer DEAD. It prints the ids replayed (on a
terminal after a count); JSON output is {"count": N, "occurrence_ids": [...]}.`,
		Example: `  schedctl dlq replay occ_5kq2x7h3m4
  schedctl dlq replay --all --schedule nightly-report
  schedctl dlq replay --all --queue reports -o json | jq .count`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			switch {
			case opts.All && len(args) > 0:
				return cmdutil.UsageErrorf("give an occurrence id or --all, not both")
			case !opts.All && len(args) == 0:
				return cmdutil.UsageErrorf("give the occurrence id to replay, or --all (with --schedule or --queue to narrow it)")
			case !opts.All && (fl.Changed("schedule") || fl.Changed("queue")):
				return cmdutil.UsageErrorf("--schedule and --queue go with --all")
			}
			if len(args) > 0 {
				opts.ID = args[0]
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return replayRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "replay every DEAD occurrence the filters match")
	cmd.Flags().StringVar(&opts.Filter.Schedule, "schedule", "", "with --all, only this schedule's (id or name)")
	cmd.Flags().StringVar(&opts.Filter.Queue, "queue", "", "with --all, only this queue's")
	return cmd
}

func replayRun(opts *ReplayOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	if !opts.All {
		o, err := c.Replay(opts.Ctx, opts.ID)
		if err != nil {
			return fmt.Errorf("replay %s: %w", opts.ID, err)
		}
		return occurrence.PrintOccurrence(opts.IO, opts.JSON, "replayed", o)
	}
	res, err := c.ReplayDLQ(opts.Ctx, opts.Filter)
	if err != nil {
		return fmt.Errorf("dlq replay --all%s: %w", describeFilter(opts.Filter.Schedule, opts.Filter.Queue, " of"), err)
	}
	f := opts.IO
	if opts.JSON {
		if res.OccurrenceIDs == nil {
			res.OccurrenceIDs = []string{}
		}
		return cmdutil.WriteJSON(f.Out, struct {
			Count         int      `json:"count"`
			OccurrenceIDs []string `json:"occurrence_ids"`
		}{res.Count, res.OccurrenceIDs})
	}
	if f.IsTTY {
		if res.Count == 0 {
			_, err := fmt.Fprintf(f.Out, "Nothing to replay: no DEAD occurrences%s.\n", describeFilter(opts.Filter.Schedule, opts.Filter.Queue, " of"))
			return err
		}
		fmt.Fprintf(f.Out, "replayed %s, each with its occurrence id:\n", cmdutil.Plural(res.Count, "occurrence", "occurrences"))
	}
	for _, id := range res.OccurrenceIDs {
		prefix := ""
		if f.IsTTY {
			prefix = "  "
		}
		if _, err := fmt.Fprintln(f.Out, prefix+cmdutil.Cell(id)); err != nil {
			return err
		}
	}
	return nil
}

// PurgeOptions is schedctl dlq purge.
type PurgeOptions struct {
	IO     *cmdutil.Factory
	API    func() (cmdutil.API, error)
	Ctx    context.Context
	JSON   bool
	Filter api.DLQFilter
	Yes    bool // purge without asking
}

// errNotConfirmed is purge's answer to anything but "yes": nothing done,
// exit 1.
var errNotConfirmed = errors.New("not confirmed; nothing was purged")

// NewCmdPurge builds schedctl dlq purge.
func NewCmdPurge(f *cmdutil.Factory, runF func(*PurgeOptions) error) *cobra.Command {
	opts := &PurgeOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "purge [--schedule S] [--queue Q] [--yes]",
		Short: "Take DEAD occurrences out of the dead-letter queue for good",
		Long: `Purge takes every DEAD occurrence, or those of --schedule and --queue, out of
the dead-letter queue: they become CANCELED and stay as history (with their
reason), and can no longer be replayed.

On a terminal it says how many match and asks you to type "yes". Anywhere
else (a script, a pipe) it refuses with exit status 2 unless --yes is given.
JSON output is {"count": N}.`,
		Example: `  schedctl dlq purge --queue reports
  schedctl dlq purge --schedule nightly-report --yes -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !opts.Yes && !f.CanPrompt() {
				return cmdutil.UsageErrorf("dlq purge: not on a terminal to ask for confirmation; pass --yes to purge without asking")
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return purgeRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Filter.Schedule, "schedule", "", "only this schedule's entries (id or name)")
	cmd.Flags().StringVar(&opts.Filter.Queue, "queue", "", "only this queue's entries")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "purge without asking")
	return cmd
}

func purgeRun(opts *PurgeOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	f := opts.IO
	which := describeFilter(opts.Filter.Schedule, opts.Filter.Queue, " of")
	if !opts.Yes {
		l, err := c.ListDLQ(opts.Ctx, client.ListDLQOptions{Schedule: opts.Filter.Schedule, Queue: opts.Filter.Queue, Limit: cmdutil.MaxLimit})
		if err != nil {
			return fmt.Errorf("dlq purge: %w", err)
		}
		n := cmdutil.Plural(len(l.Occurrences), "DEAD occurrence", "DEAD occurrences")
		if l.NextPage != "" {
			n = fmt.Sprintf("more than %d DEAD occurrences", len(l.Occurrences))
		}
		if len(l.Occurrences) == 0 {
			if opts.JSON {
				return cmdutil.WriteJSON(f.Out, struct {
					Count int `json:"count"`
				}{0})
			}
			_, err := fmt.Fprintf(f.Out, "Nothing to purge: no DEAD occurrences%s.\n", which)
			return err
		}
		fmt.Fprintf(f.ErrOut, "Purge %s%s? They become CANCELED and cannot be replayed.\nType yes to purge: ", n, which)
		line, err := bufio.NewReader(f.In).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("dlq purge: read the answer: %w", err)
		}
		if !strings.EqualFold(strings.TrimSpace(line), "yes") {
			return fmt.Errorf("dlq purge: %w", errNotConfirmed)
		}
	}
	res, err := c.PurgeDLQ(opts.Ctx, opts.Filter)
	if err != nil {
		return fmt.Errorf("dlq purge%s: %w", which, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, struct {
			Count int `json:"count"`
		}{res.Count})
	}
	_, err = fmt.Fprintf(f.Out, "purged %s from the dead-letter queue (now CANCELED)\n", cmdutil.Plural(res.Count, "occurrence", "occurrences"))
	return err
}
