package daemon

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulateMain: schedd simulate runs a what-if in this process,
// through Main as the binary does. Its JSON for the minutely catch_up:3
// schedule through the 09:55 outage is byte for byte the simulator's
// golden answer for the same input; bad input and a limit exit 2.
func TestSimulateMain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	body := "schedules:\n  - name: minutely\n    queue: q\n    cron: \"* * * * *\"\n    time_zone: UTC\n    misfire_policy: catch_up:3\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main("test", append([]string{"simulate"}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	rng := []string{"-f", file, "--from", "2027-03-15T09:50:00Z", "--to", "2027-03-15T10:10:00Z",
		"--outage", "2027-03-15T09:55:00Z/2027-03-15T10:05:00Z"}

	code, out, errOut := run(append(rng, "-o", "json")...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want, err := os.ReadFile(filepath.Join("..", "simulate", "testdata", "misfire-catch_up-3.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("schedd simulate -o json differs from the simulator's golden answer:\n%s", out)
	}

	code, out, _ = run(rng...)
	if code != ExitOK || !strings.Contains(out, "minutely  2027-03-15T10:01:00Z  CAUGHT_UP  catchup  1         4m0s") {
		t.Errorf("exit %d, table:\n%s", code, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", file, "--from", "2027-03-15T09:50:00Z"}, "--from and --to are required"},
		{[]string{"-f", file, "--from", "2027-03-15T09:50:00Z", "--to", "2027-06-15T09:50:00Z"}, "over the limit of 744h0m0s"},
		{append(rng, "--worker-fail-rate", "2"), "worker_fail_rate: 2: must be from 0 to 1"},
		{append(rng, "-o", "yaml"), `-o "yaml": want table or json`},
		{append(rng, "--bogus"), "unknown flag: --bogus"},
	} {
		code, out, errOut := run(tc.args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "schedd simulate: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out, errOut, ExitUsage, tc.want)
		}
	}
}
