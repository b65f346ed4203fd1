package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

const (
	jobsQueue = "jobs"
	testLease = 30 * time.Second
)

func testQueue(t *testing.T, open func(t *testing.T) Store) {
	t.Run("ClaimLaneOrder", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := queueSchedule(t, s, "tenant-a", "sch_lanes", record.OverlapAllow)
		names := insertReady(t, s, sc, []readySpec{
			{"strict 5", 5, record.LaneStrict},
			{"strict 1", 1, record.LaneStrict},
			{"flexible 0", 0, record.LaneFlexible},
			{"catchup 2", 2, record.LaneCatchUp},
			{"flexible 3", 3, record.LaneFlexible},
			{"strict 10", 10, record.LaneStrict}, // not yet available
			{"catchup -1", -1, record.LaneCatchUp},
		})
		now := at(6 * time.Minute)
		for _, tc := range []struct {
			limit int
			want  []string
		}{
			{2, []string{"strict 1", "strict 5"}},
			{3, []string{"flexible 0", "flexible 3", "catchup -1"}},
			{10, []string{"catchup 2"}},
			{10, []string{}},
		} {
			got := mustClaim(t, s, "tenant-a", tc.limit, now)
			if n := claimNames(got, names); fmt.Sprint(n) != fmt.Sprint(tc.want) {
				t.Errorf("claim %d: %v, want %v", tc.limit, n, tc.want)
			}
		}
		got := mustClaim(t, s, "tenant-a", 10, at(10*time.Minute))
		if n := claimNames(got, names); fmt.Sprint(n) != "[strict 10]" {
			t.Errorf("claim at 10 min: %v, want [strict 10]", n)
		}
	})

	t.Run("ClaimAvailability", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := queueSchedule(t, s, "tenant-a", "sch_avail", record.OverlapAllow)
		mail := NewSchedule("tenant-a", "sch_mail")
		mail.Queue, mail.OverlapPolicy = "mail", record.OverlapAllow
		mustInsertSchedule(t, s, mail)
		other := queueSchedule(t, s, "tenant-b", "sch_avail_b", record.OverlapAllow)

		now := at(10 * time.Minute)
		var occs []record.Occurrence
		names := map[string]string{}
		add := func(name string, sc *record.Schedule, minute int, st record.OccurrenceState, availableAt time.Time) {
			o := NewOccurrence(sc, at(time.Duration(minute)*time.Minute))
			o.State, o.AvailableAt = st, availableAt
			occs = append(occs, o)
			names[o.OccurrenceID] = name
		}
		add("enqueued", sc, 0, record.OccurrenceEnqueued, at(0))
		add("enqueued at now", sc, 1, record.OccurrenceEnqueued, now)
		add("enqueued later", sc, 2, record.OccurrenceEnqueued, now.Add(time.Millisecond))
		add("retry due", sc, 3, record.OccurrenceRetryWait, now.Add(-time.Second))
		add("retry later", sc, 4, record.OccurrenceRetryWait, now.Add(time.Second))
		for i, st := range []record.OccurrenceState{record.OccurrenceScheduled, record.OccurrenceRunning, record.OccurrenceSucceeded,
			record.OccurrenceDead, record.OccurrenceMissed, record.OccurrenceCanceled, record.OccurrenceSkippedOverlap} {
			add(string(st), sc, 10+i, st, at(0))
		}
		add("other queue", mail, 0, record.OccurrenceEnqueued, at(0))
		add("other tenant", other, 0, record.OccurrenceEnqueued, at(0))
		mustInsertOccurrences(t, s, len(occs), occs...)

		got := claimNames(mustClaim(t, s, "tenant-a", 100, now), names)
		if want := []string{"enqueued", "retry due", "enqueued at now"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("claim at now: %v, want %v", got, want)
		}
		got = claimNames(mustClaim(t, s, "tenant-a", 100, now.Add(time.Second)), names)
		if want := []string{"enqueued later", "retry later"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("claim a second later: %v, want %v", got, want)
		}
	})

	t.Run("ClaimRecords", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_claim", record.OverlapAllow)
		o := readyOccurrence(sc, 0, record.LaneFlexible)
		o.AvailableAt = at(90 * time.Second)
		mustInsertOccurrences(t, s, 1, o)

		now := at(2*time.Minute + 333*time.Millisecond)
		got := mustClaim(t, s, "tenant-a", 5, now)
		if len(got) != 1 {
			t.Fatalf("claimed %d, want 1", len(got))
		}
		want := o
		want.State, want.AttemptCount, want.FirstClaimedAt = record.OccurrenceRunning, 1, now
		assertOccurrence(t, "claimed occurrence", got[0].Occurrence, want)
		assertOccurrence(t, "stored after claim", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
		wantAtt := record.Attempt{
			AttemptID: record.AttemptID(o.OccurrenceID, 1), TenantID: "tenant-a", OccurrenceID: o.OccurrenceID,
			Attempt: 1, WorkerID: "worker-1", ClaimedAt: now, LeaseExpiresAt: now.Add(testLease),
		}
		if got[0].Attempt != wantAtt {
			t.Errorf("attempt:\n got %+v\nwant %+v", got[0].Attempt, wantAtt)
		}
		if string(got[0].Payload) != string(sc.Payload) {
			t.Errorf("payload %q, want the schedule's %q", got[0].Payload, sc.Payload)
		}
		assertAttempts(t, s, "tenant-a", o.OccurrenceID, wantAtt)

		// A retry: the next claim is attempt 2, the first claim time stays.
		retryAt := now.Add(5 * time.Second)
		fin := mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1,
			Result: record.ResultFailedRetryable, Error: "503 from upstream", State: record.OccurrenceRetryWait, RetryAt: retryAt, Now: now.Add(time.Second)})
		want.State, want.AvailableAt, want.LastError = record.OccurrenceRetryWait, retryAt, "503 from upstream"
		assertAnswer(t, "after a retryable failure", fin[0].Occurrence, want)
		assertOccurrence(t, "stored after a retryable failure", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
		if n := len(mustClaim(t, s, "tenant-a", 5, retryAt.Add(-time.Millisecond))); n != 0 {
			t.Errorf("claimed %d before the retry time", n)
		}
		got = mustClaim(t, s, "tenant-a", 5, retryAt)
		if len(got) != 1 || got[0].Attempt.Attempt != 2 || got[0].Occurrence.AttemptCount != 2 ||
			!got[0].Occurrence.FirstClaimedAt.Equal(now) || got[0].Attempt.AttemptID != record.AttemptID(o.OccurrenceID, 2) {
			t.Fatalf("retry claim: %+v", got)
		}
		first := wantAtt
		first.Result, first.Error, first.FinishedAt = record.ResultFailedRetryable, "503 from upstream", now.Add(time.Second)
		assertAttempts(t, s, "tenant-a", o.OccurrenceID, first, got[0].Attempt)

		for _, bad := range []store.ClaimParams{
			{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "w", Limit: 0, Lease: testLease, Now: now},
			{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "w", Limit: 1, Lease: 0, Now: now},
		} {
			if _, err := engine.ClaimOccurrences(ctx, s, bad); err == nil {
				t.Errorf("ClaimOccurrences(%+v): no error", bad)
			}
		}
	})

	t.Run("OverlapSkipIfRunning", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		busy := queueSchedule(t, s, "tenant-a", "sch_busy", record.OverlapSkipIfRunning)
		idle := queueSchedule(t, s, "tenant-a", "sch_idle", record.OverlapSkipIfRunning)
		free := queueSchedule(t, s, "tenant-a", "sch_free", record.OverlapAllow)
		running := readyOccurrence(busy, -10, record.LaneStrict)
		running.State, running.AttemptCount = record.OccurrenceRunning, 1
		mustInsertOccurrences(t, s, 1, running)
		names := insertReady(t, s, busy, []readySpec{{"busy 1", 1, record.LaneStrict}})
		for k, v := range insertReady(t, s, idle, []readySpec{{"idle 2", 2, record.LaneStrict}, {"idle 3", 3, record.LaneStrict}, {"idle 4 flexible", 4, record.LaneFlexible}}) {
			names[k] = v
		}
		for k, v := range insertReady(t, s, free, []readySpec{{"free 5", 5, record.LaneStrict}, {"free 6", 6, record.LaneStrict}}) {
			names[k] = v
		}

		now := at(10 * time.Minute)
		got := claimNames(mustClaim(t, s, "tenant-a", 10, now), names)
		// busy 1: its schedule runs. idle 3 and idle 4: idle 2 was claimed
		// earlier in this batch. Allow runs concurrently.
		if want := []string{"idle 2", "free 5", "free 6"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("claim: %v, want %v", got, want)
		}
		for id, name := range names {
			o := mustGetOccurrence(t, s, "tenant-a", id)
			switch name {
			case "busy 1", "idle 3", "idle 4 flexible":
				if o.State != record.OccurrenceSkippedOverlap || !o.FinishedAt.Equal(now) || o.AttemptCount != 0 {
					t.Errorf("%s: state %s finished %v attempts %d; want SKIPPED_OVERLAP at now, no attempt", name, o.State, o.FinishedAt, o.AttemptCount)
				}
				assertAttempts(t, s, "tenant-a", id)
			default:
				if o.State != record.OccurrenceRunning {
					t.Errorf("%s: state %s, want RUNNING", name, o.State)
				}
			}
		}
		// Once nothing runs, the next one is claimed.
		o := readyOccurrence(idle, 7, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o)
		if n := len(mustClaim(t, s, "tenant-a", 10, now)); n != 0 {
			t.Errorf("claimed %d while idle 2 runs", n)
		}
		idle2 := findName(t, names, "idle 2")
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: idle2, Attempt: 1, Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now})
		o2 := readyOccurrence(idle, 8, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o2)
		if got := mustClaim(t, s, "tenant-a", 10, now); len(got) != 1 || got[0].Occurrence.OccurrenceID != o2.OccurrenceID {
			t.Errorf("claim after the run ended: %+v, want minute 8", got)
		}
	})

	t.Run("OverlapQueueOne", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		busy := queueSchedule(t, s, "tenant-a", "sch_q_busy", record.OverlapQueueOne)
		idle := queueSchedule(t, s, "tenant-a", "sch_q_idle", record.OverlapQueueOne)
		running := readyOccurrence(busy, -10, record.LaneStrict)
		running.State, running.AttemptCount = record.OccurrenceRunning, 1
		mustInsertOccurrences(t, s, 1, running)
		names := insertReady(t, s, busy, []readySpec{{"busy 1", 1, record.LaneStrict}, {"busy 2", 2, record.LaneStrict}, {"busy 3", 3, record.LaneStrict}})
		for k, v := range insertReady(t, s, idle, []readySpec{{"idle 4", 4, record.LaneStrict}, {"idle 5", 5, record.LaneStrict}, {"idle 6", 6, record.LaneStrict}}) {
			names[k] = v
		}

		now := at(10 * time.Minute)
		got := claimNames(mustClaim(t, s, "tenant-a", 10, now), names)
		if want := []string{"idle 4"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("claim: %v, want %v", got, want)
		}
		states := func() map[string]record.OccurrenceState {
			t.Helper()
			out := map[string]record.OccurrenceState{}
			for id, name := range names {
				out[name] = mustGetOccurrence(t, s, "tenant-a", id).State
			}
			return out
		}
		want := map[string]record.OccurrenceState{
			"busy 1": record.OccurrenceEnqueued, "busy 2": record.OccurrenceSkippedOverlap, "busy 3": record.OccurrenceSkippedOverlap,
			"idle 4": record.OccurrenceRunning, "idle 5": record.OccurrenceEnqueued, "idle 6": record.OccurrenceSkippedOverlap,
		}
		if got := states(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("states after the claim:\n got %v\nwant %v", got, want)
		}
		// The one that waits is claimed once the run ends.
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: findName(t, names, "idle 4"), Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now})
		got = claimNames(mustClaim(t, s, "tenant-a", 10, now), names)
		if fmt.Sprint(got) != "[idle 5]" {
			t.Errorf("claim after idle 4 ended: %v, want [idle 5]", got)
		}
	})

	t.Run("OverlapWaitingDoesNotBlock", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		// Many queue_one schedules, each running, each with one waiting
		// occurrence at the head of the queue; an allow occurrence behind
		// them must still be claimed, even with a small limit.
		names := map[string]string{}
		for i := range 5 {
			sc := queueSchedule(t, s, "tenant-a", fmt.Sprintf("sch_wait_%d", i), record.OverlapQueueOne)
			running := readyOccurrence(sc, -10, record.LaneStrict)
			running.State, running.AttemptCount = record.OccurrenceRunning, 1
			mustInsertOccurrences(t, s, 1, running)
			for k, v := range insertReady(t, s, sc, []readySpec{{fmt.Sprintf("waits %d", i), i, record.LaneStrict}}) {
				names[k] = v
			}
		}
		free := queueSchedule(t, s, "tenant-a", "sch_behind", record.OverlapAllow)
		for k, v := range insertReady(t, s, free, []readySpec{{"behind", 9, record.LaneStrict}}) {
			names[k] = v
		}
		for _, limit := range []int{1, 2} {
			got := claimNames(mustClaim(t, s, "tenant-a", limit, at(10*time.Minute)), names)
			want := "[behind]"
			if limit == 2 {
				want = "[]"
			}
			if fmt.Sprint(got) != want {
				t.Errorf("claim %d: %v, want %s", limit, got, want)
			}
		}
		for id, name := range names {
			if o := mustGetOccurrence(t, s, "tenant-a", id); name != "behind" && o.State != record.OccurrenceEnqueued {
				t.Errorf("%s: %s, want still ENQUEUED", name, o.State)
			}
		}
	})

	t.Run("OverlapQueueOneScheduledWaits", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		// The earliest pending occurrence may be one not yet enqueued: it is
		// the one that waits, and an enqueued later one is skipped.
		sc := queueSchedule(t, s, "tenant-a", "sch_q_sched", record.OverlapQueueOne)
		running := readyOccurrence(sc, -10, record.LaneStrict)
		running.State, running.AttemptCount = record.OccurrenceRunning, 1
		early := NewOccurrence(sc, at(0))
		late := readyOccurrence(sc, 1, record.LaneStrict)
		mustInsertOccurrences(t, s, 3, running, early, late)
		if n := len(mustClaim(t, s, "tenant-a", 10, at(10*time.Minute))); n != 0 {
			t.Errorf("claimed %d", n)
		}
		if o := mustGetOccurrence(t, s, "tenant-a", late.OccurrenceID); o.State != record.OccurrenceSkippedOverlap {
			t.Errorf("the later occurrence is %s, want SKIPPED_OVERLAP", o.State)
		}
		if o := mustGetOccurrence(t, s, "tenant-a", early.OccurrenceID); o.State != record.OccurrenceScheduled {
			t.Errorf("the earliest is %s, want SCHEDULED", o.State)
		}
	})

	t.Run("ClaimConcurrent", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := queueSchedule(t, s, "tenant-a", "sch_conc", record.OverlapAllow)
		var occs []record.Occurrence
		for i := range 60 {
			occs = append(occs, readyOccurrence(sc, i, []record.Lane{record.LaneStrict, record.LaneFlexible, record.LaneCatchUp}[i%3]))
		}
		mustInsertOccurrences(t, s, len(occs), occs...)
		var (
			mu   sync.Mutex
			seen = map[string]int{}
			wg   sync.WaitGroup
		)
		for w := range 4 {
			wg.Go(func() {
				for {
					got, err := engine.ClaimOccurrences(t.Context(), s, store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue,
						WorkerID: fmt.Sprintf("worker-%d", w), Limit: 4, Lease: testLease, Now: at(time.Hour)})
					if err != nil {
						t.Errorf("worker %d: %v", w, err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, c := range got {
						seen[c.Occurrence.OccurrenceID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != len(occs) {
			t.Errorf("claimed %d distinct occurrences, want %d", len(seen), len(occs))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s claimed %d times", id, n)
			}
		}
	})

	t.Run("Heartbeat", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_hb", record.OverlapAllow)
		o := readyOccurrence(sc, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o)
		c := mustClaim(t, s, "tenant-a", 1, at(0))[0]
		hb := func(tenant string, attempt int64, now time.Time) (store.HeartbeatResult, error) {
			return s.Heartbeat(ctx, store.HeartbeatParams{TenantID: tenant, OccurrenceID: o.OccurrenceID, Attempt: attempt, Lease: time.Minute, Now: now})
		}

		res, err := hb("tenant-a", 1, at(10*time.Second))
		if err != nil || res != (store.HeartbeatResult{LeaseExpiresAt: at(70 * time.Second)}) {
			t.Fatalf("Heartbeat: %+v, %v; want the lease to 70 s", res, err)
		}
		att := c.Attempt
		att.LeaseExpiresAt = at(70 * time.Second)
		assertAttempts(t, s, "tenant-a", o.OccurrenceID, att)
		// Past the lease but before the rescuer: the attempt is still the
		// current one and may extend.
		if _, err := hb("tenant-a", 1, at(80*time.Second)); err != nil {
			t.Errorf("Heartbeat after the lease ran out, before expiry: %v", err)
		}
		for _, tc := range []struct {
			what    string
			tenant  string
			attempt int64
			want    error
		}{
			{"a future attempt", "tenant-a", 2, store.ErrStaleAttempt},
			{"attempt 0", "tenant-a", 0, store.ErrStaleAttempt},
			{"another tenant's occurrence", "tenant-b", 1, store.ErrNotFound},
		} {
			_, err := hb(tc.tenant, tc.attempt, at(20*time.Second))
			wantErr(t, "Heartbeat for "+tc.what, err, tc.want)
		}
		_, err = s.Heartbeat(ctx, store.HeartbeatParams{TenantID: "tenant-a", OccurrenceID: "occ_missing", Attempt: 1, Lease: time.Minute, Now: at(0)})
		wantErr(t, "Heartbeat for a missing occurrence", err, store.ErrNotFound)

		// An update supersedes the running version; a cancel cancels it.
		upd := mustUpdate(t, s, sc, 1, at(30*time.Second), nil)
		if upd.InFlight != 1 || upd.Canceled != 0 {
			t.Errorf("update: %+v, want 1 in flight", upd)
		}
		res, err = hb("tenant-a", 1, at(40*time.Second))
		if err != nil || !res.Superseded || res.Canceled {
			t.Errorf("Heartbeat after an update: %+v, %v; want superseded", res, err)
		}
		sc.State = record.ScheduleCanceled
		mustUpdate(t, s, sc, 2, at(50*time.Second), nil)
		res, err = hb("tenant-a", 1, at(60*time.Second))
		if err != nil || !res.Superseded || !res.Canceled || !res.LeaseExpiresAt.Equal(at(120*time.Second)) {
			t.Errorf("Heartbeat after a cancel: %+v, %v; want superseded and canceled", res, err)
		}

		// A finished attempt cannot be extended.
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: at(70 * time.Second)})
		_, err = hb("tenant-a", 1, at(71*time.Second))
		wantErr(t, "Heartbeat of a finished attempt", err, store.ErrStaleAttempt)
	})

	t.Run("Finish", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_fin", record.OverlapAllow)
		o := readyOccurrence(sc, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o)
		c := mustClaim(t, s, "tenant-a", 1, at(0))[0]

		ack := store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: at(5 * time.Second)}
		res := mustFinish(t, s, ack)
		want := c.Occurrence
		want.State, want.FinishedAt = record.OccurrenceSucceeded, at(5*time.Second)
		assertAnswer(t, "acked occurrence", res[0].Occurrence, want)
		assertOccurrence(t, "stored after ack", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
		att := c.Attempt
		att.Result, att.FinishedAt = record.ResultSucceeded, at(5*time.Second)
		assertAttempts(t, s, "tenant-a", o.OccurrenceID, att)

		// The same ack again (its answer was lost) succeeds and writes
		// nothing, even with a later clock.
		again := ack
		again.Now = at(9 * time.Second)
		res = mustFinish(t, s, again)
		assertAnswer(t, "ack again", res[0].Occurrence, want)
		assertOccurrence(t, "stored after ack again", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
		assertAttempts(t, s, "tenant-a", o.OccurrenceID, att)

		// Any other finish of that attempt, or of another number, is stale.
		for _, tc := range []struct {
			what string
			mut  func(*store.FinishParams)
		}{
			{"a nack of an acked attempt", func(p *store.FinishParams) {
				p.Result, p.State, p.RetryAt = record.ResultFailedRetryable, record.OccurrenceRetryWait, at(time.Minute)
			}},
			{"a permanent failure of an acked attempt", func(p *store.FinishParams) {
				p.Result, p.State = record.ResultFailedPermanent, record.OccurrenceDead
			}},
			{"a future attempt", func(p *store.FinishParams) { p.Attempt = 2 }},
			{"attempt 0", func(p *store.FinishParams) { p.Attempt = 0 }},
		} {
			p := ack
			tc.mut(&p)
			r, err := s.FinishAttempts(ctx, []store.FinishParams{p})
			if err != nil || len(r) != 1 {
				t.Fatalf("FinishAttempts(%s): %v, %v", tc.what, r, err)
			}
			wantErr(t, "finish "+tc.what, r[0].Err, store.ErrStaleAttempt)
		}
		assertOccurrence(t, "after stale finishes", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
		assertAttempts(t, s, "tenant-a", o.OccurrenceID, att)
	})

	t.Run("FinishStates", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := queueSchedule(t, s, "tenant-a", "sch_fin_states", record.OverlapAllow)
		for i, tc := range []struct {
			result record.AttemptResult
			state  record.OccurrenceState
			errMsg string
			reason record.DeadReason
		}{
			{record.ResultSucceeded, record.OccurrenceSucceeded, "", ""},
			{record.ResultFailedRetryable, record.OccurrenceRetryWait, "timeout", ""},
			{record.ResultFailedRetryable, record.OccurrenceDead, "timeout, out of attempts", record.DeadAttemptsExhausted},
			{record.ResultFailedRetryable, record.OccurrenceDead, "timeout, past the deadline", record.DeadDeadlinePassed},
			{record.ResultFailedRetryable, record.OccurrenceDead, "timeout, over the retry budget", record.DeadRetryBudgetExhausted},
			{record.ResultFailedPermanent, record.OccurrenceDead, "400 bad request", record.DeadPermanentFailure},
			{record.ResultFailedRetryable, record.OccurrenceCanceled, "timeout, schedule moved on", ""},
			// A worker's error comes back byte for byte, whatever it holds.
			{record.ResultFailedRetryable, record.OccurrenceRetryWait, "quote \" backslash \\ newline \n tab \t nul \x00 bell \a, é, 日本, bytes \xff\xfe, [],{}", ""},
		} {
			o := readyOccurrence(sc, i, record.LaneStrict)
			mustInsertOccurrences(t, s, 1, o)
			c := mustClaim(t, s, "tenant-a", 1, at(time.Hour))[0]
			now := at(time.Hour + time.Second)
			p := store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1,
				Result: tc.result, Error: tc.errMsg, State: tc.state, Now: now, DeadReason: tc.reason}
			want := c.Occurrence
			// The occurrence carries the reason it died and the error of
			// its latest attempt on a read (and in the engine's answers to
			// an ack and a nack, engine.TestAckAndNackAnswer).
			want.State, want.DeadReason, want.LastError = tc.state, tc.reason, tc.errMsg
			if tc.state == record.OccurrenceRetryWait {
				p.RetryAt = at(2 * time.Hour)
				want.AvailableAt = p.RetryAt
			} else {
				want.FinishedAt = now
			}
			res := mustFinish(t, s, p)
			assertAnswer(t, fmt.Sprintf("%s/%s", tc.result, tc.state), res[0].Occurrence, want)
			assertOccurrence(t, fmt.Sprintf("%s/%s stored", tc.result, tc.state), mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
			att := c.Attempt
			att.Result, att.Error, att.FinishedAt = tc.result, tc.errMsg, now
			assertAttempts(t, s, "tenant-a", o.OccurrenceID, att)
		}
	})

	t.Run("FinishBatch", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_batch", record.OverlapAllow)
		other := queueSchedule(t, s, "tenant-b", "sch_batch_b", record.OverlapAllow)
		var occs []record.Occurrence
		for i := range 4 {
			occs = append(occs, readyOccurrence(sc, i, record.LaneStrict))
		}
		ob := readyOccurrence(other, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 4, occs...)
		mustInsertOccurrences(t, s, 1, ob)
		mustClaim(t, s, "tenant-a", 4, at(time.Hour))
		mustClaim(t, s, "tenant-b", 1, at(time.Hour))

		now := at(time.Hour + time.Second)
		ack := func(o record.Occurrence, tenant string, attempt int64) store.FinishParams {
			return store.FinishParams{TenantID: tenant, OccurrenceID: o.OccurrenceID, Attempt: attempt,
				Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
		}
		bad := ack(occs[3], "tenant-a", 1)
		bad.State = record.OccurrenceRunning
		noRetryAt := ack(occs[3], "tenant-a", 1)
		noRetryAt.Result, noRetryAt.State = record.ResultFailedRetryable, record.OccurrenceRetryWait
		canceledAck := ack(occs[3], "tenant-a", 1)
		canceledAck.State = record.OccurrenceCanceled
		batch := []store.FinishParams{
			ack(occs[0], "tenant-a", 1),
			ack(occs[1], "tenant-a", 2), // stale
			ack(ob, "tenant-a", 1),      // another tenant's: not found
			ack(occs[2], "tenant-a", 1),
			bad,                         // not a finishing state
			noRetryAt,                   // RETRY_WAIT needs a time
			ack(occs[0], "tenant-a", 1), // twice in one batch: the second is the same finish again
			canceledAck,                 // CANCELED ends only a retryable failure
		}
		res, err := s.FinishAttempts(ctx, batch)
		if err != nil || len(res) != len(batch) {
			t.Fatalf("FinishAttempts: %d results, %v", len(res), err)
		}
		for i, want := range []error{nil, store.ErrStaleAttempt, store.ErrNotFound, nil} {
			wantErr(t, fmt.Sprintf("item %d", i), res[i].Err, want)
		}
		for _, i := range []int{4, 5, 7} {
			if res[i].Err == nil {
				t.Errorf("item %d (%s/%s): no error", i, batch[i].Result, batch[i].State)
			}
		}
		wantErr(t, "the same finish twice in a batch", res[6].Err, nil)
		for i, st := range []record.OccurrenceState{record.OccurrenceSucceeded, record.OccurrenceRunning, record.OccurrenceSucceeded, record.OccurrenceRunning} {
			if got := mustGetOccurrence(t, s, "tenant-a", occs[i].OccurrenceID); got.State != st {
				t.Errorf("occurrence %d: %s, want %s", i, got.State, st)
			}
		}
		if got := mustGetOccurrence(t, s, "tenant-b", ob.OccurrenceID); got.State != record.OccurrenceRunning {
			t.Errorf("another tenant's occurrence: %s, want RUNNING", got.State)
		}
		if res, err := s.FinishAttempts(ctx, nil); err != nil || len(res) != 0 {
			t.Errorf("FinishAttempts(nil): %v, %v", res, err)
		}
	})

	// A finish answers with at least the id, tenant, state and attempt
	// count of the occurrence it finished (store.FinishResult; the whole
	// occurrence is the engine's to read, and its Ack's answer is, on every
	// store: engine.TestAckAndNackAnswer); a stale one fails.
	t.Run("FinishAnswer", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_brief", record.OverlapAllow)
		occs := []record.Occurrence{readyOccurrence(sc, 0, record.LaneStrict), readyOccurrence(sc, 1, record.LaneStrict)}
		mustInsertOccurrences(t, s, 2, occs...)
		mustClaim(t, s, "tenant-a", 2, at(time.Hour))
		now := at(time.Hour + time.Second)
		ack := func(o record.Occurrence, attempt int64) store.FinishParams {
			return store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: attempt,
				Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
		}
		res, err := s.FinishAttempts(ctx, []store.FinishParams{ack(occs[0], 1), ack(occs[1], 1), ack(occs[0], 2)})
		if err != nil || len(res) != 3 {
			t.Fatalf("FinishAttempts: %d results, %v", len(res), err)
		}
		wantErr(t, "ack", res[0].Err, nil)
		wantErr(t, "ack beside it", res[1].Err, nil)
		wantErr(t, "ack of a stale attempt", res[2].Err, store.ErrStaleAttempt)
		for i, o := range occs {
			if got := res[i].Occurrence; got.OccurrenceID != o.OccurrenceID || got.TenantID != "tenant-a" ||
				got.State != record.OccurrenceSucceeded || got.AttemptCount != 1 {
				t.Errorf("result %d: %+v, want %s of tenant-a SUCCEEDED after attempt 1", i, got, o.OccurrenceID)
			}
			stored := mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID)
			if stored.State != record.OccurrenceSucceeded || !stored.FinishedAt.Equal(now) || stored.AttemptCount != 1 {
				t.Errorf("after an ack: %s finished %v after %d attempts, want SUCCEEDED at %v after 1",
					stored.State, stored.FinishedAt, stored.AttemptCount, now)
			}
		}

		// One batch of acks that share everything, one of them of an
		// attempt already acked: the others are written, and that one
		// answers as it would alone.
		more := []record.Occurrence{readyOccurrence(sc, 2, record.LaneStrict), readyOccurrence(sc, 3, record.LaneStrict)}
		mustInsertOccurrences(t, s, 2, more...)
		mustClaim(t, s, "tenant-a", 2, at(time.Hour))
		alone, err := s.FinishAttempts(ctx, []store.FinishParams{ack(occs[1], 1)})
		if err != nil {
			t.Fatalf("FinishAttempts again: %v", err)
		}
		res, err = s.FinishAttempts(ctx, []store.FinishParams{ack(more[0], 1), ack(occs[1], 1), ack(more[1], 1)})
		if err != nil || len(res) != 3 {
			t.Fatalf("FinishAttempts: %d results, %v", len(res), err)
		}
		if fmt.Sprint(res[1].Err) != fmt.Sprint(alone[0].Err) {
			t.Errorf("ack of an acked attempt in a batch: %v, alone: %v", res[1].Err, alone[0].Err)
		}
		for i, o := range more {
			wantErr(t, "ack beside an acked one", res[2*i].Err, nil)
			if got := mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID); got.State != record.OccurrenceSucceeded || !got.FinishedAt.Equal(now) {
				t.Errorf("%s after a batch: %s finished %v, want SUCCEEDED at %v", o.OccurrenceID, got.State, got.FinishedAt, now)
			}
		}
	})

	t.Run("FinishAndClaim", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_fac", record.OverlapSkipIfRunning)
		var occs []record.Occurrence
		for i := range 3 {
			occs = append(occs, readyOccurrence(sc, i, record.LaneStrict))
		}
		mustInsertOccurrences(t, s, 3, occs...)
		now := at(time.Hour)
		if got := mustClaim(t, s, "tenant-a", 1, now); len(got) != 1 || got[0].Occurrence.OccurrenceID != occs[0].OccurrenceID {
			t.Fatalf("first claim: %+v, want minute 0", got)
		}
		ack := func(o record.Occurrence, attempt int64) store.FinishParams {
			return store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: attempt,
				Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
		}
		claim := store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "worker-1", Limit: 1, Lease: testLease, Now: now}

		// A claim request ClaimOccurrences refuses fails the whole call
		// and leaves the finishes unwritten.
		bad := claim
		bad.Limit = 0
		if _, _, err := engine.FinishAndClaim(ctx, s, []store.FinishParams{ack(occs[0], 1)}, bad); err == nil {
			t.Error("FinishAndClaim with limit 0: no error")
		}
		if o := mustGetOccurrence(t, s, "tenant-a", occs[0].OccurrenceID); o.State != record.OccurrenceRunning {
			t.Errorf("after a refused FinishAndClaim: %s, want RUNNING", o.State)
		}

		// The finishes apply first, each with its own result, and the
		// claim sees them: with minute 0 acked the schedule no longer
		// runs, so skip_if_running lets minute 1 be claimed.
		res, got, err := engine.FinishAndClaim(ctx, s, []store.FinishParams{ack(occs[0], 1), ack(occs[1], 1)}, claim)
		if err != nil || len(res) != 2 {
			t.Fatalf("FinishAndClaim: %d results, %v", len(res), err)
		}
		wantErr(t, "the ack", res[0].Err, nil)
		if res[0].Occurrence.State != record.OccurrenceSucceeded {
			t.Errorf("the ack: %s, want SUCCEEDED", res[0].Occurrence.State)
		}
		wantErr(t, "an ack of an unclaimed occurrence", res[1].Err, store.ErrStaleAttempt)
		if len(got) != 1 || got[0].Occurrence.OccurrenceID != occs[1].OccurrenceID || got[0].Attempt.Attempt != 1 ||
			got[0].Occurrence.State != record.OccurrenceRunning {
			t.Fatalf("FinishAndClaim claimed %+v, want minute 1 at attempt 1", got)
		}

		// No finishes: a plain claim.
		mustFinish(t, s, ack(occs[1], 1))
		res, got, err = engine.FinishAndClaim(ctx, s, nil, claim)
		if err != nil || len(res) != 0 || len(got) != 1 || got[0].Occurrence.OccurrenceID != occs[2].OccurrenceID {
			t.Fatalf("FinishAndClaim with no finishes: %v, %+v, %v; want minute 2", res, got, err)
		}
		// Nothing left to claim: the finishes still apply.
		res, got, err = engine.FinishAndClaim(ctx, s, []store.FinishParams{ack(occs[2], 1)}, claim)
		if err != nil || len(res) != 1 || res[0].Err != nil || len(got) != 0 {
			t.Fatalf("FinishAndClaim of the last one: %+v, %+v, %v", res, got, err)
		}
		if o := mustGetOccurrence(t, s, "tenant-a", occs[2].OccurrenceID); o.State != record.OccurrenceSucceeded {
			t.Errorf("last one: %s, want SUCCEEDED", o.State)
		}
	})

	// A retryable failure of an occurrence whose schedule has moved on
	// ends it CANCELED, in FinishAttempts and in FinishAndClaim alike; the
	// claim sees it finished.
	t.Run("FinishCanceled", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_fin_canceled", record.OverlapSkipIfRunning)
		o1 := readyOccurrence(sc, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o1)
		now := at(time.Hour)
		c1 := mustClaim(t, s, "tenant-a", 1, now)[0]
		if upd := mustUpdate(t, s, sc, 1, now, nil); upd.InFlight != 1 {
			t.Fatalf("update: %+v, want 1 in flight", upd)
		}
		sc.Version = 2
		o2 := readyOccurrence(sc, 1, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o2)

		nack := store.FinishParams{TenantID: "tenant-a", OccurrenceID: o1.OccurrenceID, Attempt: 1,
			Result: record.ResultFailedRetryable, Error: "stopped: superseded", State: record.OccurrenceCanceled, Now: now.Add(time.Second)}
		claim := store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "worker-1", Limit: 1, Lease: testLease, Now: now.Add(time.Second)}
		res, got, err := engine.FinishAndClaim(ctx, s, []store.FinishParams{nack}, claim)
		if err != nil || len(res) != 1 {
			t.Fatalf("FinishAndClaim: %d results, %v", len(res), err)
		}
		wantErr(t, "the CANCELED finish", res[0].Err, nil)
		want := c1.Occurrence
		want.State, want.FinishedAt, want.LastError = record.OccurrenceCanceled, now.Add(time.Second), "stopped: superseded"
		assertAnswer(t, "canceled by its nack", res[0].Occurrence, want)
		assertOccurrence(t, "stored after the nack", mustGetOccurrence(t, s, "tenant-a", o1.OccurrenceID), want)
		att := c1.Attempt
		att.Result, att.Error, att.FinishedAt = record.ResultFailedRetryable, "stopped: superseded", now.Add(time.Second)
		assertAttempts(t, s, "tenant-a", o1.OccurrenceID, att)
		// skip_if_running: the old version no longer runs, so the new one
		// is claimed, not skipped.
		if len(got) != 1 || got[0].Occurrence.OccurrenceID != o2.OccurrenceID {
			t.Fatalf("FinishAndClaim claimed %+v, want the new version's occurrence", got)
		}

		// The same nack again (its answer was lost) succeeds without
		// writing; the canceled occurrence is never claimable again.
		again := nack
		again.Now = now.Add(5 * time.Second)
		res = mustFinish(t, s, again)
		assertAnswer(t, "the same nack again", res[0].Occurrence, want)
		assertOccurrence(t, "stored after the same nack again", mustGetOccurrence(t, s, "tenant-a", o1.OccurrenceID), want)
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: o2.OccurrenceID, Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now.Add(5 * time.Second)})
		if got := mustClaim(t, s, "tenant-a", 10, at(48*time.Hour)); len(got) != 0 {
			t.Errorf("claimed after the CANCELED finish: %+v", got)
		}
		assertAttempts(t, s, "tenant-a", o1.OccurrenceID, att)
	})

	t.Run("ExpireLeases", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_exp", record.OverlapAllow)
		sc.Retry.MaxAttempts = 2
		mustUpdate(t, s, sc, 1, at(0), nil)
		sc.Version = 2
		o := readyOccurrence(sc, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o)
		c1 := mustClaim(t, s, "tenant-a", 1, at(0))[0] // lease until 30 s

		mustExpire(t, s, at(testLease-time.Millisecond), 10, store.ExpireResult{})
		mustExpire(t, s, at(testLease), 10, store.ExpireResult{Expired: 1, Requeued: 1})
		want := c1.Occurrence
		want.State, want.AvailableAt = record.OccurrenceEnqueued, at(testLease)
		assertOccurrence(t, "after the lease expired", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
		a1 := c1.Attempt
		a1.Result, a1.FinishedAt = record.ResultLeaseExpired, at(testLease)
		assertAttempts(t, s, "tenant-a", o.OccurrenceID, a1)
		mustExpire(t, s, at(time.Hour), 10, store.ExpireResult{}) // nothing left to expire

		// The late worker is refused.
		_, err := s.Heartbeat(ctx, store.HeartbeatParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1, Lease: testLease, Now: at(31 * time.Second)})
		wantErr(t, "heartbeat of an expired attempt", err, store.ErrStaleAttempt)
		r, err := s.FinishAttempts(ctx, []store.FinishParams{{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: at(31 * time.Second)}})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, "ack of an expired attempt", r[0].Err, store.ErrStaleAttempt)

		// The second attempt is the last: its expiry is DEAD.
		c2 := mustClaim(t, s, "tenant-a", 1, at(40*time.Second))[0]
		if c2.Attempt.Attempt != 2 {
			t.Fatalf("claim after expiry: attempt %d, want 2", c2.Attempt.Attempt)
		}
		mustExpire(t, s, at(70*time.Second), 10, store.ExpireResult{Expired: 1, Dead: 1, DeadAttempts: 1})
		want = c2.Occurrence
		want.State, want.FinishedAt, want.DeadReason = record.OccurrenceDead, at(70*time.Second), record.DeadAttemptsExhausted
		assertOccurrence(t, "after the last attempt expired", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
	})

	t.Run("ExpireLeasesDeadline", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		sc := NewSchedule("tenant-a", "sch_deadline")
		sc.Queue, sc.OverlapPolicy = jobsQueue, record.OverlapAllow
		sc.Retry = record.RetryPolicy{MaxAttempts: 100, BackoffBase: time.Second, BackoffCap: time.Minute, Deadline: 10 * time.Minute}
		mustInsertSchedule(t, s, sc)
		early := readyOccurrence(sc, 0, record.LaneStrict) // deadline at 10 min
		late := readyOccurrence(sc, 1, record.LaneStrict)  // deadline at 11 min
		mustInsertOccurrences(t, s, 2, early, late)
		mustClaim(t, s, "tenant-a", 2, at(9*time.Minute+30*time.Second)) // leases until 10 min
		mustExpire(t, s, at(10*time.Minute), 10, store.ExpireResult{Expired: 2, Requeued: 1, Dead: 1, DeadDeadline: 1})
		if o := mustGetOccurrence(t, s, "tenant-a", early.OccurrenceID); o.State != record.OccurrenceDead || !o.FinishedAt.Equal(at(10*time.Minute)) ||
			o.DeadReason != record.DeadDeadlinePassed {
			t.Errorf("past its deadline: %s (%q) at %v, want DEAD (deadline_passed)", o.State, o.DeadReason, o.FinishedAt)
		}
		if o := mustGetOccurrence(t, s, "tenant-a", late.OccurrenceID); o.State != record.OccurrenceEnqueued {
			t.Errorf("before its deadline: %s, want ENQUEUED", o.State)
		}
	})

	t.Run("ExpireLeasesLimit", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_exp_limit", record.OverlapAllow)
		var ids []string
		for i := range 3 {
			o := readyOccurrence(sc, 0, record.LaneStrict)
			o.ScheduledFor = at(time.Duration(i) * time.Second)
			o.OccurrenceID, o.RetryFrom = record.OccurrenceID(sc.ScheduleID, 1, o.ScheduledFor), o.ScheduledFor
			mustInsertOccurrences(t, s, 1, o)
			// Claimed at 3i s with a lease of (12-4i) s: the leases run out
			// at (12-i) s, in the reverse order of the claims.
			_, err := engine.ClaimOccurrences(ctx, s, store.ClaimParams{TenantID: "tenant-a", Queue: jobsQueue, WorkerID: "w",
				Limit: 1, Lease: time.Duration(12-4*i) * time.Second, Now: at(time.Duration(3*i) * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, o.OccurrenceID)
		}
		mustExpire(t, s, at(time.Minute), 2, store.ExpireResult{Expired: 2, Requeued: 2})
		for i, st := range []record.OccurrenceState{record.OccurrenceRunning, record.OccurrenceEnqueued, record.OccurrenceEnqueued} {
			if got := mustGetOccurrence(t, s, "tenant-a", ids[i]).State; got != st {
				t.Errorf("occurrence %d: %s, want %s (oldest leases first)", i, got, st)
			}
		}
		mustExpire(t, s, at(time.Minute), 2, store.ExpireResult{Expired: 1, Requeued: 1})
	})

	// The expired lease of an occurrence whose schedule has moved on (a
	// newer version, or CANCELED) ends it CANCELED, never claimable again,
	// even when it still had attempts left, or none: moved on is decided
	// first.
	t.Run("ExpireLeasesMovedOn", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		superseded := queueSchedule(t, s, "tenant-a", "sch_exp_superseded", record.OverlapAllow)
		canceled := queueSchedule(t, s, "tenant-a", "sch_exp_canceled", record.OverlapAllow)
		last := queueSchedule(t, s, "tenant-a", "sch_exp_last", record.OverlapAllow)
		last.Retry.MaxAttempts = 1
		mustUpdate(t, s, last, 1, at(0), nil)
		last.Version = 2
		current := queueSchedule(t, s, "tenant-a", "sch_exp_current", record.OverlapAllow)
		occs := []record.Occurrence{
			readyOccurrence(superseded, 0, record.LaneStrict),
			readyOccurrence(canceled, 0, record.LaneStrict),
			readyOccurrence(last, 0, record.LaneStrict), // its only attempt
			readyOccurrence(current, 0, record.LaneStrict),
		}
		for _, o := range occs {
			mustInsertOccurrences(t, s, 1, o)
		}
		claimed := map[string]store.Claimed{}
		for _, c := range mustClaim(t, s, "tenant-a", 4, at(0)) { // leases until 30 s
			claimed[c.Occurrence.OccurrenceID] = c
		}
		if len(claimed) != 4 {
			t.Fatalf("claimed %d, want 4", len(claimed))
		}

		superseded.Payload = []byte(`{"v":2}`)
		mustUpdate(t, s, superseded, 1, at(10*time.Second), nil)
		canceled.State = record.ScheduleCanceled
		mustUpdate(t, s, canceled, 1, at(10*time.Second), nil)
		last.Payload = []byte(`{"v":3}`)
		mustUpdate(t, s, last, 2, at(10*time.Second), nil)

		mustExpire(t, s, at(testLease), 10, store.ExpireResult{Expired: 4, Requeued: 1, Canceled: 3})
		for i, o := range occs[:3] {
			c := claimed[o.OccurrenceID]
			want := c.Occurrence
			want.State, want.FinishedAt = record.OccurrenceCanceled, at(testLease)
			assertOccurrence(t, fmt.Sprintf("occurrence %d after its lease expired", i), mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), want)
			a := c.Attempt
			a.Result, a.FinishedAt = record.ResultLeaseExpired, at(testLease)
			assertAttempts(t, s, "tenant-a", o.OccurrenceID, a)
		}
		// The current version's occurrence is claimable again, and the
		// only one that is.
		got := mustClaim(t, s, "tenant-a", 10, at(time.Hour))
		if len(got) != 1 || got[0].Occurrence.OccurrenceID != occs[3].OccurrenceID || got[0].Attempt.Attempt != 2 {
			t.Fatalf("claim after the expiry: %+v, want only the current version's occurrence, attempt 2", got)
		}
	})

	t.Run("Replay", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := NewSchedule("tenant-a", "sch_replay")
		sc.Queue, sc.OverlapPolicy = jobsQueue, record.OverlapAllow
		sc.Retry = record.RetryPolicy{MaxAttempts: 2, BackoffBase: time.Second, BackoffCap: time.Minute, Deadline: time.Hour}
		mustInsertSchedule(t, s, sc)
		o := readyOccurrence(sc, 0, record.LaneStrict)
		mustInsertOccurrences(t, s, 1, o)
		mustClaim(t, s, "tenant-a", 1, at(0))
		mustFinish(t, s, store.FinishParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Attempt: 1,
			Result: record.ResultFailedPermanent, Error: "bad input", State: record.OccurrenceDead, DeadReason: record.DeadPermanentFailure, Now: at(time.Second)})
		if got := mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID); got.DeadReason != record.DeadPermanentFailure || got.LastError != "bad input" {
			t.Errorf("DEAD before the replay: reason %q, last error %q", got.DeadReason, got.LastError)
		}

		// Hours later, past the deadline counted from the scheduled time.
		now := at(5*time.Hour + 123*time.Millisecond)
		got, err := engine.ReplayOccurrence(ctx, s, "tenant-a", o.OccurrenceID, now)
		if err != nil {
			t.Fatalf("ReplayOccurrence: %v", err)
		}
		want := mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID)
		if want.OccurrenceID != o.OccurrenceID || want.State != record.OccurrenceEnqueued || !want.AvailableAt.Equal(now) ||
			!want.FinishedAt.IsZero() || want.AttemptCount != 1 || want.AttemptFloor != 1 || !want.RetryFrom.Equal(now) ||
			!want.EnqueuedAt.Equal(o.EnqueuedAt) || !want.FirstClaimedAt.Equal(at(0)) {
			t.Errorf("replayed occurrence: %+v", want)
		}
		// The replay clears the reason it died; its latest attempt, and so
		// its last error, are still the failed one's.
		if want.DeadReason != "" || want.LastError != "bad input" {
			t.Errorf("replayed occurrence: reason %q, last error %q; want none and the failed attempt's", want.DeadReason, want.LastError)
		}
		assertOccurrence(t, "ReplayOccurrence's answer", *got, want)

		// The next claim is attempt 2, and the retry policy counts afresh:
		// attempt 2 expiring is not the last (2 - 1 < 2) and the deadline
		// counts from the replay.
		c := mustClaim(t, s, "tenant-a", 1, now)
		if len(c) != 1 || c[0].Attempt.Attempt != 2 || c[0].Occurrence.OccurrenceID != o.OccurrenceID {
			t.Fatalf("claim after replay: %+v", c)
		}
		mustExpire(t, s, now.Add(testLease), 10, store.ExpireResult{Expired: 1, Requeued: 1})
		if got := mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID); got.State != record.OccurrenceEnqueued {
			t.Errorf("after attempt 2 expired: %s, want ENQUEUED", got.State)
		}
		c = mustClaim(t, s, "tenant-a", 1, now.Add(testLease))
		if len(c) != 1 || c[0].Attempt.Attempt != 3 {
			t.Fatalf("third claim: %+v", c)
		}
		mustExpire(t, s, now.Add(2*testLease), 10, store.ExpireResult{Expired: 1, Dead: 1, DeadAttempts: 1})
		if got := mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID); got.State != record.OccurrenceDead || got.DeadReason != record.DeadAttemptsExhausted {
			t.Errorf("after attempt 3 expired: %s (%q), want DEAD (attempts_exhausted: 2 attempts since the replay)", got.State, got.DeadReason)
		}
		atts, err := s.ListAttempts(ctx, store.ListAttemptsParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, Limit: store.MaxListLimit})
		if err != nil || len(atts) != 3 {
			t.Fatalf("ListAttempts: %d, %v", len(atts), err)
		}
		for i, a := range atts {
			if a.Attempt != int64(i+1) || a.AttemptID != record.AttemptID(o.OccurrenceID, int64(i+1)) {
				t.Errorf("attempt %d: %+v", i+1, a)
			}
		}
		// A page: the history numbered above After, then the latest (3,
		// in the occurrence row) when the page has room.
		for _, tc := range []struct {
			after int64
			limit int
			want  string
		}{{0, 2, "[1 2]"}, {1, 2, "[2 3]"}, {2, 1, "[3]"}, {2, 5, "[3]"}, {1, 1, "[2]"}, {3, 5, "[]"}, {0, 0, "[1 2 3]"}} {
			p := store.ListAttemptsParams{TenantID: "tenant-a", OccurrenceID: o.OccurrenceID, After: tc.after, Limit: tc.limit}
			page, err := s.ListAttempts(ctx, p)
			nums := []int64{}
			for i, a := range page {
				nums = append(nums, a.Attempt)
				if a != atts[a.Attempt-1] {
					t.Errorf("ListAttempts(%+v)[%d] = %+v, want %+v", p, i, a, atts[a.Attempt-1])
				}
			}
			if err != nil || fmt.Sprint(nums) != tc.want {
				t.Errorf("ListAttempts(%+v) = %v, %v; want %s", p, nums, err, tc.want)
			}
		}
		if _, err := s.ListAttempts(ctx, store.ListAttemptsParams{TenantID: "tenant-b", OccurrenceID: o.OccurrenceID, After: 3}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ListAttempts of another tenant's occurrence past its last attempt: %v, want ErrNotFound", err)
		}
	})

	t.Run("ReplayRefused", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_replay_no", record.OverlapAllow)
		var occs []record.Occurrence
		for i, st := range []record.OccurrenceState{record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRunning,
			record.OccurrenceSucceeded, record.OccurrenceRetryWait, record.OccurrenceMissed, record.OccurrenceCanceled, record.OccurrenceSkippedOverlap} {
			o := readyOccurrence(sc, i, record.LaneStrict)
			o.State = st
			occs = append(occs, o)
		}
		dead := readyOccurrence(sc, 20, record.LaneStrict)
		dead.State, dead.FinishedAt = record.OccurrenceDead, at(time.Hour)
		mustInsertOccurrences(t, s, len(occs)+1, append(occs, dead)...)
		for _, o := range occs {
			_, err := engine.ReplayOccurrence(ctx, s, "tenant-a", o.OccurrenceID, at(time.Hour))
			wantErr(t, "replay of a "+string(o.State)+" occurrence", err, store.ErrConflict)
			if err != nil && !strings.Contains(err.Error(), string(o.State)) {
				t.Errorf("replay of a %s occurrence: %q does not say its state", o.State, err)
			}
			assertOccurrence(t, "after a refused replay", mustGetOccurrence(t, s, "tenant-a", o.OccurrenceID), o)
		}
		_, err := engine.ReplayOccurrence(ctx, s, "tenant-b", dead.OccurrenceID, at(time.Hour))
		wantErr(t, "replay of another tenant's occurrence", err, store.ErrNotFound)
		_, err = engine.ReplayOccurrence(ctx, s, "tenant-a", "occ_missing", at(time.Hour))
		wantErr(t, "replay of a missing occurrence", err, store.ErrNotFound)
		assertOccurrence(t, "DEAD after refused replays", mustGetOccurrence(t, s, "tenant-a", dead.OccurrenceID), dead)
	})

	t.Run("NextAvailable", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		sc := queueSchedule(t, s, "tenant-a", "sch_next", record.OverlapAllow)
		other := queueSchedule(t, s, "tenant-b", "sch_next_b", record.OverlapAllow)
		next := func() time.Time {
			t.Helper()
			got, err := s.NextAvailable(ctx, "tenant-a", jobsQueue)
			if err != nil {
				t.Fatalf("NextAvailable: %v", err)
			}
			return got
		}
		if got := next(); !got.IsZero() {
			t.Errorf("NextAvailable of an empty queue: %v, want zero", got)
		}
		var occs []record.Occurrence
		add := func(sc *record.Schedule, minute int, st record.OccurrenceState, lane record.Lane, available time.Duration) {
			o := readyOccurrence(sc, minute, lane)
			o.State, o.AvailableAt = st, at(available)
			occs = append(occs, o)
		}
		add(sc, 0, record.OccurrenceScheduled, record.LaneStrict, time.Second)
		add(sc, 1, record.OccurrenceRunning, record.LaneStrict, 0)
		add(sc, 2, record.OccurrenceDead, record.LaneStrict, 0)
		add(other, 0, record.OccurrenceEnqueued, record.LaneStrict, 0)
		add(sc, 3, record.OccurrenceEnqueued, record.LaneStrict, 5*time.Minute)
		add(sc, 4, record.OccurrenceEnqueued, record.LaneCatchUp, 3*time.Minute)
		add(sc, 5, record.OccurrenceRetryWait, record.LaneFlexible, 2*time.Minute+7*time.Millisecond)
		mustInsertOccurrences(t, s, len(occs), occs...)
		if got := next(); !got.Equal(at(2*time.Minute + 7*time.Millisecond)) {
			t.Errorf("NextAvailable = %v, want the RETRY_WAIT one's", got)
		}
		if got, err := s.NextAvailable(ctx, "tenant-a", "mail"); err != nil || !got.IsZero() {
			t.Errorf("NextAvailable of another queue: %v, %v", got, err)
		}
		// Claimed ones leave: at 3 min the strict lane has nothing available
		// yet, so the flexible one goes first, then the catch-up one.
		mustClaim(t, s, "tenant-a", 1, at(3*time.Minute))
		if got := next(); !got.Equal(at(3 * time.Minute)) {
			t.Errorf("NextAvailable after a claim = %v, want 3 min", got)
		}
		mustClaim(t, s, "tenant-a", 1, at(3*time.Minute))
		if got := next(); !got.Equal(at(5 * time.Minute)) {
			t.Errorf("NextAvailable after two claims = %v, want 5 min", got)
		}
	})
}

