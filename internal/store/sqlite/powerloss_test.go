package sqlite

// Power loss: a child process writes through a real Store to a database on
// a lazyfs mount (internal/lazyfs) and reports every write the store
// acknowledged; the test kills it with SIGKILL, drops every write that was
// not fsynced, as a power loss would, and opens the file again. With
// synchronous=FULL (the store's setting) every acknowledged write must be
// there. The control run, with synchronous=NORMAL, must lose some: without
// it the test could not tell FULL from NORMAL, as a kill -9 alone cannot
// (the kernel keeps a killed process's writes either way).

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/lazyfs"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// The child's environment.
const (
	powerLossEnvDB   = "SCHED_POWERLOSS_DB"   // the database file, on the lazyfs mount
	powerLossEnvSync = "SCHED_POWERLOSS_SYNC" // the synchronous pragma: FULL or NORMAL
)

const (
	powerLossTenant = "tenant-power"
	powerLossQueue  = "jobs"
	// powerLossWrites is how many enqueues the parent waits for before the
	// power goes.
	powerLossWrites = 150
)

var powerLossT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// powerLossChild is the child: it writes until it is killed, printing one
// line per acknowledged write ("schedule ID", "enqueued ID", "acked ID"),
// each after the call that made it durable returned.
func powerLossChild() int {
	ctx := context.Background()
	sync := os.Getenv(powerLossEnvSync)
	s, err := Open(ctx, os.Getenv(powerLossEnvDB), func(o *options) { o.synchronous = sync })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	say := func(kind, id string) {
		fmt.Fprintln(out, kind, id)
		out.Flush()
	}
	deadline := time.Now().Add(2 * time.Minute) // killed long before
	for i := 0; time.Now().Before(deadline); i++ {
		sc := storetest.NewSchedule(powerLossTenant, fmt.Sprintf("sch_power%06d", i))
		sc.Shard, sc.NextRunAt, sc.Queue, sc.OverlapPolicy = 0, powerLossT0, powerLossQueue, record.OverlapAllow
		sc.Name = sc.ScheduleID
		if err := s.InsertSchedule(ctx, sc); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		say("schedule", sc.ScheduleID)
		at := powerLossT0.Add(time.Duration(i) * time.Minute)
		occ := record.Occurrence{TenantID: powerLossTenant, ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
			ScheduledFor: at, AvailableAt: at, State: record.OccurrenceEnqueued, EnqueuedAt: at,
			Lane: record.LaneStrict, Queue: powerLossQueue}
		if _, err := s.InsertOccurrences(ctx, []record.Occurrence{occ}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		say("enqueued", record.OccurrenceID(sc.ScheduleID, sc.Version, at))
		if i%3 != 2 {
			continue
		}
		now := at.Add(time.Second)
		claimed, err := engine.ClaimOccurrences(ctx, s, store.ClaimParams{TenantID: powerLossTenant, Queue: powerLossQueue,
			WorkerID: "worker", Limit: 2, Lease: time.Minute, Now: now})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fs := make([]store.FinishParams, len(claimed))
		for j, c := range claimed {
			fs[j] = store.FinishParams{TenantID: powerLossTenant, OccurrenceID: c.Occurrence.OccurrenceID,
				Attempt: c.Attempt.Attempt, Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
		}
		res, err := s.FinishAttempts(ctx, fs)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for j, r := range res {
			if r.Err != nil {
				fmt.Fprintln(os.Stderr, r.Err)
				return 1
			}
			say("acked", fs[j].OccurrenceID)
		}
	}
	return 1
}

func TestPowerLoss(t *testing.T) {
	if err := lazyfs.Available(); err != nil {
		t.Skipf("no power loss without lazyfs: %v", err)
	}
	if testing.Short() {
		t.Skip("-short: the power-loss test runs child processes on a FUSE mount")
	}
	t.Run("FULL keeps every acknowledged write", func(t *testing.T) {
		for round := range 2 {
			lost, acked, undone := powerLossRound(t, "FULL")
			t.Logf("round %d: %d writes acknowledged, %d unsynced writes undone by the power loss", round, acked, undone)
			if len(lost) > 0 {
				t.Fatalf("round %d: %d of %d acknowledged writes lost with synchronous=FULL: %s",
					round, len(lost), acked, strings.Join(lost[:min(len(lost), 10)], "; "))
			}
			if undone == 0 {
				t.Errorf("round %d: the power loss undid no write: the test did not cut into unsynced data", round)
			}
		}
	})
	t.Run("NORMAL loses acknowledged writes (control)", func(t *testing.T) {
		// A checkpoint syncs the WAL now and then, so a power loss right
		// after one loses nothing; a few rounds make that unlikely.
		for round := range 3 {
			lost, acked, undone := powerLossRound(t, "NORMAL")
			t.Logf("round %d: %d of %d acknowledged writes lost (%d unsynced writes undone)", round, len(lost), acked, undone)
			if len(lost) > 0 {
				return
			}
		}
		t.Fatal("synchronous=NORMAL lost no acknowledged write in 3 power losses: the test cannot tell NORMAL from FULL")
	})
}

// powerLossRound runs a child on a fresh lazyfs mount with the given
// synchronous pragma, cuts the power after powerLossWrites enqueues, and
// returns the acknowledged writes the database lost, how many were
// acknowledged, and how many unsynced writes the power loss undid.
func powerLossRound(t *testing.T, sync string) (lost []string, acked, undone int) {
	t.Helper()
	backing, mnt := t.TempDir(), t.TempDir()
	fsys, err := lazyfs.Mount(backing, mnt)
	if err != nil {
		t.Fatal(err)
	}
	mounted := true
	defer func() {
		if mounted {
			fsys.Unmount()
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), powerLossEnvDB+"="+filepath.Join(mnt, "power.db"), powerLossEnvSync+"="+sync)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type write struct{ kind, id string }
	var writes []write
	enqueued := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		kind, id, _ := strings.Cut(sc.Text(), " ")
		writes = append(writes, write{kind, id})
		if kind == "enqueued" {
			enqueued++
			if enqueued == powerLossWrites {
				cmd.Process.Signal(syscall.SIGKILL) // lines already printed still count
			}
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child: want killed by SIGKILL after %d enqueues, got %v (%d enqueued); stderr:\n%s", powerLossWrites, err, enqueued, stderr.String())
	}
	mounted = false
	if undone, err = fsys.PowerLoss(); err != nil {
		t.Fatal(err)
	}

	// What the disk kept must open (quick_check passes) and hold every
	// acknowledged write.
	s, err := Open(t.Context(), filepath.Join(backing, "power.db"))
	if err != nil {
		t.Fatalf("open after the power loss: %v", err)
	}
	defer s.Close()
	for _, w := range writes {
		switch w.kind {
		case "schedule":
			if _, err := s.GetSchedule(t.Context(), powerLossTenant, w.id); err != nil {
				lost = append(lost, fmt.Sprintf("schedule %s: %v", w.id, err))
			}
		case "enqueued", "acked":
			o, err := s.GetOccurrence(t.Context(), powerLossTenant, w.id)
			switch {
			case err != nil:
				lost = append(lost, fmt.Sprintf("%s %s: %v", w.kind, w.id, err))
			case w.kind == "acked" && o.State != record.OccurrenceSucceeded:
				lost = append(lost, fmt.Sprintf("acked %s: %s", w.id, o.State))
			}
		default:
			t.Fatalf("child printed %q", w.kind+" "+w.id)
		}
	}
	return lost, len(writes), undone
}
