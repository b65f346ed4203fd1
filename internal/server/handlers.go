package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// onlyQuery refuses query parameters other than the ones named, and any
// given twice: a misspelt filter must not silently list everything.
func onlyQuery(r *http.Request, names ...string) error {
	for k, vs := range r.URL.Query() {
		known := false
		for _, n := range names {
			known = known || k == n
		}
		// A refusal names the parameter as its field; one with an
		// empty name ("?=x") is named "query", so that the answer
		// still points somewhere.
		field := clip(k)
		if field == "" {
			field = "query"
		}
		if !known {
			if len(names) == 0 {
				return invalidArg(field, fmt.Sprintf("query parameter %q: this route takes none", clip(k)))
			}
			return invalidArg(field, fmt.Sprintf("query parameter %q: unknown; this route takes %s", clip(k), strings.Join(names, ", ")))
		}
		if len(vs) > 1 {
			return invalidArg(field, fmt.Sprintf("query parameter %q is given %d times", clip(k), len(vs)))
		}
	}
	return nil
}

// clip shortens text echoed into a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// limitParam parses the limit query parameter: 1 to store.MaxListLimit,
// store.DefaultListLimit when absent.
func limitParam(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return store.DefaultListLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > store.MaxListLimit {
		return 0, invalidArg("limit", fmt.Sprintf("limit %q: must be a whole number from 1 to %d", clip(v), store.MaxListLimit))
	}
	return n, nil
}

// idempotencyKey is the request's idempotency key: the Idempotency-Key
// header or the body's field (body), which must agree when both are sent.
func idempotencyKey(r *http.Request, body string) (string, error) {
	h := r.Header.Get("Idempotency-Key")
	if h != "" && body != "" && body != h {
		return "", invalidArg("idempotency_key", "the Idempotency-Key header and the body's idempotency_key differ; send one")
	}
	if h != "" {
		return h, nil
	}
	return body, nil
}

func (s *Server) createSchedule(r *http.Request, w http.ResponseWriter) (int, any, error) {
	dry, err := dryRun(r)
	if err != nil {
		return 0, nil, err
	}
	var req api.ScheduleRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	key, err := idempotencyKey(r, req.IdempotencyKey)
	if err != nil {
		return 0, nil, err
	}
	sp, err := schedule.FromRequest(&req)
	if err != nil {
		return 0, nil, err
	}
	create := s.eng.Control.Create
	if dry {
		create = s.eng.Control.CheckCreate
	}
	sc, created, err := create(r.Context(), tenantOf(r), key, sp)
	if err != nil {
		return 0, nil, err
	}
	code := http.StatusCreated
	if !created || dry {
		code = http.StatusOK
	}
	var out api.Schedule
	if created {
		// New: nothing of it is on the queue, so its next firing is its
		// cursor (and a dry run's is in no store to read).
		out = apiSchedule(sc, nextOfNew(sc), s.eng.Cluster.Now())
	} else if out, err = s.schedule(r.Context(), sc); err != nil {
		return 0, nil, err
	}
	return code, api.CreateResult{Schedule: out, Created: created, DryRun: dry}, nil
}

// dryRun reads a write route's dry_run query parameter (the only one it
// takes): true asks for the answer the write would give, with nothing
// kept.
func dryRun(r *http.Request) (bool, error) {
	if err := onlyQuery(r, "dry_run"); err != nil {
		return false, err
	}
	switch v := r.URL.Query().Get("dry_run"); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, invalidArg("dry_run", fmt.Sprintf("query parameter dry_run=%q: want true or false", clip(v)))
	}
}

var scheduleStates = []record.ScheduleState{record.ScheduleActive, record.SchedulePaused, record.ScheduleCanceled, record.ScheduleCompleted}