// queueSchedule inserts an ACTIVE schedule on jobsQueue with the given
// overlap policy and 3 attempts.
func queueSchedule(t *testing.T, s Store, tenantID, scheduleID string, policy record.OverlapPolicy) *record.Schedule {
	t.Helper()
	sc := NewSchedule(tenantID, scheduleID)
	sc.Queue, sc.OverlapPolicy = jobsQueue, policy
	sc.Retry.MaxAttempts = 3
	mustInsertSchedule(t, s, sc)
	return sc
}

// readyOccurrence returns an ENQUEUED occurrence of sc scheduled and
// available minute minutes after t0, in lane.
func readyOccurrence(sc *record.Schedule, minute int, lane record.Lane) record.Occurrence {
	o := NewOccurrence(sc, at(time.Duration(minute)*time.Minute))
	o.State, o.Lane, o.EnqueuedAt = record.OccurrenceEnqueued, lane, at(-time.Hour)
	return o
}

type readySpec struct {
	name   string
	minute int
	lane   record.Lane
}

// insertReady inserts ready occurrences and returns their names by id.
func insertReady(t *testing.T, s Store, sc *record.Schedule, specs []readySpec) map[string]string {
	t.Helper()
	names := map[string]string{}
	var occs []record.Occurrence
	for _, sp := range specs {
		o := readyOccurrence(sc, sp.minute, sp.lane)
		occs = append(occs, o)
		names[o.OccurrenceID] = sp.name
	}
	mustInsertOccurrences(t, s, len(occs), occs...)
	return names
}

