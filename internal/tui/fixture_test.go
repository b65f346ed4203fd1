package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// The fixture is a small busy cluster on a fixed clock: two live nodes and
// a dead one, a queue (emails) its workers do not keep up with, a 10:00
// cliff in the next hour's firings, a nightly report that ran late after an
// outage, and a few dead letters. now is a Friday two days before Europe's
// clocks go forward, so the nightly report's preview meets the DST gap.
var now0 = time.Date(2027, 3, 26, 9, 58, 12, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func at(d time.Duration) time.Time { return now0.Add(d) }

// fakeClock is the dashboard's clock in tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeSource stands in for schedd at the dashboard's edge: it answers
// from fixed data, records what it was asked, and fails every call while
// fail is set (as a stopped daemon would).
type fakeSource struct {
	mu        sync.Mutex
	statuses  []api.Status // the i-th Status call answers statuses[i], the last one after
	nStatus   int
	schedules []api.Schedule
	details   map[string]api.Schedule
	occ       map[string][]api.Occurrence // by schedule id, newest first
	succeeded []api.Occurrence            // newest first
	enqueued  []api.Occurrence            // oldest first
	dead      []api.Occurrence
	fail      error
	calls     []string
	replayed  []string
	// clock, when set, is the daemon's clock: each status says its time,
	// so times the daemon sent move on as the test's clock does.
	clock *fakeClock
}

var errRefused = errors.New("dial unix /run/user/1000/sched/schedd.sock: connect: connection refused")

func (f *fakeSource) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeSource) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.fail
}

