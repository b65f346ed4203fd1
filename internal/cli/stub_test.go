package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// stubAPI stands in for schedd behind the API interface (no HTTP: the
// client's own tests cover the wire). It keeps schedules by name and
// answers the way docs/api.md says schedd does: defaults filled in,
// durations as Go prints them, the version bumped by every change.
type stubAPI struct {
	mu        sync.Mutex
	schedules map[string]*api.Schedule
	order     []string
	calls     []string
	err       error // when set, every call fails with it
	n         int

	occurrences []api.Occurrence
	dead        []api.Occurrence // the DLQ; occurrences when nil
	attempts    []api.Attempt
	claimed     []api.Claimed
	heartbeat   api.HeartbeatResult
	lastList    client.ListOccurrencesOptions
	lastDLQ     client.ListDLQOptions
	lastClaim   api.ClaimRequest
	lastFilter  api.DLQFilter
	pageSize    int // rows per page when a request gives no limit; 0: all
	status      *api.Status
	statuses    []api.Status // answered in turn by Status, the last one repeated
	triggered   map[string]api.Occurrence
}

func newStub() *stubAPI { return &stubAPI{schedules: map[string]*api.Schedule{}} }

var fixedNow = time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)

func (s *stubAPI) call(format string, args ...any) error {
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
	return s.err
}

func (s *stubAPI) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// store turns a request into a schedule as schedd would answer it.
func (s *stubAPI) store(sc *api.Schedule, r api.ScheduleRequest) error {
	norm, err := checkRequest(r)
	if err != nil {
		return &client.Error{Status: 400, Code: api.CodeInvalidArgument, Message: err.Error()}
	}
	sc.Name, sc.Queue, sc.Kind, sc.Expression, sc.TimeZone = r.Name, r.Queue, string(norm.Kind), r.Cron+r.At+r.Every, norm.Zone
	sc.Anchor = r.Anchor
	sc.DSTGap, sc.DSTRepeat = "skip", "first"
	if norm.Gap != "" {
		sc.DSTGap, sc.DSTRepeat = norm.Gap, norm.Repeat
	}
	sc.Payload = r.Payload
	sc.MisfirePolicy, sc.MaxLateness, sc.OverlapPolicy = norm.Misfire, norm.MaxLateness.String(), norm.Overlap
	sc.FlexibleWindow, sc.MaxAttempts = norm.FlexWindow.String(), norm.MaxAttempts
	sc.RetryBase, sc.RetryCap, sc.RetryDeadline = norm.RetryBase.String(), norm.RetryCap.String(), norm.RetryDeadline.String()
	sc.UpdatedAt = fixedNow
	return nil
}

func (s *stubAPI) Status(context.Context) (*api.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("status"); err != nil {
		return nil, err
	}
	if len(s.statuses) > 0 {
		st := s.statuses[0]
		if len(s.statuses) > 1 {
			s.statuses = s.statuses[1:]
		}
		return &st, nil
	}
	if s.status != nil {
		st := *s.status
		return &st, nil
	}
	return &api.Status{Version: "1.0", TZVersion: "2026a", NodeID: "n1", Store: "sqlite", Shards: 64, Now: fixedNow}, nil
}

// pageOf answers one page of items the way schedd pages a list: page is
// the opaque token of the previous answer (here an offset, prefixed with
// the order so that a token of the other order is refused), limit the
// page size (the stub's pageSize when 0), reverse newest first.
func pageOf[T any](items []T, page string, limit, pageSize int, reverse bool) ([]T, string, error) {
	order := "asc"
	if reverse {
		order = "desc"
		items = slices.Clone(items)
		slices.Reverse(items)
	}
	start := 0
	if page != "" {
		o, n, ok := strings.Cut(page, ":")
		if _, err := fmt.Sscan(n, &start); !ok || o != order || err != nil {
			return nil, "", &client.Error{Status: 400, Code: api.CodeInvalidArgument, Message: "page: not a token of this list in this order"}
		}
	}
	size := limit
	if size == 0 {
		size = pageSize
	}
	if size == 0 {
		size = len(items) + 1
	}
	start = min(start, len(items))
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = fmt.Sprintf("%s:%d", order, end)
	}
	return slices.Clone(items[start:end]), next, nil
}

