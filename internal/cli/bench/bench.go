// Package bench is schedctl bench: the command of sched's own end-to-end
// benchmark, whose runner is internal/bench.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/bench"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// Options is one schedctl bench run.
type Options struct {
	IO   *cmdutil.Factory
	Ctx  context.Context
	JSON bool
	bench.Config
}

// NewCmdBench builds schedctl bench and its modes.
func NewCmdBench(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	cmd := cmdutil.GroupCmd("bench", "Benchmark a fresh schedd end to end: burst, sustained or scale",
		`  schedctl bench burst --schedules 20000
  schedctl bench sustained --rate 2315 --duration 60s -o json
  schedctl bench scale --schedules 1000000 --burst 10000`)
	cmd.Long = `bench starts the real schedd (--schedd, else the schedd next to schedctl,
else in PATH) on a fresh store of its own, loads schedules through the API,
and runs --consumers consumers through the API that claim batches of
--batch with long polls and acknowledge each batch inside the next claim;
it measures, on the consumers' side, when each firing arrives against when
it was due. It never touches a running schedd of yours.

  burst      --schedules firings due at one whole minute, written as daily
             crons in local wall time in ten zones (+05:30, +05:45, +12:45
             among them); --flex-window spreads them over a window.
  sustained  --rate firings per second for --duration, from "every 1m"
             schedules anchored across the minute.
  scale      --schedules that do not fire during the run (the load is
             measured), then a --burst on top of them.

Figures: delivery lag (received - when the firing became available: its
time, or its slot in a flexible window), schedule lag (received - its
scheduled time), their p50/p95/p99/max, deliveries per second, missing
and duplicate firings, schedd's peak memory, the store's size, the load's
time. docs/BENCHMARKS.md defines each.

Exit status: 1 when a firing is missing, was delivered to two consumers at
once, or belongs to a schedule bench did not create; timing never fails a
run. 2 on invalid flags.`
	cmd.AddCommand(newMode(f, runF, bench.Burst, "Firings of many schedules due at one instant",
		"  schedctl bench burst --schedules 20000\n  schedctl bench burst --schedules 5000 --tenants 4 --flex-window 5m -o json\n  schedctl bench burst --store 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'", func(fs *pflag.FlagSet, o *Options) {
			fs.IntVar(&o.Schedules, "schedules", 20000, "schedules firing at the instant")
			fs.DurationVar(&o.CreateLead, "create-lead", 0, "how far from the start the firings fall due (0: a minute plus the load's estimated time), rounded up to a whole minute")
			fs.DurationVar(&o.FlexWindow, "flex-window", 0, "give the schedules this flexible window (whole seconds; 0: strict)")
			fs.StringVar(&o.Target, "target", "", "deliver the firings into NATS JetStream through schedd's relay, nats://HOST:PORT/SUBJECT (a stream of the bench's own takes the subject; the lag is when it stored each firing)")
		}))
	cmd.AddCommand(newMode(f, runF, bench.Sustained, "A steady rate of firings",
		"  schedctl bench sustained\n  schedctl bench sustained --rate 200 --duration 10s -o json", func(fs *pflag.FlagSet, o *Options) {
			fs.IntVar(&o.Rate, "rate", 2315, "firings per second (2315/s is 200 million a day)")
			fs.DurationVar(&o.Duration, "duration", time.Minute, "how long firings fall due")
			fs.DurationVar(&o.CreateLead, "create-lead", 0, "how far from the start the first firings fall due (0: 10s plus the load's estimated time)")
		}))
	cmd.AddCommand(newMode(f, runF, bench.Scale, "Many schedules loaded, then a burst on top",
		"  schedctl bench scale --schedules 1000000 --burst 10000\n  schedctl bench scale --schedules 5000 --burst 1000 -o json", func(fs *pflag.FlagSet, o *Options) {
			fs.IntVar(&o.Schedules, "schedules", 100000, "schedules to load (they do not fire during the run)")
			fs.IntVar(&o.Burst, "burst", 10000, "then a burst of this many strict firings at one instant (0: none)")
			fs.DurationVar(&o.CreateLead, "create-lead", 0, "how far from the end of the load the burst falls due (0: a minute plus its estimated load time)")
		}))
	return cmd
}

// newMode builds one mode's command with the common flags and its own.
func newMode(f *cmdutil.Factory, runF func(*Options) error, mode, short, example string, own func(*pflag.FlagSet, *Options)) *cobra.Command {
	opts := &Options{IO: f}
	opts.Mode = mode
	cmd := &cobra.Command{
		Use:     mode,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = f.JSONOut()
			if err := opts.Check(); err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Ctx = ctx
			if runF != nil {
				return runF(opts)
			}
			return run(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Store, "store", "sqlite", "sqlite (a fresh file in a temporary directory) or a postgres:// DSN (a fresh schema on it, dropped afterwards; needs psql)")
	fs.StringVar(&opts.Schedd, "schedd", "", "the schedd binary (default: schedd next to schedctl, else in PATH)")
	fs.BoolVar(&opts.Keep, "keep", false, "keep the run's directory (with schedd's log) and PostgreSQL schema")
	fs.IntVar(&opts.Consumers, "consumers", 4, "consumers claiming at once")
	fs.IntVar(&opts.Batch, "batch", 1000, "claim batch size (at most 1000)")
	fs.DurationVar(&opts.Lease, "lease", 30*time.Second, "claim lease")
	fs.IntVar(&opts.Tenants, "tenants", 1, "tenants the schedules are spread over (more than 1: tenants with their own tokens, consumed by pool claims)")
	fs.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "how long after the last firing is due to wait for the missing ones")
	fs.StringVar(&opts.Profile, "profile", "", "write schedd's CPU profile, recorded from the first due instant for --profile-for, to this file (go tool pprof reads it)")
	fs.DurationVar(&opts.ProfileFor, "profile-for", 10*time.Second, "how long --profile records")
	own(fs, opts)
	return cmd
}

