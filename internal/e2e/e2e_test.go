package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every test has its own schedd, so they all run in parallel.

// A 6-field cron firing every 2 s reaches a schedctl worker within 1 s of
// each firing, once per firing, under a stable occurrence id.
func TestCronEveryTwoSecondsReachesWorkerOnTime(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "tick", "--queue", "q1", "--cron", "*/2 * * * * *", "--tz", "UTC")
	if sc.Version != 1 || sc.State != "ACTIVE" || sc.Kind != "cron" || len(sc.Preview) != 5 {
		t.Fatalf("created %+v", sc)
	}
	for i := 1; i < len(sc.Preview); i++ {
		if got := sc.Preview[i].ScheduledFor.Sub(sc.Preview[i-1].ScheduledFor); got != 2*time.Second {
			t.Fatalf("preview firings %v apart, want 2s: %+v", got, sc.Preview)
		}
	}

	file := filepath.Join(d.dir, "deliveries")
	d.recordingWorker("worker", "q1", file)
	all := waitDeliveries(t, file, 3, "cron */2 s", nil)

	var maxLag time.Duration
	idFor := map[string]time.Time{} // occurrence id -> scheduled_for
	firingID := map[int64]string{}  // scheduled_for -> occurrence id
	var firings []int64             // distinct scheduled_for, unix seconds
	for _, v := range all {
		lag := v.clock.Sub(v.scheduledFor)
		if lag < 0 || lag >= time.Second {
			t.Errorf("%v: lag %v, want within [0, 1s)", v, lag)
		}
		maxLag = max(maxLag, lag)
		if v.scheduledFor.Unix()%2 != 0 {
			t.Errorf("%v: not on an even second", v)
		}
		if sf, ok := idFor[v.occ]; ok && !sf.Equal(v.scheduledFor) {
			t.Errorf("occurrence %s delivered for %s and for %s", v.occ, sf, v.scheduledFor)
		}
		idFor[v.occ] = v.scheduledFor
		s := v.scheduledFor.Unix()
		if id, ok := firingID[s]; ok && id != v.occ {
			t.Errorf("firing %s delivered under two ids: %s and %s", v.scheduledFor, id, v.occ)
		}
		if _, ok := firingID[s]; !ok {
			firings = append(firings, s)
		}
		firingID[s] = v.occ
	}
	slices.Sort(firings)
	if len(firings) < 3 {
		t.Errorf("%d distinct firings, want at least 3", len(firings))
	}
	for i := 1; i < len(firings); i++ {
		if firings[i]-firings[i-1] != 2 {
			t.Errorf("firings %d s apart, want 2 s", firings[i]-firings[i-1])
		}
	}
	t.Logf("%d deliveries of %d firings, largest lag %v", len(all), len(firings), maxLag)
	if t.Failed() {
		t.Logf("deliveries:%s", dump(all))
	}
}

