package cli

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// fakeTicker is a watch's clock in tests: the test decides when it ticks.
type fakeTicker struct {
	ch      chan time.Time
	stopped bool
}

func newFakeTicker() *fakeTicker { return &fakeTicker{ch: make(chan time.Time)} }

func (ft *fakeTicker) new(time.Duration) (<-chan time.Time, func()) {
	return ft.ch, func() { ft.stopped = true }
}

// watching runs a watched command in the background; ticks then drives it
// frame by frame.
type watching struct {
	t      *testing.T
	ft     *fakeTicker
	cancel context.CancelFunc
	done   chan error
}

func startWatch(t *testing.T, run func(ctx context.Context, w watchFlags) error) *watching {
	t.Helper()
	ctx, cancel := context.WithCancel(bg)
	w := &watching{t: t, ft: newFakeTicker(), cancel: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- run(ctx, watchFlags{Watch: true, Interval: defaultInterval, ticker: w.ft.new})
	}()
	return w
}

// ticks sends n ticks. The channel is unbuffered, so when a send returns
// the frame before it has been drawn.
func (w *watching) ticks(n int) {
	for range n {
		select {
		case w.ft.ch <- fixedNow:
		case err := <-w.done:
			w.t.Fatalf("the watch ended early: %v", err)
		}
	}
}

// stop ticks once more (so the last frame asked for has been drawn), then
// cancels as Ctrl-C does, and returns the watch's error.
func (w *watching) stop() error {
	w.ticks(1)
	w.cancel()
	err := <-w.done
	if !w.ft.stopped {
		w.t.Error("the ticker was not stopped")
	}
	return err
}

// seqAPI answers Status, GetSchedule and ListOccurrences from a script of
// answers, one per call, the last repeated; an error in the script is
// returned as the call's error.
type seqAPI struct {
	*stubAPI
	mu    sync.Mutex
	seq   []any
	calls int
}

func (s *seqAPI) next() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	v := s.seq[0]
	if len(s.seq) > 1 {
		s.seq = s.seq[1:]
	}
	return v
}

func (s *seqAPI) Status(context.Context) (*api.Status, error) {
	switch v := s.next().(type) {
	case error:
		return nil, v
	case api.Status:
		return &v, nil
	}
	panic("not a status")
}

func (s *seqAPI) GetSchedule(context.Context, string) (*api.Schedule, error) {
	switch v := s.next().(type) {
	case error:
		return nil, v
	case api.Schedule:
		return &v, nil
	}
	panic("not a schedule")
}

func (s *seqAPI) ListOccurrences(_ context.Context, o client.ListOccurrencesOptions) (*api.OccurrenceList, error) {
	switch v := s.next().(type) {
	case error:
		return nil, v
	case []api.Occurrence:
		return &api.OccurrenceList{Occurrences: v}, nil
	}
	panic("not occurrences")
}

func statusAt(version string) api.Status {
	return api.Status{Version: version, TZVersion: "2026a", NodeID: "n1", Store: "sqlite", Shards: 1, Now: fixedNow, StatsAt: fixedNow}
}