func findName(t *testing.T, names map[string]string, name string) string {
	t.Helper()
	for id, n := range names {
		if n == name {
			return id
		}
	}
	t.Fatalf("no occurrence named %s", name)
	return ""
}

func claimNames(cs []store.Claimed, names map[string]string) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, names[c.Occurrence.OccurrenceID])
	}
	return out
}

// mustClaim claims from jobsQueue as worker-1 under testLease.
func mustClaim(t *testing.T, s Store, tenantID string, limit int, now time.Time) []store.Claimed {
	t.Helper()
	got, err := engine.ClaimOccurrences(t.Context(), s, store.ClaimParams{TenantID: tenantID, Queue: jobsQueue, WorkerID: "worker-1",
		Limit: limit, Lease: testLease, Now: now})
	if err != nil {
		t.Fatalf("ClaimOccurrences: %v", err)
	}
	if len(got) > limit {
		t.Fatalf("ClaimOccurrences: %d claimed, over the limit %d", len(got), limit)
	}
	return got
}

// mustFinish finishes a batch in which every item must succeed.
func mustFinish(t *testing.T, s Store, ps ...store.FinishParams) []store.FinishResult {
	t.Helper()
	res, err := s.FinishAttempts(t.Context(), ps)
	if err != nil {
		t.Fatalf("FinishAttempts: %v", err)
	}
	if len(res) != len(ps) {
		t.Fatalf("FinishAttempts: %d results for %d items", len(res), len(ps))
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("FinishAttempts item %d: %v", i, r.Err)
		}
	}
	return res
}

