package cmdutil

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// DefaultInterval is how often -w asks schedd again.
const DefaultInterval = 2 * time.Second

// minInterval keeps a watch from polling schedd harder than a person can
// read (status figures are cached for a few seconds anyway).
const minInterval = time.Second

// ClearScreen moves the cursor home and clears the terminal.
const ClearScreen = "\x1b[H\x1b[2J"

// WatchFlags are -w/--watch and --interval, shared by occurrences, get and
// status: one implementation of polling and redrawing for all three.
type WatchFlags struct {
	Watch    bool
	Interval time.Duration

	// Ticker makes the ticks of a watch (time.NewTicker's when nil); tests
	// hand in their own channel so no test waits for a clock.
	Ticker func(time.Duration) (<-chan time.Time, func())
}

// Register adds -w/--watch and --interval to fl.
func (w *WatchFlags) Register(fl *pflag.FlagSet) {
	fl.BoolVarP(&w.Watch, "watch", "w", false, "keep watching: ask again every --interval and redraw when the output changes (Ctrl-C stops)")
	fl.DurationVar(&w.Interval, "interval", DefaultInterval, "with --watch, how often to ask schedd (at least 1s)")
}

// Check refuses --interval without --watch, and one too short.
func (w *WatchFlags) Check(fl *pflag.FlagSet) error {
	if fl.Changed("interval") && !w.Watch {
		return UsageErrorf("--interval goes with --watch")
	}
	if w.Watch && w.Interval < minInterval {
		return UsageErrorf("--interval %s: must be at least %s", w.Interval, minInterval)
	}
	return nil
}

// RenderFunc prints one frame of a watched command on f's streams.
type RenderFunc func(ctx context.Context, f *Factory) error

// Run renders once, or with --watch until Ctrl-C or SIGTERM, which end
// the watch with exit status 0.
func (w WatchFlags) Run(ctx context.Context, f *Factory, title string, render RenderFunc) error {
	if !w.Watch {
		return render(ctx, f)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	newTicker := w.Ticker
	if newTicker == nil {
		newTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	ticks, stopTicks := newTicker(w.Interval)
	defer stopTicks()
	return watchLoop(ctx, f, w.Interval, title, ticks, render)
}

// watchLoop renders a frame now and at every tick, and draws it when it
// differs from the last one drawn. On a terminal it clears the screen and
// redraws under a title line; elsewhere it prints the new frame after a
// blank line, like kubectl get -w, so a log of the output reads as a
// history of changes.
//
// A failure of the first frame ends the watch with that error: the
// command could not work at all. A later failure (schedd restarting, say)
// takes the frame's place, on standard error, until schedd answers again.
// The end of ctx ends the watch with nil.
func watchLoop(ctx context.Context, f *Factory, interval time.Duration, title string, ticks <-chan time.Time, render RenderFunc) error {
	last, drawn := "", false
	for first := true; ; first = false {
		var out, errOut bytes.Buffer
		fr := *f
		fr.Out, fr.ErrOut = &out, &errOut
		err := render(ctx, &fr)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if first {
				return err
			}
			out.Reset()
			errOut.Reset()
			msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
			fmt.Fprintf(&errOut, "schedctl: %s (asking again every %s)\n", msg, interval)
		}
		if frame := out.String() + "\x00" + errOut.String(); frame != last {
			if err := drawFrame(f, interval, title, drawn, out.Bytes(), errOut.Bytes()); err != nil {
				return err
			}
			last, drawn = frame, true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
		}
	}
}

func drawFrame(f *Factory, interval time.Duration, title string, drawn bool, out, errOut []byte) error {
	if f.IsTTY {
		if _, err := fmt.Fprintf(f.Out, "%sEvery %s: %s (last change %s; Ctrl-C to stop)\n\n",
			ClearScreen, interval, title, f.Now().UTC().Format("15:04:05Z")); err != nil {
			return err
		}
	} else if drawn && len(out) > 0 {
		if _, err := io.WriteString(f.Out, "\n"); err != nil {
			return err
		}
	}
	if _, err := f.Out.Write(out); err != nil {
		return err
	}
	_, err := f.ErrOut.Write(errOut)
	return err
}