func run(o *Options) error {
	res, err := bench.Run(o.Ctx, o.Config, o.IO.ErrOut)
	if err != nil {
		return fmt.Errorf("bench %s: %w", o.Mode, err)
	}
	if o.JSON {
		if err := cmdutil.WriteJSON(o.IO.Out, res); err != nil {
			return err
		}
	} else if err := printTable(o.IO, res); err != nil {
		return err
	}
	if res.Failed() {
		return &cmdutil.StatusError{Status: cmdutil.ExitFailure,
			Err: fmt.Errorf("bench %s: %d missing, %d delivered concurrently twice, %d of unknown schedules", o.Mode, res.Missing, res.ConcurrentDuplicates, res.UnknownSchedule)}
	}
	return nil
}

// printTable prints a result for people.
func printTable(f *cmdutil.Factory, r *bench.Result) error {
	t := cmdutil.NewTable(f, "FIGURE", "VALUE")
	lag := func(l bench.Lag) string {
		return fmt.Sprintf("p50 %s  p95 %s  p99 %s  max %s", msStr(l.P50), msStr(l.P95), msStr(l.P99), msStr(l.Max))
	}
	t.Row("mode", r.Mode)
	t.Row("store", r.Store)
	t.Row("schedules", strconv.Itoa(r.Schedules))
	t.Row("tenants", fmt.Sprintf("%d (%s claims)", r.Tenants, r.Claims))
	t.Row("consumers", fmt.Sprintf("%d, batches of %d", r.Consumers, r.Batch))
	t.Row("load", fmt.Sprintf("%.2fs, %.0f creates/s", r.LoadS, r.CreatesPerS))
	if r.Scale != nil {
		t.Row("rss during load", fmt.Sprintf("%.1f MB max, %.1f MB after", r.Scale.LoadRSSMaxMB, r.Scale.AfterLoadRSSMB))
		t.Row("store after load", fmt.Sprintf("%d bytes", r.Scale.AfterLoadBytes))
		t.Row("burst", fmt.Sprintf("%d (loaded in %.2fs)", r.Scale.Burst, r.Scale.BurstLoadS))
	}
	if r.Rate > 0 {
		t.Row("rate", fmt.Sprintf("%d/s for %gs", r.Rate, r.DurationS))
	}
	t.Row("due at", cmdutil.TSV(r.DueAt))
	t.Row("expected", strconv.Itoa(r.Expected))
	t.Row("delivered", strconv.Itoa(r.Delivered))
	t.Row("missing", strconv.Itoa(r.Missing))
	t.Row("duplicates", fmt.Sprintf("%d (%d concurrent)", r.Duplicates, r.ConcurrentDuplicates))
	if r.UnknownSchedule > 0 || r.OutsideWindow > 0 {
		t.Row("other deliveries", fmt.Sprintf("%d of unknown schedules, %d outside the window", r.UnknownSchedule, r.OutsideWindow))
	}
	dl := lag(r.DeliveryLag)
	if r.TargetP99Ms > 0 {
		dl += fmt.Sprintf("  (target p99 <= %s)", msStr(r.TargetP99Ms))
	}
	t.Row("delivery lag", dl)
	t.Row("schedule lag", lag(r.ScheduleLag))
	t.Row("deliveries/s", fmt.Sprintf("%.0f", r.DeliveriesPerS))
	if r.Flex != nil {
		tenths := make([]string, len(r.Flex.Tenths))
		for i, n := range r.Flex.Tenths {
			tenths[i] = strconv.Itoa(n)
		}
		t.Row("flex spread", fmt.Sprintf("window %s, tenths %s, max/min %.2f, %d outside", r.Flex.Window, strings.Join(tenths, " "), r.Flex.MaxMinRatio, r.Flex.OutsideWindow))
	}
	t.Row("schedd rss", fmt.Sprintf("peak %.1f MB (VmHWM), sampled max %.1f MB", r.PeakRSSMB, r.SampledRSSMB))
	t.Row("store size", fmt.Sprintf("%d bytes", r.StoreBytes))
	if r.Planner != nil {
		t.Row("planner passes", fmt.Sprintf("%d, mean %s, p99 <= %s", r.Planner.Passes, msStr(r.Planner.MeanMs), msStr(r.Planner.P99Ms)))
	}
	var tl []string
	for _, s := range r.Timeline {
		tl = append(tl, fmt.Sprintf("%d:%d", s.Second, s.Delivered))
	}
	t.Row("timeline (s:n)", strings.Join(tl, " "))
	if r.TimedOut {
		t.Row("timed out", "yes")
	}
	for _, w := range r.Warnings {
		t.Row("warning", w)
	}
	for _, e := range r.Errors {
		t.Row("error", e)
	}
	return t.Print()
}

func msStr(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
}
