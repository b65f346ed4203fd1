package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	rules "github.com/sched-dev/sched/internal/schedule"
)

// Stub stands in for schedd behind the cmdutil.API interface (no HTTP: the
// client's own tests cover the wire). It keeps schedules by name and
// answers the way docs/api.md says schedd does: defaults filled in,
// durations as Go prints them, the version bumped by every change.
type Stub struct {
	mu sync.Mutex
	// Schedules are the schedules by name; Order is their creation order.
	Schedules map[string]*api.Schedule
	Order     []string
	calls     []string
	Err       error // when set, every call fails with it
	n         int

	// What the other calls answer, and what the last ones asked.
	Occurrences     []api.Occurrence
	Dead            []api.Occurrence // the DLQ; Occurrences when nil
	Attempts        []api.Attempt
	Claimed         []api.Claimed
	HeartbeatAnswer api.HeartbeatResult
	LastList        client.ListOccurrencesOptions
	LastDLQ         client.ListDLQOptions
	LastClaim       api.ClaimRequest
	LastFilter      api.DLQFilter
	PageSize        int // rows per page when a request gives no limit; 0: all
	StatusAnswer    *api.Status
	StatusAnswers   []api.Status // answered in turn by Status, the last one repeated
	Triggered       map[string]api.Occurrence
}

// NewStub is an empty Stub.
func NewStub() *Stub { return &Stub{Schedules: map[string]*api.Schedule{}} }

// FixedNow is the tests' clock.
var FixedNow = time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)

func (s *Stub) call(format string, args ...any) error {
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
	return s.Err
}

// Calls lists the calls made so far, one line each, in order.
func (s *Stub) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// store fills sc from r as schedd would answer it: r checked by schedd's
// own rules (package internal/schedule), refused with schedd's 400 and
// message, and the defaults filled in. The expression, anchor and payload
// are kept as sent, bar a cron expression's CRON_TZ= prefix, which schedd
// (Normalize) moves into the zone.
func (s *Stub) store(sc *api.Schedule, r api.ScheduleRequest) error {
	set, err := rules.FromRequest(&r)
	if err == nil {
		_, err = set.Normalize()
	}
	if err == nil {
		err = rules.CheckIdempotencyKey(r.IdempotencyKey)
	}
	if err != nil {
		return &client.Error{Status: 400, Code: api.CodeInvalidArgument, Message: err.Error()}
	}
	sc.Name, sc.Queue, sc.Kind, sc.Expression, sc.TimeZone = set.Name, set.Queue, string(set.Kind), set.Expr, set.TimeZone
	sc.Anchor = r.Anchor
	sc.DSTGap, sc.DSTRepeat = string(set.DSTGap), string(set.DSTRepeat)
	sc.Payload = r.Payload
	sc.MisfirePolicy = rules.FormatMisfire(set.MisfirePolicy, set.CatchUpK)
	sc.MaxLateness, sc.OverlapPolicy = set.MaxLateness.String(), string(set.OverlapPolicy)
	sc.FlexibleWindow, sc.MaxAttempts = set.FlexibleWindow.String(), set.Retry.MaxAttempts
	sc.RetryBase, sc.RetryCap, sc.RetryDeadline = set.Retry.BackoffBase.String(), set.Retry.BackoffCap.String(), set.Retry.Deadline.String()
	sc.UpdatedAt = FixedNow
	return nil
}

// The methods of cmdutil.API answer from the stub's fields.