func (s *Server) listSchedules(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r, "state", "page", "limit"); err != nil {
		return 0, nil, err
	}
	q := r.URL.Query()
	limit, _, tok, err := pageParams(r, "schedules", false)
	if err != nil {
		return 0, nil, err
	}
	p := store.ListSchedulesParams{TenantID: tenantOf(r), Limit: limit}
	if tok != nil {
		p.After = tok.ID
	}
	if v := q.Get("state"); v != "" {
		st, ok := oneOf(v, scheduleStates)
		if !ok {
			return 0, nil, invalidArg("state", fmt.Sprintf("state %q: want one of %s", clip(v), join(scheduleStates)))
		}
		p.State = st
	}
	scs, err := s.eng.Control.List(r.Context(), p)
	if err != nil {
		return 0, nil, err
	}
	out := api.ScheduleList{Schedules: make([]api.Schedule, 0, len(scs))}
	for i := range scs {
		sc, err := s.schedule(r.Context(), &scs[i])
		if err != nil {
			return 0, nil, err
		}
		out.Schedules = append(out.Schedules, sc)
	}
	if len(scs) == limit && limit > 0 {
		out.NextPage = pageToken{List: "schedules", ID: scs[len(scs)-1].ScheduleID}.encode()
	}
	return http.StatusOK, out, nil
}