func (f *fakeSource) callsOf(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if len(c) >= len(prefix) && c[:len(prefix)] == prefix {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeSource) Status(context.Context) (*api.Status, error) {
	if err := f.record("Status"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.statuses[min(f.nStatus, len(f.statuses)-1)]
	f.nStatus++
	st.DLQSize = int64(len(f.dead))
	if f.clock != nil {
		st.Now = f.clock.Now()
	}
	return &st, nil
}

func (f *fakeSource) ListSchedules(_ context.Context, o client.ListSchedulesOptions) (*api.ScheduleList, error) {
	if err := f.record("ListSchedules " + o.Page); err != nil {
		return nil, err
	}
	return &api.ScheduleList{Schedules: slices.Clone(f.schedules)}, nil
}

func (f *fakeSource) GetSchedule(_ context.Context, ref string) (*api.Schedule, error) {
	if err := f.record("GetSchedule " + ref); err != nil {
		return nil, err
	}
	sc, ok := f.details[ref]
	if !ok {
		return nil, &client.Error{Status: 404, Code: api.CodeNotFound, Message: "no schedule " + ref}
	}
	return &sc, nil
}

func (f *fakeSource) ListOccurrences(_ context.Context, o client.ListOccurrencesOptions) (*api.OccurrenceList, error) {
	if err := f.record(fmt.Sprintf("ListOccurrences schedule=%s state=%s reverse=%v limit=%d", o.Schedule, o.State, o.Reverse, o.Limit)); err != nil {
		return nil, err
	}
	var l []api.Occurrence
	switch {
	case o.Schedule != "":
		l = slices.Clone(f.occ[o.Schedule])
		if !o.Reverse {
			slices.Reverse(l)
		}
	case o.State == "SUCCEEDED":
		l = f.succeeded
	case o.State == "ENQUEUED":
		l = f.enqueued
	}
	return &api.OccurrenceList{Occurrences: l}, nil
}

func (f *fakeSource) ListDLQ(_ context.Context, o client.ListDLQOptions) (*api.OccurrenceList, error) {
	if err := f.record("ListDLQ schedule=" + o.Schedule); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var l []api.Occurrence
	for _, d := range f.dead {
		if o.Schedule == "" || d.ScheduleID == o.Schedule {
			l = append(l, d)
		}
	}
	return &api.OccurrenceList{Occurrences: l}, nil
}

func (f *fakeSource) Replay(_ context.Context, id string) (*api.Occurrence, error) {
	if err := f.record("Replay " + id); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.dead, func(o api.Occurrence) bool { return o.OccurrenceID == id })
	if i < 0 {
		return nil, &client.Error{Status: 409, Code: api.CodeConflict, Message: id + " is not dead"}
	}
	o := f.dead[i]
	f.dead = slices.Delete(slices.Clone(f.dead), i, i+1)
	f.replayed = append(f.replayed, id)
	o.State, o.DeadReason, o.FinishedAt = "ENQUEUED", "", nil
	return &o, nil
}

// newFixture builds the fixture's daemon: statuses is how many successive
// status answers it has (each a stats snapshot 5s after the one before,
// the last at now0), so the trend has samples to draw.
func newFixture(statuses int) *fakeSource {
	f := &fakeSource{details: map[string]api.Schedule{}, occ: map[string][]api.Occurrence{}}
	for i := range statuses {
		back := time.Duration(statuses-1-i) * 5 * time.Second
		f.statuses = append(f.statuses, fixtureStatus(i, now0.Add(-back)))
	}
	f.schedules = fixtureSchedules()
	for _, sc := range f.schedules {
		d := sc
		d.Preview = fixturePreview(sc)
		f.details[sc.ScheduleID] = d
	}
	f.fillOccurrences()
	return f
}

// p99 trends of the fixture: delivery lag climbs as the emails queue backs
// up, then eases; schedule lag stays near zero.
var (
	delivTrend = []float64{0.21, 0.19, 0.22, 0.25, 0.24, 0.31, 0.38, 0.52, 0.71, 0.94, 1.3, 1.8, 2.4, 3.1, 3.6, 3.9, 4.2, 3.8, 3.3, 3.0, 2.8, 2.9, 2.7, 2.7}
	schedTrend = []float64{0.12, 0.11, 0.13, 0.12, 0.10, 0.14, 0.16, 0.15, 0.18, 0.22, 0.24, 0.21, 0.26, 0.31, 0.28, 0.24, 0.22, 0.25, 0.27, 0.23, 0.21, 0.24, 0.26, 0.24}
)

func secs(f float64) *string { return ptr(time.Duration(f * float64(time.Second)).String()) }

func fixtureStatus(i int, now time.Time) api.Status {
	pass := func(ago time.Duration, dur string, mat int, slack string) *api.PlannerPass {
		return &api.PlannerPass{At: now.Add(-ago), Duration: dur, Shards: 4, Schedules: 37, Materialized: mat, HorizonSlack: slack}
	}
	st := api.Status{
		Version: "0.9.0", TZVersion: "2026a", NodeID: "node-a", Store: "postgres", Shards: 8,
		Now: now, StatsAt: now.Add(-2 * time.Second), ShardsOwned: 8,
		Nodes: []api.StatusNode{
			{NodeID: "node-a", Address: "10.0.3.11:7070", Live: true, ShardsOwned: 4, ClockOffset: "0s", LastHeartbeat: now.Add(-time.Second), LastPass: pass(time.Second, "14.2ms", 112, "58.1s")},
			{NodeID: "node-b", Address: "10.0.3.12:7070", Live: true, ShardsOwned: 4, ClockOffset: "2.8ms", LastHeartbeat: now.Add(-2 * time.Second), LastPass: pass(2*time.Second, "19.7ms", 96, "57.4s")},
			{NodeID: "node-c", Address: "10.0.3.13:7070", Live: false, ClockOffset: "0s", LastHeartbeat: time.Date(2027, 3, 26, 9, 41, 2, 0, time.UTC)},
		},
		ScheduleLag: &api.LagWindows{
			// The daemon counts an occurrence enqueued ahead of its time
			// as 0 late, so most are 0 and the percentiles are never
			// negative.
			LastMinute: api.Percentiles{Count: 1204, P50: ptr("1ms"), P95: ptr("4ms"), P99: secs(schedTrend[i%len(schedTrend)])},
			LastHour:   api.Percentiles{Count: 70311, P50: ptr("1ms"), P95: ptr("6ms"), P99: secs(1.8)},
		},
		DeliveryLag: &api.LagWindows{
			LastMinute: api.Percentiles{Count: 1198, P50: secs(0.041), P95: secs(0.38), P99: secs(delivTrend[i%len(delivTrend)])},
			LastHour:   api.Percentiles{Count: 70102, P50: secs(0.038), P95: secs(0.29), P99: secs(1.9)},
		},
		OldestReady: &api.OldestReady{OccurrenceID: "occ_01JQ4E8Z3K", ScheduleID: "sch_email", Queue: "emails", AvailableAt: now.Add(-192 * time.Second), Age: "3m12s"},
		LastHour:    &api.EventCounts{Materialized: 70311, Missed: 2, SkippedOverlap: 14, Claims: 70102, Acks: 69950, Dead: 3, Redeliveries: 4},
		Throughput:  &api.Throughput{ClaimsPerSecond: 19.8, AcksPerSecond: 19.5},
	}
	minute := now.Truncate(time.Minute)
	for m := range 60 {
		t := minute.Add(time.Duration(m) * time.Minute)
		due := int64(7 + m%3)
		switch t.Minute() {
		case 0:
			due = 1450
		case 30:
			due = 310
		case 15, 45:
			due = 120
		}
		st.DueBacklog = append(st.DueBacklog, api.BacklogMinute{Minute: t, Due: due})
	}
	q := func(queue, lane, state string, count, ready int64) api.QueueDepth {
		return api.QueueDepth{Tenant: "default", Queue: queue, Lane: lane, State: state, Count: count, Ready: ready}
	}
	st.Queues = []api.QueueDepth{
		q("emails", "flexible", "ENQUEUED", 310, 288), q("reports", "strict", "ENQUEUED", 40, 12),
		q("reports", "catchup", "ENQUEUED", 22, 22), q("emails", "flexible", "RUNNING", 16, 0),
		q("cache", "strict", "ENQUEUED", 6, 0), q("billing", "strict", "ENQUEUED", 4, 0),
		q("reports", "strict", "RUNNING", 3, 0), q("reports", "strict", "RETRY_WAIT", 2, 1),
		q("billing", "strict", "DEAD", 2, 0), q("sync", "flexible", "ENQUEUED", 2, 0),
		q("cache", "strict", "RUNNING", 1, 0), q("cache", "strict", "DEAD", 1, 0),
		q("reports", "strict", "DEAD", 1, 0), q("sync", "flexible", "DEAD", 1, 0),
		q("emails", "flexible", "DEAD", 1, 0),
	}
	return st
}

func fixtureSchedules() []api.Schedule {
	base := api.Schedule{
		Version: 1, State: "ACTIVE", TimeZone: "UTC", DSTGap: "shift", DSTRepeat: "first",
		MisfirePolicy: "fire_once", MaxLateness: "5m0s", OverlapPolicy: "allow", FlexibleWindow: "0s",
		MaxAttempts: 5, RetryBase: "1s", RetryCap: "5m0s", RetryDeadline: "0s",
		CreatedAt: time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2027, 3, 1, 8, 30, 0, 0, time.UTC),
	}
	mk := func(id, name, queue, kind, expr string, next *time.Time, edit func(*api.Schedule)) api.Schedule {
		sc := base
		sc.ScheduleID, sc.Name, sc.Queue, sc.Kind, sc.Expression, sc.NextFireAt = id, name, queue, kind, expr, next
		sc.NextRunAt = next
		if edit != nil {
			edit(&sc)
		}
		return sc
	}
	return []api.Schedule{
		mk("sch_cache", "cache-warm", "cache", "every", "10s", ptr(at(8*time.Second)), nil),
		mk("sch_email", "email-digest", "emails", "every", "1m0s", ptr(at(-192*time.Second)), func(s *api.Schedule) { s.OverlapPolicy = "skip_if_running" }),
		mk("sch_nightly", "nightly-report", "reports", "cron", "0 2 * * *", ptr(time.Date(2027, 3, 27, 1, 0, 0, 0, time.UTC)), func(s *api.Schedule) {
			s.TimeZone, s.Version, s.MissedCount, s.RetryDeadline = "Europe/Berlin", 3, 1, "6h0m0s"
		}),
		mk("sch_billing", "billing-sync", "billing", "cron", "*/5 * * * *", ptr(time.Date(2027, 3, 26, 10, 0, 0, 0, time.UTC)), nil),
		mk("sch_rollup", "hourly-rollup", "reports", "cron", "0 * * * *", ptr(time.Date(2027, 3, 26, 10, 0, 0, 0, time.UTC)), nil),
		mk("sch_invoice", "weekly-invoice", "billing", "cron", "0 9 * * 1", nil, func(s *api.Schedule) { s.State, s.TimeZone = "PAUSED", "America/New_York" }),
		mk("sch_quarter", "quarter-close", "billing", "at", "2027-04-01T00:00:00Z", ptr(time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)), nil),
		mk("sch_eusync", "tenant-sync-eu", "sync", "every", "5m0s", ptr(at(108*time.Second)), func(s *api.Schedule) { s.MisfirePolicy = "catch_up:3" }),
	}
}