func (s *stubAPI) Cluster(context.Context) (*api.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("cluster"); err != nil {
		return nil, err
	}
	exp := fixedNow.Add(8 * time.Second)
	return &api.Cluster{
		NodeID: "n1", Now: fixedNow,
		Nodes: []api.ClusterNode{
			{NodeID: "n1", Address: "unix:/run/a.sock", StartedAt: fixedNow, LastHeartbeat: fixedNow, ExpiresAt: exp, Live: true, ShardsOwned: 1, ClockOffset: "-1.5ms"},
			{NodeID: "n2", Address: "tcp:127.0.0.1:7070", StartedAt: fixedNow, LastHeartbeat: fixedNow, ExpiresAt: exp, Live: true, ShardsOwned: 1, ClockOffset: "0s"},
		},
		Shards: []api.ShardOwner{
			{Shard: 0, Owner: "n1", Epoch: 3, ExpiresAt: &exp, Live: true},
			{Shard: 1, Owner: "n2", Epoch: 1, ExpiresAt: &exp, Live: true},
			{Shard: 2},
		},
	}, nil
}

func (s *stubAPI) CreateSchedule(_ context.Context, r api.ScheduleRequest) (*api.CreateResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("create %s", r.Name); err != nil {
		return nil, err
	}
	if _, ok := s.schedules[r.Name]; ok {
		return nil, &client.Error{Status: 409, Code: api.CodeConflict, Message: "name taken"}
	}
	s.n++
	next := fixedNow.Add(time.Hour)
	sc := &api.Schedule{ScheduleID: fmt.Sprintf("sch_%02d", s.n), Version: 1, State: "ACTIVE", NextRunAt: &next, CreatedAt: fixedNow,
		Preview: []api.Firing{{ScheduledFor: next, Local: "2027-03-13T14:00:00+01:00"}}}
	if err := s.store(sc, r); err != nil {
		return nil, err
	}
	s.schedules[r.Name] = sc
	s.order = append(s.order, r.Name)
	return &api.CreateResult{Schedule: *sc, Created: true}, nil
}

func (s *stubAPI) find(ref string) (*api.Schedule, error) {
	for _, sc := range s.schedules {
		if sc.ScheduleID == ref || sc.Name == ref {
			return sc, nil
		}
	}
	return nil, &client.Error{Status: 404, Code: api.CodeNotFound, Message: fmt.Sprintf("schedule %q not found", ref)}
}

func (s *stubAPI) ListSchedules(_ context.Context, o client.ListSchedulesOptions) (*api.ScheduleList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("list state=%s page=%s limit=%d", o.State, o.Page, o.Limit); err != nil {
		return nil, err
	}
	var all []api.Schedule
	for _, n := range s.order {
		if sc := s.schedules[n]; sc != nil && (o.State == "" || sc.State == o.State) {
			all = append(all, *sc)
		}
	}
	page, next, err := pageOf(all, o.Page, o.Limit, s.pageSize, false)
	if err != nil {
		return nil, err
	}
	return &api.ScheduleList{Schedules: page, NextPage: next}, nil
}

func (s *stubAPI) GetSchedule(_ context.Context, ref string) (*api.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("get %s", ref); err != nil {
		return nil, err
	}
	sc, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	c := *sc
	return &c, nil
}

func (s *stubAPI) UpdateSchedule(_ context.Context, ref string, r api.ScheduleRequest) (*api.ChangeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("update %s", ref); err != nil {
		return nil, err
	}
	sc, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	old := sc.Name
	if err := s.store(sc, r); err != nil {
		return nil, err
	}
	if old != sc.Name {
		delete(s.schedules, old)
		s.schedules[sc.Name] = sc
		for i, n := range s.order {
			if n == old {
				s.order[i] = sc.Name
			}
		}
	}
	sc.Version++
	return &api.ChangeResult{Schedule: *sc, Canceled: 2, InFlight: 1}, nil
}

func (s *stubAPI) change(verb, ref, state string) (*api.ChangeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("%s %s", verb, ref); err != nil {
		return nil, err
	}
	sc, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	sc.State = state
	sc.Version++
	return &api.ChangeResult{Schedule: *sc, Canceled: 3, InFlight: 1}, nil
}

