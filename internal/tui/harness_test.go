package tui

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/sched-dev/sched/client"
)

// The client is a Source: the dashboard runs on the real client.
var _ Source = (*client.Client)(nil)

// -update rewrites the golden files: go test ./internal/tui/ -update.
// teatest's golden package, which this test binary links, registers the
// same flag (registering it twice would panic); it is registered here only
// when that package did not.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files")
	}
}

// updating reports whether -update was given.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares got with testdata/name.golden (rewriting it under
// -update). A frame with colours is compared with its escapes quoted, so a
// difference is readable.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("frame differs from %s at line %d:\nwant %q\ngot  %q\n\nwhole frame:\n%s", path, i+1, w, g, got)
		}
	}
}

// renderer returns a renderer with a fixed colour profile: 256 colours on
// a dark background, or none at all (as with NO_COLOR).
func renderer(color bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetHasDarkBackground(true)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

// harness drives the real model by messages: it runs each command the
// model returns and feeds the answer back, synchronously, so a test never
// waits on a timer. Ticks are sent by the test (Options.manualTick).
type harness struct {
	t     *testing.T
	m     Model
	src   *fakeSource
	clock *fakeClock
	quit  bool
	hold  bool      // keep commands instead of running them
	held  []tea.Cmd // commands kept while hold is set
}

func newHarness(t *testing.T, src *fakeSource, w, h int, color bool) *harness {
	t.Helper()
	c := &fakeClock{t: now0}
	m := New(src, Options{Now: c.Now, Location: timeUTC, Renderer: renderer(color), manualTick: true})
	hs := &harness{t: t, m: m, src: src, clock: c}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(m.Init())
	return hs
}

// send hands msg to Update and runs what it returns.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	mm, cmd := h.m.Update(msg)
	h.m = mm.(Model)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if h.hold {
		h.held = append(h.held, cmd)
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
		h.quit = true
	default:
		h.send(msg)
	}
}

// flush runs the commands kept while hold was set.
func (h *harness) flush() {
	h.hold = false
	held := h.held
	h.held = nil
	for _, c := range held {
		h.run(c)
	}
}

// ticks sends n ticks, each polling the daemon.
func (h *harness) ticks(n int) {
	for range n {
		h.send(tickMsg{})
	}
}

// keys sends keypresses: named keys (tab, esc, enter, ...) or text, one
// rune a key.
func (h *harness) keys(keys ...string) {
	named := map[string]tea.KeyType{
		"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "esc": tea.KeyEsc, "enter": tea.KeyEnter,
		"up": tea.KeyUp, "down": tea.KeyDown, "backspace": tea.KeyBackspace, "ctrl+c": tea.KeyCtrlC,
		"pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp, "home": tea.KeyHome, "end": tea.KeyEnd,
	}
	for _, k := range keys {
		if t, ok := named[k]; ok {
			h.send(tea.KeyMsg{Type: t})
			continue
		}
		for _, r := range k {
			h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		}
	}
}

func (h *harness) view() string { return h.m.View() }

// rowNames is the names in the schedules table, in its order.
func (h *harness) rowNames() string {
	var names []string
	for _, sc := range h.m.rows {
		names = append(names, sc.Name)
	}
	return strings.Join(names, ",")
}

func (h *harness) mustShow(texts ...string) {
	h.t.Helper()
	v := h.view()
	for _, s := range texts {
		if !strings.Contains(v, s) {
			h.t.Fatalf("the frame does not show %q:\n%s", s, v)
		}
	}
}

func (h *harness) mustNotShow(texts ...string) {
	h.t.Helper()
	v := h.view()
	for _, s := range texts {
		if strings.Contains(v, s) {
			h.t.Fatalf("the frame shows %q:\n%s", s, v)
		}
	}
}

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
