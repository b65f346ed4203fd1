package status

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestWatchPrintsOnlyChanges: off a terminal a watch prints a frame only
// when it differs from the last one, after a blank line, and Ctrl-C ends
// it with no error (exit 0).
func TestWatchPrintsOnlyChanges(t *testing.T) {
	a, b := clitest.StatusAt("1.0"), clitest.StatusAt("1.1")
	s := &clitest.SeqAPI{Stub: clitest.NewStub(), Seq: []any{a, a, a, b, b, a}}
	f, out, errOut := clitest.NewFactory(false)
	w := clitest.StartWatch(t, func(ctx context.Context, wf cmdutil.WatchFlags) error {
		return statusRun(&StatusOptions{IO: f, API: func() (cmdutil.API, error) { return s, nil }, Ctx: ctx, Watch: wf})
	})
	w.Ticks(5)
	if err := w.Stop(); err != nil {
		t.Fatalf("Ctrl-C: %v, want nil", err)
	}
	if s.Polls() != 7 {
		t.Errorf("%d polls, want 7", s.Polls())
	}
	frame := func(st api.Status) string {
		g, buf, _ := clitest.NewFactory(false)
		if err := printStatus(g, &st); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if want := frame(a) + "\n" + frame(b) + "\n" + frame(a); out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out, want)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr %q", errOut)
	}
}

// TestWatchJSON: -o json -w prints each changed document.
func TestWatchJSON(t *testing.T) {
	a, b := clitest.StatusAt("1.0"), clitest.StatusAt("1.1")
	s := &clitest.SeqAPI{Stub: clitest.NewStub(), Seq: []any{a, b}}
	f, out, _ := clitest.NewFactory(false)
	w := clitest.StartWatch(t, func(ctx context.Context, wf cmdutil.WatchFlags) error {
		return statusRun(&StatusOptions{IO: f, API: func() (cmdutil.API, error) { return s, nil }, Ctx: ctx, JSON: true, Watch: wf})
	})
	w.Ticks(2)
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(strings.TrimSpace(out.String()), "\n\n")
	if len(docs) != 2 || !strings.Contains(docs[0], `"version": "1.0"`) || !strings.Contains(docs[1], `"version": "1.1"`) {
		t.Errorf("documents:\n%s", out)
	}
}

// TestWatchFirstPollFails: a failed first poll ends the watch with the
// error and no output.
func TestWatchFirstPollFails(t *testing.T) {
	down := &client.DialError{Addr: "unix:/run/s.sock", Err: errors.New("connection refused")}
	s := &clitest.SeqAPI{Stub: clitest.NewStub(), Seq: []any{down}}
	f, out, _ := clitest.NewFactory(false)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	err := statusRun(&StatusOptions{IO: f, API: func() (cmdutil.API, error) { return s, nil }, Ctx: ctx,
		Watch: cmdutil.WatchFlags{Watch: true, Interval: time.Second, Ticker: clitest.NewFakeTicker().New}})
	if !errors.As(err, new(*client.DialError)) || out.Len() != 0 {
		t.Errorf("first poll failed: %v, stdout %q", err, out)
	}
}

func TestWatchFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var st *StatusOptions
	if err := clitest.Exec(t, NewCmdStatus(f, func(o *StatusOptions) error { st = o; return nil }), "-w"); err != nil ||
		!st.Watch.Watch || st.Watch.Interval != 2*time.Second {
		t.Errorf("status -w: %v %+v", err, st)
	}
	clitest.WantErr(t, clitest.Exec(t, NewCmdStatus(f, func(*StatusOptions) error { return nil }), "--interval", "5s"), "--interval goes with --watch", cmdutil.ExitInvalid)
	clitest.WantErr(t, clitest.Exec(t, NewCmdStatus(f, func(*StatusOptions) error { return nil }), "-w", "--interval", "100ms"), "--interval 100ms: must be at least 1s", cmdutil.ExitInvalid)
}