func (s *stubAPI) PauseSchedule(_ context.Context, ref string) (*api.ChangeResult, error) {
	return s.change("pause", ref, "PAUSED")
}
func (s *stubAPI) ResumeSchedule(_ context.Context, ref string) (*api.ChangeResult, error) {
	return s.change("resume", ref, "ACTIVE")
}
func (s *stubAPI) CancelSchedule(_ context.Context, ref string) (*api.ChangeResult, error) {
	return s.change("cancel", ref, "CANCELED")
}

func (s *stubAPI) ListOccurrences(_ context.Context, o client.ListOccurrencesOptions) (*api.OccurrenceList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastList = o
	if err := s.call("occurrences page=%s limit=%d reverse=%v", o.Page, o.Limit, o.Reverse); err != nil {
		return nil, err
	}
	page, next, err := pageOf(s.occurrences, o.Page, o.Limit, s.pageSize, o.Reverse)
	if err != nil {
		return nil, err
	}
	return &api.OccurrenceList{Occurrences: page, NextPage: next}, nil
}

func (s *stubAPI) ListAttempts(_ context.Context, id string, o client.ListAttemptsOptions) (*api.AttemptList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("attempts %s page=%s limit=%d", id, o.Page, o.Limit); err != nil {
		return nil, err
	}
	page, next, err := pageOf(s.attempts, o.Page, o.Limit, s.pageSize, false)
	if err != nil {
		return nil, err
	}
	return &api.AttemptList{Attempts: page, NextPage: next}, nil
}

// Trigger makes one manual occurrence per key (a new one per call without
// a key), as schedd does.
func (s *stubAPI) Trigger(_ context.Context, ref string, r api.TriggerRequest) (*api.TriggerResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("trigger %s key=%s", ref, r.IdempotencyKey); err != nil {
		return nil, err
	}
	sc, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	if s.triggered == nil {
		s.triggered = map[string]api.Occurrence{}
	}
	key := r.IdempotencyKey
	if key == "" {
		s.n++
		key = fmt.Sprintf("auto-%d", s.n)
	}
	if o, ok := s.triggered[sc.ScheduleID+"/"+key]; ok {
		return &api.TriggerResult{Occurrence: o}, nil
	}
	o := api.Occurrence{OccurrenceID: fmt.Sprintf("occ_z%02d", len(s.triggered)+1), ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
		ScheduledFor: fixedNow, AvailableAt: fixedNow, EnqueuedAt: tp(fixedNow), State: "ENQUEUED", Lane: "strict", Queue: sc.Queue,
		Due: true, ScheduleLag: sp("0s"), Waiting: sp("0s"), Manual: true}
	s.triggered[sc.ScheduleID+"/"+key] = o
	return &api.TriggerResult{Occurrence: o, Created: true}, nil
}

func (s *stubAPI) Claim(_ context.Context, r api.ClaimRequest) (*api.ClaimResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastClaim = r
	if err := s.call("claim %s", r.Queue); err != nil {
		return nil, err
	}
	return &api.ClaimResult{Claimed: s.claimed}, nil
}

func (s *stubAPI) Heartbeat(_ context.Context, id string, r api.HeartbeatRequest) (*api.HeartbeatResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("heartbeat %s %d %s", id, r.Attempt, r.Lease); err != nil {
		return nil, err
	}
	h := s.heartbeat
	return &h, nil
}

func (s *stubAPI) occ(id, state string) *api.Occurrence {
	o := sampleOccurrence()
	o.OccurrenceID, o.State = id, state
	return &o
}

func (s *stubAPI) Ack(_ context.Context, id string, r api.AckRequest) (*api.Occurrence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("ack %s %d", id, r.Attempt); err != nil {
		return nil, err
	}
	return s.occ(id, "SUCCEEDED"), nil
}

func (s *stubAPI) Nack(_ context.Context, id string, r api.NackRequest) (*api.Occurrence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("nack %s %d %s %s", id, r.Attempt, r.Class, r.Error); err != nil {
		return nil, err
	}
	return s.occ(id, "DEAD"), nil
}

func (s *stubAPI) Replay(_ context.Context, id string) (*api.Occurrence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("replay %s", id); err != nil {
		return nil, err
	}
	return s.occ(id, "ENQUEUED"), nil
}

