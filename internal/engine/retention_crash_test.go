//go:build faultinject

package engine

// The crash test of retention: a child process (this test binary,
// re-executed) runs a retention pass on a SQLite file and SIGKILLs itself
// at a crash point between its durable steps (the horizon written, a
// batch of deletes committed). After each crash the parent reopens the
// file and checks that it is consistent: no attempt without its
// occurrence, the horizon covering every row removed, nothing removed but
// finished, not DEAD rows before the cut, and the reconciler clean. A
// last child runs to the end.
//
// Run: go test -tags faultinject -count=1 -run RetentionCrash -v ./internal/engine/

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// The retention child's environment (besides SCHED_CRASH_CHILD and
// SCHED_CRASH_AT).
const (
	retentionEnvChild = "SCHED_RETENTION_CHILD" // set: run retentionChild
	retentionEnvNow   = "SCHED_RETENTION_NOW"   // the engine's clock, unix ms
	retentionBatchCh  = 5                       // the child's batch: many batches
)

// qForeignKeyCheck lists rows whose reference has no target (an attempt
// without its occurrence).
const qForeignKeyCheck = `PRAGMA foreign_key_check`

// retentionChild runs one retention pass on the file crashEnvDB at the
// clock retentionEnvNow.
func retentionChild() int {
	err := func() error {
		ctx := context.Background()
		ms, err := strconv.ParseInt(os.Getenv(retentionEnvNow), 10, 64)
		if err != nil {
			return err
		}
		st, err := sqlite.Open(ctx, os.Getenv(crashEnvDB))
		if err != nil {
			return err
		}
		defer st.Close()
		e, err := New(ctx, Config{Store: st, Clock: clock.NewVirtual(time.UnixMilli(ms).UTC()), Shards: 4, Horizon: time.Minute, NodeID: "retention-child"})
		if err != nil {
			return err
		}
		defer e.Stop()
		e.Retention.batch = retentionBatchCh
		_, err = e.Retention.Run(ctx)
		return err
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "retention child: %v\n", err)
		return 1
	}
	return 0
}

func TestRetentionCrash(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sched.db")
	start := utc("2027-01-01T00:00:00Z")
	clk := clock.NewVirtual(start)
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	h := harnessOn(t, st, path, clk, nil)
	h.create(every("work", "1h"))
	h.create(every("slow", "1h"))
	for i := range 9 * 24 {
		h.advance(time.Hour)
		for j, c := range h.claim("q", 10) {
			o := c.Occurrence
			var err error
			switch {
			case i%20 == 0 && j == 0:
				_, err = h.e.Queue.Nack(h.ctx, tenant, o.OccurrenceID, c.Attempt.Attempt, Permanent, "boom")
			case i%7 == 0 && j == 0:
				// A retryable failure first: an attempt archived in attempts.
				if _, err = h.e.Queue.Nack(h.ctx, tenant, o.OccurrenceID, c.Attempt.Attempt, Retryable, "later"); err == nil {
					h.clk.Advance(2 * time.Minute)
					for _, c2 := range h.claim("q", 10) {
						if _, err = h.e.Queue.Ack(h.ctx, tenant, c2.Occurrence.OccurrenceID, c2.Attempt.Attempt); err != nil {
							break
						}
					}
				}
			default:
				_, err = h.e.Queue.Ack(h.ctx, tenant, o.OccurrenceID, c.Attempt.Attempt)
			}
			if err != nil && !errors.Is(err, ErrStaleAttempt) {
				t.Fatal(err)
			}
		}
	}
	now := clk.Now()
	cut := now.Add(-DefaultRetention).Truncate(time.Second)
	before := listAll(t, h, tenant)
	h.e.Stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	run := func(crashAt string) (killed bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), crashChildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "SCHED_CRASH_CHILD=1", retentionEnvChild+"=1", crashEnvDB+"="+path,
			retentionEnvNow+"="+strconv.FormatInt(now.UnixMilli(), 10), "SCHED_CRASH_AT="+crashAt)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL &&
				strings.Contains(string(out), "faultinject: crashing at "+strings.Split(crashAt, ":")[0]) {
				return true
			}
		}
		if err != nil {
			t.Fatalf("child (SCHED_CRASH_AT=%q): %v\n%s", crashAt, err, out)
		}
		return false
	}
	check := func(stage string, done bool) {
		t.Helper()
		ctx := t.Context()
		s, err := sqlite.Open(ctx, path) // quick_check too
		if err != nil {
			t.Fatalf("%s: reopen: %v", stage, err)
		}
		defer s.Close()
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, qForeignKeyCheck)
		if err != nil {
			t.Fatal(err)
		}
		orphans := 0
		for rows.Next() {
			orphans++
		}
		rows.Close()
		if orphans != 0 {
			t.Errorf("%s: %d rows refer to a missing row", stage, orphans)
		}
		hs, err := s.HistoryHorizons(ctx)
		if err != nil {
			t.Fatal(err)
		}
		left := map[string]bool{}
		for _, o := range listOccurrences(t, s, tenant) {
			left[o.OccurrenceID] = true
		}
		removed, removable := 0, 0
		for _, o := range before {
			may := o.ScheduledFor.Before(cut) && !isOpenState(o.State) && o.State != record.OccurrenceDead
			if may {
				removable++
			}
			if left[o.OccurrenceID] {
				continue
			}
			removed++
			if !may {
				t.Errorf("%s: %s (%s at %s) removed", stage, o.OccurrenceID, o.State, o.ScheduledFor)
			}
			if h := hs[tenant]; o.ScheduledFor.Compare(h) >= 0 {
				t.Errorf("%s: %s at %s removed, not before the horizon %s", stage, o.OccurrenceID, o.ScheduledFor, h)
			}
		}
		if done && removed != removable {
			t.Errorf("%s: %d of %d removable rows removed", stage, removed, removable)
		}
		rep, err := reconcile.Report(ctx, s, reconcile.Options{From: start, To: now})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Problem {
			t.Errorf("%s: reconcile: %d absent, %d unexpected", stage, rep.Totals.Absent, rep.Totals.Unexpected)
		}
		t.Logf("%s: %d of %d removable rows removed, horizon %s", stage, removed, removable, hs[tenant])
	}
	for _, at := range []string{faultinject.RetentionAfterHorizon + ":1", faultinject.RetentionAfterBatch + ":3", faultinject.RetentionAfterBatch + ":7"} {
		if !run(at) {
			t.Fatalf("the child did not crash at %s", at)
		}
		check("after a crash at "+at, false)
	}
	if run("") {
		t.Fatal("a child without a crash point crashed")
	}
	check("after a whole pass", true)
}
