package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sched-dev/sched/api"
)

// Worker defaults.
const (
	DefaultLease = 30 * time.Second
	DefaultWait  = 30 * time.Second
	// MaxNackError bounds the error message a nack carries.
	MaxNackError = 4 << 10
)

// Why a handler's context is canceled; see context.Cause.
var (
	// ErrSuperseded: the schedule got a newer version while the handler ran.
	ErrSuperseded = errors.New("the schedule was superseded by a newer version")
	// ErrScheduleCanceled: the schedule was canceled while the handler ran.
	ErrScheduleCanceled = errors.New("the schedule was canceled")
	// ErrLeaseLost: the lease could not be renewed (another attempt took
	// the occurrence, or schedd was unreachable until the lease ran out).
	ErrLeaseLost = errors.New("the lease was lost")
)

// Job is one delivery to a handler. Attempt is the fencing token the worker
// presents with its heartbeats, ack and nack; handlers deduplicate on
// OccurrenceID, which stays the same across retries and redeliveries.
type Job struct {
	api.Claimed
}

// Worker runs Handler once per occurrence claimed from Queue, at most
// Concurrency at a time. While a handler runs, the worker heartbeats every
// Lease/3; it cancels the handler's context (context.Cause says why:
// ErrSuperseded, ErrScheduleCanceled, ErrLeaseLost) when a heartbeat says
// the schedule was superseded or canceled, or when the lease cannot be
// renewed. When the handler returns nil the worker acks; an error marked
// with Permanent nacks as permanent (the dead-letter queue), any other
// error nacks as retryable. An ack goes with the worker's next claim
// (api.ClaimRequest.Acks) when one is about to be sent, which the freed
// slot sets off at once: a busy worker pays one round trip and one commit
// per batch. A claim that carries acks waits at most a second for work, so
// their answers (and the "acked" log lines) are not held back by a long
// poll. While a claim is already out (a long poll), acks go on their own,
// so none waits for that poll to end; and every ack goes on its own once a
// schedd has refused acks with a claim (an older version).
//
// Delivery is at least once: a handler can see the same OccurrenceID
// again (a lost ack, an expired lease) and must deduplicate on it.
type Worker struct {
	Client      *Client
	Queue       string
	WorkerID    string        // default: HOSTNAME-PID
	Concurrency int           // default 1
	Lease       time.Duration // visibility lease; default 30s
	Wait        time.Duration // long poll of each claim; default 30s, at most 5m
	Handler     func(ctx context.Context, job *Job) error
	// Logger receives what the worker does and what goes wrong (claims that
	// fail, acks refused); nil discards it.
	Logger *slog.Logger
	// Pool makes the worker one of a pool shared by every tenant: it
	// claims the queue's work of all of them (api.ClaimRequest.AllTenants,
	// served by their weights) and heartbeats, acks and nacks each job as
	// its tenant (Job.Tenant). It needs an admin token: schedd refuses
	// it otherwise, and Run returns the error.
	Pool bool
}

