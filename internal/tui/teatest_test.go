package tui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestProgramEndToEnd runs the dashboard as a real bubbletea program on an
// 80x24 terminal: its own ticks poll the fixture, a frame with the figures
// arrives, tab switches views, and q ends the program.
func TestProgramEndToEnd(t *testing.T) {
	src := newFixture(3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(src, Options{
		Interval: 20 * time.Millisecond, Context: ctx, Now: (&fakeClock{t: now0}).Now,
		Location: time.UTC,
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.NoTTY)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("DUE next 60m")) && bytes.Contains(b, []byte("node-b"))
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("[Schedules]")) && bytes.Contains(b, []byte("nightly-report"))
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final := tm.FinalModel(t).(Model)
	if final.view != viewSchedules || final.status == nil || final.width != 80 || final.height != 24 {
		t.Fatalf("final model: view %s, status %v, size %dx%d", final.view, final.status != nil, final.width, final.height)
	}
	if n := len(src.callsOf("Status")); n < 2 {
		t.Errorf("the program polled %d times; its ticks did not run", n)
	}
}
