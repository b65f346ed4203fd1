//go:build faultinject

package engine

// The child side of the crash tests (crash_test.go): this test binary,
// re-executed with SCHED_CRASH_CHILD set, runs as one schedd node plus one
// worker on a SQLite file until SCHED_CRASH_UNTIL, drains, and exits 0 —
// unless SCHED_CRASH_AT makes it SIGKILL itself first.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

func init() { childMain = crashChildMain }

// The child's environment (besides SCHED_CRASH_CHILD and SCHED_CRASH_AT).
const (
	crashEnvDB    = "SCHED_CRASH_DB"    // the SQLite file
	crashEnvLog   = "SCHED_CRASH_LOG"   // the effect log, shared by every incarnation
	crashEnvUntil = "SCHED_CRASH_UNTIL" // run-until, unix milliseconds
	crashEnvNode  = "SCHED_CRASH_NODE"  // the node id; empty: node-<pid>, a new node per process
)

// Parameters shared by the parent and the child.
const (
	crashTenant = "crash-tenant"
	crashQueue  = "crash-q"
	crashShards = 4
	crashTick   = 100 * time.Millisecond
	// A dead node's shard lease outlives it by at least 2/3 of the lease
	// (renewals come every third), 2.7 s, while it materialized only a
	// horizon, 1 s, ahead: a new node, which must wait for the lease to
	// lapse, always finds firings whose time has passed unmaterialized
	// (the 1.7 s between always holds a whole second), so it has to
	// recover them from the durable cursor.
	crashHorizon    = time.Second
	crashShardLease = 4 * time.Second
	crashClaimLease = 2 * time.Second // a crashed claim is redelivered after this lease
	crashClaimWait  = 200 * time.Millisecond
	crashClaimLimit = 16
	// crashDrainFor bounds the drain after run-until; a child still
	// draining then exits 1 with what it was waiting for.
	crashDrainFor = 20 * time.Second
)

// crashEvent is one line of the effect log (JSON). The child writes an
// "effect" line before it acks (the worker's side effect: what a handler
// deduplicating on occurrence_id would see) and an "ack" line after.
type crashEvent struct {
	Ev       string `json:"ev"` // "start", "effect" or "ack"
	PID      int    `json:"pid"`
	Worker   string `json:"worker,omitempty"`
	Occ      string `json:"occ,omitempty"`
	Schedule string `json:"schedule,omitempty"`
	For      int64  `json:"for,omitempty"` // scheduled_for, unix seconds
	Attempt  int64  `json:"attempt,omitempty"`
	OK       bool   `json:"ok,omitempty"` // ack: accepted
	Err      string `json:"err,omitempty"`
	CrashAt  string `json:"crash_at,omitempty"` // start: SCHED_CRASH_AT
	At       int64  `json:"at"`                 // unix milliseconds
}

// crashLog appends events to the effect log, one write and one fsync per
// line: a SIGKILL lands between two system calls, so every line in the
// file is whole, and a line is in the file before the next step runs.
type crashLog struct{ f *os.File }

func (l *crashLog) write(ev crashEvent) error {
	ev.At = time.Now().UnixMilli()
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("effect log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("effect log: %w", err)
	}
	return nil
}

func crashChildMain() int {
	if os.Getenv(retentionEnvChild) != "" {
		return retentionChild() // retention_crash_test.go
	}
	if os.Getenv(relayEnvChild) != "" {
		if err := relayChild(); err != nil { // relay_crash_test.go
			fmt.Fprintf(os.Stderr, "relay child %d: %v\n", os.Getpid(), err)
			return 1
		}
		return 0
	}
	if err := crashChild(); err != nil {
		fmt.Fprintf(os.Stderr, "crash child %d: %v\n", os.Getpid(), err)
		return 1
	}
	return 0
}

