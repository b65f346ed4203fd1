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
  schedctl dlq list --queue reports --all -o json | jq -r '.[] | [.occurrence_id, .dead_reason, .last_error] | @tsv'`,
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
	if err := printEntries(f, occs); err != nil {
		return err
	}
	return cmdutil.PrintMore(f, false, "entry", "entries", len(occs), next)
}

// printEntries is dlq list's table of DEAD occurrences.
func printEntries(f *cmdutil.Factory, occs []api.Occurrence) error {
	t := cmdutil.NewTable(f, "OCCURRENCE", "QUEUE", "REASON", "DIED AT", "LAST ERROR")
	for _, o := range occs {
		t.Row(o.OccurrenceID, o.Queue, o.DeadReason, cmdutil.TS(o.FinishedAt), cmdutil.Truncate(o.LastError, lastErrorWidth))
	}
	return t.Print()
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
	Yes    bool // with All: replay without asking
	DryRun bool // with All: list what would be replayed, replay nothing
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
what was replayed is no longer DEAD. As purge does, on a terminal it says
how many match and asks you to type "yes"; anywhere else (a script, a
pipe) it refuses with exit status 2 unless --yes is given. --dry-run lists
the DEAD occurrences it would replay, as dlq list does, and replays none.
It prints the ids replayed, after a count (--no-headers: the ids alone); JSON output is
{"count": N, "occurrence_ids": [...]}, with "dry_run": true for a dry run.`,
		Example: `  schedctl dlq replay occ_5kq2x7h3m4
  schedctl dlq replay --all --schedule nightly-report --dry-run
  schedctl dlq replay --all --schedule nightly-report
  schedctl dlq replay --all --queue reports --yes -o json | jq .count`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			switch {
			case opts.All && len(args) > 0:
				return cmdutil.UsageErrorf("give an occurrence id or --all, not both")
			case !opts.All && len(args) == 0:
				return cmdutil.UsageErrorf("give the occurrence id to replay, or --all (with --schedule or --queue to narrow it)")
			case !opts.All && (fl.Changed("schedule") || fl.Changed("queue") || opts.Yes || opts.DryRun):
				return cmdutil.UsageErrorf("--schedule, --queue, --yes and --dry-run go with --all")
			case opts.All && !opts.Yes && !opts.DryRun && !f.CanPrompt():
				return cmdutil.UsageErrorf("dlq replay --all: not on a terminal to ask for confirmation; pass --yes to replay without asking, or --dry-run to see what it would replay")
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
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "with --all, replay without asking")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --all, list what would be replayed and replay nothing")
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
	f := opts.IO
	which := describeFilter(opts.Filter.Schedule, opts.Filter.Queue, " of")
	if opts.DryRun {
		return replayDryRun(opts, c)
	}
	if !opts.Yes {
		ok, err := confirm(opts.Ctx, c, f, opts.JSON, opts.Filter, "Replay", "They go back on their queues under their ids, with fresh retries.", "replay")
		if err != nil || !ok {
			return err
		}
	}
	res, err := c.ReplayDLQ(opts.Ctx, opts.Filter)
	if err != nil {
		return fmt.Errorf("dlq replay --all%s: %w", which, err)
	}
	if opts.JSON {
		if res.OccurrenceIDs == nil {
			res.OccurrenceIDs = []string{}
		}
		return cmdutil.WriteJSON(f.Out, struct {
			Count         int      `json:"count"`
			OccurrenceIDs []string `json:"occurrence_ids"`
		}{res.Count, res.OccurrenceIDs})
	}
	if f.Decorated() {
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

// replayDryRun lists the DEAD occurrences replay --all would replay, as
// dlq list does, up to MaxLimit, and replays none.
func replayDryRun(opts *ReplayOptions, c cmdutil.API) error {
	f := opts.IO
	occs, more, err := matchingDead(opts.Ctx, c, opts.Filter)
	if err != nil {
		return fmt.Errorf("dlq replay --all --dry-run: %w", err)
	}
	if opts.JSON {
		ids := make([]string, len(occs))
		for i, o := range occs {
			ids[i] = o.OccurrenceID
		}
		return cmdutil.WriteJSON(f.Out, struct {
			DryRun        bool     `json:"dry_run"`
			Count         int      `json:"count"`
			More          bool     `json:"more"`
			OccurrenceIDs []string `json:"occurrence_ids"`
		}{true, len(occs), more, ids})
	}
	which := describeFilter(opts.Filter.Schedule, opts.Filter.Queue, " of")
	if len(occs) == 0 {
		_, err := fmt.Fprintf(f.Out, "Nothing to replay: no DEAD occurrences%s.\n", which)
		return err
	}
	if err := printEntries(f, occs); err != nil {
		return err
	}
	_, err = fmt.Fprintf(f.Out, "Would replay %s%s; nothing was replayed (--dry-run).\n", countDead(occs, more), which)
	return err
}

// matchingDead reads the DEAD occurrences filter matches, at most
// MaxLimit of them; more says there are others.
func matchingDead(ctx context.Context, c cmdutil.API, filter api.DLQFilter) (occs []api.Occurrence, more bool, err error) {
	l, err := c.ListDLQ(ctx, client.ListDLQOptions{Schedule: filter.Schedule, Queue: filter.Queue, Limit: cmdutil.MaxLimit})
	if err != nil {
		return nil, false, err
	}
	return l.Occurrences, l.NextPage != "", nil
}

// countDead says how many DEAD occurrences were read: "2 DEAD
// occurrences", or "more than 1000 ..." when there are others.
func countDead(occs []api.Occurrence, more bool) string {
	if more {
		return fmt.Sprintf("more than %d DEAD occurrences", len(occs))
	}
	return cmdutil.Plural(len(occs), "DEAD occurrence", "DEAD occurrences")
}

// confirm asks on f's terminal whether to act (verb, "Replay") on the
// DEAD occurrences filter matches, saying how many and what follows
// (consequence). It is true on "yes"; with none matching it says so on
// Out (as JSON, a count of 0) and is false; on any other answer it is
// errNotConfirmed. What replay --all and purge ask, in one place.
func confirm(ctx context.Context, c cmdutil.API, f *cmdutil.Factory, json bool, filter api.DLQFilter, verb, consequence, command string) (bool, error) {
	occs, more, err := matchingDead(ctx, c, filter)
	if err != nil {
		return false, fmt.Errorf("dlq %s: %w", command, err)
	}
	which := describeFilter(filter.Schedule, filter.Queue, " of")
	if len(occs) == 0 {
		if json {
			return false, cmdutil.WriteJSON(f.Out, struct {
				Count int `json:"count"`
			}{0})
		}
		_, err := fmt.Fprintf(f.Out, "Nothing to %s: no DEAD occurrences%s.\n", command, which)
		return false, err
	}
	fmt.Fprintf(f.ErrOut, "%s %s%s? %s\nType yes to %s: ", verb, countDead(occs, more), which, consequence, command)
	line, err := bufio.NewReader(f.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("dlq %s: read the answer: %w", command, err)
	}
	if !strings.EqualFold(strings.TrimSpace(line), "yes") {
		return false, fmt.Errorf("dlq %s: %w", command, notConfirmed(command))
	}
	return true, nil
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

// errNotConfirmed is the answer of purge and replay --all to anything but
// "yes": nothing done, exit 1.
var errNotConfirmed = errors.New("not confirmed")

// notConfirmed is errNotConfirmed saying what was not done.
func notConfirmed(command string) error {
	past := map[string]string{"purge": "purged", "replay": "replayed"}[command]
	return fmt.Errorf("%w; nothing was %s", errNotConfirmed, past)
}

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
		ok, err := confirm(opts.Ctx, c, f, opts.JSON, opts.Filter, "Purge", "They become CANCELED and cannot be replayed.", "purge")
		if err != nil || !ok {
			return err
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
