package status

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/testio"
	"github.com/sched-dev/sched/internal/tui"
)

// top runs on the real client: it is the dashboard's Source.
var _ tui.Source = (*client.Client)(nil)

// TestTopFlags: top's interval and its refusals, through its real flags
// and runF; a refusal is invalid input (exit 2) and says what to use
// instead.
func TestTopFlags(t *testing.T) {
	cases := []struct {
		name     string
		tty      bool
		args     []string
		interval time.Duration
		err      string
	}{
		{"default interval", true, nil, time.Second, ""},
		{"interval", true, []string{"--interval", "5s"}, 5 * time.Second, ""},
		{"shortest interval", true, []string{"--interval", "250ms"}, 250 * time.Millisecond, ""},
		{"interval too short", true, []string{"--interval", "10ms"}, 0, "--interval 10ms: must be at least 250ms"},
		{"off a terminal", false, nil, 0, "top needs a terminal; use `schedctl status -w` in scripts"},
		{"off a terminal, interval given", false, []string{"--interval", "10ms"}, 0, "schedctl status -w"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := clitest.NewFactory(tc.tty)
			var got *TopOptions
			err := clitest.Exec(t, NewCmdTop(f, func(o *TopOptions) error { got = o; return nil }), tc.args...)
			if tc.err != "" {
				clitest.WantErr(t, err, tc.err, cmdutil.ExitInvalid)
				if got != nil {
					t.Errorf("top ran with %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Interval != tc.interval || got.Ctx == nil || got.IO != f {
				t.Fatalf("options %+v, want interval %s", got, tc.interval)
			}
		})
	}
}

// TestTopColorProfile: top draws without any style when schedctl's output
// is not to be styled (NO_COLOR or TERM=dumb); otherwise bubbletea finds
// the terminal's profile, which off a terminal is none either.
func TestTopColorProfile(t *testing.T) {
	for _, tc := range []struct {
		name         string
		tty, noColor bool
		want         colorprofile.Profile
		decidedByTop bool
	}{
		{"terminal", true, false, 0, false},
		{"terminal with NO_COLOR", true, true, colorprofile.NoTTY, true},
		{"not a terminal", false, false, colorprofile.NoTTY, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := clitest.NewFactory(tc.tty)
			f.NoColor = tc.noColor
			p, ok := topColorProfile(f)
			if ok != tc.decidedByTop || (ok && p != tc.want) {
				t.Errorf("profile %s (decided by top: %v), want %s (%v)", p, ok, tc.want, tc.decidedByTop)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer the program writes to while the test reads.
type syncBuffer = testio.SyncBuffer

// sgr matches a Select Graphic Rendition escape, the one that sets styles.
var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colour returns the first escape in s that sets a colour (foreground,
// background or underline; 16, 256 or true colour), "" when none does.
func colour(s string) string {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			p, _, _ = strings.Cut(p, ":")
			switch n, err := strconv.Atoi(p); {
			case err != nil:
			case n >= 30 && n <= 38, n >= 40 && n <= 48, n >= 90 && n <= 97, n >= 100 && n <= 107, n == 58:
				return m[0]
			}
		}
	}
	return ""
}

// runTop runs schedctl top as a real bubbletea program on the stub daemon
// until it has drawn the daemon's figures, then types q. term is what the
// terminal would tell bubbletea: its size and colour profile (Out is a
// buffer here, which has neither). It returns all top wrote.
func runTop(t *testing.T, f *cmdutil.Factory, s *clitest.Stub, term colorprofile.Profile) string {
	t.Helper()
	out := &syncBuffer{}
	in, typing := io.Pipe()
	defer typing.Close()
	f.Out, f.In = out, in
	done := make(chan error, 1)
	go func() {
		done <- topRun(&TopOptions{
			IO: f, Source: func() (tui.Source, error) { return s, nil }, Ctx: context.Background(), Interval: topMinInterval,
			programOptions: []tea.ProgramOption{tea.WithWindowSize(100, 30), tea.WithColorProfile(term)},
		})
	}()
	// Generous bounds: they stop a broken program from hanging the test,
	// they do not time it.
	deadline := time.After(30 * time.Second)
	for !strings.Contains(out.String(), "shards 63/64") {
		select {
		case err := <-done:
			t.Fatalf("top ended before drawing the figures: %v\n%q", err, out.String())
		case <-deadline:
			t.Fatalf("no frame with the daemon's figures:\n%q", out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := typing.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("top: %v", err)
		}
	case <-deadline:
		t.Fatal("q did not end top")
	}
	return out.String()
}

// TestTopRun: top draws the daemon's figures on the alternate screen
// (and leaves it at the end), q ends it, and on a colour terminal it
// writes colour unless NO_COLOR (or TERM=dumb) says not to.
func TestTopRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noColor bool
		colour  bool
	}{
		{"colour terminal", false, true},
		{"colour terminal with NO_COLOR", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := clitest.NewFactory(true)
			f.NoColor = tc.noColor
			s := clitest.Seeded()
			got := runTop(t, f, s, colorprofile.ANSI256)
			for _, want := range []string{"\x1b[?1049h", "\x1b[?1049l", "sched top", "[Overview]", "1/2 live"} {
				if !strings.Contains(got, want) {
					t.Errorf("the output has no %q:\n%q", want, got)
				}
			}
			if c := colour(got); (c != "") != tc.colour {
				t.Errorf("colour written: %q, want colour %v:\n%q", c, tc.colour, got)
			}
			if calls := strings.Join(s.Calls(), "\n"); !strings.Contains(calls, "status") {
				t.Errorf("top did not ask for the status; it asked:\n%s", calls)
			}
		})
	}
}

// TestTopSourceError: a Source that cannot be made (a bad --addr) is
// reported before any drawing.
func TestTopSourceError(t *testing.T) {
	f, out, _ := clitest.NewFactory(true)
	bad := errors.New("invalid address")
	err := topRun(&TopOptions{IO: f, Source: func() (tui.Source, error) { return nil, bad }, Ctx: context.Background(), Interval: time.Second})
	if !errors.Is(err, bad) || out.Len() != 0 {
		t.Fatalf("error %v, output %q", err, out.String())
	}
}