// An at schedule fires exactly once: claimed when it is due, acked, and the
// schedule is COMPLETED with one SUCCEEDED occurrence.
func TestAtFiresOnceAndCompletes(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	at := time.Now().Add(3 * time.Second).Truncate(time.Second).UTC()
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "launch", "--queue", "q2", "--at", at.Format(time.RFC3339), "--payload", `{"campaign": "spring"}`)
	if sc.Kind != "at" || sc.State != "ACTIVE" || len(sc.Preview) != 1 || !sc.Preview[0].ScheduledFor.Equal(at) {
		t.Fatalf("created %+v, want one firing at %s", sc, at)
	}

	var c claimed
	d.ctlJSON(&c, "claim", "--queue", "q2", "--wait", "20s")
	if now := time.Now(); now.Before(at) {
		t.Errorf("claimed at %s, before the firing at %s", now, at)
	}
	if c.ScheduleID != sc.ScheduleID || !c.ScheduledFor.Equal(at) || c.Attempt != 1 || c.Payload != `{"campaign":"spring"}` ||
		!strings.HasPrefix(c.OccurrenceID, "occ_") || c.LeaseExpiresAt.IsZero() {
		t.Fatalf("claimed %+v", c)
	}
	var acked occurrence
	d.ctlJSON(&acked, "ack", c.OccurrenceID, "--attempt", "1")
	if acked.OccurrenceID != c.OccurrenceID || acked.State != "SUCCEEDED" {
		t.Fatalf("ack answered %v", acked)
	}

	if got := d.get("launch"); got.State != "COMPLETED" || got.NextRunAt != nil || got.ScheduleID != sc.ScheduleID {
		t.Errorf("after the firing: state %s, next_run_at %v; want COMPLETED, null", got.State, got.NextRunAt)
	}
	occs := d.occurrences(sc.ScheduleID)
	if len(occs) != 1 || occs[0].OccurrenceID != c.OccurrenceID || occs[0].State != "SUCCEEDED" || occs[0].AttemptCount != 1 ||
		!occs[0].ScheduledFor.Equal(at) {
		t.Fatalf("occurrences, want one SUCCEEDED at %s:%s", at, dump(occs))
	}
	// Nothing else on the queue: it fired once.
	if r := d.ctl("claim", "--queue", "q2", "--wait", "1s"); r.code != 1 || !strings.Contains(r.stderr, "nothing to claim") {
		t.Fatalf("a second claim: %s", r)
	}
}

// pause stops new firings (beyond the one a worker may already hold), and
// resume restarts them under the schedule's new version, from after the
// resume: firings missed while paused are not made up.
func TestPauseStopsFiringsAndResumeRestarts(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "beat", "--queue", "q3", "--every", "1s")
	file := filepath.Join(d.dir, "deliveries")
	d.recordingWorker("worker", "q3", file)
	waitDeliveries(t, file, 2, "before the pause", nil)

	var paused changeResult
	d.ctlJSON(&paused, "pause", "beat")
	pausedAt := time.Now()
	if paused.Schedule.State != "PAUSED" || paused.Schedule.Version != 2 {
		t.Fatalf("pause answered %+v", paused)
	}
	// The default horizon (1 min) put the next firings on the queue ahead.
	if canceled, inFlight := paused.counts(t); canceled == 0 || inFlight > 1 {
		t.Errorf("pause: canceled %d, in flight %d; want some canceled, at most 1 in flight", canceled, inFlight)
	}
	before := len(readDeliveries(t, file))
	holds(t, 3*time.Second, "paused", func() string {
		all := readDeliveries(t, file)
		late := all[before:]
		if len(late) > 1 {
			return fmt.Sprintf("%d deliveries after the pause, want at most the 1 in flight:%s", len(late), dump(late))
		}
		for _, v := range late {
			if v.scheduledFor.After(pausedAt) {
				return fmt.Sprintf("delivered %v, a firing after the pause at %s", v, pausedAt.Format(time.RFC3339Nano))
			}
		}
		return ""
	})
	if got := d.get("beat"); got.State != "PAUSED" || got.Version != 2 || len(got.Preview) != 0 {
		t.Errorf("paused schedule: %+v", got)
	}
	for _, o := range d.occurrences(sc.ScheduleID) {
		if o.State == "ENQUEUED" || o.State == "SCHEDULED" {
			t.Errorf("still on the queue while paused: %v", o)
		}
	}

	resumeFrom := time.Now()
	var resumed changeResult
	d.ctlJSON(&resumed, "resume", "beat")
	v := resumed.Schedule.Version
	if resumed.Schedule.State != "ACTIVE" || v != 3 {
		t.Fatalf("resume answered %+v, want ACTIVE version 3", resumed)
	}
	all := waitDeliveries(t, file, 2, "after the resume, version 3", func(x delivery) bool { return x.version == v })
	for _, x := range all {
		switch {
		case x.version == v && !x.scheduledFor.After(resumeFrom):
			t.Errorf("%v: the resumed version fired for a time before the resume (%s)", x, resumeFrom.Format(time.RFC3339Nano))
		case x.version != v && x.version != 1:
			t.Errorf("%v: version %d, want 1 (before the pause) or %d", x, x.version, v)
		case x.scheduledFor.After(pausedAt) && !x.scheduledFor.After(resumeFrom):
			t.Errorf("%v: a firing of the paused span was delivered", x)
		}
	}
	if t.Failed() {
		t.Logf("deliveries:%s", dump(all))
	}
}

