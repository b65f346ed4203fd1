package server

import (
	"encoding/json"
	"math"
	"sort"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/preview"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// PreviewCount is how many firings each schedule answer previews.
const PreviewCount = 5

// apiSchedule is a stored schedule as the API shows it, with its next
// firing not yet delivered (nextFire, see engine.NextFire) and the next
// PreviewCount firings from it. DST options are shown for cron schedules
// only: they do not apply to the other kinds, and an update that sends them
// for those is refused.
func apiSchedule(sc *record.Schedule, nextFire, now time.Time) api.Schedule {
	out := apiScheduleFields(sc, nextFire)
	out.Preview = previewOf(sc, nextFire, now)
	return out
}

// apiScheduleFields is apiSchedule without its preview (nil).
func apiScheduleFields(sc *record.Schedule, nextFire time.Time) api.Schedule {
	out := api.Schedule{
		ScheduleID: sc.ScheduleID, Name: sc.Name, Version: sc.Version, State: string(sc.State),
		NextFireAt: optTime(nextFire), NextRunAt: optTime(sc.NextRunAt),
		Kind: string(sc.Kind), Expression: sc.Expr, TimeZone: sc.TimeZone,
		Queue: sc.Queue, Payload: rawJSON(sc.Payload),
		MisfirePolicy: schedule.FormatMisfire(sc.MisfirePolicy, sc.CatchUpK), MaxLateness: sc.MaxLateness.String(),
		OverlapPolicy: string(sc.OverlapPolicy), FlexibleWindow: sc.FlexibleWindow.String(),
		MaxAttempts: sc.Retry.MaxAttempts, RetryBase: sc.Retry.BackoffBase.String(),
		RetryCap: sc.Retry.BackoffCap.String(), RetryDeadline: sc.Retry.Deadline.String(),
		MissedCount: sc.MissedCount, CreatedAt: sc.CreatedAt.UTC(), UpdatedAt: sc.UpdatedAt.UTC(),
	}
	if sc.Kind == timetable.KindCron {
		out.DSTGap, out.DSTRepeat = string(sc.DSTGap), string(sc.DSTRepeat)
	}
	if name, ok := record.QueueTarget(sc.Queue); ok {
		out.Queue, out.Target = "", name
	}
	if !sc.Anchor.IsZero() {
		out.Anchor = sc.Anchor.UTC().Format(time.RFC3339)
	}
	return out
}

// previewOf is the next firings of an ACTIVE schedule from its next
// firing not yet delivered (so the preview starts with next_fire_at, even
// when that one is overdue and waiting for a worker), or from now when it
// has none. Other states fire no more: empty.
func previewOf(sc *record.Schedule, nextFire, now time.Time) []api.Firing {
	out := []api.Firing{}
	if sc.State != record.ScheduleActive {
		return out
	}
	from := now
	if !nextFire.IsZero() {
		from = nextFire.Add(-time.Second) // scheduled times are whole seconds
	}
	res, err := preview.Compute(preview.Request{Def: sc.Definition(), From: from, Count: PreviewCount})
	if err != nil {
		// A stored schedule whose zone left the tz database: nothing to
		// show, and the planner reports it.
		return out
	}
	for _, f := range res.Firings {
		out = append(out, api.Firing{ScheduledFor: f.ScheduledFor.UTC(), Local: f.Local, Note: f.Note})
	}
	return out
}

// apiOccurrence is an occurrence as the API shows it at now, with its
// lags: see api.Occurrence for what each one measures.
func apiOccurrence(o *record.Occurrence, now time.Time) api.Occurrence {
	out := api.Occurrence{
		OccurrenceID: o.OccurrenceID, ScheduleID: o.ScheduleID, ScheduleVersion: o.ScheduleVersion,
		ScheduledFor: o.ScheduledFor.UTC(), AvailableAt: o.AvailableAt.UTC(), EnqueuedAt: optTime(o.EnqueuedAt),
		State: string(o.State), Lane: string(o.Lane), Queue: o.Queue, AttemptCount: o.AttemptCount,
		FirstClaimedAt: optTime(o.FirstClaimedAt), FinishedAt: optTime(o.FinishedAt),
		Due:    !o.AvailableAt.After(now),
		Manual: o.Manual(), DeadReason: string(o.DeadReason), LastError: o.LastError,
	}
	if !o.EnqueuedAt.IsZero() {
		out.ScheduleLag = optDuration(o.EnqueuedAt.Sub(o.ScheduledFor))
	}
	if !o.FirstClaimedAt.IsZero() {
		out.DeliveryLag = optDuration(o.FirstClaimedAt.Sub(o.ScheduledFor))
		out.ClaimLag = optDuration(o.FirstClaimedAt.Sub(o.AvailableAt))
	} else if o.State == record.OccurrenceEnqueued && out.Due {
		out.Waiting = optDuration(now.Sub(o.AvailableAt))
	}
	return out
}

// apiOccurrences is a page of occurrences; next is the next page's token.
func apiOccurrences(occs []record.Occurrence, now time.Time, next string) api.OccurrenceList {
	out := api.OccurrenceList{Occurrences: make([]api.Occurrence, 0, len(occs)), NextPage: next}
	for i := range occs {
		out.Occurrences = append(out.Occurrences, apiOccurrence(&occs[i], now))
	}
	return out
}

// optDuration is d as the API writes durations: a Go duration string, to
// the millisecond (store times are kept to the millisecond).
func optDuration(d time.Duration) *string {
	s := d.Round(time.Millisecond).String()
	return &s
}

func apiAttempt(a *record.Attempt) api.Attempt {
	return api.Attempt{
		Attempt: a.Attempt, WorkerID: a.WorkerID, ClaimedAt: a.ClaimedAt.UTC(),
		LeaseExpiresAt: a.LeaseExpiresAt.UTC(), FinishedAt: optTime(a.FinishedAt),
		Result: string(a.Result), Error: a.Error,
	}
}

func apiClaimed(c *store.Claimed) api.Claimed {
	return api.Claimed{
		OccurrenceID: c.Occurrence.OccurrenceID, ScheduleID: c.Occurrence.ScheduleID,
		ScheduleVersion: c.Occurrence.ScheduleVersion, ScheduledFor: c.Occurrence.ScheduledFor.UTC(),
		Attempt: c.Attempt.Attempt, LeaseExpiresAt: c.Attempt.LeaseExpiresAt.UTC(),
		Queue: c.Occurrence.Queue, Payload: rawJSON(c.Payload), Tenant: c.Occurrence.TenantID,
	}
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// rawJSON is a stored payload as a JSON value: nil (null) for none. Every
// payload was checked to be JSON when it was stored; anything else (a row
// written by another tool) goes out as a JSON string rather than breaking
// the answer.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	q, _ := json.Marshal(string(b))
	return q
}

// apiCluster is the cluster view at now: every registered node with the
// live leases it holds, and every shard from 0 to shards-1.
func apiCluster(self string, now time.Time, shards int, nodes []store.Node, leases []store.ShardLease) api.Cluster {
	c := api.Cluster{NodeID: self, Now: now.UTC(), Nodes: []api.ClusterNode{}, Shards: make([]api.ShardOwner, 0, shards)}
	owned := map[string]int{}
	byShard := map[int]store.ShardLease{}
	for _, l := range leases {
		byShard[l.Shard] = l
	}
	for i := 0; i < shards; i++ {
		l, ok := byShard[i]
		so := api.ShardOwner{Shard: i}
		if ok {
			exp := l.ExpiresAt.UTC()
			so.Owner, so.Epoch, so.ExpiresAt, so.Live = l.Owner, l.Epoch, &exp, l.ExpiresAt.After(now)
			if so.Live {
				owned[l.Owner]++
			}
		}
		c.Shards = append(c.Shards, so)
	}
	for _, n := range nodes {
		c.Nodes = append(c.Nodes, api.ClusterNode{
			NodeID: n.NodeID, Address: n.Address, StartedAt: n.StartedAt.UTC(), LastHeartbeat: n.LastHeartbeat.UTC(),
			ExpiresAt: n.ExpiresAt.UTC(), Live: n.ExpiresAt.After(now), ShardsOwned: owned[n.NodeID],
			ClockOffset: n.ClockOffset.String(),
		})
	}
	return c
}

// apiStatus is the cluster's figures as GET /v1/status shows them, or a
// tenant's (st.TenantID): its queues, due backlog, oldest ready and
// dead-letter queue, the nodes, and null for the figures counted across
// tenants (the lags, the last hour's events, the throughput, the nodes'
// last passes). The daemon's own fields are the caller's to fill.
func apiStatus(st *engine.Status, shards int) api.Status {
	now := st.Now
	cluster := st.TenantID == ""
	out := api.Status{
		Now: now.UTC(), Shards: shards, StatsAt: st.StatsAt.UTC(), Tenant: st.TenantID,
		Nodes: []api.StatusNode{}, DueBacklog: []api.BacklogMinute{}, Queues: []api.QueueDepth{},
	}
	if cluster {
		out.ScheduleLag = &api.LagWindows{LastMinute: percentiles(st.ScheduleLagMinute), LastHour: percentiles(st.ScheduleLagHour)}
		out.DeliveryLag = &api.LagWindows{LastMinute: percentiles(st.DeliveryLagMinute), LastHour: percentiles(st.DeliveryLagHour)}
		events := apiEvents(st.LastHour)
		out.LastHour, out.Throughput = &events, &api.Throughput{}
		if secs := st.MinuteWindow.Seconds(); secs > 0 {
			out.Throughput.ClaimsPerSecond = math.Round(float64(st.LastMinute.Claims)/secs*100) / 100
			out.Throughput.AcksPerSecond = math.Round(float64(st.LastMinute.Acks)/secs*100) / 100
		}
	}
	c := apiCluster("", now, shards, st.Nodes, st.Leases)
	for _, so := range c.Shards {
		if so.Live {
			out.ShardsOwned++
		}
	}
	for _, n := range c.Nodes {
		sn := api.StatusNode{NodeID: n.NodeID, Address: n.Address, Live: n.Live, ShardsOwned: n.ShardsOwned,
			ClockOffset: n.ClockOffset, LastHeartbeat: n.LastHeartbeat}
		if p := st.LastPass[n.NodeID]; p != nil {
			sn.LastPass = &api.PlannerPass{At: p.At.UTC(), Duration: p.Duration.Round(time.Microsecond).String(),
				Shards: p.Shards, Schedules: p.Schedules, Materialized: p.Materialized, Missed: p.Missed,
				HorizonSlack: p.HorizonSlack.Round(time.Millisecond).String()}
		}
		out.Nodes = append(out.Nodes, sn)
	}
	snap := &st.Snapshot
	from := st.StatsAt.Truncate(time.Minute)
	for i, n := range snap.DueBacklog {
		out.DueBacklog = append(out.DueBacklog, api.BacklogMinute{Minute: from.Add(time.Duration(i) * time.Minute).UTC(), Due: n})
	}
	for _, d := range snap.Depth {
		out.Queues = append(out.Queues, api.QueueDepth{Tenant: d.TenantID, Queue: d.Queue, Lane: string(d.Lane),
			State: string(d.State), Count: d.Count, Ready: d.Ready})
		if d.State == record.OccurrenceDead {
			out.DLQSize += d.Count
		}
	}
	sort.SliceStable(out.Queues, func(i, j int) bool {
		a, b := out.Queues[i], out.Queues[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Tenant+"\x00"+a.Queue+"\x00"+a.Lane+"\x00"+a.State < b.Tenant+"\x00"+b.Queue+"\x00"+b.Lane+"\x00"+b.State
	})
	if n := len(out.Queues); n > api.MaxStatusQueues {
		out.QueuesOmitted, out.Queues = n-api.MaxStatusQueues, out.Queues[:api.MaxStatusQueues]
	}
	if o := snap.OldestReady; o != nil {
		out.OldestReady = &api.OldestReady{OccurrenceID: o.OccurrenceID, ScheduleID: o.ScheduleID, Queue: o.Queue,
			AvailableAt: o.AvailableAt.UTC(), Age: max(st.StatsAt.Sub(o.AvailableAt), 0).Round(time.Millisecond).String()}
	}
	return out
}

// percentiles reads p50, p95 and p99 from a lag histogram (counts per
// bucket of metrics.LagBuckets).
func percentiles(counts []int64) api.Percentiles {
	var p api.Percentiles
	for _, c := range counts {
		p.Count += c
	}
	read := func(q float64) *string {
		secs, ok := metrics.Percentile(metrics.LagBuckets, counts, q)
		if !ok {
			return nil
		}
		return optDuration(time.Duration(secs * float64(time.Second)))
	}
	p.P50, p.P95, p.P99 = read(0.50), read(0.95), read(0.99)
	return p
}

func apiEvents(e engine.EventCounts) api.EventCounts {
	return api.EventCounts{Materialized: e.Materialized, Missed: e.Missed, SkippedOverlap: e.SkippedOverlap,
		Claims: e.Claims, Acks: e.Acks, Dead: e.Dead, Redeliveries: e.Redeliveries}
}
