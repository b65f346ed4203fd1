package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/testio"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
	"github.com/sched-dev/sched/internal/timetable"
)

func TestHealthReadyStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if code, raw := h.do("GET", "/healthz", nil); code != 200 || string(raw) != "ok\n" {
		t.Fatalf("healthz: %d %q", code, raw)
	}
	if code, raw := h.do("GET", "/readyz", nil); code != 200 {
		t.Fatalf("readyz: %d %s", code, raw)
	}
	var st api.Status
	h.ok(200, &st, "GET", "/v1/status", nil)
	want := api.Status{Version: "test-1", TZVersion: timetable.TZVersion(), NodeID: "node-a", Store: "sqlite", Shards: 4, Now: start}
	self := api.Status{Version: st.Version, TZVersion: st.TZVersion, NodeID: st.NodeID, Store: st.Store, Shards: st.Shards, Now: st.Now}
	if !reflect.DeepEqual(self, want) {
		t.Fatalf("status %+v, want %+v", self, want)
	}
	h.srv.Drain()
	h.fails(503, api.CodeUnavailable, "", "GET", "/readyz", nil)
	if code, _ := h.do("GET", "/healthz", nil); code != 200 {
		t.Fatalf("healthz while draining: %d, want 200 (alive, not ready)", code)
	}
}

func TestReadyzWhenTheStoreDoesNotAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.st.Close()
	h.fails(503, api.CodeUnavailable, "", "GET", "/readyz", nil)
}

// A full disk: the store answers reads but its writes fail with
// store_full. /readyz answers 503 until StoreFullWindow has passed since
// the last such failure, so a node that cannot write is not called ready.
func TestReadyzWhileWritesFailWithStoreFull(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.eng.Cluster.NoteStoreErr(fmt.Errorf("insert: %w", store.ErrBusy)) // not a full store
	if code, raw := h.do("GET", "/readyz", nil); code != 200 {
		t.Fatalf("readyz after a busy error: %d %s", code, raw)
	}
	h.eng.Cluster.NoteStoreErr(fmt.Errorf("shard 1: %w", fmt.Errorf("insert: %w", store.ErrStoreFull)))
	d := h.fails(503, api.CodeUnavailable, "", "GET", "/readyz", nil)
	if !strings.Contains(d.Message, "out of space") {
		t.Fatalf("readyz message %q does not say the store is out of space", d.Message)
	}
	h.clk.Advance(StoreFullWindow - time.Millisecond)
	h.fails(503, api.CodeUnavailable, "", "GET", "/readyz", nil)
	h.clk.Advance(time.Millisecond)
	if code, raw := h.do("GET", "/readyz", nil); code != 200 {
		t.Fatalf("readyz %v after the last store_full: %d %s, want 200", StoreFullWindow, code, raw)
	}
}

func TestScheduleLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	req := api.ScheduleRequest{Name: "nightly", Queue: "reports", Cron: "30 2 * * *", TimeZone: "America/New_York",
		Payload: json.RawMessage(`{"report": "daily", "n": [1, 2]}`), MisfirePolicy: "catch_up:3", MaxLateness: "5m"}
	c := h.create(req)
	if !c.Created || c.Version != 1 || c.State != "ACTIVE" || c.Kind != "cron" || c.Expression != "30 2 * * *" ||
		c.MisfirePolicy != "catch_up:3" || c.MaxLateness != "5m0s" || c.DSTGap != "skip" || c.DSTRepeat != "first" ||
		c.MaxAttempts != 10 || c.RetryBase != "1s" || c.RetryCap != "5m0s" || c.RetryDeadline != "24h0m0s" ||
		string(c.Payload) != `{"report":"daily","n":[1,2]}` {
		t.Fatalf("created: %+v", c)
	}
	if c.NextRunAt == nil || !c.NextRunAt.Equal(time.Date(2027, 1, 5, 7, 30, 0, 0, time.UTC)) {
		t.Fatalf("next_run_at %v, want 2027-01-05T07:30:00Z", c.NextRunAt)
	}
	if len(c.Preview) != PreviewCount || c.Preview[0].Local != "2027-01-05T02:30:00-05:00" || !c.Preview[0].ScheduledFor.Equal(*c.NextRunAt) {
		t.Fatalf("preview %+v", c.Preview)
	}

	// Get by id and by name; the same schedule, without "created".
	var byID, byName api.Schedule
	h.ok(200, &byID, "GET", "/v1/schedules/"+c.ScheduleID, nil)
	h.ok(200, &byName, "GET", "/v1/schedules/nightly", nil)
	if !reflect.DeepEqual(byID, c.Schedule) || !reflect.DeepEqual(byName, c.Schedule) {
		t.Fatalf("get: %+v / %+v, want %+v", byID, byName, c.Schedule)
	}
	h.fails(409, api.CodeConflict, "", "POST", "/v1/schedules", req) // the name is taken

	// Update: a new version; an every schedule shows no DST options.
	var ch api.ChangeResult
	h.ok(200, &ch, "PUT", "/v1/schedules/nightly", api.ScheduleRequest{Name: "nightly", Queue: "reports", Every: "2h"})
	if ch.Schedule.Version != 2 || ch.Schedule.Kind != "every" || ch.Schedule.DSTGap != "" || ch.Schedule.MisfirePolicy != "fire_once" {
		t.Fatalf("update: %+v", ch)
	}
	h.ok(200, &ch, "POST", "/v1/schedules/nightly/pause", nil)
	if ch.Schedule.State != "PAUSED" || ch.Schedule.Version != 3 || len(ch.Schedule.Preview) != 0 || ch.Schedule.NextRunAt != nil {
		t.Fatalf("pause: %+v", ch)
	}
	h.ok(200, &ch, "POST", "/v1/schedules/"+c.ScheduleID+"/pause", "{}") // again: no change
	if ch.Schedule.Version != 3 {
		t.Fatalf("second pause changed the version: %+v", ch)
	}
	h.ok(200, &ch, "POST", "/v1/schedules/nightly/resume", nil)
	if ch.Schedule.State != "ACTIVE" || len(ch.Schedule.Preview) != PreviewCount {
		t.Fatalf("resume: %+v", ch)
	}
	h.ok(200, &ch, "POST", "/v1/schedules/nightly/cancel", nil)
	if ch.Schedule.State != "CANCELED" {
		t.Fatalf("cancel: %+v", ch)
	}
	h.fails(409, api.CodeConflict, "", "POST", "/v1/schedules/"+c.ScheduleID+"/resume", nil)
	h.fails(409, api.CodeConflict, "", "PUT", "/v1/schedules/"+c.ScheduleID, api.ScheduleRequest{Name: "nightly", Queue: "reports", Every: "1h"})

	// The name is free again once canceled.
	again := h.create(req)
	if again.ScheduleID == c.ScheduleID {
		t.Fatal("a new schedule got the canceled one's id")
	}
	for _, p := range []string{"/v1/schedules/nope", "/v1/schedules/sch_22222222222222222222222222"} {
		h.fails(404, api.CodeNotFound, "", "GET", p, nil)
		h.fails(404, api.CodeNotFound, "", "POST", p+"/pause", nil)
		h.fails(404, api.CodeNotFound, "", "PUT", p, req)
	}
}