func (s *stubAPI) ListDLQ(_ context.Context, o client.ListDLQOptions) (*api.OccurrenceList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastDLQ = o
	if err := s.call("dlq schedule=%s queue=%s limit=%d page=%s reverse=%v", o.Schedule, o.Queue, o.Limit, o.Page, o.Reverse); err != nil {
		return nil, err
	}
	dead := s.occurrences
	if s.dead != nil {
		dead = nil
		for _, d := range s.dead {
			if (o.Schedule == "" || o.Schedule == d.ScheduleID) && (o.Queue == "" || o.Queue == d.Queue) {
				dead = append(dead, d)
			}
		}
	}
	page, next, err := pageOf(dead, o.Page, o.Limit, s.pageSize, o.Reverse)
	if err != nil {
		return nil, err
	}
	return &api.OccurrenceList{Occurrences: page, NextPage: next}, nil
}

// matching is the DLQ entries f matches (by schedule id and queue).
func (s *stubAPI) matching(f api.DLQFilter) (ids []string, rest []api.Occurrence) {
	for _, o := range s.dead {
		if (f.Schedule == "" || f.Schedule == o.ScheduleID) && (f.Queue == "" || f.Queue == o.Queue) {
			ids = append(ids, o.OccurrenceID)
		} else {
			rest = append(rest, o)
		}
	}
	return ids, rest
}

func (s *stubAPI) ReplayDLQ(_ context.Context, f api.DLQFilter) (*api.DLQResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastFilter = f
	if err := s.call("dlq replay schedule=%s queue=%s", f.Schedule, f.Queue); err != nil {
		return nil, err
	}
	ids, rest := s.matching(f)
	s.dead = rest
	return &api.DLQResult{Count: len(ids), OccurrenceIDs: ids}, nil
}

func (s *stubAPI) PurgeDLQ(_ context.Context, f api.DLQFilter) (*api.DLQResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastFilter = f
	if err := s.call("dlq purge schedule=%s queue=%s", f.Schedule, f.Queue); err != nil {
		return nil, err
	}
	ids, rest := s.matching(f)
	s.dead = rest
	return &api.DLQResult{Count: len(ids)}, nil
}

func tp(t time.Time) *time.Time { return &t }

func sp(s string) *string { return &s }

// sampleSchedule has every field set, so JSON shows every key.
func sampleSchedule() api.Schedule {
	return api.Schedule{
		ScheduleID: "sch_01", Name: "nightly", Version: 3, State: "ACTIVE", NextFireAt: tp(fixedNow.Add(time.Hour)), NextRunAt: tp(fixedNow.Add(2 * time.Hour)),
		Kind: "every", Expression: "1h", TimeZone: "Europe/Berlin", Anchor: "2027-01-01T00:00:00Z",
		DSTGap: "skip", DSTRepeat: "first", Queue: "reports", Payload: json.RawMessage(`{"format":"pdf"}`),
		MisfirePolicy: "fire_once", MaxLateness: "1m0s", OverlapPolicy: "allow", FlexibleWindow: "0s",
		MaxAttempts: 10, RetryBase: "1s", RetryCap: "5m0s", RetryDeadline: "24h0m0s", MissedCount: 2,
		CreatedAt: fixedNow, UpdatedAt: fixedNow,
		Preview: []api.Firing{{ScheduledFor: fixedNow.Add(time.Hour), Local: "2027-03-13T14:00:00+01:00", Note: "a note"}},
	}
}

// sampleOccurrence has every field set, so JSON shows every key (a real
// one would not carry both waiting and a first claim).
func sampleOccurrence() api.Occurrence {
	return api.Occurrence{
		OccurrenceID: "occ_01", ScheduleID: "sch_01", ScheduleVersion: 3, ScheduledFor: fixedNow, AvailableAt: fixedNow,
		EnqueuedAt: tp(fixedNow.Add(-time.Minute)), State: "SUCCEEDED", Lane: "strict", Queue: "reports", AttemptCount: 1,
		FirstClaimedAt: tp(fixedNow.Add(time.Second)), FinishedAt: tp(fixedNow.Add(2 * time.Second)),
		Due: true, ScheduleLag: sp("-1m0s"), DeliveryLag: sp("1s"), ClaimLag: sp("1s"), Waiting: sp("0s"),
		Manual: false, DeadReason: "attempts_exhausted", LastError: "boom",
	}
}

