package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

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

// profile is the fixed colour profile of a test's frames: 256 colours,
// or none at all (NO_COLOR, or not a terminal).
func profile(color bool) colorprofile.Profile {
	if color {
		return colorprofile.ANSI256
	}
	return colorprofile.NoTTY
}

// lower writes a frame as a terminal of profile p shows it: styles cut
// down to what p has, as bubbletea's renderer does when it draws. Without
// any style, blanks at the end of a line show as nothing (the renderer
// clears the rest of a line), so they are dropped: a frame without colour
// is the plain text a person sees.
func lower(t *testing.T, frame string, p colorprofile.Profile) string {
	t.Helper()
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := w.Write([]byte(frame)); err != nil {
		t.Fatalf("lower the frame to %s: %v", p, err)
	}
	if p > colorprofile.NoTTY {
		return b.String()
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// harness drives the real model by messages: it runs each command the
// model returns and feeds the answer back, synchronously, so a test never
// waits on a timer. Ticks are sent by the test (Options.manualTick).
type harness struct {
	t       *testing.T
	m       Model
	src     *fakeSource
	clock   *fakeClock
	profile colorprofile.Profile // what view lowers the frame to
	quit    bool
	hold    bool      // keep commands instead of running them
	held    []tea.Cmd // commands kept while hold is set
}

func newHarness(t *testing.T, src *fakeSource, w, h int, color bool) *harness {
	t.Helper()
	c := &fakeClock{t: now0}
	m := New(src, Options{Now: c.Now, Location: timeUTC, manualTick: true})
	hs := &harness{t: t, m: m, src: src, clock: c, profile: profile(color)}
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

// namedKeys are the keypresses a terminal sends for named keys, as
// bubbletea decodes them.
var namedKeys = map[string]tea.KeyPressMsg{
	"tab": {Code: tea.KeyTab}, "shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"esc": {Code: tea.KeyEscape}, "enter": {Code: tea.KeyEnter}, "backspace": {Code: tea.KeyBackspace},
	"up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "ctrl+c": {Code: 'c', Mod: tea.ModCtrl},
	"pgdown": {Code: tea.KeyPgDown}, "pgup": {Code: tea.KeyPgUp}, "home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
	"ctrl+u": {Code: 'u', Mod: tea.ModCtrl},
}

// textKey is the keypress of one printable character, as bubbletea
// decodes it: a capital is its letter with shift, a space is space.
func textKey(r rune) tea.KeyPressMsg {
	k := tea.KeyPressMsg{Code: r, Text: string(r)}
	if unicode.IsUpper(r) {
		k.Code, k.ShiftedCode, k.Mod = unicode.ToLower(r), r, tea.ModShift
	}
	return k
}

// keys sends keypresses: named keys (tab, esc, enter, ...) or text, one
// rune a key.
func (h *harness) keys(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		if msg, ok := namedKeys[k]; ok {
			if msg.String() != k {
				h.t.Fatalf("bad test: key %q reads as %q", k, msg.String())
			}
			h.send(msg)
			continue
		}
		for _, r := range k {
			h.send(textKey(r))
		}
	}
}

// view is the frame as the terminal gets it at the harness's profile.
func (h *harness) view() string {
	h.t.Helper()
	v := h.m.View()
	if !v.AltScreen {
		h.t.Fatal("the view does not ask for the alternate screen")
	}
	return lower(h.t, v.Content, h.profile)
}

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
