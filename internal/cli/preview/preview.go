// Package preview is schedctl preview: a schedule's next firings, computed
// offline by internal/preview.
package preview

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	ipreview "github.com/sched-dev/sched/internal/preview"
	"github.com/sched-dev/sched/internal/timetable"
)

// PreviewOptions is schedctl preview.
type PreviewOptions struct {
	IO      *cmdutil.Factory
	JSON    bool
	Request ipreview.Request
}

// previewFlags are the flags of schedctl preview.
type previewFlags struct {
	cron, at, every, anchor, tz, from string
	count                             int
	gap, repeat                       string
	cronArg                           bool // the cron expression came as the argument
}

// NewCmdPreview builds schedctl preview.
func NewCmdPreview(f *cmdutil.Factory, runF func(*PreviewOptions) error) *cobra.Command {
	opts := &PreviewOptions{IO: f}
	var o previewFlags
	cmd := &cobra.Command{
		Use:   "preview (EXPR | --cron EXPR | --at RFC3339 | --every DURATION [--anchor RFC3339]) [--tz ZONE]",
		Short: "Show the next firings of a schedule, offline",
		Long: `Preview computes the next firings of a schedule without a daemon: local time
with zone abbreviation and offset, UTC, and a note on every daylight-saving
decision (a skipped gap, a merged or doubled repeat, a shifted firing).

--from is exclusive: firings strictly after it (default: now). Cron reads
wall-clock time in --tz; --dst-gap and --dst-repeat choose what a wall time
that does not exist or happens twice does. A cron expression may be given as
the one argument instead of --cron, and may name its zone itself as
Kubernetes and robfig/cron write it (CRON_TZ=Asia/Tokyo 0 9 * * *); a --tz
given as well must be the same zone. An --every interval is elapsed
time from --anchor (default: the Unix epoch) and does not move with DST.

On a terminal the table also says how far each firing is from --from
("in 3 h 12 min"); piped output and -o json leave that column out.

JSON output (-o json) is a stable contract; see docs/preview.md.`,
		Example: `  # 02:30 does not exist in New York on 2027-03-14
  schedctl preview --cron '30 2 * * *' --tz America/New_York --from 2027-03-13T00:00:00Z --count 3

  # every 15 minutes through the fall-back, firing at both 01:xx
  schedctl preview --cron '*/15 * * * *' --tz America/New_York --from 2027-11-07T04:30:00Z --dst-repeat all -o json

  # the zone in the expression, as a Kubernetes CronJob writes it
  schedctl preview 'CRON_TZ=Asia/Tokyo 0 9 * * *'

  # a 6-field expression (leading seconds), and a fixed interval
  schedctl preview --cron '*/20 * * * * *' --tz Europe/Berlin --count 5
  schedctl preview --every 90m --anchor 2027-01-01T00:00:00Z --tz Europe/London`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return cmdutil.UsageErrorf("preview takes at most one argument, a cron expression (quote it); got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if cmd.Flags().Changed("cron") {
					return cmdutil.UsageErrorf("give the cron expression once: as the argument or with --cron")
				}
				o.cron, o.cronArg = args[0], true
			}
			req, err := o.request(cmd, f.Now())
			if err != nil {
				return err
			}
			opts.Request, opts.JSON = req, f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return previewRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.cron, "cron", "", "cron expression: 5 fields, or 6 with leading seconds, or a macro such as @daily")
	fl.StringVar(&o.at, "at", "", "one instant, RFC 3339 with any offset")
	fl.StringVar(&o.every, "every", "", "fixed interval of elapsed time, e.g. 90s, 15m, 24h")
	fl.StringVar(&o.anchor, "anchor", "", "instant an --every interval counts from (default: the Unix epoch)")
	fl.StringVar(&o.tz, "tz", "", "IANA time zone, e.g. America/New_York (required with --cron; default UTC otherwise)")
	fl.StringVar(&o.from, "from", "", "show firings strictly after this RFC 3339 instant (default: now)")
	fl.IntVar(&o.count, "count", ipreview.DefaultCount, fmt.Sprintf("number of firings, 1 to %d", ipreview.MaxCount))
	fl.StringVar(&o.gap, "dst-gap", string(timetable.GapSkip), "a wall time that does not exist: skip or shift")
	fl.StringVar(&o.repeat, "dst-repeat", string(timetable.RepeatFirst), "a wall time that happens twice: first, last or all")
	return cmd
}