func TestCreateIdempotency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := everyMinute("a")
	first.IdempotencyKey = "key-1"
	c := h.create(first)
	var again api.CreateResult
	h.ok(200, &again, "POST", "/v1/schedules", first)
	if again.Created || again.ScheduleID != c.ScheduleID {
		t.Fatalf("retry with the same key: %+v", again)
	}
	// The key in the header works the same way.
	noKey := everyMinute("a")
	h.ok(200, &again, "POST", "/v1/schedules", noKey, "Idempotency-Key", "key-1")
	if again.Created || again.ScheduleID != c.ScheduleID {
		t.Fatalf("retry with the header: %+v", again)
	}
	other := everyMinute("b")
	h.fails(409, api.CodeConflict, "", "POST", "/v1/schedules", other, "Idempotency-Key", "key-1")
	h.fails(400, api.CodeInvalidArgument, "idempotency_key", "POST", "/v1/schedules", first, "Idempotency-Key", "key-2")
}

func TestListSchedulesPagingAndFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, h.create(everyMinute(fmt.Sprintf("s%d", i))).ScheduleID)
		h.clk.Advance(time.Millisecond) // ids sort by creation time
	}
	h.ok(200, nil, "POST", "/v1/schedules/s1/pause", nil)
	var got []string
	page := ""
	for pages := 0; ; pages++ {
		var l api.ScheduleList
		h.ok(200, &l, "GET", "/v1/schedules?limit=2&page="+page, nil)
		for _, s := range l.Schedules {
			got = append(got, s.ScheduleID)
		}
		if l.NextPage == "" || pages > 5 {
			break
		}
		page = l.NextPage
	}
	if !reflect.DeepEqual(got, ids) {
		t.Fatalf("paged ids %v, want %v", got, ids)
	}
	var paused api.ScheduleList
	h.ok(200, &paused, "GET", "/v1/schedules?state=paused", nil)
	if len(paused.Schedules) != 1 || paused.Schedules[0].Name != "s1" || paused.NextPage != "" {
		t.Fatalf("paused: %+v", paused)
	}
	h.fails(400, api.CodeInvalidArgument, "state", "GET", "/v1/schedules?state=SLEEPING", nil)
	h.fails(400, api.CodeInvalidArgument, "limit", "GET", "/v1/schedules?limit=0", nil)
	h.fails(400, api.CodeInvalidArgument, "limit", "GET", "/v1/schedules?limit=1001", nil)
	h.fails(400, api.CodeInvalidArgument, "stat", "GET", "/v1/schedules?stat=ACTIVE", nil)
	h.fails(400, api.CodeInvalidArgument, "state", "GET", "/v1/schedules?state=ACTIVE&state=PAUSED", nil)
}

