//go:build faultinject

package engine

// Crash-point tests: no firing lost or doubled across crashes of the
// planner, a killed worker's work redelivered, and a short crash loop. A real
// process — this test binary re-executed as a child, see crashchild_test.go
// — runs the planner and a worker on a SQLite file and SIGKILLs itself at a
// crash point; then it is restarted on the same file, runs until run-until
// and drains. The parent then checks
//
//   - RECON: the firings each schedule should have produced, recomputed
//     without the planner or the time engine, against the stored
//     occurrences: no gap, no phantom, one row per (schedule, version,
//     scheduled_for), every firing up to run-until SUCCEEDED;
//   - DELIV: the workers' effect log: one occurrence_id per (schedule,
//     scheduled_for), duplicates only under that id (and counted), attempt
//     numbers increasing, one accepted ack per occurrence, matching the
//     attempts table.
//
// Run: go test -tags faultinject -race -count=1 -run Crash -v ./internal/engine/

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

const (
	// crashRunFor is how long after the schedules are created the last
	// child runs before it drains: long enough for the first child to
	// crash, and for the restarted one (a new node) to wait out the dead
	// node's shard leases (crashShardLease) and catch up.
	crashRunFor = 9 * time.Second
	// crashChildTimeout bounds one child process.
	crashChildTimeout = 45 * time.Second
	// crashKolkata is a zone with a fixed offset (+05:30, no DST since
	// 1945), so a brute-force walk of its wall clock is the whole oracle.
	crashKolkata = "Asia/Kolkata"
)

// crashCases are the crash points and the hit that kills. The hits are
// chosen so that the crash lands after some work is done (the planner
// commits a few batches a second, the worker claims several times a
// second) but well before run-until.
var crashCases = []struct {
	point string
	n     int
}{
	{faultinject.PlanBeforeInsert, 8},
	{faultinject.PlanAfterCommit, 8},
	{faultinject.PlanAfterEnqueue, 8},
	{faultinject.ClaimAfterCommit, 6},
	{faultinject.WorkerAfterEffect, 3},
	{faultinject.LeaseRenew, 6}, // 4 shards taken at start, so the 6th is a renewal, ShardLease/3 in
}

func TestCrashPoints(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SCHED_CRASH_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SCHED_CRASH_SEED=%q: %v", s, err)
		}
	}
	t.Logf("parameters: shards %d, tick %s, horizon %s, shard lease %s, claim lease %s, claim limit %d, run for %s; crash loop seed %d (replay with SCHED_CRASH_SEED=%d)",
		crashShards, crashTick, crashHorizon, crashShardLease, crashClaimLease, crashClaimLimit, crashRunFor, seed, seed)

	// The scenarios run at once, each in its own goroutine, and the
	// subtests below then check what each left behind. They spend their
	// time waiting on child processes and the wall clock (about 0.25 of a
	// core each), and t.Parallel would run only GOMAXPROCS of them at a
	// time. Setup stays in this goroutine, where t may fail.
	type scenario struct {
		name string
		r    *crashRun
		run  func(r *crashRun) error
		err  error
	}
	var scenarios []*scenario
	for _, c := range crashCases {
		// Every process is a new node (node-<pid>): the restarted one must
		// wait for the dead one's shard leases to lapse and take them with
		// a new epoch.
		crashAt := fmt.Sprintf("%s:%d", c.point, c.n)
		scenarios = append(scenarios, &scenario{name: c.point, r: newCrashRun(t, exe, ""), run: func(r *crashRun) error {
			if _, err := r.child(crashAt, crashWantKill); err != nil {
				return err
			}
			_, err := r.child("", crashWantExit0)
			return err
		}})
	}
	// A small crash loop, faster than the schedules: each
	// incarnation killed at a random point after a random number of hits,
	// restarted under the same node id (a daemon restarted with its
	// configuration), then one clean run. The RECON check against the
	// oracle is exact, so every loop must leave the same occurrence set.
	scenarios = append(scenarios, &scenario{name: "loop", r: newCrashRun(t, exe, "node-restarted"), run: func(r *crashRun) error {
		rng := rand.New(rand.NewPCG(seed, 0))
		for i := 0; i < 20 && time.Until(r.until) > time.Second; i++ {
			c := crashCases[rng.IntN(len(crashCases))]
			exited0, err := r.child(fmt.Sprintf("%s:%d", c.point, 1+rng.IntN(7)), crashWantEither)
			if err != nil {
				return err
			}
			if exited0 {
				break // it ran to the end without reaching its crash point
			}
		}
		_, err := r.child("", crashWantExit0)
		return err
	}})

	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range scenarios {
		wg.Go(func() { s.err = s.run(s.r) })
	}
	wg.Wait()
	t.Logf("%d scenarios ran in %s", len(scenarios), time.Since(start).Round(time.Millisecond))

	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			for _, line := range s.r.logs {
				t.Log(line)
			}
			if s.err != nil {
				t.Fatal(s.err)
			}
			s.r.check(t, s.name)
		})
	}
}