// TestWatchPrintsOnlyChanges: off a terminal a watch prints a frame only
// when it differs from the last one, after a blank line, and Ctrl-C ends
// it with no error (exit 0).
func TestWatchPrintsOnlyChanges(t *testing.T) {
	a, b := statusAt("1.0"), statusAt("1.1")
	s := &seqAPI{stubAPI: newStub(), seq: []any{a, a, a, b, b, a}}
	f, out, errOut := testFactory(false)
	w := startWatch(t, func(ctx context.Context, wf watchFlags) error {
		return statusRun(&StatusOptions{IO: f, API: func() (API, error) { return s, nil }, Ctx: ctx, Watch: wf})
	})
	w.ticks(5)
	if err := w.stop(); err != nil {
		t.Fatalf("Ctrl-C: %v, want nil", err)
	}
	if s.calls != 7 {
		t.Errorf("%d polls, want 7", s.calls)
	}
	frame := func(st api.Status) string {
		g, buf, _ := testFactory(false)
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

// TestWatchRedrawsOnATerminal: on a terminal each change clears the
// screen and redraws under a title; an unchanged frame draws nothing.
func TestWatchRedrawsOnATerminal(t *testing.T) {
	sc1, sc2 := sampleSchedule(), sampleSchedule()
	sc2.State = "PAUSED"
	s := &seqAPI{stubAPI: newStub(), seq: []any{sc1, sc1, sc2, sc2}}
	f, out, _ := testFactory(true)
	w := startWatch(t, func(ctx context.Context, wf watchFlags) error {
		return getRun(&GetOptions{IO: f, API: func() (API, error) { return s, nil }, Ctx: ctx, Ref: "nightly", Watch: wf})
	})
	w.ticks(3)
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	frames := strings.Split(out.String(), clearScreen)
	if len(frames) != 3 || frames[0] != "" {
		t.Fatalf("%d redraws, want 2:\n%q", len(frames)-1, out)
	}
	for i, want := range []string{"ACTIVE", "PAUSED"} {
		title := "Every 2s: schedctl get nightly (last change 12:00:00Z; Ctrl-C to stop)\n\n"
		if !strings.HasPrefix(frames[i+1], title) || !regexp.MustCompile(`(?m)^state +`+want+`$`).MatchString(frames[i+1]) {
			t.Errorf("frame %d:\n%s", i+1, frames[i+1])
		}
	}
}

// TestWatchSurvivesErrors: a failed poll after the first shows the error
// on stderr (once, however often it repeats) and the watch goes on; the
// next answer is drawn again. A failed first poll ends the watch.
func TestWatchSurvivesErrors(t *testing.T) {
	occ := sampleOccurrence()
	down := &client.DialError{Addr: "unix:/run/s.sock", Err: errors.New("connection refused")}
	s := &seqAPI{stubAPI: newStub(), seq: []any{[]api.Occurrence{occ}, down, down, []api.Occurrence{occ}}}
	f, out, errOut := testFactory(false)
	w := startWatch(t, func(ctx context.Context, wf watchFlags) error {
		return occurrencesRun(&OccurrencesOptions{IO: f, API: func() (API, error) { return s, nil }, Ctx: ctx, Watch: wf})
	})
	w.ticks(3)
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	row := "occ_01\t2027-03-13T12:00:00Z\tSUCCEEDED\t-\t-1m0s\t1s\t1\treports\n"
	if want := row + "\n" + row; out.String() != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if n := strings.Count(errOut.String(), "schedctl: occurrences: "); n != 1 || !strings.Contains(errOut.String(), "(asking again every 2s)") {
		t.Errorf("stderr %q, want the error once", errOut)
	}

	s = &seqAPI{stubAPI: newStub(), seq: []any{down}}
	f, out, _ = testFactory(false)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	err := statusRun(&StatusOptions{IO: f, API: func() (API, error) { return s, nil }, Ctx: ctx,
		Watch: watchFlags{Watch: true, Interval: time.Second, ticker: newFakeTicker().new}})
	if !errors.As(err, new(*client.DialError)) || out.Len() != 0 {
		t.Errorf("first poll failed: %v, stdout %q", err, out)
	}
}

// TestWatchJSON: -o json -w prints each changed document.
func TestWatchJSON(t *testing.T) {
	a, b := statusAt("1.0"), statusAt("1.1")
	s := &seqAPI{stubAPI: newStub(), seq: []any{a, b}}
	f, out, _ := testFactory(false)
	w := startWatch(t, func(ctx context.Context, wf watchFlags) error {
		return statusRun(&StatusOptions{IO: f, API: func() (API, error) { return s, nil }, Ctx: ctx, JSON: true, Watch: wf})
	})
	w.ticks(2)
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(strings.TrimSpace(out.String()), "\n\n")
	if len(docs) != 2 || !strings.Contains(docs[0], `"version": "1.0"`) || !strings.Contains(docs[1], `"version": "1.1"`) {
		t.Errorf("documents:\n%s", out)
	}
}

func TestWatchFlags(t *testing.T) {
	f, _, _ := testFactory(false)
	var st *StatusOptions
	if err := execCmd(t, NewCmdStatus(f, func(o *StatusOptions) error { st = o; return nil }), "-w"); err != nil ||
		!st.Watch.Watch || st.Watch.Interval != 2*time.Second {
		t.Errorf("status -w: %v %+v", err, st)
	}
	var g *GetOptions
	if err := execCmd(t, NewCmdGet(f, func(o *GetOptions) error { g = o; return nil }), "n", "--watch", "--interval", "5s"); err != nil ||
		!g.Watch.Watch || g.Watch.Interval != 5*time.Second {
		t.Errorf("get --watch --interval 5s: %v %+v", err, g)
	}
	var oc *OccurrencesOptions
	if err := execCmd(t, NewCmdOccurrences(f, func(o *OccurrencesOptions) error { oc = o; return nil }), "-w", "--schedule", "n"); err != nil ||
		!oc.Watch.Watch {
		t.Errorf("occurrences -w: %v %+v", err, oc)
	}
	wantErr(t, execCmd(t, NewCmdStatus(f, func(*StatusOptions) error { return nil }), "--interval", "5s"), "--interval goes with --watch", ExitInvalid)
	wantErr(t, execCmd(t, NewCmdStatus(f, func(*StatusOptions) error { return nil }), "-w", "--interval", "100ms"), "--interval 100ms: must be at least 1s", ExitInvalid)
	for _, name := range []string{"list", "attempts", "dlq list"} {
		root := NewRootCmd(f)
		args := append(strings.Fields(name), "-w")
		if name == "attempts" {
			args = append(args, "occ_1")
		}
		root.SetArgs(args)
		if err := root.Execute(); err == nil || ExitCode(err) != ExitInvalid {
			t.Errorf("%s -w: %v, want an unknown flag", name, err)
		}
	}
}