// The worker's side: occurrences, claim, heartbeat, ack, nack, the DLQ and
// replay, and the fencing token: an ack or heartbeat that names another
// attempt than the current one is refused as stale.
func TestQueueFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.create(everyMinute("each minute"))
	h.plan(time.Minute) // 10:01 is due

	var occs api.OccurrenceList
	h.ok(200, &occs, "GET", "/v1/occurrences?schedule="+url.QueryEscape("each minute"), nil)
	if len(occs.Occurrences) == 0 || occs.Occurrences[0].State != "ENQUEUED" || occs.Occurrences[0].ScheduleID != c.ScheduleID {
		t.Fatalf("occurrences: %+v", occs)
	}
	h.fails(404, api.CodeNotFound, "", "GET", "/v1/occurrences?schedule=nope", nil)
	h.fails(400, api.CodeInvalidArgument, "state", "GET", "/v1/occurrences?state=LOST", nil)

	var cl api.ClaimResult
	h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w1", Lease: "10s"})
	if len(cl.Claimed) != 1 {
		t.Fatalf("claim: %+v", cl)
	}
	got := cl.Claimed[0]
	if got.Attempt != 1 || string(got.Payload) != `{"n":1}` || got.ScheduleID != c.ScheduleID ||
		!got.LeaseExpiresAt.Equal(h.clk.Now().Add(10*time.Second)) || !got.ScheduledFor.Equal(start.Add(time.Minute)) {
		t.Fatalf("claimed: %+v", got)
	}
	occ := "/v1/occurrences/" + got.OccurrenceID
	var o api.Occurrence
	h.ok(200, &o, "GET", occ, nil)
	if o.State != "RUNNING" || o.AttemptCount != 1 || o.FirstClaimedAt == nil {
		t.Fatalf("running occurrence: %+v", o)
	}
	var hb api.HeartbeatResult
	h.ok(200, &hb, "POST", occ+"/heartbeat", api.HeartbeatRequest{Attempt: 1, Lease: "20s"})
	if !hb.LeaseExpiresAt.Equal(h.clk.Now().Add(20*time.Second)) || hb.Superseded || hb.Canceled {
		t.Fatalf("heartbeat: %+v", hb)
	}
	h.fails(409, api.CodeStaleAttempt, "", "POST", occ+"/ack", api.AckRequest{Attempt: 2})
	h.fails(409, api.CodeStaleAttempt, "", "POST", occ+"/heartbeat", api.HeartbeatRequest{Attempt: 7})
	h.fails(400, api.CodeInvalidArgument, "attempt", "POST", occ+"/ack", api.AckRequest{})
	h.ok(200, &o, "POST", occ+"/ack", api.AckRequest{Attempt: 1})
	if o.State != "SUCCEEDED" || o.FinishedAt == nil {
		t.Fatalf("acked: %+v", o)
	}
	h.ok(200, &o, "POST", occ+"/ack", api.AckRequest{Attempt: 1}) // a retried ack is accepted
	var atts struct {
		Attempts []api.Attempt `json:"attempts"`
	}
	h.ok(200, &atts, "GET", occ+"/attempts", nil)
	if len(atts.Attempts) != 1 || atts.Attempts[0].Result != "SUCCEEDED" || atts.Attempts[0].WorkerID != "w1" {
		t.Fatalf("attempts: %+v", atts)
	}

	// A permanent failure goes to the DLQ; replay delivers the same id.
	h.plan(time.Minute)
	h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w1"})
	if len(cl.Claimed) != 1 {
		t.Fatalf("second claim: %+v", cl)
	}
	dead := "/v1/occurrences/" + cl.Claimed[0].OccurrenceID
	h.fails(400, api.CodeInvalidArgument, "class", "POST", dead+"/nack", api.NackRequest{Attempt: 1, Class: "maybe"})
	// Not DEAD yet: one sentence naming its state, not the engine's and
	// the store's messages one inside the other.
	if e := h.fails(409, api.CodeConflict, "", "POST", dead+"/replay", nil); e.Message != "occurrence "+cl.Claimed[0].OccurrenceID+" is RUNNING; only a DEAD occurrence can be replayed" {
		t.Fatalf("replay of a RUNNING occurrence: %q", e.Message)
	}
	h.ok(200, &o, "POST", dead+"/nack", api.NackRequest{Attempt: 1, Class: "permanent", Error: "bad input"})
	if o.State != "DEAD" {
		t.Fatalf("nacked: %+v", o)
	}
	var dlq api.OccurrenceList
	h.ok(200, &dlq, "GET", "/v1/dlq?queue=q", nil)
	if len(dlq.Occurrences) != 1 || dlq.Occurrences[0].OccurrenceID != cl.Claimed[0].OccurrenceID {
		t.Fatalf("dlq: %+v", dlq)
	}
	h.ok(200, &o, "POST", dead+"/replay", "")
	if o.State != "ENQUEUED" {
		t.Fatalf("replayed: %+v", o)
	}
	var re api.ClaimResult
	h.clk.Advance(time.Millisecond) // put back where the lane was last claimed: claimable 1 ms later
	h.ok(200, &re, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w2", Limit: 10})
	var ids []string
	for _, x := range re.Claimed {
		ids = append(ids, x.OccurrenceID)
		if x.OccurrenceID == cl.Claimed[0].OccurrenceID && x.Attempt != 2 {
			t.Fatalf("replayed delivery: attempt %d, want 2", x.Attempt)
		}
	}
	if !strings.Contains(strings.Join(ids, ","), cl.Claimed[0].OccurrenceID) {
		t.Fatalf("replay not delivered: %v", ids)
	}

	// Unknown occurrences are 404 on every route.
	unknown := "/v1/occurrences/occ_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	h.fails(404, api.CodeNotFound, "", "GET", unknown, nil)
	h.fails(404, api.CodeNotFound, "", "GET", unknown+"/attempts", nil)
	h.fails(404, api.CodeNotFound, "", "POST", unknown+"/ack", api.AckRequest{Attempt: 1})
	h.fails(404, api.CodeNotFound, "", "POST", unknown+"/nack", api.NackRequest{Attempt: 1, Class: "retryable"})
	h.fails(404, api.CodeNotFound, "", "POST", unknown+"/heartbeat", api.HeartbeatRequest{Attempt: 1})
	h.fails(404, api.CodeNotFound, "", "POST", unknown+"/replay", nil)
}

// A heartbeat tells the worker its schedule changed under it.
func TestHeartbeatReportsSupersededAndCanceled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(everyMinute("job"))
	h.plan(time.Minute)
	var cl api.ClaimResult
	h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	var ch api.ChangeResult
	h.ok(200, &ch, "POST", "/v1/schedules/job/cancel", nil)
	if ch.InFlight != 1 {
		t.Fatalf("cancel with one running: %+v, want in_flight 1", ch)
	}
	var hb api.HeartbeatResult
	h.ok(200, &hb, "POST", "/v1/occurrences/"+cl.Claimed[0].OccurrenceID+"/heartbeat", api.HeartbeatRequest{Attempt: 1})
	if !hb.Superseded || !hb.Canceled {
		t.Fatalf("heartbeat after cancel: %+v", hb)
	}
}