// update bumps the version, cancels the old version's unclaimed
// occurrences (enqueued ahead by a long horizon), and the new version's
// occurrences carry the new payload.
func TestUpdateBumpsVersionAndCancelsUnclaimed(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, "--horizon", "2m")
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "sync", "--queue", "q4", "--every", "2s", "--payload", `{"v":1}`)
	var enqueued int
	poll(t, "the planner to enqueue version 1 ahead", func() (bool, string) {
		enqueued = 0
		occs := d.occurrences(sc.ScheduleID)
		for _, o := range occs {
			if o.ScheduleVersion == 1 && o.State == "ENQUEUED" {
				enqueued++
			}
		}
		return enqueued >= 10, dump(occs)
	})

	updateFrom := time.Now()
	var up changeResult
	d.ctlJSON(&up, "update", sc.ScheduleID, "--payload", `{"v":2}`)
	if up.Schedule.Version != 2 || up.Schedule.State != "ACTIVE" || up.Schedule.Payload != `{"v":2}` {
		t.Fatalf("update answered %+v", up)
	}
	canceled, inFlight := up.counts(t)
	if canceled < enqueued || inFlight != 0 {
		t.Errorf("update: canceled %d, in flight %d; want at least the %d enqueued, none in flight", canceled, inFlight, enqueued)
	}

	var occs []occurrence
	poll(t, "version 2 on the queue", func() (bool, string) {
		occs = d.occurrences(sc.ScheduleID)
		n := 0
		for _, o := range occs {
			if o.ScheduleVersion == 2 && o.State == "ENQUEUED" {
				n++
			}
		}
		return n >= 10, dump(occs)
	})
	v1 := 0
	states := map[int64]map[int64]string{1: {}, 2: {}} // version -> unix second -> state
	for _, o := range occs {
		states[o.ScheduleVersion][o.ScheduledFor.Unix()] = o.State
		switch o.ScheduleVersion {
		case 1:
			v1++
			if o.State != "CANCELED" {
				t.Errorf("version 1 after the update: %v, want CANCELED", o)
			}
		case 2:
			if !o.ScheduledFor.After(updateFrom) || o.ScheduledFor.Unix()%2 != 0 {
				t.Errorf("version 2: %v, want an even second after the update (%s)", o, updateFrom.Format(time.RFC3339Nano))
			}
		default:
			t.Errorf("unexpected version: %v", o)
		}
	}
	if v1 != canceled {
		t.Errorf("%d version-1 occurrences CANCELED, update said %d", v1, canceled)
	}
	for s := range states[2] {
		if st, ok := states[1][s]; ok && st != "CANCELED" {
			t.Errorf("the firing at %d runs under versions 1 (%s) and 2", s, st)
		}
	}
	if t.Failed() {
		t.Logf("occurrences:%s", dump(occs))
	}

	// What a worker gets now is version 2, with the new payload.
	var c claimed
	d.ctlJSON(&c, "claim", "--queue", "q4", "--wait", "10s")
	if c.ScheduleVersion != 2 || c.Payload != `{"v":2}` {
		t.Fatalf("claimed after the update: %+v", c)
	}
	d.ctlJSON(nil, "ack", c.OccurrenceID, "--attempt", strconv.FormatInt(c.Attempt, 10))
}