func (s *Server) getSchedule(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	sc, err := s.eng.Control.Get(r.Context(), tenantOf(r), r.PathValue("ref"))
	if err != nil {
		return 0, nil, err
	}
	out, err := s.schedule(r.Context(), sc)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

// schedule is sc as the API shows it, with its next firing not yet
// delivered, which it reads from the store.
func (s *Server) schedule(ctx context.Context, sc *record.Schedule) (api.Schedule, error) {
	next, err := s.eng.Control.NextFire(ctx, sc)
	if err != nil {
		return api.Schedule{}, err
	}
	return apiSchedule(sc, next, s.eng.Cluster.Now()), nil
}

func (s *Server) updateSchedule(r *http.Request, w http.ResponseWriter) (int, any, error) {
	dry, err := dryRun(r)
	if err != nil {
		return 0, nil, err
	}
	var req api.ScheduleRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	sp, err := schedule.FromRequest(&req)
	if err != nil {
		return 0, nil, err
	}
	if dry {
		res, err := s.eng.Control.CheckUpdate(r.Context(), tenantOf(r), r.PathValue("ref"), sp)
		if err != nil {
			return 0, nil, err
		}
		// The new version's next firing is its cursor: the older
		// versions' pending firings it would cancel.
		return http.StatusOK, api.ChangeResult{Schedule: apiSchedule(&res.Schedule, nextOfNew(&res.Schedule), s.eng.Cluster.Now()),
			Canceled: res.Canceled, InFlight: res.InFlight, DryRun: true}, nil
	}
	return s.changed(r.Context())(s.eng.Control.Update(r.Context(), tenantOf(r), r.PathValue("ref"), sp))
}

func (s *Server) pauseSchedule(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := emptyBody(w, r); err != nil {
		return 0, nil, err
	}
	return s.changed(r.Context())(s.eng.Control.Pause(r.Context(), tenantOf(r), r.PathValue("ref")))
}

func (s *Server) resumeSchedule(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := emptyBody(w, r); err != nil {
		return 0, nil, err
	}
	return s.changed(r.Context())(s.eng.Control.Resume(r.Context(), tenantOf(r), r.PathValue("ref")))
}

func (s *Server) cancelSchedule(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := emptyBody(w, r); err != nil {
		return 0, nil, err
	}
	return s.changed(r.Context())(s.eng.Control.Cancel(r.Context(), tenantOf(r), r.PathValue("ref")))
}

// emptyBody accepts no body or an empty JSON object: the verbs that take
// no arguments.
func emptyBody(w http.ResponseWriter, r *http.Request) error {
	if err := onlyQuery(r); err != nil {
		return err
	}
	var none struct{}
	return decodeBody(w, r, &none, true)
}

// changed answers a change of a schedule: changed(ctx)(eng.Pause(...)).
func (s *Server) changed(ctx context.Context) func(engine.ChangeResult, error) (int, any, error) {
	return func(res engine.ChangeResult, err error) (int, any, error) {
		if err != nil {
			return 0, nil, err
		}
		sc, err := s.schedule(ctx, &res.Schedule)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, api.ChangeResult{Schedule: sc, Canceled: res.Canceled, InFlight: res.InFlight}, nil
	}
}

var occurrenceStates = []record.OccurrenceState{
	record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRunning, record.OccurrenceSucceeded,
	record.OccurrenceRetryWait, record.OccurrenceDead, record.OccurrenceMissed, record.OccurrenceCanceled,
	record.OccurrenceSkippedOverlap,
}

func (s *Server) listOccurrences(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r, "schedule", "state", "queue", "limit", "page", "order"); err != nil {
		return 0, nil, err
	}
	q := r.URL.Query()
	limit, desc, tok, err := pageParams(r, "occurrences", true)
	if err != nil {
		return 0, nil, err
	}
	p := store.ListOccurrencesParams{TenantID: tenantOf(r), Queue: q.Get("queue"), Limit: limit, Reverse: desc, After: tok.occurrenceKey()}
	if v := q.Get("state"); v != "" {
		st, ok := oneOf(v, occurrenceStates)
		if !ok {
			return 0, nil, invalidArg("state", fmt.Sprintf("state %q: want one of %s", clip(v), join(occurrenceStates)))
		}
		p.State = st
	}
	if p.ScheduleID, err = s.scheduleID(r.Context(), q.Get("schedule")); err != nil {
		return 0, nil, err
	}
	occs, err := s.eng.Queue.Occurrences(r.Context(), p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiOccurrences(occs, s.eng.Cluster.Now(), nextOccurrencePage("occurrences", occs, limit, desc)), nil
}

// scheduleID is the id of the schedule ref names (an id or a name), or ""
// for an empty ref.
func (s *Server) scheduleID(ctx context.Context, ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	sc, err := s.eng.Control.Get(ctx, engine.ActorOf(ctx).TenantID, ref)
	if err != nil {
		return "", err
	}
	return sc.ScheduleID, nil
}

func (s *Server) listDead(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r, "schedule", "queue", "limit", "page", "order"); err != nil {
		return 0, nil, err
	}
	q := r.URL.Query()
	limit, desc, tok, err := pageParams(r, "dlq", true)
	if err != nil {
		return 0, nil, err
	}
	p := store.ListOccurrencesParams{TenantID: tenantOf(r), State: record.OccurrenceDead, Queue: q.Get("queue"),
		Limit: limit, Reverse: desc, After: tok.occurrenceKey()}
	if p.ScheduleID, err = s.scheduleID(r.Context(), q.Get("schedule")); err != nil {
		return 0, nil, err
	}
	occs, err := s.eng.Queue.Occurrences(r.Context(), p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiOccurrences(occs, s.eng.Cluster.Now(), nextOccurrencePage("dlq", occs, limit, desc)), nil
}

// dlqFilter reads the body of a bulk DLQ route.
func (s *Server) dlqFilter(w http.ResponseWriter, r *http.Request) (engine.DLQFilter, error) {
	if err := onlyQuery(r); err != nil {
		return engine.DLQFilter{}, err
	}
	var req api.DLQFilter
	if err := decodeBody(w, r, &req, true); err != nil {
		return engine.DLQFilter{}, err
	}
	f := engine.DLQFilter{TenantID: tenantOf(r), Queue: req.Queue}
	var err error
	f.ScheduleID, err = s.scheduleID(r.Context(), req.Schedule)
	return f, err
}

func (s *Server) replayDead(r *http.Request, w http.ResponseWriter) (int, any, error) {
	f, err := s.dlqFilter(w, r)
	if err != nil {
		return 0, nil, err
	}
	ids, more, err := s.eng.Queue.ReplayDead(r.Context(), f, api.MaxDLQBatch)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.DLQResult{Count: len(ids), OccurrenceIDs: ids, More: more}, nil
}

func (s *Server) purgeDead(r *http.Request, w http.ResponseWriter) (int, any, error) {
	f, err := s.dlqFilter(w, r)
	if err != nil {
		return 0, nil, err
	}
	n, more, err := s.eng.Queue.PurgeDead(r.Context(), f, api.MaxDLQBatch)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.DLQResult{Count: n, More: more}, nil
}

// trigger fires a schedule now, once (engine.Trigger).
func (s *Server) trigger(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.TriggerRequest
	if err := decodeBody(w, r, &req, true); err != nil {
		return 0, nil, err
	}
	key, err := idempotencyKey(r, req.IdempotencyKey)
	if err != nil {
		return 0, nil, err
	}
	o, created, err := s.eng.Control.Trigger(r.Context(), tenantOf(r), r.PathValue("ref"), key)
	if err != nil {
		return 0, nil, err
	}
	code := http.StatusCreated
	if !created {
		code = http.StatusOK
	}
	return code, api.TriggerResult{Occurrence: apiOccurrence(o, s.eng.Cluster.Now()), Created: created}, nil
}

func (s *Server) getOccurrence(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.Queue.Occurrence(r.Context(), tenantOf(r), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiOccurrence(o, s.eng.Cluster.Now()), nil
}

// listAttempts pages an occurrence's attempts, first first: the store
// reads the page alone, from the token's attempt on.
func (s *Server) listAttempts(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r, "limit", "page"); err != nil {
		return 0, nil, err
	}
	limit, _, tok, err := pageParams(r, "attempts", false)
	if err != nil {
		return 0, nil, err
	}
	as, err := s.eng.Queue.Attempts(r.Context(), store.ListAttemptsParams{TenantID: tenantOf(r), OccurrenceID: r.PathValue("id"),
		After: tok.attemptAfter(), Limit: limit})
	if err != nil {
		return 0, nil, err
	}
	out := api.AttemptList{Attempts: make([]api.Attempt, 0, len(as))}
	for i := range as {
		out.Attempts = append(out.Attempts, apiAttempt(&as[i]))
	}
	if len(as) == limit {
		out.NextPage = pageToken{List: "attempts", ID: strconv.FormatInt(as[limit-1].Attempt, 10)}.encode()
	}
	return http.StatusOK, out, nil
}

// claim takes occurrences of a queue, waiting up to the request's wait for
// one to become available (a long poll). During a shutdown a new claim is
// refused and a waiting one returns at once with what it has.
func (s *Server) claim(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.ClaimRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	acks, err := claimAcks(req.Acks)
	if err == nil {
		err = errors.Join(ackTenants(r, tenantOf(r), req.Acks, acks), checkAllTenants(r, req.AllTenants))
	}
	if err != nil {
		return 0, nil, err
	}
	if s.draining() {
		if len(acks) == 0 {
			return 0, nil, unavailable("shutting down: not taking claims; retry against another node or after the restart")
		}
		// The acks are still taken, so a draining worker does not
		// have to send them again one by one; no claim is.
		rs, err := s.eng.Queue.AckBatch(r.Context(), tenantOf(r), acks)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, api.ClaimResult{Claimed: []api.Claimed{}, Acks: ackOutcomes(acks, rs)}, nil
	}
	lease, err := schedule.ParseDuration("lease", req.Lease, false)
	if err != nil {
		return 0, nil, err
	}
	wait, err := schedule.ParseDuration("wait", req.Wait, true)
	if err != nil {
		return 0, nil, err
	}
	if wait > MaxClaimWait {
		return 0, nil, invalidArg("wait", fmt.Sprintf("wait %q: must be at most %s", req.Wait, MaxClaimWait))
	}
	if wait > 0 {
		release, err := s.takeWaitSlot(w, r)
		if err != nil {
			return 0, nil, err
		}
		defer release()
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + writeSlack))
	ctx, cancel := context.WithTimeout(r.Context(), wait+RequestTimeout)
	defer cancel()
	stop := context.AfterFunc(s.drainCtx, cancel)
	defer stop()
	creq := engine.ClaimRequest{
		TenantID: tenantOf(r), Queue: req.Queue, WorkerID: req.WorkerID,
		Limit: req.Limit, Lease: lease, Wait: wait, AllTenants: req.AllTenants,
	}
	var (
		got []store.Claimed
		rs  []store.FinishResult
	)
	if len(acks) > 0 {
		rs, got, err = s.eng.Queue.AckAndClaim(ctx, creq, acks)
		if err != nil && rs == nil {
			return 0, nil, err // nothing was acked
		}
	} else {
		got, err = s.eng.Queue.Claim(ctx, creq)
	}
	if err != nil && s.draining() && errors.Is(err, context.Canceled) && r.Context().Err() == nil {
		// Interrupted by the shutdown: nothing was claimed (a claim
		// interrupted mid-transaction rolls back).
		got, err = nil, nil
	}
	if err != nil {
		// The acks were committed before the wait that failed: their
		// answers would be lost with this error, but a worker that sends
		// them again gets the same answers (a repeated ack succeeds).
		return 0, nil, err
	}
	out := api.ClaimResult{Claimed: make([]api.Claimed, 0, len(got))}
	for i := range got {
		out.Claimed = append(out.Claimed, apiClaimed(&got[i]))
	}
	if len(acks) > 0 {
		out.Acks = ackOutcomes(acks, rs)
	}
	return http.StatusOK, out, nil
}

