// Package whatif is what schedctl simulate and schedd simulate share of a
// what-if simulation without linking the engine: the flags and their
// reading into an api.SimulateRequest (the schedules file through package
// schedfile), and the report as a table. The simulation itself is
// internal/simulate's, which only schedd links; it judges every value.
package whatif

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/schedfile"
)

// Flags are the flags of a simulation, the same on both commands.
type Flags struct {
	File           string
	From, To       string
	Outages        []string // START/END
	WorkerDuration string
	WorkerFailRate float64
	Nodes          int
	NodeDown       []string // NODE@START/END
	Seed           int64
}

// Bind adds the flags to fs.
func (f *Flags) Bind(fs *pflag.FlagSet) {
	fs.StringVarP(&f.File, "file", "f", "", "YAML file of schedules, as schedctl apply takes it (- reads standard input)")
	fs.StringVar(&f.From, "from", "", "start of the simulated range, RFC 3339 (`TIME`)")
	fs.StringVar(&f.To, "to", "", "end of the simulated range, RFC 3339 (`TIME`); at most 31 days after --from")
	fs.StringArrayVar(&f.Outages, "outage", nil, "a window `START/END` (RFC 3339) in which schedd is down: no planning, no claims (repeatable)")
	fs.StringVar(&f.WorkerDuration, "worker-duration", "", "how long each attempt takes (`DURATION`, default 1s)")
	fs.Float64Var(&f.WorkerFailRate, "worker-fail-rate", 0, "probability `P` (0 to 1) that an attempt fails with a retryable error")
	fs.IntVar(&f.Nodes, "nodes", 1, "how many schedd nodes share the store (`N`, named node-1 to node-N)")
	fs.StringArrayVar(&f.NodeDown, "node-down", nil, "stop one node in a window: `NODE@START/END`, e.g. node-2@2027-03-15T10:00:00Z/2027-03-15T10:00:30Z (repeatable)")
	fs.Int64Var(&f.Seed, "seed", 1, "seed of every random choice (ids, worker failures): the same seed gives the same answer")
}

// Request reads the schedules file (stdin for "-") and the flags into a
// request. A missing flag, a bad window or a bad file is an error the
// commands treat as invalid input (a *schedfile.Error for the file).
func (f *Flags) Request(stdin io.Reader) (*api.SimulateRequest, error) {
	switch {
	case f.File == "":
		return nil, fmt.Errorf("-f FILE is required (- reads standard input)")
	case f.From == "" || f.To == "":
		return nil, fmt.Errorf("--from and --to are required (RFC 3339 times such as 2027-03-15T09:00:00Z)")
	}
	entries, err := schedfile.Read(f.File, stdin)
	if err != nil {
		return nil, err
	}
	r := &api.SimulateRequest{From: f.From, To: f.To, WorkerDuration: f.WorkerDuration, WorkerFailRate: f.WorkerFailRate,
		Nodes: f.Nodes, Seed: f.Seed, Outages: []api.SimWindow{}, NodeDown: []api.SimNodeDown{}}
	for _, e := range entries {
		e.Request.Payload = nil // never delivered in a simulation: not sent
		r.Schedules = append(r.Schedules, e.Request)
	}
	for _, o := range f.Outages {
		w, err := window("--outage", o)
		if err != nil {
			return nil, err
		}
		r.Outages = append(r.Outages, w)
	}
	for _, d := range f.NodeDown {
		node, win, ok := strings.Cut(d, "@")
		if !ok || node == "" {
			return nil, fmt.Errorf("--node-down %q: want NODE@START/END, e.g. node-2@2027-03-15T10:00:00Z/2027-03-15T10:00:30Z", d)
		}
		w, err := window("--node-down", win)
		if err != nil {
			return nil, err
		}
		r.NodeDown = append(r.NodeDown, api.SimNodeDown{Node: node, Start: w.Start, End: w.End})
	}
	return r, nil
}

// window splits START/END; the simulator judges the times.
func window(flag, v string) (api.SimWindow, error) {
	s, e, ok := strings.Cut(v, "/")
	if !ok || s == "" || e == "" {
		return api.SimWindow{}, fmt.Errorf("%s %q: want START/END, two RFC 3339 times such as 2027-03-15T09:55:00Z/2027-03-15T10:05:00Z", flag, v)
	}
	return api.SimWindow{Start: s, End: e}, nil
}