// cancel ends the schedule: CANCELED, the counts in the answer, and no
// further deliveries.
func TestCancelEndsDeliveries(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "doomed", "--queue", "q5", "--every", "1s")
	file := filepath.Join(d.dir, "deliveries")
	d.recordingWorker("worker", "q5", file)
	waitDeliveries(t, file, 2, "before the cancel", nil)

	var res changeResult
	r := d.ctlJSON(&res, "cancel", "doomed")
	canceledAt := time.Now()
	if canceled, inFlight := res.counts(t); res.Schedule.State != "CANCELED" || res.Schedule.Version != 2 || canceled == 0 || inFlight > 1 {
		t.Fatalf("cancel answered %s", r.stdout)
	}

	before := len(readDeliveries(t, file))
	holds(t, 3*time.Second, "canceled", func() string {
		late := readDeliveries(t, file)[before:]
		if len(late) > 1 {
			return fmt.Sprintf("%d deliveries after the cancel, want at most the 1 in flight:%s", len(late), dump(late))
		}
		for _, v := range late {
			if v.scheduledFor.After(canceledAt) {
				return fmt.Sprintf("delivered %v, a firing after the cancel", v)
			}
		}
		return ""
	})
	if got := d.get(sc.ScheduleID); got.State != "CANCELED" || got.NextRunAt != nil || len(got.Preview) != 0 {
		t.Errorf("canceled schedule: %+v", got)
	}
	poll(t, "no occurrence left on the queue or running", func() (bool, string) {
		occs := d.occurrences(sc.ScheduleID)
		for _, o := range occs {
			switch o.State {
			case "SCHEDULED", "ENQUEUED", "RETRY_WAIT", "RUNNING":
				return false, dump(occs)
			}
		}
		return true, ""
	})
	// Canceling again changes nothing.
	var again changeResult
	d.ctlJSON(&again, "cancel", sc.ScheduleID)
	if canceled, _ := again.counts(t); again.Schedule.Version != 2 || canceled != 0 {
		t.Errorf("second cancel: version %d, canceled %d; want 2, 0", again.Schedule.Version, canceled)
	}
	var list []schedule
	d.ctlJSON(&list, "list", "--state", "CANCELED")
	if len(list) != 1 || list[0].ScheduleID != sc.ScheduleID {
		t.Errorf("list --state CANCELED: %+v", list)
	}
}

// A permanent failure (exit 65) goes to the DLQ; replay puts it back and a
// worker that succeeds gets the same occurrence id, attempt 2.
func TestPermanentFailureGoesToDLQAndReplayDeliversSameID(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	at := time.Now().Add(3 * time.Second).Truncate(time.Second).UTC()
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "fragile", "--queue", "q6", "--at", at.Format(time.RFC3339))

	failed := filepath.Join(d.dir, "failed")
	failing := d.worker("failing worker", "--queue", "q6", "--", "sh", "-c", recordCmd+"\nexit 65", "sh", failed)
	first := waitDeliveries(t, failed, 1, "the failing delivery", nil)[0]
	var dead []occurrence
	poll(t, "the occurrence in the DLQ", func() (bool, string) {
		dead = nil
		r := d.ctlJSON(&dead, "dlq", "list", "--queue", "q6")
		return len(dead) > 0, r.stdout
	})
	if len(dead) != 1 || dead[0].OccurrenceID != first.occ || dead[0].State != "DEAD" || dead[0].AttemptCount != 1 {
		t.Fatalf("dlq list:%s\nwant %s DEAD after 1 attempt", dump(dead), first.occ)
	}
	if code, _ := failing.signal(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("the failing worker exited %d after SIGTERM, want 0 (drain)", code)
	}
	var atts []attempt
	d.ctlJSON(&atts, "attempts", first.occ)
	if len(atts) != 1 || atts[0].Result != "FAILED_PERMANENT" || !strings.Contains(atts[0].Error, "exit status 65") {
		t.Fatalf("attempts after the failure: %+v", atts)
	}

	var rep occurrence
	d.ctlJSON(&rep, "dlq", "replay", first.occ)
	if rep.OccurrenceID != first.occ || rep.State != "ENQUEUED" {
		t.Fatalf("replay answered %v", rep)
	}
	ok := filepath.Join(d.dir, "ok")
	d.recordingWorker("succeeding worker", "q6", ok)
	second := waitDeliveries(t, ok, 1, "the replayed delivery", nil)[0]
	if second.occ != first.occ || second.attempt != 2 || !second.scheduledFor.Equal(at) {
		t.Fatalf("after the replay the worker got %v, want %s attempt 2", second, first.occ)
	}
	poll(t, "the replayed occurrence SUCCEEDED", func() (bool, string) {
		occs := d.occurrences(sc.ScheduleID)
		return len(occs) == 1 && occs[0].State == "SUCCEEDED" && occs[0].AttemptCount == 2, dump(occs)
	})
	d.ctlJSON(&atts, "attempts", first.occ)
	if len(atts) != 2 || atts[0].Result != "FAILED_PERMANENT" || atts[1].Attempt != 2 || atts[1].Result != "SUCCEEDED" {
		t.Errorf("attempts: %+v", atts)
	}
	dead = nil
	d.ctlJSON(&dead, "dlq", "list")
	if len(dead) != 0 {
		t.Errorf("dlq list after the replay:%s", dump(dead))
	}
}