// Permanent marks err as permanent: a Worker nacks it with class
// permanent, so the occurrence goes to the dead-letter queue instead of
// being retried. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked with
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Run claims and handles occurrences until ctx ends. Then it stops
// claiming, waits for the handlers still running to return (their
// contexts are not canceled by ctx: this is a drain), acks or nacks them,
// and returns nil. It returns an error early only for what retrying cannot
// fix: a bad configuration, a refused token, a request schedd calls
// invalid. Other failures (schedd restarting, unreachable, busy) are
// logged and retried with backoff.
func (w *Worker) Run(ctx context.Context) error {
	cfg, err := w.config()
	if err != nil {
		return err
	}
	slots := make(chan struct{}, cfg.Concurrency)
	for range cfg.Concurrency {
		slots <- struct{}{}
	}
	var wg sync.WaitGroup
	acks := &pendingAcks{}
	defer func() {
		// Handlers that finish during the drain ack on their own; what
		// the last claim did not carry is acked here.
		wg.Wait()
		for _, a := range acks.take(math.MaxInt, false) {
			cfg.finish(context.WithoutCancel(ctx), a.job, nil, a.log)
		}
	}()
	backoff := retryMin
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-slots:
		}
		n := 1
	more:
		for n < cfg.Concurrency {
			select {
			case <-slots:
				n++
			default:
				break more
			}
		}
		// The long poll ends with ctx, so a drain does not wait out the
		// wait. An answer lost that way leaves its occurrences claimed
		// until their lease runs out; they are then delivered again.
		sent := time.Now()
		carried := acks.take(maxAcksPerClaim, true)
		wait := cfg.Wait
		if len(carried) > 0 {
			// The acks' answers come back with the claim's: a long poll
			// would hold them (and the "acked" lines) back until work
			// came or the wait ran out. The next claim, with no acks,
			// waits in full.
			wait = min(wait, ackClaimWait)
		}
		req := api.ClaimRequest{
			Queue: cfg.Queue, WorkerID: cfg.WorkerID, Limit: n,
			Lease: cfg.Lease.String(), Wait: wait.String(), AllTenants: cfg.Pool,
		}
		for _, a := range carried {
			item := api.AckItem{OccurrenceID: a.job.OccurrenceID, Attempt: a.job.Attempt}
			if cfg.Pool {
				item.Tenant = a.job.Tenant
			}
			req.Acks = append(req.Acks, item)
		}
		res, err := cfg.Client.Claim(ctx, req)
		acks.claimDone()
		if err != nil {
			// Whether the acks were taken is unknown: they go again, on
			// their own (a repeated ack succeeds again).
			cfg.finishAll(ctx, &wg, carried)
			for range n {
				slots <- struct{}{}
			}
			if ctx.Err() != nil {
				return nil
			}
			if len(carried) > 0 && refusesAcks(err) {
				cfg.log().Warn("schedd does not take acks with claims (an older version): acking each on its own", "error", err.Error())
				acks.disable()
				continue
			}
			if fatal(err) {
				return fmt.Errorf("worker: claim from queue %q: %w", cfg.Queue, err)
			}
			cfg.log().Warn("claim failed; retrying", "queue", cfg.Queue, "in", backoff.String(), "error", err.Error())
			if !sleep(ctx, jitter(backoff)) {
				return nil
			}
			backoff = min(2*backoff, retryMax)
			continue
		}
		backoff = retryMin
		cfg.ackAnswers(ctx, &wg, carried, res.Acks)
		for i := range res.Claimed {
			job := &Job{Claimed: res.Claimed[i]}
			wg.Add(1)
			go func(ownsSlot bool) {
				defer wg.Done()
				if ownsSlot {
					defer func() { slots <- struct{}{} }()
				}
				cfg.handle(ctx, job, sent, acks)
			}(i < n)
		}
		for i := len(res.Claimed); i < n; i++ {
			slots <- struct{}{}
		}
		// An empty answer well before the wait is up (schedd shutting down,
		// or one that does not long-poll) must not turn into a busy loop.
		if len(res.Claimed) == 0 && time.Since(sent) < emptyPause {
			if !sleep(ctx, emptyPause) {
				return nil
			}
		}
	}
}

const (
	retryMin   = 100 * time.Millisecond
	retryMax   = 5 * time.Second
	emptyPause = 200 * time.Millisecond
	finishTry  = 4 // attempts at an ack or nack that fails in transit
	// ackClaimWait is the longest a claim that carries acks waits for
	// work, so that the acks' answers are not held back by a long poll.
	ackClaimWait = time.Second
)

func (w *Worker) config() (*Worker, error) {
	cfg := *w
	switch {
	case cfg.Client == nil:
		return nil, errors.New("worker: Client is nil")
	case cfg.Queue == "":
		return nil, errors.New("worker: Queue is empty")
	case cfg.Handler == nil:
		return nil, errors.New("worker: Handler is nil")
	case cfg.Concurrency < 0, cfg.Lease < 0, cfg.Wait < 0:
		return nil, errors.New("worker: Concurrency, Lease and Wait must not be negative")
	case cfg.Wait > MaxWait:
		return nil, fmt.Errorf("worker: Wait %s is over the limit of %s", cfg.Wait, MaxWait)
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 1
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Lease < time.Second {
		return nil, fmt.Errorf("worker: Lease %s is under 1s", cfg.Lease)
	}
	if cfg.Wait == 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.WorkerID == "" {
		host, _ := os.Hostname()
		if host == "" {
			host = "worker"
		}
		cfg.WorkerID = host + "-" + strconv.Itoa(os.Getpid())
	}
	return &cfg, nil
}

func (w *Worker) log() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}

