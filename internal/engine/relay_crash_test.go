//go:build faultinject

package engine

// The crash test of the relay: a child process (this test binary,
// re-executed) runs a node whose relay publishes a burst of firings to a
// NATS JetStream stream and SIGKILLs itself right after the stream
// accepted its first batch and before the acks (relay.after-send). A
// second child on the same file waits out the claims' lease and delivers
// everything again that was not acked, under the same occurrence ids. The
// parent then checks the at-least-once path end to end: every firing
// SUCCEEDED, the killed batch's firings sent twice (a second attempt),
// and the stream holding each occurrence id exactly once, the duplicate
// window having dropped the republished ones.
//
// Needs the NATS server at 127.0.0.1:4222 (skipped without it unless
// SCHED_TEST_NATS=require).
//
// Run: go test -tags faultinject -count=1 -run RelayCrash -v ./internal/engine/

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/target/kinds"
	"github.com/sched-dev/sched/internal/target/nats/natstest"
)

// The relay child's environment (besides SCHED_CRASH_CHILD, SCHED_CRASH_AT
// and crashEnvDB).
const (
	relayEnvChild   = "SCHED_RELAY_CHILD"   // set: run relayChild
	relayEnvSubject = "SCHED_RELAY_SUBJECT" // the stream's subject
	relayEnvAt      = "SCHED_RELAY_AT"      // the firings' instant, unix ms
)

const (
	relayCrashFirings = 300
	relayCrashLease   = 2 * time.Second // the relay's claim lease in the children
	relayCrashTarget  = "stream"
	relayCrashURL     = natstest.URL
)

// relayChild runs a node with its relay until every firing of the crash
// tenant SUCCEEDED; the first incarnation creates the target and the
// schedules.
func relayChild() error {
	ctx := context.Background()
	at, err := strconv.ParseInt(os.Getenv(relayEnvAt), 10, 64)
	if err != nil {
		return fmt.Errorf("%s: %w", relayEnvAt, err)
	}
	st, err := sqlite.Open(ctx, os.Getenv(crashEnvDB))
	if err != nil {
		return err
	}
	defer st.Close()
	pid := os.Getpid()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("pid", pid)
	e, err := New(ctx, Config{
		Store: st, Clock: clock.Real{}, Logger: logger, NodeID: fmt.Sprintf("node-%d", pid),
		Shards: crashShards, Tick: crashTick, Horizon: 10 * time.Second, ShardLease: crashShardLease,
		TargetKinds: kinds.New(kinds.Options{Name: "relay crash child"}), relayLease: relayCrashLease,
	})
	if err != nil {
		return err
	}
	if _, err := st.GetTarget(ctx, crashTenant, relayCrashTarget); errors.Is(err, store.ErrNotFound) {
		cfg, _ := json.Marshal(map[string]string{"subject": os.Getenv(relayEnvSubject), "url": relayCrashURL})
		if _, err := e.Targets.Create(ctx, crashTenant, relayCrashTarget, TargetSpec{Kind: record.TargetNATS, Config: cfg}); err != nil {
			return err
		}
		for i := range relayCrashFirings {
			s := atTarget(fmt.Sprintf("burst-%03d", i), relayCrashTarget, time.UnixMilli(at).UTC())
			if _, _, err := e.Control.Create(ctx, crashTenant, "", s); err != nil {
				return err
			}
		}
	} else if err != nil {
		return err
	}
	if err := e.Start(ctx); err != nil {
		return err
	}
	defer e.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		occs, err := st.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: crashTenant, Limit: store.MaxListLimit})
		if err != nil {
			return err
		}
		done := 0
		for _, o := range occs {
			if o.State == record.OccurrenceSucceeded {
				done++
			}
		}
		if done == relayCrashFirings {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("the firings were not all delivered within 30s")
}

func TestRelayCrashRepublishesUnderTheSameID(t *testing.T) {
	_, js := natstest.Connect(t)
	name := fmt.Sprintf("relay_crash_%d", time.Now().UnixNano())
	subject := name + ".fire"
	ctx := t.Context()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.DeleteStream(context.Background(), name) })

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sched.db")
	at := time.Now().Add(2 * time.Second).Truncate(time.Second)
	run := func(crashAt string) (killed bool) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, crashChildTimeout)
		defer cancel()
		cmd := exec.CommandContext(cctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "SCHED_CRASH_CHILD=1", relayEnvChild+"=1", crashEnvDB+"="+path,
			relayEnvSubject+"="+subject, relayEnvAt+"="+strconv.FormatInt(at.UnixMilli(), 10), "SCHED_CRASH_AT="+crashAt)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL &&
				strings.Contains(string(out), "faultinject: crashing at "+faultinject.RelayAfterSend) {
				return true
			}
		}
		if err != nil {
			t.Fatalf("child (crash at %q): %v\n%s", crashAt, err, out)
		}
		return false
	}
	if !run(faultinject.RelayAfterSend + ":1") {
		t.Fatal("the first child was not killed at relay.after-send")
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sentBeforeCrash := info.State.Msgs
	if sentBeforeCrash == 0 {
		t.Fatal("the stream holds nothing from the killed child's batch")
	}
	if run("") {
		t.Fatal("the second child was killed")
	}

	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	occs, err := st.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: crashTenant, Limit: store.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	twice := 0
	for _, o := range occs {
		if o.State != record.OccurrenceSucceeded {
			t.Errorf("%s is %s; want SUCCEEDED", o.OccurrenceID, o.State)
		}
		ids[o.OccurrenceID] = true
		if o.AttemptCount > 1 {
			twice++
		}
	}
	if len(occs) != relayCrashFirings {
		t.Fatalf("%d occurrences; want %d", len(occs), relayCrashFirings)
	}
	if uint64(twice) != sentBeforeCrash {
		t.Errorf("%d firings were sent a second time; want the %d the killed child had published", twice, sentBeforeCrash)
	}
	// The stream: each occurrence id once, none but ours.
	c, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	batch, err := c.FetchNoWait(relayCrashFirings + 50)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		seen[m.Headers().Get(natsio.MsgIdHdr)]++
	}
	if len(seen) != relayCrashFirings {
		t.Errorf("the stream holds %d distinct ids; want %d", len(seen), relayCrashFirings)
	}
	for id, n := range seen {
		if n != 1 || !ids[id] {
			t.Errorf("the stream holds %s %d times (ours: %v); want once", id, n, ids[id])
		}
	}
}