// A worker killed with SIGKILL while its command runs: the occurrence is
// delivered again, same id, attempt 2, once the lease has run out.
func TestKilledWorkersOccurrenceIsRedeliveredAfterLease(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	at := time.Now().Add(3 * time.Second).Truncate(time.Second).UTC()
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "victim", "--queue", "q7", "--at", at.Format(time.RFC3339))

	// The command records its pid (the leader of its own process group) and
	// hangs on the first attempt.
	marker := filepath.Join(d.dir, "marker")
	const script = `printf '%s %s %s\n' "$$" "$SCHED_OCCURRENCE_ID" "$SCHED_ATTEMPT" >> "$1"; if [ "$SCHED_ATTEMPT" = 1 ]; then exec sleep 60; fi`
	type mark struct {
		pid     int
		occ     string
		attempt int
	}
	readMarks := func() []mark {
		raw, _ := os.ReadFile(marker)
		var ms []mark
		for _, l := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(l); len(f) == 3 {
				pid, _ := strconv.Atoi(f[0])
				a, _ := strconv.Atoi(f[2])
				ms = append(ms, mark{pid, f[1], a})
			}
		}
		return ms
	}
	w1 := d.worker("worker 1", "--queue", "q7", "--lease", "2s", "--", "sh", "-c", script, "sh", marker)
	var first mark
	poll(t, "the first delivery's marker", func() (bool, string) {
		ms := readMarks()
		if len(ms) > 0 {
			first = ms[0]
		}
		return len(ms) > 0, fmt.Sprint(ms)
	})
	if first.attempt != 1 || first.pid <= 1 {
		t.Fatalf("first marker %+v", first)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			syscall.Kill(-first.pid, syscall.SIGKILL)
		}
	})
	// The worker first, so that it cannot report its command's death.
	w1.signal(t, syscall.SIGKILL, 5*time.Second)
	if err := syscall.Kill(-first.pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the command's process group %d: %v", first.pid, err)
	}
	killed = true
	killedAt := time.Now()

	d.worker("worker 2", "--queue", "q7", "--", "sh", "-c", script, "sh", marker)
	var ms []mark
	poll(t, "the redelivery", func() (bool, string) {
		ms = readMarks()
		return len(ms) >= 2, fmt.Sprint(ms)
	})
	if len(ms) != 2 || ms[1].occ != first.occ || ms[1].attempt != 2 {
		t.Fatalf("deliveries %+v, want %s again with attempt 2", ms, first.occ)
	}
	poll(t, "the redelivered occurrence SUCCEEDED", func() (bool, string) {
		occs := d.occurrences(sc.ScheduleID)
		return len(occs) == 1 && occs[0].State == "SUCCEEDED" && occs[0].AttemptCount == 2, dump(occs)
	})
	var atts []attempt
	d.ctlJSON(&atts, "attempts", first.occ)
	if len(atts) != 2 || atts[0].Attempt != 1 || atts[0].Result != "LEASE_EXPIRED" || atts[1].Attempt != 2 || atts[1].Result != "SUCCEEDED" {
		t.Fatalf("attempts: %+v, want LEASE_EXPIRED then SUCCEEDED", atts)
	}
	if atts[1].ClaimedAt.Before(atts[0].LeaseExpiresAt) {
		t.Errorf("attempt 2 claimed at %s, before attempt 1's lease ran out at %s", atts[1].ClaimedAt, atts[0].LeaseExpiresAt)
	}
	t.Logf("redelivered %v after the kill, %v after the lease ran out", atts[1].ClaimedAt.Sub(killedAt),
		atts[1].ClaimedAt.Sub(atts[0].LeaseExpiresAt))
}