// maxOccurrenceID bounds an occurrence id given in a body; derived ids are
// 28 characters.
const maxOccurrenceID = 128

// claimAcks checks the acks a claim carries.
func claimAcks(in []api.AckItem) ([]engine.AckItem, error) {
	if len(in) > engine.MaxClaimBatch {
		return nil, invalidArg("acks", fmt.Sprintf("%d acks: at most %d go with one claim", len(in), engine.MaxClaimBatch))
	}
	out := make([]engine.AckItem, len(in))
	for i, a := range in {
		if a.OccurrenceID == "" || len(a.OccurrenceID) > maxOccurrenceID {
			return nil, invalidArg(fmt.Sprintf("acks[%d].occurrence_id", i),
				fmt.Sprintf("ack %d: occurrence_id must be 1 to %d bytes", i, maxOccurrenceID))
		}
		if a.Attempt < 1 {
			return nil, invalidArg(fmt.Sprintf("acks[%d].attempt", i),
				fmt.Sprintf("ack %d (%s): attempt %d: give the attempt number of your claim (1 or more)", i, a.OccurrenceID, a.Attempt))
		}
		out[i] = engine.AckItem{OccurrenceID: a.OccurrenceID, Attempt: a.Attempt}
	}
	return out, nil
}

// ackOutcomes answers each ack as POST /v1/occurrences/{id}/ack would.
func ackOutcomes(acks []engine.AckItem, rs []store.FinishResult) []api.AckOutcome {
	out := make([]api.AckOutcome, len(acks))
	for i, a := range acks {
		out[i] = api.AckOutcome{OccurrenceID: a.OccurrenceID, Attempt: a.Attempt}
		if err := rs[i].Err; err != nil {
			_, d := classify(err, "no such occurrence")
			out[i].Error = &d
		}
	}
	return out
}