// mustExpire runs ExpireLeases and wants exactly the counts want. Every
// expired attempt's occurrence ends one way, so Expired is always the sum
// of the others, and every DEAD one has one reason, so Dead is the sum of
// its two.
func mustExpire(t *testing.T, s Store, now time.Time, limit int, want store.ExpireResult) {
	t.Helper()
	got, err := engine.ExpireLeases(t.Context(), s, now, limit)
	if err != nil {
		t.Fatalf("ExpireLeases(%v, %d): %v", now, limit, err)
	}
	if got.Expired != got.Requeued+got.Dead+got.Canceled {
		t.Errorf("ExpireLeases(%v, %d) = %+v: Expired is not Requeued+Dead+Canceled", now, limit, got)
	}
	if got.Dead != got.DeadAttempts+got.DeadDeadline {
		t.Errorf("ExpireLeases(%v, %d) = %+v: Dead is not DeadAttempts+DeadDeadline", now, limit, got)
	}
	if got != want {
		t.Fatalf("ExpireLeases(%v, %d) = %+v, want %+v", now, limit, got, want)
	}
}

func assertAttempts(t *testing.T, s Store, tenantID, occurrenceID string, want ...record.Attempt) {
	t.Helper()
	got, err := s.ListAttempts(t.Context(), store.ListAttemptsParams{TenantID: tenantID, OccurrenceID: occurrenceID, Limit: store.MaxListLimit})
	if err != nil {
		t.Fatalf("ListAttempts(%s): %v", occurrenceID, err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("attempts of %s:\n got %+v\nwant %+v", occurrenceID, got, want)
	}
}
