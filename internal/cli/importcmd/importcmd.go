// Package importcmd is schedctl import: many schedules from a file,
// created through schedd's bulk create in batches, a few in flight at
// once, resumable by running the same command again.
package importcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// Defaults and limits of the flags.
const (
	defaultParallel = 4
	maxParallel     = 32
	// maxBatchBytes keeps a batch's body well under schedd's limit on a
	// bulk create (16 MiB): a batch closes at 1,000 items or at this many
	// bytes of requests, whichever comes first.
	maxBatchBytes = 8 << 20
	// shownErrors is how many failed items the summary lists.
	shownErrors = 20
)

// ImportOptions is schedctl import.
type ImportOptions struct {
	IO       *cmdutil.Factory
	API      func() (cmdutil.API, error)
	Ctx      context.Context
	JSON     bool
	File     string
	Format   string // ndjson | yaml; "" by the file's extension
	Parallel int
	Batch    int    // items a request; api.MaxBatchItems by default
	State    string // the state file; "" for FILE.import-state
	Restart  bool
	// DryRun sends every batch for schedd to check as it would create it
	// and creates nothing; the state file is neither read nor written.
	DryRun bool
}

// NewCmdImport builds schedctl import.
func NewCmdImport(f *cmdutil.Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "import -f FILE",
		Short: "Create many schedules from a file, fast and resumably",
		Long: `Import creates the schedules of a file through schedd's bulk create
(POST /v1/schedules:batch): 1,000 a request, --parallel requests in flight.

The file is NDJSON, one schedule request per line (the JSON body of
POST /v1/schedules, with an optional "idempotency_key"), read line by line;
or, for a .yaml or .yml file (or --format yaml), the schedules file of
apply -f, read whole. Blank lines are skipped.

Every schedule is sent with an idempotency key: its own, or one derived from
its content ("import:" and the SHA-256 of its line). Running the same import
again therefore creates nothing twice: schedules already created are
answered "existing". A state file (FILE.import-state, or --state) records
how far every schedule was confirmed, with a hash of that part of the file,
so a re-run of an interrupted import skips it without sending it again;
--restart ignores the state file. A schedule that fails (an invalid line,
a name already taken, a quota) stops the checkpoint at its batch: fix the
line and run the same command again.

--dry-run sends the whole file for schedd to check, batch by batch, as it
would create it (names, keys, quotas, targets), reports what would be
created, exist or fail, and creates nothing; it neither reads nor writes
the state file. Each batch is checked against the store and within
itself, not against the other batches of the file (which it does not
create): a name repeated in two batches shows when the import runs.

Progress is shown on stderr when it is a terminal. -o json prints a summary:
created, existing, failed, items, skipped (items of the checkpoint not sent
again), seconds, per_second, and the first failures with their lines.

Exit status: 0 when every item was created or existed; 1 when any item
failed (each is listed with its line) or schedd could not be reached or
failed a request (the checkpoint keeps what was confirmed); 2 for a bad
flag or a YAML file that is not valid.`,
		Example: `  schedctl import -f schedules.ndjson
  schedctl import -f schedules.yaml --parallel 8 -o json
  schedctl import -f schedules.ndjson --dry-run
  schedctl import -f big.ndjson            # interrupted? run it again
  schedctl import -f big.ndjson --restart  # send everything again (still nothing twice)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.File == "" {
				return cmdutil.UsageErrorf("-f FILE is required (- reads standard input)")
			}
			switch opts.Format {
			case "", "ndjson", "yaml":
			default:
				return cmdutil.UsageErrorf("--format %q: want ndjson or yaml", opts.Format)
			}
			if opts.Parallel < 1 || opts.Parallel > maxParallel {
				return cmdutil.UsageErrorf("--parallel %d: want 1 to %d", opts.Parallel, maxParallel)
			}
			if opts.Batch < 1 || opts.Batch > api.MaxBatchItems {
				return cmdutil.UsageErrorf("--batch %d: want 1 to %d", opts.Batch, api.MaxBatchItems)
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return importRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.File, "file", "f", "", "NDJSON or YAML file of schedules (- reads standard input)")
	fl.StringVar(&opts.Format, "format", "", "ndjson or yaml (default: by the file's extension, ndjson otherwise)")
	fl.IntVar(&opts.Parallel, "parallel", defaultParallel, "requests in flight at once")
	fl.IntVar(&opts.Batch, "batch", api.MaxBatchItems, "schedules a request")
	fl.StringVar(&opts.State, "state", "", "the state file (default FILE.import-state; none for standard input)")
	fl.BoolVar(&opts.Restart, "restart", false, "ignore the state file and send the whole file")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "check every schedule with schedd and report; create nothing")
	return cmd
}

// failure is one item that was not created, by its line.
type failure struct {
	Line    int    `json:"line"`
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// summary is what -o json prints.
type summary struct {
	Created   int       `json:"created"`
	Existing  int       `json:"existing"`
	Failed    int       `json:"failed"`
	Items     int       `json:"items"`
	Skipped   int       `json:"skipped"`
	Seconds   float64   `json:"seconds"`
	PerSecond float64   `json:"per_second"`
	Errors    []failure `json:"errors"`
	// DryRun: created counts what would have been created; nothing was.
	DryRun bool `json:"dry_run,omitempty"`
}

// batch is one request's worth of units.
type batch struct {
	seq   int
	units []unit // all of them, blank and bad lines too
	items []api.BatchItem
	sent  []int // items[k] is units[sent[k]]
	end   int   // the last position it covers
	hash  string
}

// outcome is a batch's answer.
type outcome struct {
	b   *batch
	res *api.BatchResult
	err error
}

func importRun(opts *ImportOptions) error {
	format := opts.Format
	if format == "" {
		format = "ndjson"
		if l := strings.ToLower(opts.File); strings.HasSuffix(l, ".yaml") || strings.HasSuffix(l, ".yml") {
			format = "yaml"
		}
	}
	statePath := opts.State
	if statePath == "" && opts.File != "-" {
		statePath = opts.File + ".import-state"
	}
	if opts.DryRun {
		statePath = "" // the whole file, and no checkpoint of what was not created
	}
	c, err := opts.API()
	if err != nil {
		return err
	}
	open := func() (source, io.Closer, error) { return openSource(opts, format) }
	src, closer, err := open()
	if err != nil {
		return err
	}
	defer func() { closer.Close() }()

	pre := newPrefix()
	skipped := 0
	if statePath != "" && !opts.Restart {
		cp, err := readCheckpoint(statePath)
		if err != nil {
			return err
		}
		if cp != nil && cp.Done > 0 {
			ok, n, err := skipTo(src, pre, cp)
			if err != nil {
				return err
			}
			if ok {
				skipped = n
			} else {
				fmt.Fprintf(opts.IO.ErrOut, "%s does not match the start of %s; importing from the start\n", statePath, opts.File)
				closer.Close()
				if src, closer, err = open(); err != nil {
					return err
				}
				pre = newPrefix()
			}
		}
	}

	start := time.Now()
	ctx, cancel := context.WithCancel(opts.Ctx)
	defer cancel()
	todo := make(chan *batch, opts.Parallel)
	results := make(chan outcome, opts.Parallel)
	read := make(chan readEnd, 1)
	go func() {
		n, err := readBatches(ctx, src, pre, opts.Batch, todo)
		close(todo)
		read <- readEnd{n, err}
	}()
	for range opts.Parallel {
		go func() {
			for b := range todo {
				if len(b.items) == 0 {
					results <- outcome{b: b, res: &api.BatchResult{}}
					continue
				}
				create := c.CreateSchedules
				if opts.DryRun {
					create = c.CheckCreateSchedules
				}
				res, err := create(ctx, b.items)
				results <- outcome{b: b, res: res, err: err}
			}
		}()
	}

	sum := summary{Skipped: skipped, Errors: []failure{}, DryRun: opts.DryRun}
	prog := newProgress(opts.IO.ErrOut)
	waiting := map[int]bool{} // batches answered, by seq: true when one of its items failed
	ends := map[int]*batch{}
	next, broken := 0, false // the next batch the checkpoint waits for; past a failure
	var runErr, rerr error
	produced, answered := -1, 0 // produced: -1 until the reader is done
	for produced < 0 || answered < produced {
		select {
		case e := <-read:
			produced, rerr = e.batches, e.err
			if rerr != nil {
				cancel()
			}
			continue
		case o := <-results:
			answered++
			if o.err != nil {
				if runErr == nil {
					runErr = o.err
				}
				cancel()
				broken = true
				continue
			}
			waiting[o.b.seq], ends[o.b.seq] = tally(&sum, o) > 0, o.b
			for !broken {
				failed, ok := waiting[next]
				if !ok {
					break
				}
				b := ends[next]
				delete(waiting, next)
				delete(ends, next)
				next++
				if failed {
					broken = true // the checkpoint stays before a batch with a failure
					break
				}
				if statePath != "" {
					cp := checkpoint{File: opts.File, Format: format, Done: b.end, SHA256: b.hash}
					if err := cp.write(statePath); err != nil && runErr == nil {
						runErr = err
						cancel()
					}
				}
			}
			prog.show(sum, time.Since(start))
		}
	}
	prog.done()
	secs := time.Since(start).Seconds()
	sum.Items = sum.Created + sum.Existing + sum.Failed
	sum.Seconds = secs
	if secs > 0 {
		sum.PerSecond = float64(sum.Items) / secs
	}
	if rerr != nil && !errors.Is(rerr, context.Canceled) && runErr == nil {
		runErr = rerr
	}
	if err := report(opts, sum); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("import %s: %w (run the same command again to go on)", opts.File, runErr)
	}
	if sum.Failed > 0 {
		return &cmdutil.StatusError{Status: cmdutil.ExitFailure,
			Err: fmt.Errorf("%s of %d failed; fix them and run the same command again", cmdutil.Plural(sum.Failed, "item", "items"), sum.Items)}
	}
	return nil
}

// readEnd is how the reader ended: how many batches it handed on, and why
// it stopped early (nil at the end of the input).
type readEnd struct {
	batches int
	err     error
}

// openSource opens the input in its format.
func openSource(opts *ImportOptions, format string) (source, io.Closer, error) {
	if format == "yaml" {
		y, err := newYAML(opts.File, opts.IO.In)
		if err != nil {
			return nil, nil, &cmdutil.UsageError{Err: err}
		}
		return y, io.NopCloser(nil), nil
	}
	if opts.File == "-" {
		return newNDJSON(opts.IO.In), io.NopCloser(nil), nil
	}
	f, err := os.Open(opts.File)
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	return newNDJSON(f), f, nil
}

// skipTo reads the units the checkpoint covers into the prefix hash and
// reports whether they are the ones it recorded, and how many items they
// held. The source is then right after them.
func skipTo(src source, pre *prefix, cp *checkpoint) (bool, int, error) {
	items := 0
	for pos := 0; pos < cp.Done; {
		u, err := src.next()
		if errors.Is(err, io.EOF) {
			return false, 0, nil
		}
		if err != nil {
			return false, 0, err
		}
		pre.add(u)
		pos = u.pos
		if !u.skip {
			items++
		}
	}
	return pre.sum() == cp.SHA256, items, nil
}

// readBatches reads the source into batches of at most size items (and
// maxBatchBytes of requests) and hands them on in order, until the input
// ends or ctx is done. It returns how many it handed on.
func readBatches(ctx context.Context, src source, pre *prefix, size int, out chan<- *batch) (int, error) {
	seq := 0
	b := &batch{}
	bytes := 0
	flush := func() bool {
		if len(b.units) == 0 {
			return true
		}
		b.seq, b.hash = seq, pre.sum()
		select {
		case out <- b:
		case <-ctx.Done():
			return false
		}
		seq++
		b, bytes = &batch{}, 0
		return true
	}
	for {
		u, err := src.next()
		if errors.Is(err, io.EOF) {
			if !flush() {
				return seq, ctx.Err()
			}
			return seq, nil
		}
		if err != nil {
			return seq, err
		}
		pre.add(u)
		b.units = append(b.units, u)
		b.end = u.pos
		if !u.skip && u.bad == nil {
			b.sent = append(b.sent, len(b.units)-1)
			b.items = append(b.items, u.item)
			bytes += len(u.raw)
		}
		if len(b.items) >= size || bytes >= maxBatchBytes {
			if !flush() {
				return seq, ctx.Err()
			}
		}
	}
}

// tally adds a batch's answer to the summary and returns how many of its
// items failed (bad lines included).
func tally(sum *summary, o outcome) int {
	failed := 0
	fail := func(f failure) {
		failed++
		sum.Failed++
		if len(sum.Errors) < shownErrors {
			sum.Errors = append(sum.Errors, f)
		}
	}
	for _, u := range o.b.units {
		if u.bad != nil {
			fail(failure{Line: u.line, Code: api.CodeBadRequest, Message: u.bad.Error()})
		}
	}
	for k, r := range o.res.Items {
		if k >= len(o.b.sent) {
			break
		}
		u := o.b.units[o.b.sent[k]]
		switch r.Status {
		case api.BatchCreated:
			sum.Created++
		case api.BatchExists:
			sum.Existing++
		default:
			f := failure{Line: u.line, Message: "schedd gave no reason"}
			if e := client.ItemError(r); e != nil {
				ce := e.(*client.Error)
				f.Code, f.Field = ce.Code, ce.Field
				f.Message, _ = strings.CutPrefix(ce.Message, fmt.Sprintf("item %d: ", k))
			}
			fail(f)
		}
	}
	return failed
}

// report prints the summary: JSON, or a line on stdout and the failures
// on stderr.
func report(opts *ImportOptions, sum summary) error {
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, sum)
	}
	fmt.Fprintf(opts.IO.Out, "%d created, %d existing, %d failed of %d items in %.1fs (%.0f/s)",
		sum.Created, sum.Existing, sum.Failed, sum.Items, sum.Seconds, sum.PerSecond)
	if sum.Skipped > 0 {
		fmt.Fprintf(opts.IO.Out, "; %d skipped, done before", sum.Skipped)
	}
	if sum.DryRun {
		fmt.Fprint(opts.IO.Out, "; a dry run: nothing was created")
	}
	fmt.Fprintln(opts.IO.Out)
	for _, f := range sum.Errors {
		fmt.Fprintf(opts.IO.ErrOut, "line %d: %s\n", f.Line, f.Message)
	}
	if sum.Failed > len(sum.Errors) {
		fmt.Fprintf(opts.IO.ErrOut, "... and %d more\n", sum.Failed-len(sum.Errors))
	}
	return nil
}

// progress is a one-line counter on stderr, redrawn in place, when stderr
// is a terminal; nothing otherwise.
type progress struct {
	w    io.Writer
	on   bool
	last time.Time
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, on: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *progress) show(sum summary, took time.Duration) {
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	n := sum.Created + sum.Existing + sum.Failed
	fmt.Fprintf(p.w, "\r%d items: %d created, %d existing, %d failed (%.0f/s)   ", n, sum.Created, sum.Existing, sum.Failed, float64(n)/took.Seconds())
}

func (p *progress) done() {
	if p.on && !p.last.IsZero() {
		fmt.Fprintln(p.w)
	}
}