// sampleStatus has every field set, so JSON shows every key.
func sampleStatus() api.Status {
	return api.Status{
		Version: "1.0", TZVersion: "2026a", NodeID: "n1", Store: "postgres", Shards: 64, Now: fixedNow,
		StatsAt:     fixedNow.Add(-2 * time.Second),
		ShardsOwned: 63,
		Nodes: []api.StatusNode{
			{NodeID: "n1", Address: "tcp:10.0.0.1:7070", Live: true, ShardsOwned: 32, ClockOffset: "-1.5ms", LastHeartbeat: fixedNow.Add(-time.Second),
				LastPass: &api.PlannerPass{At: fixedNow.Add(-2 * time.Second), Duration: "12.345ms", Shards: 32, Schedules: 17, Materialized: 40, Missed: 1, HorizonSlack: "59m58.5s"}},
			{NodeID: "n2", Address: "tcp:10.0.0.2:7070", Live: false, ShardsOwned: 31, ClockOffset: "0s", LastHeartbeat: fixedNow.Add(-time.Minute)},
		},
		ScheduleLag: api.LagWindows{
			LastMinute: api.Percentiles{Count: 120, P50: sp("1.4876ms"), P95: sp("5ms"), P99: sp("12ms")},
			LastHour:   api.Percentiles{Count: 7200, P50: sp("1ms"), P95: sp("1.2s"), P99: sp("1m24.4s")},
		},
		DeliveryLag: api.LagWindows{
			LastMinute: api.Percentiles{Count: 0},
			LastHour:   api.Percentiles{Count: 7100, P50: sp("850.123ms"), P95: sp("2.25s"), P99: sp("3m0.4s")},
		},
		DueBacklog: backlog(fixedNow, map[int]int64{0: 3, 2: 12, 3: 5, 10: 1, 30: 40, 59: 2}),
		Queues: []api.QueueDepth{
			{Tenant: "default", Queue: "reports", Lane: "strict", State: "ENQUEUED", Count: 12, Ready: 10},
			{Tenant: "default", Queue: "reports", Lane: "strict", State: "RUNNING", Count: 4},
			{Tenant: "default", Queue: "mail", Lane: "flex", State: "DEAD", Count: 2},
		},
		OldestReady: &api.OldestReady{OccurrenceID: "occ_14v0pdc0abcdefghijklmnop", ScheduleID: "sch_01", Queue: "reports",
			AvailableAt: fixedNow.Add(-3 * time.Minute), Age: "3m0.25s"},
		DLQSize:    2,
		LastHour:   api.EventCounts{Materialized: 240, Missed: 2, SkippedOverlap: 1, Claims: 230, Acks: 228, Dead: 1, Redeliveries: 3},
		Throughput: api.Throughput{ClaimsPerSecond: 3.8, AcksPerSecond: 3.75},
	}
}

// backlog is 60 minutes from start with the given counts, 0 elsewhere.
func backlog(start time.Time, due map[int]int64) []api.BacklogMinute {
	out := make([]api.BacklogMinute, 60)
	for i := range out {
		out[i] = api.BacklogMinute{Minute: start.Add(time.Duration(i) * time.Minute), Due: due[i]}
	}
	return out
}

func sampleClaimed() api.Claimed {
	return api.Claimed{OccurrenceID: "occ_01", ScheduleID: "sch_01", ScheduleVersion: 3, ScheduledFor: fixedNow, Attempt: 2,
		LeaseExpiresAt: fixedNow.Add(30 * time.Second), Queue: "reports", Payload: json.RawMessage(`{"n":1}`)}
}

// testFactory is a Factory on buffers; tty says whether Out is a terminal.
func testFactory(tty bool) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := &Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut, IsTTY: tty, NoColor: true,
		Now: func() time.Time { return fixedNow }, Version: "test",
		LookupEnv: func(string) (string, bool) { return "", false }}
	return f, out, errOut
}

func apiOf(s *stubAPI) func() (API, error) { return func() (API, error) { return s, nil } }

func mustJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}
