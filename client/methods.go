package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sched-dev/sched/api"
)

// MaxWait is the longest long poll a claim may ask for.
const MaxWait = 5 * time.Minute

func path(parts ...string) string {
	p := "/" + api.Version
	for _, s := range parts {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// Health checks GET /healthz: the daemon is up.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, request{method: http.MethodGet, path: "/healthz"}, nil)
}

// Ready checks GET /readyz: the daemon is ready to serve (its store is
// open and it is not shutting down).
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, request{method: http.MethodGet, path: "/readyz"}, nil)
}

// Cluster lists the nodes registered in the daemon's store and the owner
// and epoch of every shard lease.
func (c *Client) Cluster(ctx context.Context) (*api.Cluster, error) {
	return call[api.Cluster](ctx, c, request{method: http.MethodGet, path: path("cluster")})
}

// Status describes the daemon and the cluster's work: nodes and shards,
// lag percentiles, the due backlog, queue depths and the dead-letter queue.
func (c *Client) Status(ctx context.Context) (*api.Status, error) {
	return call[api.Status](ctx, c, request{method: http.MethodGet, path: path("status")})
}

// CreateSchedule creates a schedule. A request with an IdempotencyKey is
// safe to retry: the same key and body return the first schedule (Created
// false); the key is also sent as the Idempotency-Key header.
func (c *Client) CreateSchedule(ctx context.Context, req api.ScheduleRequest) (*api.CreateResult, error) {
	return c.createSchedule(ctx, req, nil)
}

// CheckCreateSchedule is a dry run of CreateSchedule: schedd answers what
// the create would (the schedule, whether it would be created, or the
// error) and keeps nothing (the answer's DryRun is true).
func (c *Client) CheckCreateSchedule(ctx context.Context, req api.ScheduleRequest) (*api.CreateResult, error) {
	return c.createSchedule(ctx, req, dryRunQuery)
}

// dryRunQuery asks a write route for a dry run.
var dryRunQuery = url.Values{"dry_run": {"true"}}

func (c *Client) createSchedule(ctx context.Context, req api.ScheduleRequest, q url.Values) (*api.CreateResult, error) {
	r := request{method: http.MethodPost, path: path("schedules"), body: req, query: q}
	if req.IdempotencyKey != "" {
		r.header = http.Header{HeaderIdempotencyKey: {req.IdempotencyKey}}
	}
	return call[api.CreateResult](ctx, c, r)
}

// ListSchedulesOptions filters and pages a schedule list.
type ListSchedulesOptions struct {
	State string // ACTIVE, PAUSED, CANCELED or COMPLETED; "" for all
	Page  string // the NextPage token of the previous page
	Limit int    // 0 for the daemon's default
}

// ListSchedules returns one page of schedules; NextPage in the answer is
// the token of the following page, empty on the last one.
func (c *Client) ListSchedules(ctx context.Context, o ListSchedulesOptions) (*api.ScheduleList, error) {
	q := url.Values{}
	setQ(q, "state", o.State)
	setQ(q, "page", o.Page)
	setInt(q, "limit", o.Limit)
	return call[api.ScheduleList](ctx, c, request{method: http.MethodGet, path: path("schedules"), query: q})
}

// AllSchedules pages through every schedule in state (all states if "").
func (c *Client) AllSchedules(ctx context.Context, state string) ([]api.Schedule, error) {
	var all []api.Schedule
	o := ListSchedulesOptions{State: state}
	seen := map[string]bool{}
	for {
		page, err := c.ListSchedules(ctx, o)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Schedules...)
		// A cursor seen before would loop forever; the list is done.
		if page.NextPage == "" || seen[page.NextPage] || len(page.Schedules) == 0 {
			return all, nil
		}
		seen[page.NextPage] = true
		o.Page = page.NextPage
	}
}

// GetSchedule returns a schedule by id or by name.
func (c *Client) GetSchedule(ctx context.Context, ref string) (*api.Schedule, error) {
	return call[api.Schedule](ctx, c, request{method: http.MethodGet, path: path("schedules", ref)})
}

// UpdateSchedule replaces every setting of a schedule (a PUT: send the
// whole schedule). The version grows, and unclaimed occurrences of older
// versions are canceled; the answer counts them.
func (c *Client) UpdateSchedule(ctx context.Context, ref string, req api.ScheduleRequest) (*api.ChangeResult, error) {
	return call[api.ChangeResult](ctx, c, request{method: http.MethodPut, path: path("schedules", ref), body: req})
}

