package worker

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

var bg = context.Background()

// TestJSONFields pins the JSON field names of claim, heartbeat, ack and
// nack: scripts depend on them.
func TestJSONFields(t *testing.T) {
	clitest.CheckJSONFields(t, clitest.Seeded, []clitest.JSONCase{
		{Name: "claim", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return claimRun(&ClaimOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Request: api.ClaimRequest{Queue: "reports"}})
		}, Keys: []string{"attempt", "lease_expires_at", "occurrence_id", "payload", "queue", "schedule_id", "schedule_version", "scheduled_for", "tenant"}},
		{Name: "heartbeat", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return heartbeatRun(&HeartbeatOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, ID: "occ_01", Request: api.HeartbeatRequest{Attempt: 2}})
		}, Keys: []string{"canceled", "lease_expires_at", "superseded"}},
		{Name: "ack", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return ackRun(&AckOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, ID: "occ_01", Request: api.AckRequest{Attempt: 2}})
		}, Keys: clitest.OccurrenceKeys},
		{Name: "nack", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return nackRun(&NackOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, ID: "occ_01", Request: api.NackRequest{Attempt: 2, Class: "permanent"}})
		}, Keys: clitest.OccurrenceKeys},
	})
}

func TestQueueFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var cl *ClaimOptions
	if err := clitest.Exec(t, NewCmdClaim(f, func(o *ClaimOptions) error { cl = o; return nil }), "--queue", "q", "--lease", "2m", "--wait", "30s", "--worker-id", "w9"); err != nil {
		t.Fatal(err)
	}
	if want := (api.ClaimRequest{Queue: "q", WorkerID: "w9", Limit: 1, Lease: "2m0s", Wait: "30s"}); !reflect.DeepEqual(cl.Request, want) {
		t.Errorf("claim %+v, want %+v", cl.Request, want)
	}
	if err := clitest.Exec(t, NewCmdClaim(f, func(o *ClaimOptions) error { cl = o; return nil }), "--queue", "q"); err != nil ||
		cl.Request.Lease != "" || cl.Request.Wait != "" || cl.Request.WorkerID == "" {
		t.Errorf("claim defaults: %v %+v", err, cl.Request)
	}
	for _, tc := range []struct {
		cmd  *cobra.Command
		args []string
		want string
	}{
		{NewCmdClaim(f, func(*ClaimOptions) error { return nil }), nil, "--queue is required"},
		{NewCmdClaim(f, func(*ClaimOptions) error { return nil }), []string{"--queue", "q", "--wait", "6m"}, "--wait 6m0s: must be from 0 to 5m0s"},
		{NewCmdClaim(f, func(*ClaimOptions) error { return nil }), []string{"--queue", "q", "--lease", "10ms"}, "--lease 10ms: must be from 1s to 12h0m0s"},
		{NewCmdHeartbeat(f, func(*HeartbeatOptions) error { return nil }), []string{"occ_1"}, "--attempt is required"},
		{NewCmdAck(f, func(*AckOptions) error { return nil }), []string{"occ_1"}, "--attempt is required"},
		{NewCmdAck(f, func(*AckOptions) error { return nil }), []string{"occ_1", "--attempt", "0"}, "--attempt 0: must be at least 1"},
		{NewCmdNack(f, func(*NackOptions) error { return nil }), []string{"occ_1", "--attempt", "2"}, "--class is required"},
		{NewCmdNack(f, func(*NackOptions) error { return nil }), []string{"occ_1", "--attempt", "2", "--class", "fatal"}, `--class "fatal": want retryable or permanent`},
	} {
		clitest.WantErr(t, clitest.Exec(t, tc.cmd, tc.args...), tc.want, cmdutil.ExitInvalid)
	}
	var hb *HeartbeatOptions
	if err := clitest.Exec(t, NewCmdHeartbeat(f, func(o *HeartbeatOptions) error { hb = o; return nil }), "occ_1", "--attempt", "3", "--lease", "1m"); err != nil ||
		hb.ID != "occ_1" || hb.Request != (api.HeartbeatRequest{Attempt: 3, Lease: "1m0s"}) {
		t.Errorf("heartbeat %v %+v", err, hb)
	}
	var nk *NackOptions
	if err := clitest.Exec(t, NewCmdNack(f, func(o *NackOptions) error { nk = o; return nil }), "occ_1", "--attempt", "3", "--class", "permanent", "--error", "bad data"); err != nil ||
		nk.Request != (api.NackRequest{Attempt: 3, Class: "permanent", Error: "bad data"}) {
		t.Errorf("nack %v %+v", err, nk)
	}
}