func crashChild() error {
	ctx := context.Background()
	dbPath, logPath := os.Getenv(crashEnvDB), os.Getenv(crashEnvLog)
	untilMS, err := strconv.ParseInt(os.Getenv(crashEnvUntil), 10, 64)
	if dbPath == "" || logPath == "" || err != nil {
		return fmt.Errorf("need %s, %s and %s (unix ms)", crashEnvDB, crashEnvLog, crashEnvUntil)
	}
	until := time.UnixMilli(untilMS).UTC()
	pid := os.Getpid()
	node := os.Getenv(crashEnvNode)
	if node == "" {
		node = fmt.Sprintf("node-%d", pid)
	}
	worker := fmt.Sprintf("w-%d", pid)

	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	elog := &crashLog{f: f}
	if err := elog.write(crashEvent{Ev: "start", PID: pid, Worker: worker, CrashAt: os.Getenv("SCHED_CRASH_AT")}); err != nil {
		return err
	}

	st, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer st.Close()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e, err := New(ctx, Config{
		Store: st, Clock: clock.Real{}, Logger: logger.With("pid", pid), NodeID: node,
		Shards: crashShards, Tick: crashTick, Horizon: crashHorizon, ShardLease: crashShardLease,
	})
	if err != nil {
		return err
	}
	if err := e.Start(ctx); err != nil {
		return err
	}
	defer e.Stop() // before st.Close: defers run last first
	if mode := os.Getenv(crashEnvRuns); mode != "" {
		return runsChild(ctx, e, st, elog, pid, worker, until, runsMode(mode)) // runs_crash_test.go
	}

	planning := true
	for {
		now := time.Now()
		if now.After(until) {
			// Past run-until: keep the planner until every cursor is past
			// run-until (every firing at or before it is materialized),
			// then stop it and drain what is due at or before run-until.
			cursorsPast, done, waiting, err := crashDrainState(ctx, st, until)
			if err != nil {
				return err
			}
			if planning && cursorsPast {
				e.Stop()
				planning = false
			}
			if !planning && done {
				return nil
			}
			if now.After(until.Add(crashDrainFor)) {
				return fmt.Errorf("still not drained %s after run-until (planner running: %v): %s", crashDrainFor, planning, waiting)
			}
			if !planning {
				// The stopped planner no longer sweeps lapsed claim leases
				// (its pass does); the drain does that one job itself.
				if _, err := ExpireLeases(ctx, st, now.UTC().Truncate(time.Millisecond), 10_000); err != nil {
					return fmt.Errorf("expire leases: %w", err)
				}
			}
		}
		got, err := e.Queue.Claim(ctx, ClaimRequest{
			TenantID: crashTenant, Queue: crashQueue, WorkerID: worker,
			Limit: crashClaimLimit, Lease: crashClaimLease, Wait: crashClaimWait,
		})
		if err != nil {
			return err
		}
		for _, c := range got {
			o, a := &c.Occurrence, &c.Attempt
			if err := elog.write(crashEvent{
				Ev: "effect", PID: pid, Worker: worker, Occ: o.OccurrenceID, Schedule: o.ScheduleID,
				For: o.ScheduledFor.Unix(), Attempt: a.Attempt,
			}); err != nil {
				return err
			}
			faultinject.Crash(faultinject.WorkerAfterEffect)
			ev := crashEvent{Ev: "ack", PID: pid, Worker: worker, Occ: o.OccurrenceID, Schedule: o.ScheduleID,
				For: o.ScheduledFor.Unix(), Attempt: a.Attempt}
			acked, err := e.Queue.Ack(ctx, crashTenant, o.OccurrenceID, a.Attempt)
			switch {
			case err == nil && acked.State == record.OccurrenceSucceeded:
				ev.OK = true
			case err == nil:
				return fmt.Errorf("ack %s attempt %d: accepted but the occurrence is %s", o.OccurrenceID, a.Attempt, acked.State)
			case errors.Is(err, ErrStaleAttempt):
				ev.Err = err.Error() // refused: the lease ran out and a newer attempt owns it
			default:
				return err
			}
			if err := elog.write(ev); err != nil {
				return err
			}
		}
	}
}

// crashDrainState reads the tenant's schedules and occurrences: whether
// every ACTIVE schedule's cursor is past until, whether every occurrence
// scheduled at or before until is finished, and if not, what is waiting.
func crashDrainState(ctx context.Context, st store.Store, until time.Time) (cursorsPast, done bool, waiting string, err error) {
	scs, err := st.ListSchedules(ctx, store.ListSchedulesParams{TenantID: crashTenant, Limit: store.MaxListLimit})
	if err != nil {
		return false, false, "", fmt.Errorf("list schedules: %w", err)
	}
	cursorsPast, done = true, true
	var wait []string
	for _, sc := range scs {
		if sc.State == record.ScheduleActive && !sc.NextRunAt.After(until) {
			cursorsPast = false
			wait = append(wait, fmt.Sprintf("%s cursor %s", sc.Name, sc.NextRunAt.Format(time.RFC3339)))
		}
		occs, err := st.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: crashTenant, ScheduleID: sc.ScheduleID, Limit: store.MaxListLimit})
		if err != nil {
			return false, false, "", fmt.Errorf("list occurrences: %w", err)
		}
		for _, o := range occs {
			if !o.ScheduledFor.After(until) && !crashFinal(o.State) {
				done = false
				wait = append(wait, fmt.Sprintf("%s %s %s attempt %d", sc.Name, o.ScheduledFor.Format(time.RFC3339), o.State, o.AttemptCount))
			}
		}
	}
	return cursorsPast, done, strings.Join(wait, "; "), nil
}

// crashFinal reports whether an occurrence in state s is finished.
func crashFinal(s record.OccurrenceState) bool {
	switch s {
	case record.OccurrenceSucceeded, record.OccurrenceDead, record.OccurrenceMissed,
		record.OccurrenceCanceled, record.OccurrenceSkippedOverlap:
		return true
	}
	return false
}