// apply creates the schedules of a file; applying it again changes nothing;
// changing one field bumps only that schedule's version.
func TestApplyTwiceIsANoOp(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	const file1 = `schedules:
  - name: hourly-sync
    queue: sync
    every: 1h
    max_attempts: 5
  - name: nightly-report
    queue: reports
    cron: "0 2 * * *"
    time_zone: Europe/Berlin
    payload: {format: pdf}
  - name: launch
    queue: mail
    at: 2099-03-14T09:00:00-04:00
`
	file := filepath.Join(d.dir, "schedules.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type planned struct {
		Name       string `json:"name"`
		Action     string `json:"action"`
		ScheduleID string `json:"schedule_id"`
		Version    int64  `json:"version"`
		Changes    []struct {
			Field string `json:"field"`
		} `json:"changes"`
	}
	names := []string{"hourly-sync", "nightly-report", "launch"}
	// check runs apply or diff and compares each schedule's action and
	// version with want (name -> "action version").
	ids := map[string]string{}
	check := func(cmd string, wantCode int, want map[string]string) []planned {
		t.Helper()
		r := d.ctl(cmd, "-f", file)
		if r.code != wantCode {
			t.Fatalf("%s: want exit %d", r, wantCode)
		}
		var plan []planned
		if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil || len(plan) != len(names) {
			t.Fatalf("%s: want a JSON array of %d: %v", r, len(names), err)
		}
		for i, p := range plan {
			if p.Name != names[i] || fmt.Sprintf("%s %d", p.Action, p.Version) != want[p.Name] {
				t.Errorf("%s %s: %s %d, want %s", cmd, p.Name, p.Action, p.Version, want[p.Name])
			}
			if id, ok := ids[p.Name]; ok && id != p.ScheduleID {
				t.Errorf("%s %s: schedule id %s, was %s", cmd, p.Name, p.ScheduleID, id)
			}
			ids[p.Name] = p.ScheduleID
		}
		return plan
	}
	versions := func(want map[string]int64) {
		t.Helper()
		var list []schedule
		d.ctlJSON(&list, "list")
		got := map[string]int64{}
		for _, sc := range list {
			got[sc.Name] = sc.Version
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("schedd's versions %v, want %v", got, want)
		}
	}

	write(file1)
	check("apply", 0, map[string]string{"hourly-sync": "created 1", "nightly-report": "created 1", "launch": "created 1"})
	versions(map[string]int64{"hourly-sync": 1, "nightly-report": 1, "launch": 1})

	unchanged := map[string]string{"hourly-sync": "unchanged 1", "nightly-report": "unchanged 1", "launch": "unchanged 1"}
	check("apply", 0, unchanged)
	versions(map[string]int64{"hourly-sync": 1, "nightly-report": 1, "launch": 1})
	check("diff", 0, map[string]string{"hourly-sync": "none 1", "nightly-report": "none 1", "launch": "none 1"})
	if r := d.ctl("diff", "-f", file, "-o", "table"); r.code != 0 || !strings.HasPrefix(r.stdout, "No changes") {
		t.Errorf("diff of an applied file: %s", r)
	}

	// One field of one schedule.
	write(strings.Replace(file1, "{format: pdf}", "{format: html}", 1))
	plan := check("diff", 1, map[string]string{"hourly-sync": "none 1", "nightly-report": "update 1", "launch": "none 1"})
	if ch := plan[1].Changes; len(ch) != 1 || ch[0].Field != "payload" {
		t.Errorf("diff of nightly-report: changes %+v, want payload only", ch)
	}
	check("apply", 0, map[string]string{"hourly-sync": "unchanged 1", "nightly-report": "updated 2", "launch": "unchanged 1"})
	versions(map[string]int64{"hourly-sync": 1, "nightly-report": 2, "launch": 1})
	if sc := d.get("nightly-report"); sc.Payload != `{"format":"html"}` {
		t.Errorf("nightly-report's payload %s", sc.Payload)
	}
	check("apply", 0, map[string]string{"hourly-sync": "unchanged 1", "nightly-report": "unchanged 2", "launch": "unchanged 1"})
	versions(map[string]int64{"hourly-sync": 1, "nightly-report": 2, "launch": 1})
}