// fixturePreview is a schedule's next five firings, with the notes the
// daemon gives them.
func fixturePreview(sc api.Schedule) []api.Firing {
	if sc.NextFireAt == nil {
		return nil
	}
	if sc.ScheduleID == "sch_nightly" {
		cet, cest := time.FixedZone("CET", 3600), time.FixedZone("CEST", 7200)
		f := func(t time.Time, loc *time.Location, note string) api.Firing {
			return api.Firing{ScheduledFor: t, Local: t.In(loc).Format("2006-01-02T15:04:05-07:00"), Note: note}
		}
		return []api.Firing{
			f(time.Date(2027, 3, 27, 1, 0, 0, 0, time.UTC), cet, ""),
			f(time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC), cest, "02:00 does not exist (DST gap); shifted to the first instant after the gap"),
			f(time.Date(2027, 3, 29, 0, 0, 0, 0, time.UTC), cest, ""),
			f(time.Date(2027, 3, 30, 0, 0, 0, 0, time.UTC), cest, ""),
			f(time.Date(2027, 3, 31, 0, 0, 0, 0, time.UTC), cest, ""),
		}
	}
	t := *sc.NextFireAt
	return []api.Firing{{ScheduledFor: t, Local: t.Format("2006-01-02T15:04:05-07:00")}}
}

