package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// TestHelpExamples runs every example of every schedctl --help page as a
// user pastes it (bash, the real schedctl on PATH, jq when the machine
// has it) against a real schedd, and fails on a broken one: a flag or
// command schedctl does not know, input it refuses as invalid, a jq
// program that does not fit the JSON schedctl prints. An example that
// names a schedule or occurrence this daemon does not hold fails with
// "not found" (exit 1): that is the daemon's answer, not a broken
// example.
//
// Not run: examples that watch or work until interrupted (-w, worker,
// top), that load the machine (bench), that are for another shell than
// bash (zsh, fish), that need a git checkout, and any that would reach an
// address other than this machine's loopback (a webhook or NATS host, a
// TCP schedd elsewhere, target test): tests talk to loopback only.
func TestHelpExamples(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to paste the examples into")
	}
	_, jqErr := exec.LookPath("jq")
	// Targets on loopback, so that the examples' target "billing" can be
	// one that sends nowhere else.
	d := startDaemon(t, "--webhook-allow", "127.0.0.1/32")
	d.ctlJSON(nil, "target", "create", "billing", "--webhook", "http://127.0.0.1:9/hooks")
	// The contexts the examples name, on this daemon, and the token
	// file one of them reads (the children's HOME is the daemon's dir).
	for _, name := range []string{"prod", "staging"} {
		if r := d.ctlEnv(nil, "context", "set", name, "--addr", "unix:"+d.sock); r.code != 0 {
			t.Fatalf("%s", r)
		}
	}
	if err := os.WriteFile(filepath.Join(d.dir, ".config", "sched", "ci.token"), []byte("sched_none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	files := map[string]string{
		"schedules.yaml":   "schedules:\n  - name: nightly-report\n    queue: reports\n    cron: \"0 2 * * *\"\n    time_zone: Europe/Berlin\n",
		"schedules.ndjson": `{"name":"imported","queue":"reports","every":"1h"}` + "\n",
		"big.ndjson":       `{"name":"big-1","queue":"reports","every":"1h"}` + "\n",
		"billing.json":     `{"invoice":"monthly"}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := append(append([]string{}, d.env...), "SCHED_ADDR=unix:"+d.sock,
		"PATH="+filepath.Dir(schedctlBin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	ran, all := 0, helpExamples(t)
	skipped := map[string]int{}
	for _, ex := range all {
		if why := skipExample(ex.line); why != "" {
			skipped[why]++
			continue
		}
		if strings.Contains(ex.line, "| jq") && jqErr != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-c", ex.line)
		cmd.Dir, cmd.Env = work, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		ran++
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if timedOut {
			continue // still waiting (a claim's long poll): not broken
		}
		if broken := brokenExample(code, errb.String()); broken != "" {
			t.Errorf("%s --help example %q: %s\nexit %d\nstdout %s\nstderr %s", ex.command, ex.line, broken, code, out.String(), errb.String())
		}
	}
	t.Logf("ran %d of %d examples; not run: %v", ran, len(all), skipped)
	if ran < 80 {
		t.Errorf("ran %d examples; the help pages hold far more", ran)
	}
}

// helpExample is one example line of a command's help, its continuation
// lines joined.
type helpExample struct{ command, line string }

// helpExamples walks schedctl's command tree, as its root builds it, for
// the examples of every command.
func helpExamples(t *testing.T) []helpExample {
	t.Helper()
	f := &cmdutil.Factory{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, In: strings.NewReader(""), Now: time.Now, Version: "test",
		LookupEnv: func(string) (string, bool) { return "", false }}
	var out []helpExample
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// A line ending in a backslash, && or | goes on on the next.
		joined := regexp.MustCompile(`(\\|&&|\|)\s*\n\s*`).ReplaceAllStringFunc(c.Example, func(m string) string {
			return strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(m), "\\"), " ") + " "
		})
		for _, l := range strings.Split(joined, "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, helpExample{c.CommandPath(), l})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.NewCmdRoot(f))
	return out
}

// elsewhere matches an address that is not this machine's loopback.
var elsewhere = regexp.MustCompile(`(https?|nats)://[^1]|(tcp|tls):(?:[a-z]|1[^2]|[02-9])|\.internal|example\.com`)

// skipExample says why an example is not run, or "".
func skipExample(line string) string {
	switch {
	case elsewhere.MatchString(line):
		return "reaches another host"
	case strings.Contains(line, " -w") || strings.Contains(line, "--watch"):
		return "watches until interrupted"
	case strings.Contains(line, "schedctl worker"), strings.Contains(line, "schedctl top"):
		return "runs until interrupted"
	case strings.Contains(line, "schedctl bench"):
		return "loads the machine"
	case strings.HasPrefix(line, "git "):
		return "needs a git checkout"
	case strings.Contains(line, "completion zsh"), strings.Contains(line, "completion fish"):
		return "for another shell"
	case strings.Contains(line, "target test"):
		return "sends to the target's host"
	}
	return ""
}

// brokenExample says what is wrong with an example that ran, or "".
// Exit 2 is invalid input, unless the command refused only because it
// asks first and had no terminal to ask on.
func brokenExample(code int, stderr string) string {
	switch {
	case strings.Contains(stderr, "jq: error") || strings.Contains(stderr, "jq: compile error"):
		return "its jq program does not fit schedctl's JSON"
	case strings.Contains(stderr, "command not found"):
		return "a command it runs does not exist"
	case code == 2 && !strings.Contains(stderr, "not on a terminal to ask"):
		return "schedctl refused it as invalid input"
	}
	return ""
}