// A claim with a wait returns as soon as an occurrence is available.
func TestClaimLongPoll(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(everyMinute("poll"))
	done := make(chan api.ClaimResult, 1)
	go func() {
		var cl api.ClaimResult
		h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Wait: "5m"})
		done <- cl
	}()
	select {
	case cl := <-done:
		t.Fatalf("the claim returned before anything was due: %+v", cl)
	case <-time.After(100 * time.Millisecond):
	}
	h.plan(time.Minute)
	select {
	case cl := <-done:
		if len(cl.Claimed) != 1 {
			t.Fatalf("long poll: %+v", cl)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not return after an occurrence became available")
	}
	h.fails(400, api.CodeInvalidArgument, "wait", "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Wait: "6m"})
	h.fails(400, api.CodeInvalidArgument, "lease", "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Lease: "0s"})
	h.fails(400, api.CodeInvalidArgument, "queue", "POST", "/v1/claims", api.ClaimRequest{Queue: "", WorkerID: "w"})
	h.fails(400, api.CodeInvalidArgument, "worker_id", "POST", "/v1/claims", api.ClaimRequest{Queue: "q"})
	h.fails(400, api.CodeInvalidArgument, "limit", "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Limit: 1001})
}

// A claim carries the acks of the worker's last batch: they are taken in
// the claim's transaction, each answered on its own, and a bad one does not
// refuse the claim nor the others. During a drain the acks are still taken
// and nothing is claimed.
func TestClaimCarriesAcks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, name := range []string{"a", "b", "c"} {
		h.create(everyMinute(name))
	}
	h.plan(time.Minute)
	var first api.ClaimResult
	h.ok(200, &first, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Limit: 2})
	if len(first.Claimed) != 2 || first.Acks != nil {
		t.Fatalf("first claim: %+v", first)
	}
	unknown := "occ_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	acks := []api.AckItem{
		{OccurrenceID: first.Claimed[0].OccurrenceID, Attempt: 1},
		{OccurrenceID: first.Claimed[1].OccurrenceID, Attempt: 2}, // not its attempt
		{OccurrenceID: unknown, Attempt: 1},
	}

	// Bad acks refuse the whole request, and change nothing.
	before := h.snapshot()
	bad := func(i int, a api.AckItem) []api.AckItem {
		out := slices.Clone(acks)
		out[i] = a
		return out
	}
	h.fails(400, api.CodeInvalidArgument, "acks[1].attempt", "POST", "/v1/claims",
		api.ClaimRequest{Queue: "q", WorkerID: "w", Acks: bad(1, api.AckItem{OccurrenceID: unknown, Attempt: 0})})
	h.fails(400, api.CodeInvalidArgument, "acks[2].occurrence_id", "POST", "/v1/claims",
		api.ClaimRequest{Queue: "q", WorkerID: "w", Acks: bad(2, api.AckItem{Attempt: 1})})
	h.fails(400, api.CodeInvalidArgument, "acks", "POST", "/v1/claims",
		api.ClaimRequest{Queue: "q", WorkerID: "w", Acks: make([]api.AckItem, 1001)})
	h.fails(400, api.CodeInvalidArgument, "queue", "POST", "/v1/claims", api.ClaimRequest{WorkerID: "w", Acks: acks})
	if after := h.snapshot(); after != before {
		t.Fatalf("a refused claim with acks changed the store:\n%s\n---\n%s", before, after)
	}

	var next api.ClaimResult
	h.ok(200, &next, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Limit: 10, Acks: acks})
	if len(next.Claimed) != 1 || next.Claimed[0].OccurrenceID == first.Claimed[0].OccurrenceID || next.Claimed[0].OccurrenceID == first.Claimed[1].OccurrenceID {
		t.Fatalf("claim with acks claimed %+v", next.Claimed)
	}
	want := []api.AckOutcome{
		{OccurrenceID: acks[0].OccurrenceID, Attempt: 1},
		{OccurrenceID: acks[1].OccurrenceID, Attempt: 2, Error: &api.ErrorDetail{Code: api.CodeStaleAttempt}},
		{OccurrenceID: unknown, Attempt: 1, Error: &api.ErrorDetail{Code: api.CodeNotFound}},
	}
	if len(next.Acks) != len(want) {
		t.Fatalf("ack outcomes: %+v", next.Acks)
	}
	for i, w := range want {
		g := next.Acks[i]
		if g.OccurrenceID != w.OccurrenceID || g.Attempt != w.Attempt || (g.Error == nil) != (w.Error == nil) ||
			(g.Error != nil && (g.Error.Code != w.Error.Code || g.Error.Message == "")) {
			t.Fatalf("ack outcome %d: %+v (error %+v), want %+v (error %+v)", i, g, g.Error, w, w.Error)
		}
	}
	state := func(id string) string {
		t.Helper()
		var o api.Occurrence
		h.ok(200, &o, "GET", "/v1/occurrences/"+id, nil)
		return o.State
	}
	if s0, s1 := state(acks[0].OccurrenceID), state(acks[1].OccurrenceID); s0 != "SUCCEEDED" || s1 != "RUNNING" {
		t.Fatalf("after the acks: %s and %s, want SUCCEEDED and RUNNING", s0, s1)
	}

	// The same acks again get the same answers: a worker that lost the
	// answer may send them again.
	var again api.ClaimResult
	h.ok(200, &again, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Acks: acks[:1]})
	if len(again.Acks) != 1 || again.Acks[0].Error != nil || len(again.Claimed) != 0 {
		t.Fatalf("repeated ack: %+v", again)
	}

	h.srv.Drain()
	var drained api.ClaimResult
	h.ok(200, &drained, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Acks: []api.AckItem{
		{OccurrenceID: first.Claimed[1].OccurrenceID, Attempt: 1}, {OccurrenceID: next.Claimed[0].OccurrenceID, Attempt: 1}}})
	if len(drained.Claimed) != 0 || len(drained.Acks) != 2 || drained.Acks[0].Error != nil || drained.Acks[1].Error != nil {
		t.Fatalf("claim with acks during a drain: %+v", drained)
	}
	if s := state(next.Claimed[0].OccurrenceID); s != "SUCCEEDED" {
		t.Fatalf("acked during the drain: %s", s)
	}
	h.fails(503, api.CodeUnavailable, "", "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
}