// occurrence builds an occurrence of sc scheduled at t; claimed is the
// delivery lag (nil: never claimed).
func occurrence(id, sc, queue string, t time.Time, state string, attempts int, schedLag string, deliv *string) api.Occurrence {
	o := api.Occurrence{
		OccurrenceID: id, ScheduleID: sc, ScheduleVersion: 1, ScheduledFor: t, AvailableAt: t,
		State: state, Lane: "strict", Queue: queue, AttemptCount: attempts, Due: !t.After(now0),
		ScheduleLag: ptr(schedLag), DeliveryLag: deliv, ClaimLag: deliv,
	}
	if deliv != nil {
		d, _ := time.ParseDuration(*deliv)
		o.FirstClaimedAt = ptr(t.Add(d))
		fin := t.Add(d + 2*time.Second)
		o.FinishedAt = &fin
	}
	return o
}

func (f *fakeSource) fillOccurrences() {
	day := func(d int) time.Time { return time.Date(2027, 3, d, 1, 0, 0, 0, time.UTC) }
	f.occ["sch_nightly"] = []api.Occurrence{
		occurrence("occ_01JQ3NR8AV", "sch_nightly", "reports", day(26), "SUCCEEDED", 1, "1m23.9s", ptr("1m24.3s")),
		occurrence("occ_01JQ1B6F0C", "sch_nightly", "reports", day(25), "SUCCEEDED", 2, "-58.1s", ptr("45ms")),
		occurrence("occ_01JPYYQ4D2", "sch_nightly", "reports", day(24), "DEAD", 5, "-59.2s", ptr("38ms")),
		occurrence("occ_01JPWM2B7E", "sch_nightly", "reports", day(23), "SUCCEEDED", 1, "-59.4s", ptr("51ms")),
		occurrence("occ_01JPT9ZR1H", "sch_nightly", "reports", day(22), "SUCCEEDED", 1, "-58.8s", ptr("47ms")),
		occurrence("occ_01JPQXK3PM", "sch_nightly", "reports", day(21), "MISSED", 0, "", nil),
	}
	f.occ["sch_nightly"][2].DeadReason = "attempts_exhausted"
	f.occ["sch_nightly"][5].ScheduleLag = nil
	var email []api.Occurrence
	for i := range 4 { // the next minutes, enqueued ahead
		t := now0.Truncate(time.Minute).Add(time.Duration(i+1) * time.Minute)
		email = append(email, occurrence(fmt.Sprintf("occ_01JQ4EA%03d", 3-i), "sch_email", "emails", t, "ENQUEUED", 0, "-59.9s", nil))
	}
	slices.Reverse(email)
	for i := range 4 { // due, waiting for a worker
		t := at(-192*time.Second + time.Duration(i)*time.Minute)
		o := occurrence(fmt.Sprintf("occ_01JQ4E8Z%02d", i), "sch_email", "emails", t, "ENQUEUED", 0, "-59.8s", nil)
		o.Waiting = ptr(now0.Sub(t).String())
		email = append([]api.Occurrence{o}, email...)
	}
	f.occ["sch_email"] = email
	f.succeeded = []api.Occurrence{
		occurrence("occ_c1", "sch_cache", "cache", at(-12*time.Second), "SUCCEEDED", 1, "-59.7s", ptr("41ms")),
		occurrence("occ_e1", "sch_eusync", "sync", at(-192*time.Second), "SUCCEEDED", 2, "-58.2s", ptr("120ms")),
		occurrence("occ_b1", "sch_billing", "billing", at(-192*time.Second), "SUCCEEDED", 1, "-57.3s", ptr("2.71s")),
		occurrence("occ_r1", "sch_rollup", "reports", at(-58*time.Minute-12*time.Second), "SUCCEEDED", 1, "-55s", ptr("380ms")),
		occurrence("occ_m1", "sch_email", "emails", at(-252*time.Second), "SUCCEEDED", 1, "-59.9s", ptr("58.2s")),
		occurrence("occ_e2", "sch_eusync", "sync", at(-492*time.Second), "SUCCEEDED", 3, "-58.5s", ptr("98ms")),
		occurrence("occ_e3", "sch_eusync", "sync", at(-792*time.Second), "SUCCEEDED", 2, "-58.1s", ptr("110ms")),
		f.occ["sch_nightly"][0], f.occ["sch_nightly"][1],
	}
	for _, o := range f.occ["sch_email"] {
		if o.Waiting != nil {
			f.enqueued = append(f.enqueued, o)
		}
	}
	slices.Reverse(f.enqueued) // the daemon lists them oldest first
	died := func(o api.Occurrence, reason, lastErr string, when time.Time) api.Occurrence {
		o.State, o.DeadReason, o.LastError, o.FinishedAt = "DEAD", reason, lastErr, &when
		return o
	}
	f.dead = []api.Occurrence{
		died(occurrence("occ_01JQ4DZ9X1", "sch_cache", "cache", at(-71*time.Second), "DEAD", 5, "-59.6s", ptr("44ms")), "attempts_exhausted", "redis: dial tcp 10.0.3.20:6379: connect: connection refused", at(-71*time.Second+40*time.Second)),
		died(occurrence("occ_01JQ4BKD2S", "sch_billing", "billing", time.Date(2027, 3, 26, 9, 35, 0, 0, time.UTC), "DEAD", 1, "-57.9s", ptr("62ms")), "permanent_failure", "invoice 88213: currency XTS is not supported by the payment provider", time.Date(2027, 3, 26, 9, 35, 2, 0, time.UTC)),
		died(occurrence("occ_01JQ48V1QZ", "sch_billing", "billing", time.Date(2027, 3, 26, 8, 50, 0, 0, time.UTC), "DEAD", 1, "-58.0s", ptr("57ms")), "permanent_failure", "invoice 88102: currency XTS is not supported by the payment provider", time.Date(2027, 3, 26, 8, 50, 4, 0, time.UTC)),
		died(occurrence("occ_01JQ3ZC4MT", "sch_eusync", "sync", time.Date(2027, 3, 26, 7, 15, 0, 0, time.UTC), "DEAD", 3, "-58.4s", ptr("101ms")), "retry_budget_exhausted", "HTTP 503 Service Unavailable from eu.api.example.com", time.Date(2027, 3, 26, 7, 21, 40, 0, time.UTC)),
		died(occurrence("occ_01JQ2T6G8N", "sch_email", "emails", time.Date(2027, 3, 25, 23, 12, 0, 0, time.UTC), "DEAD", 4, "-59.9s", ptr("3.2s")), "deadline_passed", "smtp: 421 4.7.0 Try again later, closing connection", time.Date(2027, 3, 26, 0, 12, 9, 0, time.UTC)),
		died(f.occ["sch_nightly"][2], "attempts_exhausted", `exit status 1: pg_dump: error: connection to server at "db-1" (10.0.3.7), port 5432 failed: timeout expired`, time.Date(2027, 3, 24, 1, 41, 7, 0, time.UTC)),
	}
	f.occ["sch_nightly"][2] = f.dead[5]
}