// Status answers the StatusAnswers in turn, else StatusAnswer, else a
// small status.
func (s *Stub) Status(context.Context) (*api.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("status"); err != nil {
		return nil, err
	}
	if len(s.StatusAnswers) > 0 {
		st := s.StatusAnswers[0]
		if len(s.StatusAnswers) > 1 {
			s.StatusAnswers = s.StatusAnswers[1:]
		}
		return &st, nil
	}
	if s.StatusAnswer != nil {
		st := *s.StatusAnswer
		return &st, nil
	}
	return &api.Status{Version: "1.0", TZVersion: "2026a", NodeID: "n1", Store: "sqlite", Shards: 64, Now: FixedNow}, nil
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

func (s *Stub) Cluster(context.Context) (*api.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("cluster"); err != nil {
		return nil, err
	}
	exp := FixedNow.Add(8 * time.Second)
	return &api.Cluster{
		NodeID: "n1", Now: FixedNow,
		Nodes: []api.ClusterNode{
			{NodeID: "n1", Address: "unix:/run/a.sock", StartedAt: FixedNow, LastHeartbeat: FixedNow, ExpiresAt: exp, Live: true, ShardsOwned: 1, ClockOffset: "-1.5ms"},
			{NodeID: "n2", Address: "tcp:127.0.0.1:7070", StartedAt: FixedNow, LastHeartbeat: FixedNow, ExpiresAt: exp, Live: true, ShardsOwned: 1, ClockOffset: "0s"},
		},
		Shards: []api.ShardOwner{
			{Shard: 0, Owner: "n1", Epoch: 3, ExpiresAt: &exp, Live: true},
			{Shard: 1, Owner: "n2", Epoch: 1, ExpiresAt: &exp, Live: true},
			{Shard: 2},
		},
	}, nil
}

func (s *Stub) CreateSchedule(_ context.Context, r api.ScheduleRequest) (*api.CreateResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("create %s", r.Name); err != nil {
		return nil, err
	}
	if _, ok := s.Schedules[r.Name]; ok {
		return nil, &client.Error{Status: 409, Code: api.CodeConflict, Message: "name taken"}
	}
	s.n++
	next := FixedNow.Add(time.Hour)
	sc := &api.Schedule{ScheduleID: fmt.Sprintf("sch_%02d", s.n), Version: 1, State: "ACTIVE", NextRunAt: &next, CreatedAt: FixedNow,
		Preview: []api.Firing{{ScheduledFor: next, Local: "2027-03-13T14:00:00+01:00"}}}
	if err := s.store(sc, r); err != nil {
		return nil, err
	}
	s.Schedules[r.Name] = sc
	s.Order = append(s.Order, r.Name)
	return &api.CreateResult{Schedule: *sc, Created: true}, nil
}

// CreateSchedules creates each item as CreateSchedule does, each failing
// alone; a stub set to fail (Err) fails the whole request.
func (s *Stub) CreateSchedules(ctx context.Context, items []api.BatchItem) (*api.BatchResult, error) {
	s.mu.Lock()
	err := s.call("create %d schedules", len(items))
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return batchOf(ctx, items, s.CreateSchedule)
}

// batchOf answers a bulk create item by item with create, each failing
// alone, as schedd's bulk create does.
func batchOf(ctx context.Context, items []api.BatchItem, create func(context.Context, api.ScheduleRequest) (*api.CreateResult, error)) (*api.BatchResult, error) {
	res := &api.BatchResult{Items: make([]api.BatchItemResult, len(items))}
	for i, it := range items {
		r, err := create(ctx, it.Schedule)
		res.Items[i].Index = i
		var ce *client.Error
		switch {
		case err == nil:
			res.Items[i].Status, res.Items[i].Schedule = api.BatchCreated, &r.Schedule
			res.Created++
		case errors.As(err, &ce):
			res.Items[i].Status, res.Items[i].Error = api.BatchError, &api.ErrorDetail{Code: ce.Code, Message: ce.Message, Field: ce.Field}
			res.Failed++
		default:
			return nil, err
		}
	}
	return res, nil
}

// CheckCreateSchedule answers as CreateSchedule would and stores nothing.
func (s *Stub) CheckCreateSchedule(_ context.Context, r api.ScheduleRequest) (*api.CreateResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("check create %s", r.Name); err != nil {
		return nil, err
	}
	if _, ok := s.Schedules[r.Name]; ok {
		return nil, &client.Error{Status: 409, Code: api.CodeConflict, Message: "name taken"}
	}
	next := FixedNow.Add(time.Hour)
	sc := &api.Schedule{ScheduleID: "sch_dry", Version: 1, State: "ACTIVE", NextRunAt: &next, CreatedAt: FixedNow,
		Preview: []api.Firing{{ScheduledFor: next, Local: "2027-03-13T14:00:00+01:00"}}}
	if err := s.store(sc, r); err != nil {
		return nil, err
	}
	return &api.CreateResult{Schedule: *sc, Created: true, DryRun: true}, nil
}

// CheckCreateSchedules answers each item as CheckCreateSchedule does.
func (s *Stub) CheckCreateSchedules(ctx context.Context, items []api.BatchItem) (*api.BatchResult, error) {
	res, err := batchOf(ctx, items, s.CheckCreateSchedule)
	if res != nil {
		res.DryRun = true
	}
	return res, err
}

// CheckUpdateSchedule answers as UpdateSchedule would and changes nothing.
func (s *Stub) CheckUpdateSchedule(_ context.Context, ref string, r api.ScheduleRequest) (*api.ChangeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("check update %s", ref); err != nil {
		return nil, err
	}
	sc, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	c := *sc
	if err := s.store(&c, r); err != nil {
		return nil, err
	}
	c.Version++
	return &api.ChangeResult{Schedule: c, Canceled: 2, InFlight: 1, DryRun: true}, nil
}

func (s *Stub) find(ref string) (*api.Schedule, error) {
	for _, sc := range s.Schedules {
		if sc.ScheduleID == ref || sc.Name == ref {
			return sc, nil
		}
	}
	return nil, &client.Error{Status: 404, Code: api.CodeNotFound, Message: fmt.Sprintf("schedule %q not found", ref)}
}

func (s *Stub) ListSchedules(_ context.Context, o client.ListSchedulesOptions) (*api.ScheduleList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("list state=%s page=%s limit=%d", o.State, o.Page, o.Limit); err != nil {
		return nil, err
	}
	var all []api.Schedule
	for _, n := range s.Order {
		if sc := s.Schedules[n]; sc != nil && (o.State == "" || sc.State == o.State) {
			all = append(all, *sc)
		}
	}
	page, next, err := pageOf(all, o.Page, o.Limit, s.PageSize, false)
	if err != nil {
		return nil, err
	}
	return &api.ScheduleList{Schedules: page, NextPage: next}, nil
}

func (s *Stub) GetSchedule(_ context.Context, ref string) (*api.Schedule, error) {
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

func (s *Stub) UpdateSchedule(_ context.Context, ref string, r api.ScheduleRequest) (*api.ChangeResult, error) {
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
		delete(s.Schedules, old)
		s.Schedules[sc.Name] = sc
		for i, n := range s.Order {
			if n == old {
				s.Order[i] = sc.Name
			}
		}
	}
	sc.Version++
	return &api.ChangeResult{Schedule: *sc, Canceled: 2, InFlight: 1}, nil
}

func (s *Stub) change(verb, ref, state string) (*api.ChangeResult, error) {
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

func (s *Stub) PauseSchedule(_ context.Context, ref string) (*api.ChangeResult, error) {
	return s.change("pause", ref, "PAUSED")
}
func (s *Stub) ResumeSchedule(_ context.Context, ref string) (*api.ChangeResult, error) {
	return s.change("resume", ref, "ACTIVE")
}
func (s *Stub) CancelSchedule(_ context.Context, ref string) (*api.ChangeResult, error) {
	return s.change("cancel", ref, "CANCELED")
}

func (s *Stub) ListOccurrences(_ context.Context, o client.ListOccurrencesOptions) (*api.OccurrenceList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.LastList = o
	if err := s.call("occurrences page=%s limit=%d reverse=%v", o.Page, o.Limit, o.Reverse); err != nil {
		return nil, err
	}
	page, next, err := pageOf(s.Occurrences, o.Page, o.Limit, s.PageSize, o.Reverse)
	if err != nil {
		return nil, err
	}
	return &api.OccurrenceList{Occurrences: page, NextPage: next}, nil
}

func (s *Stub) ListAttempts(_ context.Context, id string, o client.ListAttemptsOptions) (*api.AttemptList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("attempts %s page=%s limit=%d", id, o.Page, o.Limit); err != nil {
		return nil, err
	}
	page, next, err := pageOf(s.Attempts, o.Page, o.Limit, s.PageSize, false)
	if err != nil {
		return nil, err
	}
	return &api.AttemptList{Attempts: page, NextPage: next}, nil
}

// Trigger makes one manual occurrence per key (a new one per call without
// a key), as schedd does.
func (s *Stub) Trigger(_ context.Context, ref string, r api.TriggerRequest) (*api.TriggerResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("trigger %s key=%s", ref, r.IdempotencyKey); err != nil {
		return nil, err
	}
	sc, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	if s.Triggered == nil {
		s.Triggered = map[string]api.Occurrence{}
	}
	key := r.IdempotencyKey
	if key == "" {
		s.n++
		key = fmt.Sprintf("auto-%d", s.n)
	}
	if o, ok := s.Triggered[sc.ScheduleID+"/"+key]; ok {
		return &api.TriggerResult{Occurrence: o}, nil
	}
	o := api.Occurrence{OccurrenceID: fmt.Sprintf("occ_z%02d", len(s.Triggered)+1), ScheduleID: sc.ScheduleID, ScheduleVersion: sc.Version,
		ScheduledFor: FixedNow, AvailableAt: FixedNow, EnqueuedAt: TP(FixedNow), State: "ENQUEUED", Lane: "strict", Queue: sc.Queue,
		Due: true, ScheduleLag: SP("0s"), Waiting: SP("0s"), Manual: true}
	s.Triggered[sc.ScheduleID+"/"+key] = o
	return &api.TriggerResult{Occurrence: o, Created: true}, nil
}

func (s *Stub) Claim(_ context.Context, r api.ClaimRequest) (*api.ClaimResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.LastClaim = r
	if err := s.call("claim %s", r.Queue); err != nil {
		return nil, err
	}
	return &api.ClaimResult{Claimed: s.Claimed}, nil
}

func (s *Stub) Heartbeat(_ context.Context, id string, r api.HeartbeatRequest) (*api.HeartbeatResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("heartbeat %s %d %s", id, r.Attempt, r.Lease); err != nil {
		return nil, err
	}
	h := s.HeartbeatAnswer
	return &h, nil
}

func (s *Stub) occ(id, state string) *api.Occurrence {
	o := SampleOccurrence()
	o.OccurrenceID, o.State = id, state
	return &o
}

func (s *Stub) Ack(_ context.Context, id string, r api.AckRequest) (*api.Occurrence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("ack %s %d", id, r.Attempt); err != nil {
		return nil, err
	}
	return s.occ(id, "SUCCEEDED"), nil
}

func (s *Stub) Nack(_ context.Context, id string, r api.NackRequest) (*api.Occurrence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("nack %s %d %s %s", id, r.Attempt, r.Class, r.Error); err != nil {
		return nil, err
	}
	return s.occ(id, "DEAD"), nil
}

func (s *Stub) Replay(_ context.Context, id string) (*api.Occurrence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("replay %s", id); err != nil {
		return nil, err
	}
	return s.occ(id, "ENQUEUED"), nil
}

func (s *Stub) ListDLQ(_ context.Context, o client.ListDLQOptions) (*api.OccurrenceList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.LastDLQ = o
	if err := s.call("dlq schedule=%s queue=%s limit=%d page=%s reverse=%v", o.Schedule, o.Queue, o.Limit, o.Page, o.Reverse); err != nil {
		return nil, err
	}
	dead := s.Occurrences
	if s.Dead != nil {
		dead = nil
		for _, d := range s.Dead {
			if (o.Schedule == "" || o.Schedule == d.ScheduleID) && (o.Queue == "" || o.Queue == d.Queue) {
				dead = append(dead, d)
			}
		}
	}
	page, next, err := pageOf(dead, o.Page, o.Limit, s.PageSize, o.Reverse)
	if err != nil {
		return nil, err
	}
	return &api.OccurrenceList{Occurrences: page, NextPage: next}, nil
}

// matching is the DLQ entries f matches (by schedule id and queue).
func (s *Stub) matching(f api.DLQFilter) (ids []string, rest []api.Occurrence) {
	for _, o := range s.Dead {
		if (f.Schedule == "" || f.Schedule == o.ScheduleID) && (f.Queue == "" || f.Queue == o.Queue) {
			ids = append(ids, o.OccurrenceID)
		} else {
			rest = append(rest, o)
		}
	}
	return ids, rest
}

func (s *Stub) ReplayDLQ(_ context.Context, f api.DLQFilter) (*api.DLQResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.LastFilter = f
	if err := s.call("dlq replay schedule=%s queue=%s", f.Schedule, f.Queue); err != nil {
		return nil, err
	}
	ids, rest := s.matching(f)
	s.Dead = rest
	return &api.DLQResult{Count: len(ids), OccurrenceIDs: ids}, nil
}

func (s *Stub) PurgeDLQ(_ context.Context, f api.DLQFilter) (*api.DLQResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.LastFilter = f
	if err := s.call("dlq purge schedule=%s queue=%s", f.Schedule, f.Queue); err != nil {
		return nil, err
	}
	ids, rest := s.matching(f)
	s.Dead = rest
	return &api.DLQResult{Count: len(ids)}, nil
}

// TP points at t.
func TP(t time.Time) *time.Time { return &t }

// SP points at s.
func SP(s string) *string { return &s }

// SampleSchedule has every field set, so JSON shows every key.
func SampleSchedule() api.Schedule {
	return api.Schedule{
		ScheduleID: "sch_01", Name: "nightly", Version: 3, State: "ACTIVE", NextFireAt: TP(FixedNow.Add(time.Hour)), NextRunAt: TP(FixedNow.Add(2 * time.Hour)),
		Kind: "every", Expression: "1h", TimeZone: "Europe/Berlin", Anchor: "2027-01-01T00:00:00Z",
		DSTGap: "skip", DSTRepeat: "first", Queue: "reports", Payload: json.RawMessage(`{"format":"pdf"}`),
		MisfirePolicy: "fire_once", MaxLateness: "1m0s", OverlapPolicy: "allow", FlexibleWindow: "0s",
		MaxAttempts: 10, RetryBase: "1s", RetryCap: "5m0s", RetryDeadline: "24h0m0s", MissedCount: 2,
		CreatedAt: FixedNow, UpdatedAt: FixedNow,
		Preview: []api.Firing{{ScheduledFor: FixedNow.Add(time.Hour), Local: "2027-03-13T14:00:00+01:00", Note: "a note"}},
	}
}

// SampleOccurrence has every field set, so JSON shows every key (a real
// one would not carry both waiting and a first claim).
func SampleOccurrence() api.Occurrence {
	return api.Occurrence{
		OccurrenceID: "occ_01", ScheduleID: "sch_01", ScheduleVersion: 3, ScheduledFor: FixedNow, AvailableAt: FixedNow,
		EnqueuedAt: TP(FixedNow.Add(-time.Minute)), State: "SUCCEEDED", Lane: "strict", Queue: "reports", AttemptCount: 1,
		FirstClaimedAt: TP(FixedNow.Add(time.Second)), FinishedAt: TP(FixedNow.Add(2 * time.Second)),
		Due: true, ScheduleLag: SP("-1m0s"), DeliveryLag: SP("1s"), ClaimLag: SP("1s"), Waiting: SP("0s"),
		Manual: false, DeadReason: "attempts_exhausted", LastError: "boom",
	}
}

// SampleStatus has every field set, so JSON shows every key.
func SampleStatus() api.Status {
	return api.Status{
		Version: "1.0", TZVersion: "2026a", NodeID: "n1", Store: "postgres", Shards: 64, Now: FixedNow,
		StatsAt:     FixedNow.Add(-2 * time.Second),
		ShardsOwned: 63,
		Nodes: []api.StatusNode{
			{NodeID: "n1", Address: "tcp:10.0.0.1:7070", Live: true, ShardsOwned: 32, ClockOffset: "-1.5ms", LastHeartbeat: FixedNow.Add(-time.Second),
				LastPass: &api.PlannerPass{At: FixedNow.Add(-2 * time.Second), Duration: "12.345ms", Shards: 32, Schedules: 17, Materialized: 40, Missed: 1, HorizonSlack: "59m58.5s"}},
			{NodeID: "n2", Address: "tcp:10.0.0.2:7070", Live: false, ShardsOwned: 31, ClockOffset: "0s", LastHeartbeat: FixedNow.Add(-time.Minute)},
		},
		ScheduleLag: &api.LagWindows{
			LastMinute: api.Percentiles{Count: 120, P50: SP("1.4876ms"), P95: SP("5ms"), P99: SP("12ms")},
			LastHour:   api.Percentiles{Count: 7200, P50: SP("1ms"), P95: SP("1.2s"), P99: SP("1m24.4s")},
		},
		DeliveryLag: &api.LagWindows{
			LastMinute: api.Percentiles{Count: 0},
			LastHour:   api.Percentiles{Count: 7100, P50: SP("850.123ms"), P95: SP("2.25s"), P99: SP("3m0.4s")},
		},
		DueBacklog: Backlog(FixedNow, map[int]int64{0: 3, 2: 12, 3: 5, 10: 1, 30: 40, 59: 2}),
		Queues: []api.QueueDepth{
			{Tenant: "default", Queue: "reports", Lane: "strict", State: "ENQUEUED", Count: 12, Ready: 10},
			{Tenant: "default", Queue: "reports", Lane: "strict", State: "RUNNING", Count: 4},
			{Tenant: "default", Queue: "mail", Lane: "flex", State: "DEAD", Count: 2},
		},
		OldestReady: &api.OldestReady{OccurrenceID: "occ_14v0pdc0abcdefghijklmnop", ScheduleID: "sch_01", Queue: "reports",
			AvailableAt: FixedNow.Add(-3 * time.Minute), Age: "3m0.25s"},
		DLQSize:    2,
		LastHour:   &api.EventCounts{Materialized: 240, Missed: 2, SkippedOverlap: 1, Claims: 230, Acks: 228, Dead: 1, Redeliveries: 3},
		Throughput: &api.Throughput{ClaimsPerSecond: 3.8, AcksPerSecond: 3.75},
	}
}

// Backlog is 60 minutes from start with the given counts, 0 elsewhere.
func Backlog(start time.Time, due map[int]int64) []api.BacklogMinute {
	out := make([]api.BacklogMinute, 60)
	for i := range out {
		out[i] = api.BacklogMinute{Minute: start.Add(time.Duration(i) * time.Minute), Due: due[i]}
	}
	return out
}

// SampleClaimed has every field set.
func SampleClaimed() api.Claimed {
	return api.Claimed{OccurrenceID: "occ_01", ScheduleID: "sch_01", ScheduleVersion: 3, ScheduledFor: FixedNow, Attempt: 2,
		LeaseExpiresAt: FixedNow.Add(30 * time.Second), Queue: "reports", Payload: json.RawMessage(`{"n":1}`)}
}

// NewFactory is a Factory on buffers; tty says whether Out is a terminal.
func NewFactory(tty bool) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := &cmdutil.Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut, IsTTY: tty, NoColor: true,
		Now: func() time.Time { return FixedNow }, Version: "test",
		LookupEnv: func(string) (string, bool) { return "", false }}
	return f, out, errOut
}

// APIOf is the API constructor of a command's options, answering s.
func APIOf(s *Stub) func() (cmdutil.API, error) { return func() (cmdutil.API, error) { return s, nil } }

var _ cmdutil.API = (*Stub)(nil)

// MustJSON decodes b, failing the test if it is not JSON.
func MustJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}