// crashSchedule is one schedule of a run and its oracle.
type crashSchedule struct {
	name      string
	id        string
	createdAt time.Time
	cursor0   time.Time // the first cursor, as Create set it
	// fires is the oracle: whether the schedule fires at unix second u.
	fires func(u int64) bool
}

// crashRun is one database and effect log, shared by the processes that
// run on it one after another.
type crashRun struct {
	exe, db, log, node string
	until              time.Time
	schedules          []crashSchedule
	flex               map[string]time.Duration // schedule id -> flexible window
	killed             map[string]bool          // worker ids of the processes that were SIGKILLed
	children           int
	logs               []string // what the children did, for the subtest's log
	env                []string // more of the children's environment (runs_crash_test.go)
}

func newCrashRun(t *testing.T, exe, node string) *crashRun {
	t.Helper()
	dir := t.TempDir()
	r := &crashRun{exe: exe, db: filepath.Join(dir, "sched.db"), log: filepath.Join(dir, "effects.log"), node: node,
		killed: map[string]bool{}, flex: map[string]time.Duration{}}

	ctx := t.Context()
	st, err := sqlite.Open(ctx, r.db)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	// The store holds a lock on the file: close it before a child opens it.
	defer st.Close()
	e, err := New(ctx, Config{Store: st, Clock: clock.Real{}, Shards: crashShards, NodeID: "setup"})
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}

	kolkata, err := time.LoadLocation(crashKolkata)
	if err != nil {
		t.Fatalf("load %s: %v", crashKolkata, err)
	}
	now := time.Now()
	h1 := now.In(kolkata).Hour()
	h2 := (h1 + 1) % 24 // the run may cross the hour
	flexAnchor := now.Unix() - 10
	if flexAnchor%2 == 0 {
		flexAnchor-- // odd seconds: not the cron's even ones
	}

	// The oracles. Firings are whole unix seconds; each oracle is plain
	// arithmetic or a walk of the wall clock, not the planner's code path
	// nor internal/timetable:
	//   - every 1s (anchor zero = the Unix epoch) is elapsed time: every
	//     unix second fires; every 2s from an odd anchor fires on the odd
	//     seconds from the anchor on. No zone is involved.
	//   - a seconds-field cron in UTC: wall time is unix time, and */2
	//     divides 60, so it fires exactly on even unix seconds.
	//   - the zoned cron fires when the Kolkata wall clock (time.In, the
	//     tz database) reads an even second in hour h1 or h2. A cron that
	//     ignored the zone would not fire at all (those hours are 5:30
	//     away in UTC), so a zone bug shows up as a gap.
	specs := []struct {
		req   schedule.Settings
		fires func(u int64) bool
	}{
		{schedule.Settings{Name: "every-1s-a", Kind: timetable.KindEvery, Expr: "1s"}, func(int64) bool { return true }},
		{schedule.Settings{Name: "every-1s-b", Kind: timetable.KindEvery, Expr: "1s"}, func(int64) bool { return true }},
		{schedule.Settings{Name: "cron-2s-utc", Kind: timetable.KindCron, Expr: "*/2 * * * * *", TimeZone: "UTC"}, func(u int64) bool { return u%2 == 0 }},
		{schedule.Settings{Name: "cron-2s-kolkata", Kind: timetable.KindCron, Expr: fmt.Sprintf("*/2 * %d,%d * * *", h1, h2), TimeZone: crashKolkata},
			func(u int64) bool {
				w := time.Unix(u, 0).In(kolkata)
				return w.Second()%2 == 0 && (w.Hour() == h1 || w.Hour() == h2)
			}},
		{schedule.Settings{Name: "every-2s-flex-3s", Kind: timetable.KindEvery, Expr: "2s", Anchor: time.Unix(flexAnchor, 0).UTC(), FlexibleWindow: 3 * time.Second},
			func(u int64) bool { return u >= flexAnchor && (u-flexAnchor)%2 == 0 }},
	}
	for _, s := range specs {
		s.req.Queue = crashQueue
		sc, _, err := e.Control.Create(ctx, crashTenant, "", s.req)
		if err != nil {
			t.Fatalf("create %s: %v", s.req.Name, err)
		}
		r.flex[sc.ScheduleID] = sc.FlexibleWindow
		r.schedules = append(r.schedules, crashSchedule{name: sc.Name, id: sc.ScheduleID, createdAt: sc.CreatedAt, cursor0: sc.NextRunAt, fires: s.fires})
	}
	// Half past a second, so no firing sits on the boundary.
	r.until = time.Now().Add(crashRunFor).Truncate(time.Second).Add(500 * time.Millisecond).UTC()
	t.Logf("db %s; run until %s; kolkata hours %d,%d; flex anchor %d", r.db, r.until.Format(time.RFC3339Nano), h1, h2, flexAnchor)
	return r
}

