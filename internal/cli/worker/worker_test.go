package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// These run the worker's command handler on real processes: what CMD
// sees, and how its end becomes an ack or a nack. client.Worker's own
// tests cover claiming, heartbeats and draining.

func testJob() *client.Job {
	return &client.Job{Claimed: api.Claimed{
		OccurrenceID: "occ_7", ScheduleID: "sch_3", ScheduleVersion: 2, Attempt: 4, Queue: "reports",
		ScheduledFor: time.Date(2027, 3, 14, 9, 0, 0, 0, time.UTC), Payload: json.RawMessage(`{"n":1}`),
	}}
}

func runSh(t *testing.T, ctx, hard context.Context, script string, job *client.Job) (error, string, string) {
	t.Helper()
	opts := &WorkerOptions{Argv: []string{"sh", "-c", script}, PermanentCodes: map[int]bool{65: true, 78: true}, KillAfter: 2 * time.Second}
	var out, errb bytes.Buffer
	err := runCommand(ctx, hard, opts, job, &lockedWriter{w: &out}, &lockedWriter{w: &errb})
	return err, out.String(), errb.String()
}

func TestCommandSeesJob(t *testing.T) {
	err, out, _ := runSh(t, bg, bg, `echo "$SCHED_OCCURRENCE_ID $SCHED_SCHEDULE_ID $SCHED_SCHEDULE_VERSION $SCHED_SCHEDULED_FOR $SCHED_ATTEMPT $SCHED_QUEUE"; cat`, testJob())
	if err != nil {
		t.Fatal(err)
	}
	if want := "occ_7 sch_3 2 2027-03-14T09:00:00Z 4 reports\n{\"n\":1}"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	j := testJob()
	j.Payload = json.RawMessage("null")
	if err, out, _ := runSh(t, bg, bg, `cat; echo end`, j); err != nil || out != "end\n" {
		t.Errorf("null payload: %v %q", err, out)
	}
}

func TestCommandExitStatus(t *testing.T) {
	cases := []struct {
		script    string
		permanent bool
		want      string // "" for nil (ack)
	}{
		{"exit 0", false, ""},
		{"echo fine >&2; exit 0", false, ""},
		{"echo 'bad input: no customer' >&2; exit 65", true, "exit status 65: bad input: no customer"},
		{"exit 78", true, "exit status 78"},
		{"echo first >&2; echo 'upstream 503' >&2; exit 3", false, "exit status 3: first | upstream 503"},
		{"kill -KILL $$", false, "killed by signal killed"},
	}
	for _, tc := range cases {
		t.Run(tc.script, func(t *testing.T) {
			err, _, stderr := runSh(t, bg, bg, tc.script, testJob())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error %v, want an ack", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if client.IsPermanent(err) != tc.permanent {
				t.Errorf("permanent %v, want %v", client.IsPermanent(err), tc.permanent)
			}
			if strings.Contains(tc.script, ">&2") && !strings.Contains(stderr, "503") && !strings.Contains(stderr, "bad input") {
				t.Errorf("CMD's stderr did not reach the worker's: %q", stderr)
			}
		})
	}
}

func TestStderrTailIsBounded(t *testing.T) {
	err, _, _ := runSh(t, bg, bg, `i=0; while [ $i -lt 500 ]; do echo "line $i of noise" >&2; i=$((i+1)); done; echo 'the real reason' >&2; exit 1`, testJob())
	if err == nil || !strings.HasSuffix(err.Error(), "line 499 of noise | the real reason") || len(err.Error()) > stderrTail+50 {
		t.Fatalf("error (%d bytes) %q", len(err.Error()), err)
	}
	if strings.Contains(err.Error(), "line 1 of") {
		t.Error("the tail kept the head")
	}
}

// TestCommandStoppedBySupersede: when the handler's context ends (a
// heartbeat said superseded), CMD's process group gets SIGTERM; a CMD
// that finishes cleanly on it is still acked.
func TestCommandStoppedBySupersede(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "got-term")
	for _, tc := range []struct {
		name, script, want string
	}{
		{"dies", `trap 'echo term > ` + mark + `; exit 143' TERM; echo ready; while :; do sleep 0.05; done`, "exit status 143 after it was told to stop (the schedule was superseded by a newer version)"},
		{"finishes", `trap 'echo term > ` + mark + `; exit 0' TERM; echo ready; while :; do sleep 0.05; done`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(mark)
			ctx, cancel := context.WithCancelCause(bg)
			go func() {
				time.Sleep(300 * time.Millisecond)
				cancel(client.ErrSuperseded)
			}()
			start := time.Now()
			err, _, _ := runSh(t, ctx, bg, tc.script, testJob())
			// sh may add "Terminated" for its sleep: only the start is fixed.
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if _, serr := os.Stat(mark); serr != nil {
				t.Error("CMD did not get SIGTERM")
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("took %v: SIGKILL, not SIGTERM?", el)
			}
		})
	}
}

// TestCommandKilledAfterGrace: a CMD that ignores SIGTERM is killed after
// --kill-after, its children too.
func TestCommandKilledAfterGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	opts := &WorkerOptions{Argv: []string{"sh", "-c", `trap '' TERM; sleep 30 & wait; sleep 30`}, KillAfter: 300 * time.Millisecond}
	err := runCommand(ctx, bg, opts, testJob(), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "killed by signal killed") {
		t.Fatalf("error %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v", el)
	}
}

// TestHardStop: the second signal (hard) stops commands even though the
// handler's own context is fine.
func TestHardStop(t *testing.T) {
	hard, stop := context.WithCancel(bg)
	time.AfterFunc(200*time.Millisecond, stop)
	err, _, _ := runSh(t, bg, hard, `sleep 30`, testJob())
	if err == nil || client.IsPermanent(err) || !strings.Contains(err.Error(), "schedctl was told to stop") {
		t.Fatalf("error %v", err)
	}
}

func TestCommandCannotStart(t *testing.T) {
	opts := &WorkerOptions{Argv: []string{filepath.Join(t.TempDir(), "gone")}}
	err := runCommand(bg, bg, opts, testJob(), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || client.IsPermanent(err) || !strings.HasPrefix(err.Error(), "start ") {
		t.Fatalf("error %v", err)
	}
}

// TestWorkerSignals: the first signal drains (Run returns, exit 0), with
// a line saying so. schedd is unreachable here, so nothing is running.
func TestWorkerSignals(t *testing.T) {
	f, _, errOut := clitest.NewFactory(false)
	sigs := make(chan os.Signal, 1)
	opts := &WorkerOptions{IO: f, Ctx: bg, Queue: "q", WorkerID: "w", Concurrency: 1, Lease: time.Second, Wait: time.Second,
		Argv: []string{"true"}, Signals: sigs,
		Client: func() (*client.Client, error) { return client.New("tcp:127.0.0.1:1", "") }}
	done := make(chan error, 1)
	go func() { done <- workerRun(opts) }()
	time.Sleep(200 * time.Millisecond)
	sigs <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("workerRun: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the worker did not stop on a signal")
	}
	log := errOut.String()
	for _, want := range []string{"worker started", "claim failed; retrying", "draining", "worker stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