// fatal reports whether a claim error will not go away by retrying.
func fatal(err error) bool {
	if IsUnauthorized(err) || IsInvalid(err) {
		return true
	}
	var e *Error
	if errors.As(err, &e) && (e.Status == 403 || e.Status == 404) {
		return true
	}
	var de *DialError
	return errors.As(err, &de) && de.Untrusted
}

// handle runs the handler for one job, heartbeating meanwhile, then acks or
// nacks: an ack goes to acks, for the next claim, unless Run is stopping or
// a claim is already out. parent is Run's context: its end must not cancel
// the handler (a drain lets running handlers finish), so everything here
// hangs off a context without its cancellation.
func (w *Worker) handle(parent context.Context, job *Job, claimSent time.Time, acks *pendingAcks) {
	base := context.WithoutCancel(parent)
	hctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	log := w.log().With("occurrence_id", job.OccurrenceID, "attempt", job.Attempt)
	if w.Pool {
		log = log.With("tenant", job.Tenant)
	}
	log.Info("claimed", "schedule_id", job.ScheduleID, "scheduled_for", job.ScheduledFor)

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.heartbeat(base, job, claimSent, cancel, stop, log)
	}()
	herr := w.call(hctx, job)
	close(stop)
	<-done
	if cause := context.Cause(hctx); cause != nil && !errors.Is(cause, context.Canceled) {
		log.Warn("handler was asked to stop", "reason", cause.Error())
	}
	if herr == nil && parent.Err() == nil && acks.add(pendingAck{job, log}) {
		return
	}
	w.finish(base, job, herr, log)
}

// maxAcksPerClaim is the most acks one claim carries (the API's limit).
const maxAcksPerClaim = 1000

// pendingAcks holds the acks of handlers that succeeded, for the next
// claim to carry.
type pendingAcks struct {
	mu       sync.Mutex
	items    []pendingAck
	claimed  bool // a claim is out: its acks are taken, and new ones go alone
	disabled bool // schedd refuses acks with claims: every ack goes alone
}

type pendingAck struct {
	job *Job
	log *slog.Logger
}

// add queues a for the next claim, unless a claim is out; it reports
// whether it did.
func (p *pendingAcks) add(a pendingAck) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed || p.disabled {
		return false
	}
	p.items = append(p.items, a)
	return true
}

// take removes up to n queued acks and returns them; claiming marks a
// claim as out until claimDone.
func (p *pendingAcks) take(n int, claiming bool) []pendingAck {
	p.mu.Lock()
	defer p.mu.Unlock()
	n = min(n, len(p.items))
	out := slices.Clone(p.items[:n])
	p.items = slices.Delete(p.items, 0, n)
	p.claimed = claiming
	return out
}

func (p *pendingAcks) disable() {
	p.mu.Lock()
	p.disabled = true
	p.mu.Unlock()
}

// refusesAcks reports whether a claim was refused for carrying acks: a
// schedd from before api.ClaimRequest.Acks refuses the unknown field.
func refusesAcks(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Code == api.CodeBadRequest &&
		strings.Contains(e.Message, `unknown field "acks"`)
}

func (p *pendingAcks) claimDone() {
	p.mu.Lock()
	p.claimed = false
	p.mu.Unlock()
}

// ackAnswers logs the answers to the acks a claim carried. An ack whose
// answer is missing (schedd answers every one, in order) is sent again on
// its own.
func (w *Worker) ackAnswers(ctx context.Context, wg *sync.WaitGroup, carried []pendingAck, answers []api.AckOutcome) {
	for i, a := range carried {
		if i >= len(answers) || answers[i].OccurrenceID != a.job.OccurrenceID {
			w.finishAll(ctx, wg, carried[i:])
			return
		}
		switch e := answers[i].Error; {
		case e == nil:
			a.log.Info("acked")
		case e.Code == api.CodeStaleAttempt:
			a.log.Error("ack refused: stale attempt (the lease ran out and the occurrence was delivered again)", "error", e.Message)
		default:
			a.log.Error("ack failed", "code", e.Code, "error", e.Message)
		}
	}
}