// During a shutdown waiting claims return empty at once, and new ones are
// refused.
func TestDrainEndsLongPolls(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	done := make(chan api.ClaimResult, 1)
	go func() {
		var cl api.ClaimResult
		h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Wait: "5m"})
		done <- cl
	}()
	time.Sleep(100 * time.Millisecond) // let it start waiting (if it has not, it is refused below: also fine)
	began := time.Now()
	h.srv.Drain()
	select {
	case cl := <-done:
		if len(cl.Claimed) != 0 {
			t.Fatalf("drained claim: %+v", cl)
		}
		if d := time.Since(began); d > 2*time.Second {
			t.Fatalf("the long poll took %v to end", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the long poll did not end at the drain")
	}
	h.fails(503, api.CodeUnavailable, "", "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
}

func TestAuth(t *testing.T) {
	t.Parallel()
	// Budget enough for every failure below to be answered 401 rather
	// than by the limit on failures per address.
	h := newHarness(t, withToken("s3cret-token"), withLimits(func(c *Config) { c.AuthFailureRate = 1000 }))
	h.ok(200, nil, "GET", "/v1/status", nil)
	h.token = ""
	// The scheme is case-insensitive.
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		h.ok(200, nil, "GET", "/v1/status", nil, "Authorization", scheme+" s3cret-token")
	}
	for _, hdr := range [][]string{
		nil,
		{"Authorization", "Bearer wrong"},
		{"Authorization", "bearer wrong"},
		{"Authorization", "BEARER s3cret-toke"},
		{"Authorization", "Bearers3cret-token"},
		{"Authorization", "Bearer s3cret-toke"},
		{"Authorization", "Basic s3cret-token"},
		{"Authorization", "s3cret-token"},
	} {
		for _, route := range [][2]string{{"GET", "/v1/status"}, {"GET", "/v1/schedules"}, {"POST", "/v1/claims"}, {"GET", "/v1/nowhere"}} {
			h.fails(401, api.CodeUnauthorized, "", route[0], route[1], nil, hdr...)
		}
	}
	// Probes need no token.
	if code, _ := h.do("GET", "/healthz", nil); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
	if code, _ := h.do("GET", "/readyz", nil); code != 200 {
		t.Fatalf("readyz: %d", code)
	}
}

func TestRoutingErrorsAreJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fails(400, api.CodeBadRequest, "", "POST", "/v1/schedules", everyMinute("x"), "Origin", "https://evil.example")
	h.fails(400, api.CodeBadRequest, "", "GET", "/v1/schedules", nil, "Origin", "null")
	h.fails(404, api.CodeNotFound, "", "GET", "/v2/schedules", nil)
	h.fails(404, api.CodeNotFound, "", "GET", "/v1/schedules/x/y/z", nil)
	h.fails(405, api.CodeBadRequest, "", "DELETE", "/v1/schedules/x", nil)
	h.fails(405, api.CodeBadRequest, "", "GET", "/v1/claims", nil)
}

// Names are stored verbatim, whatever they contain, and found again by a
// path-escaped name.
func TestNamesRoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, name := range []string{"' OR 1=1 --", "a/b", "日本語 ジョブ", `"quoted"; DROP TABLE schedules;`, "50%", "x?y=z#w"} {
		c := h.create(everyMinute(name))
		if c.Name != name {
			t.Fatalf("stored name %q, want %q", c.Name, name)
		}
		var got api.Schedule
		h.ok(200, &got, "GET", "/v1/schedules/"+url.PathEscape(name), nil)
		if got.ScheduleID != c.ScheduleID {
			t.Fatalf("get %q: %+v", name, got)
		}
	}
}