// SIGTERM stops schedd cleanly (exit 0 within a few seconds) while a worker
// runs a command; restarted on the same store and socket after a firing
// went by, it goes on, and every firing of a 1-s schedule from the first
// delivery on has exactly one SUCCEEDED occurrence: nothing lost across the
// restart, neither the occurrence in flight nor the firings of the downtime.
func TestSIGTERMAndRestartLoseNothing(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "pulse", "--queue", "q9", "--every", "1s")
	file := filepath.Join(d.dir, "deliveries")
	// The command records the delivery, then works for half a second, so
	// the SIGTERM lands while it runs. A short lease: an ack lost to the
	// shutdown is delivered again soon.
	w := d.worker("worker", "--queue", "q9", "--lease", "3s", "--concurrency", "2",
		"--", "sh", "-c", recordCmd+"\nsleep 0.5", "sh", file)
	n := len(waitDeliveries(t, file, 3, "before the SIGTERM", nil))
	waitDeliveries(t, file, n+1, "a command to start", nil)

	code, took := d.proc.signal(t, syscall.SIGTERM, 10*time.Second)
	if code != 0 || took > 5*time.Second {
		t.Fatalf("schedd after SIGTERM: exit %d after %v, want 0 within 5s", code, took)
	}
	if log := d.log.String(); !strings.Contains(log, "schedd stopped") {
		t.Errorf("no clean stop in the log")
	}
	// Stay down until a firing has gone by unserved (a condition on the
	// clock, not a synchronization).
	down := time.Now()
	missed := down.Truncate(time.Second).Add(time.Second)
	poll(t, "a firing to go by while schedd is down", func() (bool, string) {
		return time.Now().After(missed.Add(200 * time.Millisecond)), ""
	})
	d.start()
	restarted := time.Now()
	t.Logf("SIGTERM: exit 0 after %v; down from %s to %s", took,
		down.UTC().Format("15:04:05.000"), restarted.UTC().Format("15:04:05.000"))
	all := waitDeliveries(t, file, 3, "after the restart", func(v delivery) bool { return v.scheduledFor.After(restarted) })

	// Expected firings, by plain arithmetic: every 1 s counts from the Unix
	// epoch, so every whole second from the first delivery to the last one
	// seen now (the worker goes on meanwhile).
	first, last := all[0].scheduledFor.Unix(), all[0].scheduledFor.Unix()
	for _, v := range all {
		first, last = min(first, v.scheduledFor.Unix()), max(last, v.scheduledFor.Unix())
	}
	if missed.Unix() < first || missed.Unix() > last {
		t.Fatalf("the firing of the downtime (%s) is not between the first and last delivery", missed.UTC().Format(time.RFC3339))
	}
	span := fmt.Sprintf("%d firings from %s to %s", last-first+1,
		time.Unix(first, 0).UTC().Format(time.TimeOnly), time.Unix(last, 0).UTC().Format(time.TimeOnly))
	// Each delivered, and SUCCEEDED once (an ack lost in the shutdown is
	// delivered again after the worker's 3 s lease: wait for it).
	poll(t, "every firing delivered and SUCCEEDED", func() (bool, string) {
		all = readDeliveries(t, file)
		delivered := map[int64]bool{}
		for _, v := range all {
			delivered[v.scheduledFor.Unix()] = true
		}
		bySecond := map[int64][]occurrence{}
		for _, o := range d.occurrences(sc.ScheduleID) {
			bySecond[o.ScheduledFor.Unix()] = append(bySecond[o.ScheduledFor.Unix()], o)
		}
		var bad []string
		for s := first; s <= last; s++ {
			got := bySecond[s]
			if !delivered[s] || len(got) != 1 || got[0].State != "SUCCEEDED" || got[0].ScheduleVersion != 1 {
				bad = append(bad, fmt.Sprintf("%s: delivered %v, %v", time.Unix(s, 0).UTC().Format(time.TimeOnly), delivered[s], got))
			}
		}
		return len(bad) == 0, span + ", not each delivered and SUCCEEDED once: " + strings.Join(bad, "; ")
	})
	redelivered := 0
	for _, v := range all {
		if v.attempt > 1 {
			redelivered++
		}
	}
	t.Logf("%s, %d deliveries (%d redeliveries)", span, len(all), redelivered)
	if code, _ := w.signal(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("worker exited %d after SIGTERM, want 0", code)
	}
	if t.Failed() {
		t.Logf("deliveries:%s", dump(all))
	}
}

