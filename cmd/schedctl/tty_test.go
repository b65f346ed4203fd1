package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTerminalQueryAtStart runs schedctl on a terminal (a pseudo-terminal
// from script(1), with nothing behind it to answer) and checks that it
// sends the terminal nothing but its output. A library that asks the
// terminal for its colours when the program starts (as bubbletea v1's
// package init does) would make every command on a terminal wait for an
// answer: 5 s where none comes, a round trip over SSH, and keys typed
// meanwhile lost.
func TestNoTerminalQueryAtStart(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no pseudo-terminal to run schedctl on")
	}
	for _, args := range []string{"version", "preview --cron '0 9 * * *' --tz UTC --from 2027-01-01T00:00:00Z --count 1", "top --help"} {
		out, err := exec.Command(scriptBin, "-qec", schedctl+" "+args, "/dev/null").CombinedOutput()
		if err != nil {
			t.Fatalf("schedctl %s on a terminal: %v\n%q", args, err, out)
		}
		for _, q := range []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n", "\x1b[c"} {
			if strings.Contains(string(out), q) {
				t.Errorf("schedctl %s queried the terminal (%q) at start-up:\n%q", args, q, out)
			}
		}
	}
}