type crashWant int

const (
	crashWantKill   crashWant = iota // SIGKILLed by its crash point
	crashWantExit0                   // ran until run-until, drained, exit 0
	crashWantEither                  // the crash loop: either of those
)

// child runs one process on the run's database and waits for it. It
// reports whether the process exited 0, and an error when the process did
// not end as wanted. It runs outside the test goroutine: it logs to r.logs.
func (r *crashRun) child(crashAt string, want crashWant) (exited0 bool, _ error) {
	ctx, cancel := context.WithTimeout(context.Background(), crashChildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), // later entries win over inherited ones
		"SCHED_CRASH_CHILD=1",
		crashEnvDB+"="+r.db,
		crashEnvLog+"="+r.log,
		crashEnvUntil+"="+strconv.FormatInt(r.until.UnixMilli(), 10),
		crashEnvNode+"="+r.node,
		"SCHED_CRASH_AT="+crashAt,
	)
	cmd.Env = append(cmd.Env, r.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("start child: %w", err)
	}
	r.children++
	pid := cmd.Process.Pid
	err := cmd.Wait()
	took := time.Since(start).Round(time.Millisecond)

	var ee *exec.ExitError
	killed := false
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killed = true
		}
	}
	crashed := killed && ctx.Err() == nil && strings.Contains(out.String(), "faultinject: crashing at "+crashAt+"\n")
	if killed {
		r.killed[fmt.Sprintf("w-%d", pid)] = true
	}
	status := "exit 0"
	if err != nil {
		status = err.Error()
	}
	cpu := time.Duration(0)
	if ps := cmd.ProcessState; ps != nil {
		cpu = (ps.UserTime() + ps.SystemTime()).Round(time.Millisecond)
	}
	r.logs = append(r.logs, fmt.Sprintf("child %d (SCHED_CRASH_AT=%q): %s after %s (cpu %s)", pid, crashAt, status, took, cpu))
	switch {
	case ctx.Err() != nil:
		return false, fmt.Errorf("child %d (SCHED_CRASH_AT=%q) did not finish within %s; output:\n%s", pid, crashAt, crashChildTimeout, out.String())
	case crashed && want != crashWantExit0:
		return false, nil
	case err == nil && want != crashWantKill:
		return true, nil
	case want == crashWantKill && err == nil:
		return false, fmt.Errorf("child %d never reached crash point %s: it ran to run-until and exited 0 (pick a smaller hit count); output:\n%s", pid, crashAt, out.String())
	}
	return false, fmt.Errorf("child %d (SCHED_CRASH_AT=%q): want %s, got %s (SIGKILL by the crash point: %v); output:\n%s",
		pid, crashAt, map[crashWant]string{crashWantKill: "a SIGKILL at the crash point", crashWantExit0: "exit 0", crashWantEither: "exit 0 or a SIGKILL at the crash point"}[want],
		status, crashed, out.String())
}