// request checks the flags together and builds the preview request.
func (o *previewFlags) request(cmd *cobra.Command, now time.Time) (ipreview.Request, error) {
	var def timetable.Definition
	n := 0
	for _, k := range []struct {
		kind timetable.Kind
		expr string
	}{{timetable.KindCron, o.cron}, {timetable.KindAt, o.at}, {timetable.KindEvery, o.every}} {
		if cmd.Flags().Changed(string(k.kind)) || k.kind == timetable.KindCron && o.cronArg {
			n++
			def.Kind, def.Expr = k.kind, k.expr
		}
	}
	if n != 1 {
		return ipreview.Request{}, cmdutil.UsageErrorf("give exactly one of --cron, --at or --every")
	}
	if def.Kind != timetable.KindEvery && cmd.Flags().Changed("anchor") {
		return ipreview.Request{}, cmdutil.UsageErrorf("--anchor goes with --every only")
	}
	if def.Kind != timetable.KindCron && (cmd.Flags().Changed("dst-gap") || cmd.Flags().Changed("dst-repeat")) {
		return ipreview.Request{}, cmdutil.UsageErrorf("--dst-gap and --dst-repeat go with --cron only; --%s is elapsed or absolute time", def.Kind)
	}
	def.TimeZone = o.tz
	if !cmd.Flags().Changed("tz") {
		switch _, prefixed := timetable.ZonePrefix(def.Expr); {
		case def.Kind == timetable.KindCron && prefixed:
			def.TimeZone = "" // the expression's CRON_TZ= prefix names it; timetable.Parse reads it
		case def.Kind == timetable.KindCron:
			return ipreview.Request{}, cmdutil.UsageErrorf("--tz is required with --cron: cron is wall-clock time in an IANA zone such as America/New_York or UTC (or write it in the expression: CRON_TZ=America/New_York 0 9 * * *)")
		default:
			def.TimeZone = "UTC"
		}
	}
	def.DSTGap, def.DSTRepeat = timetable.GapPolicy(o.gap), timetable.RepeatPolicy(o.repeat)
	if o.anchor != "" {
		a, err := timetable.ParseInstant("anchor", o.anchor)
		if err != nil {
			return ipreview.Request{}, err
		}
		def.Anchor = a
	}
	from := now
	if cmd.Flags().Changed("from") {
		t, err := timetable.ParseInstant("from", o.from)
		if err != nil {
			return ipreview.Request{}, err
		}
		from = t
	}
	if o.count < 1 || o.count > ipreview.MaxCount {
		return ipreview.Request{}, cmdutil.UsageErrorf("--count %d: must be between 1 and %d", o.count, ipreview.MaxCount)
	}
	return ipreview.Request{Def: def, From: from.Truncate(time.Second), Count: o.count}, nil
}

func previewRun(opts *PreviewOptions) error {
	f := opts.IO
	res, err := ipreview.Compute(opts.Request)
	if err != nil {
		return err
	}
	if opts.JSON {
		return res.WriteJSON(f.Out)
	}
	opt := ipreview.TableOptions{Styles: ipreview.PlainStyles(), Relative: f.IsTTY, Now: f.Now()}
	if f.Styled() {
		opt.Styles = ipreview.NewStyles()
	}
	// The relative column, from now, only on a terminal: piped output
	// stays the same whatever the day, for scripts and the files that
	// capture it.
	return res.WriteTableWith(f.Out, opt)
}
