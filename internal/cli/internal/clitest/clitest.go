// Package clitest is what the tests of schedctl's commands share: a Factory
// on buffers with a pinned clock, a stand-in for schedd behind the API
// interface (Stub) with fully populated records, and the checks every
// command of a kind must pass: JSON field names (CheckJSONFields), paging
// (CheckPaging, CheckReverse) and watching (StartWatch, SeqAPI).
package clitest

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// Exec runs cmd with args through its real flags, as schedctl would but
// without the root: a test's runF then sees the options they give, or the
// error comes back before any call.
func Exec(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	if args == nil {
		args = []string{} // not the test binary's own arguments
	}
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.Execute()
}

// WantErr fails the test unless err contains want and exits with code.
func WantErr(t *testing.T, err error, want string, code int) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want %q", err, want)
	}
	if c := cmdutil.ExitCode(err); c != code {
		t.Errorf("exit status %d, want %d (%v)", c, code, err)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Golden compares got with testdata/name of the package under test, or
// rewrites it with go test -update.
func Golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// Seeded is a Stub holding one of everything, every field set: the
// schedule "nightly", an occurrence, an attempt, a claim, a heartbeat that
// says superseded, and a status.
func Seeded() *Stub {
	s := NewStub()
	sc := SampleSchedule()
	s.Schedules[sc.Name] = &sc
	s.Order = []string{sc.Name}
	s.Occurrences = []api.Occurrence{SampleOccurrence()}
	s.Attempts = []api.Attempt{{Attempt: 1, WorkerID: "w1", ClaimedAt: FixedNow, LeaseExpiresAt: FixedNow, FinishedAt: TP(FixedNow), Result: "FAILED_RETRYABLE", Error: "boom"}}
	s.Claimed = []api.Claimed{SampleClaimed()}
	s.HeartbeatAnswer = api.HeartbeatResult{LeaseExpiresAt: FixedNow, Superseded: true}
	st := SampleStatus()
	s.StatusAnswer = &st
	return s
}