// check runs RECON and DELIV on the run's database and effect log, after
// the last child has drained and exited.
func (r *crashRun) check(t *testing.T, point string) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, r.db)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer st.Close()
	events := r.readLog(t)

	// RECON.
	until := r.until.Unix() // every firing at or before this second must be delivered
	stored := map[string]record.Occurrence{}
	nExpected, recovered := 0, 0
	for _, s := range r.schedules {
		sc, err := st.GetSchedule(ctx, crashTenant, s.id)
		if err != nil {
			t.Fatalf("get %s: %v", s.name, err)
		}
		if sc.State != record.ScheduleActive || sc.Version != 1 {
			t.Errorf("%s: state %s version %d, want ACTIVE version 1", s.name, sc.State, sc.Version)
		}
		cursor := sc.NextRunAt
		if cursor.Unix() <= until {
			t.Errorf("%s: cursor %s is not past run-until %s: firings were not all materialized", s.name, cursor.Format(time.RFC3339), r.until.Format(time.RFC3339))
		}
		// The expected firings: the oracle's seconds after creation
		// (Create starts the cursor strictly after its time) and before
		// the final cursor (everything before the cursor is materialized,
		// nothing from it on).
		expected := map[int64]bool{}
		var first int64
		for u := s.createdAt.Unix() + 1; u < cursor.Unix(); u++ {
			if s.fires(u) {
				if first == 0 {
					first = u
				}
				expected[u] = true
			}
		}
		if first != 0 && first != s.cursor0.Unix() {
			t.Errorf("%s: the oracle's first firing is %d, Create set the cursor to %d (%s)", s.name, first, s.cursor0.Unix(), s.cursor0.Format(time.RFC3339))
		}
		nExpected += len(expected)

		occs, err := st.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: crashTenant, ScheduleID: s.id, Limit: store.MaxListLimit})
		if err != nil {
			t.Fatalf("list occurrences of %s: %v", s.name, err)
		}
		if len(occs) == store.MaxListLimit {
			t.Fatalf("%s: %d occurrences, the list limit: the check would be partial", s.name, len(occs))
		}
		rows := map[[2]int64]int{} // (version, scheduled_for) -> rows
		got := map[int64]bool{}
		var phantom, gap, badState []string
		for _, o := range occs {
			f := o.ScheduledFor.Unix()
			rows[[2]int64{o.ScheduleVersion, f}]++
			got[f] = true
			stored[o.OccurrenceID] = o
			if o.EnqueuedAt.After(o.ScheduledFor) {
				recovered++ // materialized after its time: from the durable cursor, after a downtime
			}
			if !expected[f] {
				phantom = append(phantom, crashFmt(f))
			}
			if o.ScheduleVersion != 1 {
				t.Errorf("%s: occurrence %s has version %d, want 1", s.name, o.OccurrenceID, o.ScheduleVersion)
			}
			if !o.ScheduledFor.Equal(o.ScheduledFor.Truncate(time.Second)) {
				t.Errorf("%s: occurrence %s scheduled_for %s is not a whole second", s.name, o.OccurrenceID, o.ScheduledFor.Format(time.RFC3339Nano))
			}
			if want := record.OccurrenceID(s.id, o.ScheduleVersion, o.ScheduledFor); o.OccurrenceID != want {
				t.Errorf("%s %s: occurrence_id %s, but the derived id is %s", s.name, crashFmt(f), o.OccurrenceID, want)
			}
			switch {
			case f <= until && o.State != record.OccurrenceSucceeded:
				// Drained: nothing due at or before run-until is pending,
				// and nothing here is late enough (max_lateness 60 s) to
				// be MISSED.
				badState = append(badState, fmt.Sprintf("%s %s", crashFmt(f), o.State))
			case f > until && !crashFinalOrPending(o.State):
				badState = append(badState, fmt.Sprintf("%s %s", crashFmt(f), o.State))
			}
		}
		for f := range expected {
			if !got[f] {
				gap = append(gap, crashFmt(f))
			}
		}
		for k, n := range rows {
			if n != 1 {
				t.Errorf("%s: %d rows for version %d at %s, want exactly one", s.name, n, k[0], crashFmt(k[1]))
			}
		}
		slices.Sort(gap)
		slices.Sort(phantom)
		if len(gap) > 0 {
			t.Errorf("RECON %s: gap (expected, not stored): %v", s.name, gap)
		}
		if len(phantom) > 0 {
			t.Errorf("RECON %s: phantom (stored, not expected): %v", s.name, phantom)
		}
		if len(badState) > 0 {
			t.Errorf("RECON %s: occurrences in the wrong state (up to run-until must be SUCCEEDED, later ones finished or pending): %v", s.name, badState)
		}
	}

	// DELIV: the effect log.
	type delivery struct {
		effects  []crashEvent // in log order, which is time order: the processes ran one at a time
		accepted []crashEvent
		refused  map[int64]bool // attempts whose ack was refused as stale
	}
	byOcc := map[string]*delivery{}
	idsByKey := map[string]map[string]bool{} // schedule_id@scheduled_for -> occurrence ids
	nEffects := 0
	for _, ev := range events {
		if ev.Ev != "effect" && ev.Ev != "ack" {
			continue
		}
		d := byOcc[ev.Occ]
		if d == nil {
			d = &delivery{refused: map[int64]bool{}}
			byOcc[ev.Occ] = d
		}
		key := fmt.Sprintf("%s@%s", ev.Schedule, crashFmt(ev.For))
		if idsByKey[key] == nil {
			idsByKey[key] = map[string]bool{}
		}
		idsByKey[key][ev.Occ] = true
		switch {
		case ev.Ev == "effect":
			nEffects++
			if n := len(d.effects); n > 0 && ev.Attempt <= d.effects[n-1].Attempt {
				t.Errorf("DELIV %s: attempt %d (pid %d) delivered after attempt %d (pid %d): attempts must increase",
					ev.Occ, ev.Attempt, ev.PID, d.effects[n-1].Attempt, d.effects[n-1].PID)
			}
			d.effects = append(d.effects, ev)
		case ev.OK:
			d.accepted = append(d.accepted, ev)
		default:
			d.refused[ev.Attempt] = true
		}
	}
	for key, ids := range idsByKey {
		if len(ids) != 1 {
			t.Errorf("DELIV %s was delivered under %d occurrence ids: %v", key, len(ids), slices.Sorted(maps.Keys(ids)))
		}
	}

	dups, expired, stale, lostAckLines := 0, 0, 0, 0
	var redelivered []string // occurrences whose effect ran, was not acked, and ran again
	for id, d := range byOcc {
		o, ok := stored[id]
		if !ok {
			t.Errorf("DELIV: delivered %s, which is not a stored occurrence of these schedules", id)
			continue
		}
		for _, ev := range d.effects {
			if ev.Schedule != o.ScheduleID || ev.For != o.ScheduledFor.Unix() {
				t.Errorf("DELIV %s: delivered as %s@%s, stored as %s@%s", id, ev.Schedule, crashFmt(ev.For), o.ScheduleID, crashFmt(o.ScheduledFor.Unix()))
			}
		}
		dups += max(len(d.effects)-1, 0)
		stale += len(d.refused)
	}
	for id, o := range stored {
		if o.State != record.OccurrenceSucceeded {
			continue
		}
		d := byOcc[id]
		if d == nil {
			t.Errorf("DELIV %s (%s) is SUCCEEDED but no worker ran its effect", id, crashFmt(o.ScheduledFor.Unix()))
			continue
		}
		atts, err := st.ListAttempts(ctx, store.ListAttemptsParams{TenantID: crashTenant, OccurrenceID: id, Limit: store.MaxListLimit})
		if err != nil {
			t.Fatalf("list attempts of %s: %v", id, err)
		}
		slices.SortFunc(atts, func(a, b record.Attempt) int { return int(a.Attempt - b.Attempt) })
		if len(atts) == 0 || int(atts[len(atts)-1].Attempt) != len(atts) || o.AttemptCount != len(atts) {
			t.Errorf("DELIV %s: attempts %v, attempt_count %d: want 1..attempt_count", id, crashAttemptNums(atts), o.AttemptCount)
			continue
		}
		// Never delivered early. The stored available_at moves on when a
		// lease lapses (the occurrence is available again from then), so
		// the first claim is held to the original one: scheduled_for, plus
		// the flexible offset for a flexible schedule.
		avail := o.ScheduledFor
		if w := r.flex[o.ScheduleID]; w > 0 {
			avail = avail.Add(flexOffset(id, w))
		}
		if first := atts[0]; first.ClaimedAt.Before(avail) {
			t.Errorf("DELIV %s: first claimed at %s, before it was available at %s", id, first.ClaimedAt.Format(time.RFC3339Nano), avail.Format(time.RFC3339Nano))
		}
		last := atts[len(atts)-1]
		for i, a := range atts[:len(atts)-1] {
			if a.Result != record.ResultLeaseExpired {
				t.Errorf("DELIV %s: attempt %d ended %q, want LEASE_EXPIRED (only the last attempt succeeds; workers never nack)", id, a.Attempt, a.Result)
				continue
			}
			expired++
			if !r.killed[a.WorkerID] && !d.refused[a.Attempt] {
				t.Errorf("DELIV %s: attempt %d of live worker %s expired, and no refused ack was logged for it", id, a.Attempt, a.WorkerID)
			}
			if next := atts[i+1]; next.ClaimedAt.Before(a.LeaseExpiresAt) {
				t.Errorf("DELIV %s: attempt %d claimed at %s, before attempt %d's lease ran out at %s",
					id, next.Attempt, next.ClaimedAt.Format(time.RFC3339Nano), a.Attempt, a.LeaseExpiresAt.Format(time.RFC3339Nano))
			}
		}
		if last.Result != record.ResultSucceeded {
			t.Errorf("DELIV %s: last attempt %d ended %q, want SUCCEEDED", id, last.Attempt, last.Result)
		}
		if !slices.ContainsFunc(d.effects, func(ev crashEvent) bool { return ev.Attempt == last.Attempt }) {
			t.Errorf("DELIV %s: attempt %d succeeded without its effect in the log", id, last.Attempt)
		}
		// Exactly one accepted ack: the store's (one SUCCEEDED attempt,
		// checked above), and the log agrees. A process SIGKILLed from
		// another goroutine (a planner crash point) between a committed
		// ack and its log line loses only the line.
		switch {
		case len(d.accepted) > 1:
			t.Errorf("DELIV %s: %d accepted acks logged, want one", id, len(d.accepted))
		case len(d.accepted) == 1 && d.accepted[0].Attempt != last.Attempt:
			t.Errorf("DELIV %s: the accepted ack was for attempt %d, the store's SUCCEEDED attempt is %d", id, d.accepted[0].Attempt, last.Attempt)
		case len(d.accepted) == 0 && !r.killed[last.WorkerID]:
			t.Errorf("DELIV %s: SUCCEEDED by attempt %d of live worker %s, but no accepted ack logged", id, last.Attempt, last.WorkerID)
		case len(d.accepted) == 0:
			lostAckLines++
		}
		// An effect of a killed worker that was never acked must come
		// again after the lease, with a higher attempt and the same id.
		for _, ev := range d.effects {
			if !r.killed[ev.Worker] || ev.Attempt == last.Attempt {
				continue
			}
			if ev.Attempt < 1 || ev.Attempt > int64(len(atts)) {
				t.Errorf("DELIV %s: delivered as attempt %d, the store has attempts %v", id, ev.Attempt, crashAttemptNums(atts))
				continue
			}
			if a := atts[ev.Attempt-1]; a.Result == record.ResultLeaseExpired {
				redelivered = append(redelivered, fmt.Sprintf("%s attempt %d (pid %d) -> %d", id, ev.Attempt, ev.PID, last.Attempt))
			}
		}
	}
	slices.Sort(redelivered)

	if r.node == "" && len(r.killed) > 0 && recovered == 0 {
		// A new node waits out the dead one's shard leases, longer than
		// the horizon ahead the dead one had materialized, so some firing
		// must have been materialized after its time. None was: the
		// restart did not exercise recovery from the cursor.
		t.Errorf("%s: no occurrence was enqueued after its scheduled time: the restart never had to recover from the durable cursor", point)
	}
	t.Logf("%s: %d processes (%d SIGKILLed); RECON %d schedules, %d expected firings, %d stored rows (%d enqueued after their time, recovered from the cursor); DELIV %d deliveries of %d occurrences: %d duplicates (all under the same id), %d LEASE_EXPIRED attempts, %d stale acks refused, %d ack lines lost to a kill",
		point, r.children, len(r.killed), len(r.schedules), nExpected, len(stored), recovered, nEffects, len(byOcc), dups, expired, stale, lostAckLines)
	if len(redelivered) > 0 {
		t.Logf("%s: redelivered after a killed worker's effect: %v", point, redelivered)
	}
	if point == faultinject.WorkerAfterEffect {
		if dups == 0 {
			t.Errorf("%s: no duplicate delivery: the killed worker's effect was never redelivered", point)
		}
		if len(redelivered) == 0 {
			t.Errorf("%s: no occurrence has an effect of the killed worker, a LEASE_EXPIRED attempt and a later delivery", point)
		}
	}

	// The reconciler, which shares none of the planner's code, agrees:
	// every firing from the first creation to run-until is explained.
	from := r.until
	for _, s := range r.schedules {
		if s.createdAt.Before(from) {
			from = s.createdAt
		}
	}
	rep, err := reconcile.Report(ctx, st, reconcile.Options{From: from, To: r.until})
	if err != nil {
		t.Fatalf("%s: reconcile: %v", point, err)
	}
	if rep.Problem || rep.Totals.Succeeded == 0 {
		t.Errorf("%s: reconcile: totals %+v, absent %+v, unexpected %+v", point, rep.Totals, rep.Absent, rep.Unexpected)
	}
}

// readLog parses the effect log.
func (r *crashRun) readLog(t *testing.T) []crashEvent {
	t.Helper()
	f, err := os.Open(r.log)
	if err != nil {
		t.Fatalf("effect log: %v", err)
	}
	defer f.Close()
	var evs []crashEvent
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var ev crashEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("effect log line %d %q: %v", line, sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("effect log: %v", err)
	}
	return evs
}

// crashFinalOrPending: the states RECON allows for a firing after
// run-until, which the drain does not wait for.
func crashFinalOrPending(s record.OccurrenceState) bool {
	switch s {
	case record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRunning, record.OccurrenceRetryWait:
		return true
	}
	return crashFinal(s)
}

func crashFmt(u int64) string { return time.Unix(u, 0).UTC().Format(time.RFC3339) }

func crashAttemptNums(atts []record.Attempt) []int64 {
	n := make([]int64, len(atts))
	for i, a := range atts {
		n[i] = a.Attempt
	}
	return n
}