// A stale attempt number is refused: exit 1, one line that says stale; the
// current one is accepted.
func TestStaleAckRefused(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	d.ctlJSON(nil, "create", "--name", "fenced", "--queue", "q10", "--every", "1s")
	var c claimed
	d.ctlJSON(&c, "claim", "--queue", "q10", "--wait", "10s")
	if c.Attempt != 1 {
		t.Fatalf("claimed %+v", c)
	}
	for _, args := range [][]string{
		{"ack", c.OccurrenceID, "--attempt", "99"},
		{"heartbeat", c.OccurrenceID, "--attempt", "99"},
		{"nack", c.OccurrenceID, "--attempt", "99", "--class", "retryable"},
	} {
		r := d.ctl(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "stale") {
			t.Errorf("%s: want exit 1 saying stale", r)
		}
		oneLine(t, r)
	}
	var acked occurrence
	d.ctlJSON(&acked, "ack", c.OccurrenceID, "--attempt", "1")
	if acked.State != "SUCCEEDED" {
		t.Fatalf("ack of the current attempt: %v", acked)
	}
	d.ctlJSON(nil, "ack", c.OccurrenceID, "--attempt", "1") // again: harmless
}

// Invalid input exits 2 with one line on stderr, against a running daemon,
// and creates nothing.
func TestInvalidCronExitsTwo(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	r := d.ctl("create", "--name", "bad", "--queue", "q11", "--cron", "61 * * * *", "--tz", "UTC")
	if r.code != 2 || !strings.Contains(r.stderr, "61") {
		t.Errorf("%s: want exit 2 naming the field", r)
	}
	oneLine(t, r)
	var list []schedule
	d.ctlJSON(&list, "list")
	if len(list) != 0 {
		t.Errorf("schedules after a refused create: %+v", list)
	}
}