// attemptNumber checks the fencing token of a heartbeat, ack or nack.
func attemptNumber(n int64) error {
	if n < 1 {
		return invalidArg("attempt", fmt.Sprintf("attempt %d: give the attempt number of your claim (1 or more)", n))
	}
	return nil
}

func (s *Server) heartbeat(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.HeartbeatRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	if err := attemptNumber(req.Attempt); err != nil {
		return 0, nil, err
	}
	lease, err := schedule.ParseDuration("lease", req.Lease, false)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.eng.Queue.Heartbeat(r.Context(), tenantOf(r), r.PathValue("id"), req.Attempt, lease)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.HeartbeatResult{
		LeaseExpiresAt: res.LeaseExpiresAt.UTC(), Superseded: res.Superseded, Canceled: res.Canceled,
	}, nil
}

func (s *Server) ack(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.AckRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	if err := attemptNumber(req.Attempt); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.Queue.Ack(r.Context(), tenantOf(r), r.PathValue("id"), req.Attempt)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiOccurrence(o, s.eng.Cluster.Now()), nil
}

func (s *Server) nack(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var req api.NackRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return 0, nil, err
	}
	if err := attemptNumber(req.Attempt); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.Queue.Nack(r.Context(), tenantOf(r), r.PathValue("id"), req.Attempt, engine.ErrorClass(req.Class), req.Error)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiOccurrence(o, s.eng.Cluster.Now()), nil
}

func (s *Server) replay(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := emptyBody(w, r); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.Queue.Replay(r.Context(), tenantOf(r), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiOccurrence(o, s.eng.Cluster.Now()), nil
}

// oneOf matches v against states, in any letter case.
func oneOf[S ~string](v string, states []S) (S, bool) {
	for _, st := range states {
		if strings.EqualFold(v, string(st)) {
			return st, true
		}
	}
	return "", false
}

func join[S ~string](states []S) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = string(st)
	}
	return strings.Join(parts, ", ")
}