// CheckUpdateSchedule is a dry run of UpdateSchedule: the new version as
// it would be, and what it would cancel; nothing is kept.
func (c *Client) CheckUpdateSchedule(ctx context.Context, ref string, req api.ScheduleRequest) (*api.ChangeResult, error) {
	return call[api.ChangeResult](ctx, c, request{method: http.MethodPut, path: path("schedules", ref), body: req, query: dryRunQuery})
}

// PauseSchedule stops new firings of a schedule.
func (c *Client) PauseSchedule(ctx context.Context, ref string) (*api.ChangeResult, error) {
	return c.change(ctx, ref, "pause")
}

// ResumeSchedule restarts a paused schedule from the first firing after now.
func (c *Client) ResumeSchedule(ctx context.Context, ref string) (*api.ChangeResult, error) {
	return c.change(ctx, ref, "resume")
}

// CancelSchedule ends a schedule for good; it stays as history.
func (c *Client) CancelSchedule(ctx context.Context, ref string) (*api.ChangeResult, error) {
	return c.change(ctx, ref, "cancel")
}

func (c *Client) change(ctx context.Context, ref, verb string) (*api.ChangeResult, error) {
	return call[api.ChangeResult](ctx, c, request{method: http.MethodPost, path: path("schedules", ref, verb)})
}

// ListOccurrencesOptions filters and pages an occurrence list.
type ListOccurrencesOptions struct {
	Schedule string // a schedule id or name
	State    string // ENQUEUED, RUNNING, DEAD, ...
	Queue    string
	Limit    int    // 0 for the daemon's default
	Page     string // the NextPage token of the previous page
	Reverse  bool   // newest scheduled time first
}

// ListOccurrences returns one page of occurrences, oldest scheduled time
// first (newest first with Reverse); NextPage in the answer is the token of
// the following page, empty on the last one.
func (c *Client) ListOccurrences(ctx context.Context, o ListOccurrencesOptions) (*api.OccurrenceList, error) {
	q := url.Values{}
	setQ(q, "schedule", o.Schedule)
	setQ(q, "state", o.State)
	setQ(q, "queue", o.Queue)
	setInt(q, "limit", o.Limit)
	setQ(q, "page", o.Page)
	if o.Reverse {
		q.Set("order", "desc")
	}
	return call[api.OccurrenceList](ctx, c, request{method: http.MethodGet, path: path("occurrences"), query: q})
}

// GetOccurrence returns one occurrence.
func (c *Client) GetOccurrence(ctx context.Context, id string) (*api.Occurrence, error) {
	return call[api.Occurrence](ctx, c, request{method: http.MethodGet, path: path("occurrences", id)})
}

// ListAttemptsOptions pages an occurrence's attempts.
type ListAttemptsOptions struct {
	Limit int    // 0 for the daemon's default
	Page  string // the NextPage token of the previous page
}

// ListAttempts returns one page of the deliveries of an occurrence, first
// first.
func (c *Client) ListAttempts(ctx context.Context, id string, o ListAttemptsOptions) (*api.AttemptList, error) {
	q := url.Values{}
	setInt(q, "limit", o.Limit)
	setQ(q, "page", o.Page)
	return call[api.AttemptList](ctx, c, request{method: http.MethodGet, path: path("occurrences", id, "attempts"), query: q})
}

// Trigger fires a schedule now, once, outside its timetable: a manual
// occurrence with its own stable id. The same req.IdempotencyKey names the
// same occurrence (Created false the second time); the key is also sent as
// the Idempotency-Key header.
func (c *Client) Trigger(ctx context.Context, ref string, req api.TriggerRequest) (*api.TriggerResult, error) {
	r := request{method: http.MethodPost, path: path("schedules", ref, "trigger"), body: req}
	if req.IdempotencyKey != "" {
		r.header = http.Header{HeaderIdempotencyKey: {req.IdempotencyKey}}
	}
	return call[api.TriggerResult](ctx, c, r)
}

// Claim takes up to req.Limit occurrences of a queue. With req.Wait it is a
// long poll: it answers as soon as one is available, or empty after the
// wait; the request's timeout is the wait plus the client's timeout, so the
// poll is never cut short by the client.
func (c *Client) Claim(ctx context.Context, req api.ClaimRequest) (*api.ClaimResult, error) {
	var extra time.Duration
	if req.Wait != "" {
		if d, err := time.ParseDuration(req.Wait); err == nil && d > 0 {
			extra = d
		}
	}
	return call[api.ClaimResult](ctx, c, request{method: http.MethodPost, path: path("claims"), body: req, extra: extra})
}