// minRun is the shortest run of ON_TIME firings the table folds into one
// row.
const minRun = 3

// WriteTable prints a simulation for people: what was simulated, each
// schedule's timeline (a run of on-time firings folded into one row; the
// JSON has every firing), and the summary per schedule and in total.
func WriteTable(out io.Writer, res *api.SimulateResult) error {
	var b bytes.Buffer
	if err := writeTable(&b, res); err != nil {
		return err
	}
	// The last column is often empty: no line ends in the padding.
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")
		if strings.HasSuffix(l, "\n") {
			lines[i] += "\n"
		}
	}
	_, err := io.WriteString(out, strings.Join(lines, ""))
	return err
}

func writeTable(w io.Writer, res *api.SimulateResult) error {
	fmt.Fprintf(w, "Simulated %s to %s: %s, workers take %s, fail rate %s, seed %d.\n", res.From, res.To,
		plural(res.Nodes, "node"), res.WorkerDuration, strconv.FormatFloat(res.WorkerFailRate, 'g', -1, 64), res.Seed)
	for _, o := range res.Outages {
		fmt.Fprintf(w, "Outage %s to %s.\n", o.Start, o.End)
	}
	for _, d := range res.NodeDown {
		fmt.Fprintf(w, "%s down %s to %s.\n", d.Node, d.Start, d.End)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCHEDULE\tSCHEDULED FOR\tOUTCOME\tLANE\tATTEMPTS\tLAG\tNOTE")
	for _, s := range res.Schedules {
		fs := s.Firings
		for i := 0; i < len(fs); {
			j := i
			for j < len(fs) && fs[j].Outcome == api.SimOnTime && fs[j].Note == "" {
				j++
			}
			if j-i >= minRun {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, fs[i].ScheduledFor, api.SimOnTime, fs[i].Lane, "1", "0s",
					fmt.Sprintf("%d firings on time, through %s", j-i, fs[j-1].ScheduledFor))
				i = j
				continue
			}
			f := fs[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, f.ScheduledFor, f.Outcome, f.Lane, f.Attempts, ms(f.LagMS), note(f))
			i++
		}
		for _, k := range s.DSTSkipped {
			gap := "a DST gap"
			if k.Cause == "zone_change" {
				gap = "a zone change, not daylight saving,"
			}
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%s\n", s.Name, fmt.Sprintf("wall time %s skipped by %s (ends %s)", k.Wall, gap, k.GapEnd))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	outcomes := api.SimOutcomes
	head := []string{"SCHEDULE", "FIRINGS"}
	head = append(head, outcomes...)
	head = append(head, "LAG P50", "P95", "P99", "MAX")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	row := func(name string, s api.SimSummary) {
		cells := []string{name, strconv.Itoa(s.Firings)}
		for _, o := range outcomes {
			cells = append(cells, strconv.Itoa(s.Outcomes[o]))
		}
		cells = append(cells, ms(&s.Lag.P50), ms(&s.Lag.P95), ms(&s.Lag.P99), ms(&s.Lag.Max))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	for _, s := range res.Schedules {
		row(s.Name, s.Summary)
	}
	row("TOTAL", res.Summary)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.Shards) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SHARD\tOWNER AT THE END\tEPOCH")
		for _, sh := range res.Shards {
			fmt.Fprintf(tw, "%d\t%s\t%d\n", sh.Shard, sh.Owner, sh.Epoch)
		}
		return tw.Flush()
	}
	return nil
}

// note is a firing's note column: the DST note, the dead reason, the
// retries, the firings counted without a row.
func note(f api.SimFiring) string {
	var parts []string
	if f.Note != "" {
		kind := "dst "
		if f.Cause == "zone_change" {
			kind = "zone change "
		}
		parts = append(parts, kind+f.Note)
	}
	if f.Retries > 0 {
		parts = append(parts, "retried "+plural(f.Retries, "time"))
	}
	if f.DeadReason != "" {
		parts = append(parts, f.DeadReason)
	}
	return strings.Join(parts, "; ")
}

// ms renders a lag in milliseconds as a duration; "-" for none.
func ms(v *int64) string {
	if v == nil {
		return "-"
	}
	return (time.Duration(*v) * time.Millisecond).String()
}

func plural(n int, word string) string {
	if n == 1 && word == "time" {
		return "once"
	}
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