func TestWorkerFlags(t *testing.T) {
	f, _, _ := clitest.NewFactory(false)
	var w *WorkerOptions
	err := clitest.Exec(t, NewCmdWorker(f, func(o *WorkerOptions) error { w = o; return nil }),
		"--queue", "q", "--concurrency", "4", "--lease", "1m", "--permanent-exit-codes", "65,78", "--", "sh", "-c", "exit 0", "--not-a-worker-flag")
	if err != nil {
		t.Fatal(err)
	}
	if w.Queue != "q" || w.Concurrency != 4 || w.Lease != time.Minute || w.Wait != 30*time.Second ||
		!reflect.DeepEqual(w.PermanentCodes, map[int]bool{65: true, 78: true}) ||
		!reflect.DeepEqual(w.Argv, []string{"sh", "-c", "exit 0", "--not-a-worker-flag"}) || w.WorkerID == "" {
		t.Errorf("options %+v", w)
	}
	// Without --, everything from CMD on is CMD's.
	if err := clitest.Exec(t, NewCmdWorker(f, func(o *WorkerOptions) error { w = o; return nil }), "--queue", "q", "ls", "-l"); err != nil ||
		!reflect.DeepEqual(w.Argv, []string{"ls", "-l"}) || !w.PermanentCodes[65] || len(w.PermanentCodes) != 1 {
		t.Errorf("%v %+v", err, w)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "true"}, "--queue is required"},
		{[]string{"--queue", "q", "--concurrency", "0", "--", "true"}, "--concurrency 0"},
		{[]string{"--queue", "q", "--permanent-exit-codes", "0", "--", "true"}, "0 is not an exit status from 1 to 255"},
		{[]string{"--queue", "q", "--permanent-exit-codes", "x", "--", "true"}, "invalid argument"},
		{[]string{"--queue", "q", "--", "/nonexistent/job.sh"}, `command "/nonexistent/job.sh"`},
		{[]string{"--queue", "q", "--wait", "10m", "--", "true"}, "--wait 10m0s"},
	} {
		err := clitest.Exec(t, NewCmdWorker(f, func(*WorkerOptions) error { return nil }), tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if err := clitest.Exec(t, NewCmdWorker(f, func(*WorkerOptions) error { return nil }), "--queue", "q"); err == nil || !strings.Contains(err.Error(), "give the command to run after --") {
		t.Errorf("no command: %v", err)
	}
}

func TestClaimNothing(t *testing.T) {
	s := clitest.NewStub()
	f, out, _ := clitest.NewFactory(false)
	err := claimRun(&ClaimOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true, Request: api.ClaimRequest{Queue: "q"}})
	if !errors.Is(err, errNothingToClaim) || cmdutil.ExitCode(err) != cmdutil.ExitFailure || out.Len() != 0 {
		t.Fatalf("%v %q", err, out)
	}
}

func TestHeartbeatSaysStop(t *testing.T) {
	f, out, _ := clitest.NewFactory(false)
	if err := heartbeatRun(&HeartbeatOptions{IO: f, API: clitest.APIOf(clitest.Seeded()), Ctx: bg, ID: "occ_01", Request: api.HeartbeatRequest{Attempt: 2}}); err != nil {
		t.Fatal(err)
	}
	if want := "lease until 2027-03-13T12:00:00Z; the schedule has a newer version: stop\n"; out.String() != want {
		t.Errorf("got %q", out)
	}
}

// TestStaleAttemptExitsOne: a stale attempt is a failure (1), and says so.
func TestStaleAttemptExitsOne(t *testing.T) {
	s := clitest.Seeded()
	s.Err = &client.Error{Status: 409, Code: api.CodeStaleAttempt, Message: "attempt 2 is not current (3)"}
	f, _, _ := clitest.NewFactory(false)
	err := ackRun(&AckOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, ID: "occ_01", Request: api.AckRequest{Attempt: 2}})
	clitest.WantErr(t, err, "ack occ_01 attempt 2: stale attempt: attempt 2 is not current (3)", cmdutil.ExitFailure)
}