// Bad input (cron that never fires, bad or oversized cron, bad zones,
// oversized or malformed bodies, bad durations and limits, names no charset
// allows): a 400 (or 413) with a stable code and the field at fault, never a
// 500, and nothing changes.
func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(everyMinute("existing"))
	h.plan(time.Minute)
	before := h.snapshot()

	cron := func(expr, zone string) api.ScheduleRequest {
		return api.ScheduleRequest{Name: "new", Queue: "q", Cron: expr, TimeZone: zone}
	}
	with := func(f func(*api.ScheduleRequest)) api.ScheduleRequest {
		r := everyMinute("new")
		f(&r)
		return r
	}
	big := strings.Repeat("x", record.MaxPayload-1) // + 2 quotes = 256 KiB + 1
	deep := strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001)
	cases := []struct {
		name         string
		body         any
		status       int
		code, field  string
		method, path string
	}{
		// Valid cron syntax that can never fire.
		{"31 feb", cron("0 0 31 2 *", "UTC"), 400, api.CodeCronNeverFires, "cron", "", ""},
		{"30 feb", cron("0 0 30 2 *", "UTC"), 400, api.CodeCronNeverFires, "cron", "", ""},
		{"31 short months", cron("0 0 31 4,6,9,11 *", "UTC"), 400, api.CodeCronNeverFires, "cron", "", ""},
		// Bad or oversized cron.
		{"cron 340 KB", `{"name":"new","queue":"q","time_zone":"UTC","cron":"` + strings.Repeat("1,", 170_000) + `1 * * * *"}`, 400, api.CodeInvalidArgument, "cron", "", ""},
		{"cron step 0", cron("*/0 * * * *", "UTC"), 400, api.CodeInvalidArgument, "cron", "", ""},
		{"cron too long", cron(strings.Repeat("1,", 1000)+"1 * * * *", "UTC"), 400, api.CodeInvalidArgument, "cron", "", ""},
		{"cron 61", cron("61 * * * *", "UTC"), 400, api.CodeInvalidArgument, "cron", "", ""},
		// Zones.
		{"zone empty", cron("0 0 * * *", ""), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		{"zone Local", cron("0 0 * * *", "Local"), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		{"zone path", cron("0 0 * * *", "../../etc/passwd"), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		{"zone abs", cron("0 0 * * *", "/etc/localtime"), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		{"zone dotdot", cron("0 0 * * *", "America/Argentina/../../../etc/passwd"), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		{"zone mars", cron("0 0 * * *", "Mars/Olympus"), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		{"zone 1 KB", cron("0 0 * * *", strings.Repeat("A", 1024)), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		{"every with bad zone", with(func(r *api.ScheduleRequest) { r.TimeZone = "Nowhere/Else" }), 400, api.CodeInvalidTimeZone, "time_zone", "", ""},
		// Bodies.
		{"payload 256 KiB + 1", `{"name":"new","queue":"q","every":"1m","payload":"` + big + `"}`, 413, api.CodeTooLarge, "payload", "", ""},
		{"body over the cap", `{"name":"new","queue":"q","every":"1m","payload":"` + strings.Repeat("y", MaxBody) + `"}`, 413, api.CodeTooLarge, "", "", ""},
		{"depth 10001", `{"name":"new","queue":"q","every":"1m","payload":` + deep + `}`, 400, api.CodeBadRequest, "", "", ""},
		{"depth 65", `{"name":"new","queue":"q","every":"1m","payload":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, 400, api.CodeBadRequest, "", "", ""},
		{"tenant in the body", `{"tenant_id":"other","tenant_id":"evil","name":"new","queue":"q","every":"1m"}`, 400, api.CodeBadRequest, "", "", ""},
		{"unknown field", `{"name":"new","queue":"q","every":"1m","colour":"red"}`, 400, api.CodeBadRequest, "", "", ""},
		{"invalid UTF-8", "{\"name\":\"new\xff\",\"queue\":\"q\",\"every\":\"1m\"}", 400, api.CodeBadRequest, "", "", ""},
		{"trailing data", `{"name":"new","queue":"q","every":"1m"} {}`, 400, api.CodeBadRequest, "", "", ""},
		{"not JSON", `name=new`, 400, api.CodeBadRequest, "", "", ""},
		{"array", `[]`, 400, api.CodeBadRequest, "", "", ""},
		{"empty body", ``, 400, api.CodeBadRequest, "", "", ""},
		{"wrong type", `{"name":"new","queue":"q","every":"1m","max_attempts":"ten"}`, 400, api.CodeBadRequest, "", "", ""},
		// Durations and limits.
		{"max_lateness huge", with(func(r *api.ScheduleRequest) { r.MaxLateness = "9999999999h" }), 400, api.CodeInvalidArgument, "max_lateness", "", ""},
		{"max_lateness 0s", with(func(r *api.ScheduleRequest) { r.MaxLateness = "0s" }), 400, api.CodeInvalidArgument, "max_lateness", "", ""},
		{"max_lateness -1s", with(func(r *api.ScheduleRequest) { r.MaxLateness = "-1s" }), 400, api.CodeInvalidArgument, "max_lateness", "", ""},
		{"max_lateness 1ns", with(func(r *api.ScheduleRequest) { r.MaxLateness = "1ns" }), 400, api.CodeInvalidArgument, "max_lateness", "", ""},
		{"retry_base 0s", with(func(r *api.ScheduleRequest) { r.RetryBase = "0s" }), 400, api.CodeInvalidArgument, "retry_base", "", ""},
		{"retry_cap 1ns", with(func(r *api.ScheduleRequest) { r.RetryCap = "1ns" }), 400, api.CodeInvalidArgument, "retry_cap", "", ""},
		{"retry_deadline -1s", with(func(r *api.ScheduleRequest) { r.RetryDeadline = "-1s" }), 400, api.CodeInvalidArgument, "retry_deadline", "", ""},
		{"flexible_window 1ns", with(func(r *api.ScheduleRequest) { r.FlexibleWindow = "1ns" }), 400, api.CodeInvalidArgument, "flexible_window", "", ""},
		{"flexible_window -1s", with(func(r *api.ScheduleRequest) { r.FlexibleWindow = "-1s" }), 400, api.CodeInvalidArgument, "flexible_window", "", ""},
		{"every 9999999999h", with(func(r *api.ScheduleRequest) { r.Every = "9999999999h" }), 400, api.CodeInvalidArgument, "every", "", ""},
		{"every 0s", with(func(r *api.ScheduleRequest) { r.Every = "0s" }), 400, api.CodeInvalidArgument, "every", "", ""},
		{"every -1s", with(func(r *api.ScheduleRequest) { r.Every = "-1s" }), 400, api.CodeInvalidArgument, "every", "", ""},
		{"every 1ns", with(func(r *api.ScheduleRequest) { r.Every = "1ns" }), 400, api.CodeInvalidArgument, "every", "", ""},
		{"catch_up:1001", with(func(r *api.ScheduleRequest) { r.MisfirePolicy = "catch_up:1001" }), 400, api.CodeInvalidArgument, "misfire_policy", "", ""},
		{"catch_up:0", with(func(r *api.ScheduleRequest) { r.MisfirePolicy = "catch_up:0" }), 400, api.CodeInvalidArgument, "misfire_policy", "", ""},
		{"catch_up", with(func(r *api.ScheduleRequest) { r.MisfirePolicy = "catch_up" }), 400, api.CodeInvalidArgument, "misfire_policy", "", ""},
		{"catch_up:x", with(func(r *api.ScheduleRequest) { r.MisfirePolicy = "catch_up:x" }), 400, api.CodeInvalidArgument, "misfire_policy", "", ""},
		{"misfire bogus", with(func(r *api.ScheduleRequest) { r.MisfirePolicy = "sometimes" }), 400, api.CodeInvalidArgument, "misfire_policy", "", ""},
		{"overlap bogus", with(func(r *api.ScheduleRequest) { r.OverlapPolicy = "never" }), 400, api.CodeInvalidArgument, "overlap_policy", "", ""},
		{"max_attempts -1", with(func(r *api.ScheduleRequest) { r.MaxAttempts = -1 }), 400, api.CodeInvalidArgument, "max_attempts", "", ""},
		{"max_attempts 100000", with(func(r *api.ScheduleRequest) { r.MaxAttempts = 100000 }), 400, api.CodeInvalidArgument, "max_attempts", "", ""},
		{"at year 0", api.ScheduleRequest{Name: "new", Queue: "q", At: "0000-01-01T00:00:00Z"}, 400, api.CodeInvalidArgument, "at", "", ""},
		{"at year 10000", api.ScheduleRequest{Name: "new", Queue: "q", At: "10000-01-01T00:00:00Z"}, 400, api.CodeInvalidArgument, "at", "", ""},
		{"at in the past", api.ScheduleRequest{Name: "new", Queue: "q", At: "2020-01-01T00:00:00Z"}, 400, api.CodeInvalidArgument, "at", "", ""},
		{"anchor year 10000", with(func(r *api.ScheduleRequest) { r.Anchor = "10000-01-01T00:00:00Z" }), 400, api.CodeInvalidArgument, "anchor", "", ""},
		{"two kinds", with(func(r *api.ScheduleRequest) { r.Cron = "* * * * *" }), 400, api.CodeInvalidArgument, "cron", "", ""},
		{"no kind", api.ScheduleRequest{Name: "new", Queue: "q"}, 400, api.CodeInvalidArgument, "cron", "", ""},
		{"dst on every", with(func(r *api.ScheduleRequest) { r.DSTGap = "shift" }), 400, api.CodeInvalidArgument, "dst_gap", "", ""},
		{"dst_repeat bogus", api.ScheduleRequest{Name: "new", Queue: "q", Cron: "0 1 * * *", TimeZone: "UTC", DSTRepeat: "twice"}, 400, api.CodeInvalidArgument, "dst_repeat", "", ""},
		// Names, queues and keys that no charset allows.
		{"name with NUL", with(func(r *api.ScheduleRequest) { r.Name = "a\x00b" }), 400, api.CodeInvalidArgument, "name", "", ""},
		{"name with newline", with(func(r *api.ScheduleRequest) { r.Name = "a\nb" }), 400, api.CodeInvalidArgument, "name", "", ""},
		{"name 4 KB", with(func(r *api.ScheduleRequest) { r.Name = strings.Repeat("n", 4096) }), 400, api.CodeInvalidArgument, "name", "", ""},
		{"name empty", with(func(r *api.ScheduleRequest) { r.Name = "" }), 400, api.CodeInvalidArgument, "name", "", ""},
		{"queue SQL", with(func(r *api.ScheduleRequest) { r.Queue = "' OR 1=1 --" }), 400, api.CodeInvalidArgument, "queue", "", ""},
		{"queue NUL", with(func(r *api.ScheduleRequest) { r.Queue = "q\x00" }), 400, api.CodeInvalidArgument, "queue", "", ""},
		{"queue 4 KB", with(func(r *api.ScheduleRequest) { r.Queue = strings.Repeat("q", 4096) }), 400, api.CodeInvalidArgument, "queue", "", ""},
		{"key NUL", with(func(r *api.ScheduleRequest) { r.IdempotencyKey = "k\x00" }), 400, api.CodeInvalidArgument, "idempotency_key", "", ""},
		{"key 4 KB", with(func(r *api.ScheduleRequest) { r.IdempotencyKey = strings.Repeat("k", 4096) }), 400, api.CodeInvalidArgument, "idempotency_key", "", ""},
		// The same checks on update, and on the queue's routes.
		{"update never fires", cron("0 0 31 2 *", "UTC"), 400, api.CodeCronNeverFires, "cron", "PUT", "/v1/schedules/existing"},
		{"update bad zone", cron("0 0 * * *", "Mars/Olympus"), 400, api.CodeInvalidTimeZone, "time_zone", "PUT", "/v1/schedules/existing"},
		{"update unknown field", `{"name":"existing","queue":"q","every":"1m","tenant_id":"x"}`, 400, api.CodeBadRequest, "", "PUT", "/v1/schedules/existing"},
		{"pause with a body", `{"force":true}`, 400, api.CodeBadRequest, "", "POST", "/v1/schedules/existing/pause"},
		{"claim queue SQL", api.ClaimRequest{Queue: "' OR 1=1 --", WorkerID: "w"}, 400, api.CodeInvalidArgument, "queue", "POST", "/v1/claims"},
		{"claim worker NUL", api.ClaimRequest{Queue: "q", WorkerID: "w\x00"}, 400, api.CodeInvalidArgument, "worker_id", "POST", "/v1/claims"},
		{"claim wait 9999999999h", api.ClaimRequest{Queue: "q", WorkerID: "w", Wait: "9999999999h"}, 400, api.CodeInvalidArgument, "wait", "POST", "/v1/claims"},
		{"claim lease 1ns", api.ClaimRequest{Queue: "q", WorkerID: "w", Lease: "1ns"}, 400, api.CodeInvalidArgument, "lease", "POST", "/v1/claims"},
		{"claim unknown field", `{"queue":"q","worker_id":"w","tenant_id":"t"}`, 400, api.CodeBadRequest, "", "POST", "/v1/claims"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method, path := tc.method, tc.path
			if method == "" {
				method, path = "POST", "/v1/schedules"
			}
			hh := *h
			hh.t = t
			hh.fails(tc.status, tc.code, tc.field, method, path, tc.body)
		})
	}
	if after := h.snapshot(); after != before {
		t.Fatalf("bad input changed the store:\nbefore %s\nafter  %s", before, after)
	}
	// Still up, still serving.
	h.ok(200, nil, "GET", "/v1/status", nil)
}

// Duplicate keys of a known field are harmless: the last one wins, as in
// Go's decoder, and nothing else is read from the body.
func TestDuplicateKeysLastWins(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var c api.CreateResult
	h.ok(201, &c, "POST", "/v1/schedules", `{"name":"first","name":"second","queue":"q","every":"1m"}`)
	if c.Name != "second" {
		t.Fatalf("name %q", c.Name)
	}
}

// A payload of exactly 256 KiB is accepted and delivered byte for byte.
func TestPayloadAtTheLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	payload := `"` + strings.Repeat("p", record.MaxPayload-2) + `"`
	var c api.CreateResult
	h.ok(201, &c, "POST", "/v1/schedules", `{"name":"big","queue":"q","every":"1m","payload":`+payload+`}`)
	h.plan(time.Minute)
	var cl api.ClaimResult
	h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	if len(cl.Claimed) != 1 || string(cl.Claimed[0].Payload) != payload {
		t.Fatalf("claimed payload of %d bytes", len(cl.Claimed[0].Payload))
	}
	// A schedule without a payload delivers null.
	h.create(api.ScheduleRequest{Name: "none", Queue: "empty", Every: "1m"})
	h.plan(time.Minute)
	code, raw := h.do("POST", "/v1/claims", api.ClaimRequest{Queue: "empty", WorkerID: "w"})
	if code != 200 || !strings.Contains(string(raw), `"payload":null`) {
		t.Fatalf("claim without payload: %d %s", code, raw)
	}
}

// A store locked by another process answers store_busy, and nothing is
// written.
func TestStoreBusy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(_ *Config, o *[]sqlite.Option) {
		*o = append(*o, sqlite.WithBusyTimeout(50*time.Millisecond))
	})
	h.create(everyMinute("existing"))
	before := h.snapshot()
	release := lockExclusive(t, h.path)
	h.fails(503, api.CodeStoreBusy, "", "POST", "/v1/schedules", everyMinute("new"))
	h.fails(503, api.CodeStoreBusy, "", "POST", "/v1/schedules/existing/pause", nil)
	release()
	if after := h.snapshot(); after != before {
		t.Fatalf("a busy answer changed the store")
	}
	h.create(everyMinute("new"))
}

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("insert: %w", store.ErrStoreFull), 507, api.CodeStoreFull},
		{fmt.Errorf("insert: %w", store.ErrBusy), 503, api.CodeStoreBusy},
		{fmt.Errorf("ack: %w", store.ErrStaleAttempt), 409, api.CodeStaleAttempt},
		{fmt.Errorf("get: %w", store.ErrNotFound), 404, api.CodeNotFound},
		{fmt.Errorf("x: %w", store.ErrConflict), 409, api.CodeConflict},
		{context.DeadlineExceeded, 503, api.CodeUnavailable},
		{errors.New(`sql: constraint failed near "secret payload"`), 500, api.CodeInternal},
		{fmt.Errorf("open: %w", store.ErrCorrupt), 500, api.CodeInternal},
	}
	for _, tc := range cases {
		status, d := classify(tc.err, "")
		if status != tc.status || d.Code != tc.code {
			t.Errorf("classify(%v) = %d %s, want %d %s", tc.err, status, d.Code, tc.status, tc.code)
		}
		if status == 500 && strings.Contains(d.Message, "secret") {
			t.Errorf("a 500 leaks the error's text: %q", d.Message)
		}
	}
}

// A secret in a payload never reaches the log or an error answer, whatever
// fails around it.
func TestPayloadNeverLeaks(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-7f3a9c"
	var logs syncBuffer
	h := newHarness(t, withLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	payload := json.RawMessage(`{"secret":"` + canary + `"}`)
	var bodies []string
	keep := func(code int, raw []byte) { bodies = append(bodies, fmt.Sprintf("%d %s", code, raw)) }
	bad := []any{
		api.ScheduleRequest{Name: "x", Queue: "q", Cron: "0 0 31 2 *", TimeZone: "UTC", Payload: payload},
		api.ScheduleRequest{Name: "x", Queue: "q", Every: "1m", TimeZone: "Mars/Olympus", Payload: payload},
		api.ScheduleRequest{Name: "x", Queue: "q", Every: "1m", MaxLateness: "0s", Payload: payload},
		`{"name":"x","queue":"q","every":"1m","payload":{"secret":"` + canary + `"},"extra":1}`,
		`{"name":"x","queue":"q","every":"1m","payload":{"secret":"` + canary + `"}`,
		`{"name":"x","queue":"q","every":"1m","max_attempts":"` + canary + `","payload":1}`,
		`{"name":"x","queue":"q","every":"1m","payload":"` + canary + strings.Repeat("z", record.MaxPayload) + `"}`,
	}
	for _, b := range bad {
		keep(h.do("POST", "/v1/schedules", b))
	}
	ok := everyMinute("job")
	ok.Payload = payload
	h.create(ok)
	keep(h.do("POST", "/v1/schedules", ok)) // name taken
	h.plan(time.Minute)
	var cl api.ClaimResult
	h.ok(200, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	occ := "/v1/occurrences/" + cl.Claimed[0].OccurrenceID
	keep(h.do("POST", occ+"/ack", api.AckRequest{Attempt: 9}))
	h.ok(200, nil, "POST", occ+"/nack", api.NackRequest{Attempt: 1, Class: "permanent"})
	keep(h.do("POST", occ+"/nack", api.NackRequest{Attempt: 2, Class: "permanent"}))
	h.ok(200, nil, "POST", occ+"/replay", nil)
	keep(h.do("POST", occ+"/replay", nil)) // not DEAD any more
	for _, b := range bodies {
		if strings.Contains(b, canary) {
			t.Errorf("an error answer carries the payload: %.200s", b)
		}
		if !strings.Contains(b, `"error"`) {
			t.Errorf("not an error: %.200s", b)
		}
	}
	if strings.Contains(logs.String(), canary) {
		t.Errorf("the log carries the payload:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `route="POST /v1/claims"`) {
		t.Errorf("no request log:\n%s", logs.String())
	}
}

type syncBuffer = testio.SyncBuffer