// Heartbeat extends the lease of the attempt req.Attempt and says whether
// the worker should stop (Superseded, Canceled). A stale attempt is refused
// (IsStaleAttempt).
func (c *Client) Heartbeat(ctx context.Context, id string, req api.HeartbeatRequest) (*api.HeartbeatResult, error) {
	return call[api.HeartbeatResult](ctx, c, request{method: http.MethodPost, path: path("occurrences", id, "heartbeat"), body: req})
}

// Ack reports the attempt succeeded. Retrying an ack that was accepted is
// harmless. A stale attempt is refused (IsStaleAttempt).
func (c *Client) Ack(ctx context.Context, id string, req api.AckRequest) (*api.Occurrence, error) {
	return call[api.Occurrence](ctx, c, request{method: http.MethodPost, path: path("occurrences", id, "ack"), body: req})
}

// Error classes of a nack.
const (
	ClassRetryable = "retryable"
	ClassPermanent = "permanent"
)

// Nack reports the attempt failed, with class ClassRetryable or
// ClassPermanent (which sends the occurrence to the dead-letter queue).
func (c *Client) Nack(ctx context.Context, id string, req api.NackRequest) (*api.Occurrence, error) {
	return call[api.Occurrence](ctx, c, request{method: http.MethodPost, path: path("occurrences", id, "nack"), body: req})
}

// Replay puts a DEAD occurrence back on its queue, same occurrence id, for
// a new attempt.
func (c *Client) Replay(ctx context.Context, id string) (*api.Occurrence, error) {
	return call[api.Occurrence](ctx, c, request{method: http.MethodPost, path: path("occurrences", id, "replay")})
}

// ListDLQOptions filters and pages the dead-letter queue.
type ListDLQOptions struct {
	Schedule string // a schedule id or name
	Queue    string
	Limit    int    // 0 for the daemon's default
	Page     string // the NextPage token of the previous page
	Reverse  bool   // newest scheduled time first
}

// ListDLQ returns one page of DEAD occurrences, each with why it died
// (DeadReason, LastError, FinishedAt).
func (c *Client) ListDLQ(ctx context.Context, o ListDLQOptions) (*api.OccurrenceList, error) {
	q := url.Values{}
	setQ(q, "schedule", o.Schedule)
	setQ(q, "queue", o.Queue)
	setInt(q, "limit", o.Limit)
	setQ(q, "page", o.Page)
	if o.Reverse {
		q.Set("order", "desc")
	}
	return call[api.OccurrenceList](ctx, c, request{method: http.MethodGet, path: path("dlq"), query: q})
}

// ReplayDLQ replays every DEAD occurrence f matches, each keeping its
// occurrence id, in as many requests as the daemon asks for (each moves at
// most api.MaxDLQBatch). Replaying again is harmless: what was replayed is
// no longer DEAD, so after an error the same call finishes the job.
func (c *Client) ReplayDLQ(ctx context.Context, f api.DLQFilter) (*api.DLQResult, error) {
	return c.dlqAll(ctx, "replay", f)
}

// PurgeDLQ takes every DEAD occurrence f matches out of the dead-letter
// queue (they become CANCELED, kept as history), in as many requests as
// the daemon asks for.
func (c *Client) PurgeDLQ(ctx context.Context, f api.DLQFilter) (*api.DLQResult, error) {
	return c.dlqAll(ctx, "purge", f)
}

// dlqAll sends a bulk DLQ request until the daemon says nothing more
// matches, and adds the answers up. An answer that moved nothing ends it
// too, so a filter that keeps matching what cannot move cannot loop.
func (c *Client) dlqAll(ctx context.Context, verb string, f api.DLQFilter) (*api.DLQResult, error) {
	total := &api.DLQResult{}
	for {
		res, err := call[api.DLQResult](ctx, c, request{method: http.MethodPost, path: path("dlq", verb), body: f})
		if err != nil {
			return nil, err
		}
		total.Count += res.Count
		total.OccurrenceIDs = append(total.OccurrenceIDs, res.OccurrenceIDs...)
		if !res.More || res.Count == 0 {
			return total, nil
		}
	}
}

// Metrics returns the daemon's Prometheus metrics in the text format, as
// GET /metrics answers them (the token is needed there too when the daemon
// has one).
func (c *Client) Metrics(ctx context.Context) (string, error) {
	return c.text(ctx, "/metrics")
}

// call sends r and decodes the answer into a new T.
func call[T any](ctx context.Context, c *Client, r request) (*T, error) {
	var out T
	if err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func setQ(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setInt(q url.Values, k string, v int) {
	if v != 0 {
		q.Set(k, strconv.Itoa(v))
	}
}