// finishAll acks each of as on its own, in the background (Run waits for
// them in wg).
func (w *Worker) finishAll(ctx context.Context, wg *sync.WaitGroup, as []pendingAck) {
	for _, a := range as {
		wg.Go(func() { w.finish(context.WithoutCancel(ctx), a.job, nil, a.log) })
	}
}

// call runs the handler; a panic is a retryable failure, not a dead worker.
func (w *Worker) call(ctx context.Context, job *Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return w.Handler(ctx, job)
}

// heartbeat renews the lease every Lease/3 until stop closes. It cancels
// the handler's context when schedd says the schedule was superseded or
// canceled (and keeps renewing, so the handler can still ack or nack with a
// live lease), and when the lease is lost: refused as stale or unknown, or
// not renewed before it ran out by this process's own clock (measured from
// when the claim or the last successful heartbeat was sent, so a slow
// answer only makes it more careful).
func (w *Worker) heartbeat(base context.Context, job *Job, claimSent time.Time, cancel context.CancelCauseFunc, stop <-chan struct{}, log *slog.Logger) {
	base = w.jobContext(base, job)
	interval := w.Lease / 3
	trustedUntil := claimSent.Add(w.Lease)
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		sent := time.Now()
		// A heartbeat may take until the lease runs out, and at least an
		// interval; one that hangs longer is as good as failed.
		deadline := sent.Add(interval)
		if trustedUntil.After(deadline) {
			deadline = trustedUntil
		}
		ctx, c := context.WithDeadline(base, deadline)
		res, err := w.Client.Heartbeat(ctx, job.OccurrenceID, api.HeartbeatRequest{Attempt: job.Attempt, Lease: w.Lease.String()})
		c()
		switch {
		case err == nil:
			trustedUntil = sent.Add(w.Lease)
			if res.Canceled {
				cancel(ErrScheduleCanceled)
			} else if res.Superseded {
				cancel(ErrSuperseded)
			}
		case IsStaleAttempt(err) || IsNotFound(err) || IsConflict(err):
			cancel(fmt.Errorf("%w: %v", ErrLeaseLost, err))
			return
		default:
			log.Warn("heartbeat failed", "error", err.Error())
			if !time.Now().Before(trustedUntil) {
				cancel(fmt.Errorf("%w: not renewed before it ran out: %v", ErrLeaseLost, err))
				return
			}
		}
		next := interval
		if left := time.Until(trustedUntil); err != nil && left < next {
			next = max(left, 10*time.Millisecond)
		}
		t.Reset(next)
	}
}

// finish acks or nacks from the handler's error, retrying a few times
// when the answer is lost in transit or schedd is busy. A retried ack or
// nack that was already taken is harmless.
func (w *Worker) finish(base context.Context, job *Job, herr error, log *slog.Logger) {
	base = w.jobContext(base, job)
	op := "ack"
	send := func(ctx context.Context) error {
		_, err := w.Client.Ack(ctx, job.OccurrenceID, api.AckRequest{Attempt: job.Attempt})
		return err
	}
	if herr != nil {
		class := ClassRetryable
		if IsPermanent(herr) {
			class = ClassPermanent
		}
		op = "nack " + class
		msg := herr.Error()
		if len(msg) > MaxNackError {
			msg = msg[:MaxNackError-3] + "..."
		}
		send = func(ctx context.Context) error {
			_, err := w.Client.Nack(ctx, job.OccurrenceID, api.NackRequest{Attempt: job.Attempt, Class: class, Error: msg})
			return err
		}
	}
	delay := retryMin
	for try := 1; ; try++ {
		err := send(base)
		switch {
		case err == nil:
			if herr == nil {
				log.Info("acked")
			} else {
				log.Warn("nacked", "class", op[len("nack "):], "error", herr.Error())
			}
			return
		case IsStaleAttempt(err):
			log.Error(op+" refused: stale attempt (the lease ran out and the occurrence was delivered again)", "error", err.Error())
			return
		}
		var e *Error
		retry := !errors.As(err, &e) || e.Status >= 500 || e.Status == 429
		if !retry || try == finishTry {
			log.Error(op+" failed", "error", err.Error())
			return
		}
		time.Sleep(jitter(delay))
		delay *= 2
	}
}

// jitter returns a duration in [d/2, d).
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
