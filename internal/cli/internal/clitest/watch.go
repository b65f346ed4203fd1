package clitest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// FakeTicker is a watch's clock in tests: the test decides when it ticks.
type FakeTicker struct {
	ch      chan time.Time
	stopped bool
}

// NewFakeTicker is a FakeTicker that has not ticked.
func NewFakeTicker() *FakeTicker { return &FakeTicker{ch: make(chan time.Time)} }

// New is the watch's Ticker: its ticks are the test's.
func (ft *FakeTicker) New(time.Duration) (<-chan time.Time, func()) {
	return ft.ch, func() { ft.stopped = true }
}

// Watching runs a watched command in the background; ticks then drives it
// frame by frame.
type Watching struct {
	t      *testing.T
	ft     *FakeTicker
	cancel context.CancelFunc
	done   chan error
}

// StartWatch runs run with -w on a FakeTicker in the background.
func StartWatch(t *testing.T, run func(ctx context.Context, w cmdutil.WatchFlags) error) *Watching {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watching{t: t, ft: NewFakeTicker(), cancel: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- run(ctx, cmdutil.WatchFlags{Watch: true, Interval: cmdutil.DefaultInterval, Ticker: w.ft.New})
	}()
	return w
}

// Ticks sends n ticks. The channel is unbuffered, so when a send returns
// the frame before it has been drawn.
func (w *Watching) Ticks(n int) {
	for range n {
		select {
		case w.ft.ch <- FixedNow:
		case err := <-w.done:
			w.t.Fatalf("the watch ended early: %v", err)
		}
	}
}

// Stop ticks once more (so the last frame asked for has been drawn), then
// cancels as Ctrl-C does, and returns the watch's error.
func (w *Watching) Stop() error {
	w.Ticks(1)
	w.cancel()
	err := <-w.done
	if !w.ft.stopped {
		w.t.Error("the ticker was not stopped")
	}
	return err
}

// SeqAPI answers Status, GetSchedule and ListOccurrences from a script of
// answers, one per call, the last repeated; an error in the script is
// returned as the call's error.
type SeqAPI struct {
	*Stub
	mu    sync.Mutex
	Seq   []any
	calls int
}

// Polls is how many calls the script answered.
func (s *SeqAPI) Polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *SeqAPI) next() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	v := s.Seq[0]
	if len(s.Seq) > 1 {
		s.Seq = s.Seq[1:]
	}
	return v
}

// Status answers the next status of the script.
func (s *SeqAPI) Status(context.Context) (*api.Status, error) {
	switch v := s.next().(type) {
	case error:
		return nil, v
	case api.Status:
		return &v, nil
	}
	panic("not a status")
}

// GetSchedule answers the next schedule of the script.
func (s *SeqAPI) GetSchedule(context.Context, string) (*api.Schedule, error) {
	switch v := s.next().(type) {
	case error:
		return nil, v
	case api.Schedule:
		return &v, nil
	}
	panic("not a schedule")
}

// ListOccurrences answers the next occurrences of the script.
func (s *SeqAPI) ListOccurrences(_ context.Context, o client.ListOccurrencesOptions) (*api.OccurrenceList, error) {
	switch v := s.next().(type) {
	case error:
		return nil, v
	case []api.Occurrence:
		return &api.OccurrenceList{Occurrences: v}, nil
	}
	panic("not occurrences")
}

// StatusAt is a small status of schedd version.
func StatusAt(version string) api.Status {
	return api.Status{Version: version, TZVersion: "2026a", NodeID: "n1", Store: "sqlite", Shards: 1, Now: FixedNow, StatsAt: FixedNow}
}
