package simulate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// The engine settings of a simulation: schedd's defaults, so that what
// the simulation shows is what schedd does.
const (
	tenant     = "sim"
	workerID   = "simulated-worker"
	horizon    = engine.DefaultHorizon
	tick       = engine.DefaultTick
	shardLease = engine.DefaultShardLease
)

// drain is how long the clock runs past To, so that the firings
// scheduled by To can run and finish; what is still open then is
// PENDING.
func (o *Options) drain() time.Duration { return 5*time.Minute + 2*o.workerDuration }

// Simulate checks a request as FromRequest does and runs it.
func Simulate(ctx context.Context, r *api.SimulateRequest, lim Limits) (*api.SimulateResult, error) {
	o, err := FromRequest(r, lim)
	if err != nil {
		return nil, err
	}
	return Run(ctx, o, lim)
}

// Server runs simulations for schedd's API (it satisfies the server's
// interface for POST /v1/simulate) within its Limits.
type Server struct{ Limits Limits }

// Simulate runs one simulation.
func (s Server) Simulate(ctx context.Context, r *api.SimulateRequest) (*api.SimulateResult, error) {
	return Simulate(ctx, r, s.Limits)
}

// work is an attempt a virtual worker runs.
type work struct {
	occ     string
	attempt int64
	queue   string
	node    int // the node it was claimed from
	finish  time.Time
	fail    bool
}

// run is one simulation in progress.
type run struct {
	o      *Options
	lim    Limits
	clk    *clock.Virtual
	st     store.Store
	engs   []*engine.Engine
	shards int
	end    time.Time // To plus the drain
	queues []string  // the schedules' queues, sorted
	ids    []string  // schedule ids, by entry

	works       []*work     // running, by finish time then occurrence id
	lastPass    []time.Time // by node; zero: never
	wasUp       []bool
	minCursor   time.Time            // the earliest planner cursor; zero: none
	cursorKnown bool                 // minCursor has been read
	nextAvail   map[string]time.Time // by queue: when an occurrence next becomes claimable; zero: none
	dirty       map[string]bool      // queues to claim from at this instant
	blocked     map[string]bool      // queues with a firing available but held back (queue_one)
	stale       map[string]bool      // queues whose nextAvail a pass may have changed
	boundaries  []time.Time          // outage and node-down edges, sorted
	made        int                  // firings the planner made
}

// Run runs a checked simulation. It opens a private store in a temporary
// directory and removes it on return.
func Run(parent context.Context, o *Options, lim Limits) (*api.SimulateResult, error) {
	ctx, cancel := context.WithTimeout(parent, lim.MaxWall)
	defer cancel()
	r := &run{o: o, lim: lim}
	res, err := r.run(ctx)
	if err != nil && ctx.Err() != nil && parent.Err() == nil {
		// The wall-time limit, not the caller, stopped it.
		return nil, schedule.Invalid("to", "the simulation ran over its limit of %s of wall time (at %s simulated); simulate a shorter range or fewer schedules",
			lim.MaxWall, r.simulatedNow())
	}
	return res, err
}

// simulatedNow is how far the clock got, for messages.
func (r *run) simulatedNow() string {
	if r.clk == nil {
		return "the start"
	}
	return fmtTime(r.clk.Now())
}

func (r *run) run(ctx context.Context) (*api.SimulateResult, error) {
	o := r.o
	dir, err := scratchDir()
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "simulation.db"), sqlite.WithScratch(), sqlite.WithReadConns(2))
	if err != nil {
		return nil, fmt.Errorf("simulate: private store: %w", err)
	}
	defer st.Close()

	r.st, r.end, r.shards = st, o.to.Add(o.drain()), 1
	r.nextAvail, r.dirty, r.blocked, r.stale = map[string]time.Time{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	r.lastPass, r.wasUp = make([]time.Time, o.nodes), make([]bool, o.nodes)
	if o.nodes > 1 {
		r.shards = 2 * o.nodes // two each, so that a node's going down moves some
	}
	// The schedules are created a millisecond before From: a timetable's
	// first firing is strictly after its creation, and one at From counts.
	r.clk = clock.NewVirtual(o.from.Add(-time.Millisecond))
	for i := range o.nodes {
		e, err := engine.New(ctx, engine.Config{Store: st, Clock: r.clk, NodeID: nodeName(i), Shards: r.shards,
			Horizon: horizon, Tick: tick, ShardLease: shardLease, Rand: seeded(o.seed, i)})
		if err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
		r.engs = append(r.engs, e)
	}
	if err := r.create(ctx); err != nil {
		return nil, err
	}
	for _, w := range o.outages {
		r.boundaries = append(r.boundaries, w.start, w.end)
	}
	for _, d := range o.nodeDowns {
		r.boundaries = append(r.boundaries, d.start, d.end)
	}
	slices.SortFunc(r.boundaries, func(a, b time.Time) int { return a.Compare(b) })
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	return r.report(ctx)
}

// scratchDir makes the private directory of a simulation's store: on
// /dev/shm, a memory file system, when there is one.
func scratchDir() (string, error) {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "sched-simulate-"); err == nil {
			return d, nil
		}
	}
	d, err := os.MkdirTemp("", "sched-simulate-")
	if err != nil {
		return "", fmt.Errorf("private directory: %w", err)
	}
	return d, nil
}

// seeded is node i's deterministic stream of "random" bytes for the ids
// it mints.
func seeded(seed int64, node int) io.Reader {
	var key [32]byte
	binary.BigEndian.PutUint64(key[:8], uint64(seed))
	binary.BigEndian.PutUint64(key[8:16], uint64(node))
	return rand.NewChaCha8(key)
}

// create creates the schedules through the first node's control plane,
// as schedctl apply would.
func (r *run) create(ctx context.Context) error {
	qs := map[string]bool{}
	for i, e := range r.o.schedules {
		sc, _, err := r.engs[0].Control.Create(ctx, tenant, "", e.settings)
		if err != nil {
			var ve *schedule.ValidationError
			if errors.As(err, &ve) {
				return schedule.Invalid(fmt.Sprintf("schedules[%d].%s", i, ve.Field), "%s", ve.Reason())
			}
			return fmt.Errorf("simulate: create %q: %w", e.name, err)
		}
		r.ids = append(r.ids, sc.ScheduleID)
		if !qs[sc.Queue] {
			qs[sc.Queue] = true
			r.queues = append(r.queues, sc.Queue)
		}
	}
	slices.Sort(r.queues)
	return nil
}

// up reports which nodes run at t: none during an outage, and not a node
// in one of its own down windows.
func (r *run) up(t time.Time) []bool {
	up := make([]bool, r.o.nodes)
	for i := range up {
		up[i] = true
	}
	for _, w := range r.o.outages {
		if w.has(t) {
			clear(up)
			return up
		}
	}
	for _, d := range r.o.nodeDowns {
		if d.has(t) {
			up[d.node] = false
		}
	}
	return up
}

// firstUp is the first node up, -1 when none is.
func firstUp(up []bool) int {
	for i, u := range up {
		if u {
			return i
		}
	}
	return -1
}

// loop moves the clock from event to event until the end: at each
// instant, the workers that are done report, the nodes whose pass is due
// pass, and the queues with work hand it out; then the clock jumps to the
// next instant anything can happen.
func (r *run) loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := r.clk.Now()
		up := r.up(now)
		for i := range up {
			if up[i] && !r.wasUp[i] {
				r.lastPass[i] = time.Time{} // back up: it passes at once, as a started schedd does
				for _, q := range r.queues {
					r.dirty[q] = true
				}
			}
		}
		r.wasUp = up
		if firstUp(up) >= 0 {
			if err := r.finish(ctx, now, up); err != nil {
				return err
			}
			if err := r.pass(ctx, now, up); err != nil {
				return err
			}
			if err := r.claim(ctx, now, up); err != nil {
				return err
			}
		}
		next := r.next(now, up)
		if next.After(r.end) {
			return nil
		}
		r.clk.Set(next)
	}
}

// finish reports the workers whose attempt is done: acks in one batch per
// node, failures one nack each. A worker whose node is down reports to
// the first node up; while none is, it waits (its report is retried, as
// a worker's would be, and the engine judges it when it arrives).
func (r *run) finish(ctx context.Context, now time.Time, up []bool) error {
	n := 0
	for n < len(r.works) && !r.works[n].finish.After(now) {
		n++
	}
	if n == 0 {
		return nil
	}
	done := r.works[:n]
	r.works = slices.Clone(r.works[n:])
	acks := make([][]engine.AckItem, len(up))
	for _, w := range done {
		node := w.node
		if !up[node] {
			node = firstUp(up)
		}
		if w.fail || r.blocked[w.queue] {
			r.dirty[w.queue] = true // a failure schedules a retry; a finish may free a waiting queue_one firing
		}
		if !w.fail {
			acks[node] = append(acks[node], engine.AckItem{OccurrenceID: w.occ, Attempt: w.attempt})
			continue
		}
		_, err := r.engs[node].Queue.Nack(ctx, tenant, w.occ, w.attempt, engine.Retryable, "simulated failure")
		if err != nil && !errors.Is(err, store.ErrStaleAttempt) {
			return fmt.Errorf("simulate: %w", err)
		}
	}
	for node, items := range acks {
		if len(items) == 0 {
			continue
		}
		rs, err := r.engs[node].Queue.AckBatch(ctx, tenant, items)
		if err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		for _, res := range rs {
			// An attempt whose lease ran out while its worker could not
			// report was handed out again: the engine refuses its ack.
			if res.Err != nil && !errors.Is(res.Err, store.ErrStaleAttempt) {
				return fmt.Errorf("simulate: ack %s: %w", res.Occurrence.OccurrenceID, res.Err)
			}
		}
	}
	return nil
}

// passDue is when node i passes next, zero when it need not: when the
// earliest cursor comes within the horizon (a firing to materialize),
// and, with several nodes, when its shard leases are due for renewal, as
// a live node's would be; never sooner than a tick after its last pass.
// A single node skips the renewals of idle stretches: nobody else could
// take its shards, and its next pass takes them again (at a new epoch),
// so only the epochs tell.
func (r *run) passDue(i int) time.Time {
	last := r.lastPass[i]
	if last.IsZero() {
		return time.Time{}
	}
	var due time.Time
	if len(r.engs) > 1 {
		due = last.Add(engine.RenewAfter(shardLease))
	}
	if !r.minCursor.IsZero() {
		if c := r.minCursor.Add(-horizon); due.IsZero() || c.Before(due) {
			due = c
		}
	}
	if soonest := last.Add(tick); !due.IsZero() && due.Before(soonest) {
		due = soonest
	}
	return due
}

// pass runs the planner pass of every node up whose pass is due.
func (r *run) pass(ctx context.Context, now time.Time, up []bool) error {
	passed := false // a cursor may have moved
	for i, e := range r.engs {
		if due := r.passDue(i); !up[i] || (!r.lastPass[i].IsZero() && (due.IsZero() || now.Before(due))) {
			continue
		}
		ps, err := e.PlanOnce(ctx)
		if err != nil {
			return fmt.Errorf("simulate: %s: planner pass: %w", nodeName(i), err)
		}
		r.lastPass[i] = now
		passed = passed || ps.Schedules > 0 || !r.cursorKnown
		r.made += ps.Enqueued + ps.Missed
		if r.made > r.lim.MaxFirings {
			return schedule.Invalid("schedules", "the planner made over %d firings by %s (the limit); simulate a shorter range or fewer schedules",
				r.lim.MaxFirings, fmtTime(now))
		}
		if ps.Enqueued+ps.Expired > 0 {
			for _, q := range r.queues {
				r.stale[q] = true
			}
		}
	}
	if !passed {
		return nil
	}
	var err error
	r.minCursor, err = r.earliestCursor(ctx)
	r.cursorKnown = err == nil
	return err
}

// earliestCursor is the earliest next_run_at of any active schedule: the
// planner has materialized every firing before it.
func (r *run) earliestCursor(ctx context.Context) (time.Time, error) {
	var min time.Time
	for shard := range r.shards {
		due, err := r.st.DueSchedules(ctx, store.DueSchedulesParams{Shard: shard, Until: r.end.Add(horizon), Limit: 1})
		if err != nil {
			return time.Time{}, fmt.Errorf("simulate: cursors: %w", err)
		}
		if len(due) > 0 && (min.IsZero() || due[0].NextRunAt.Before(min)) {
			min = due[0].NextRunAt
		}
	}
	return min, nil
}

// lease is the claim lease of a virtual worker: its duration and the
// engine's default lease, so that a worker that can report never loses
// its attempt.
func (r *run) lease() time.Duration { return r.o.workerDuration + engine.DefaultClaimLease }

// claim hands out what is available on each queue that may have some,
// through the first node up: workers are many, each takes one attempt.
func (r *run) claim(ctx context.Context, now time.Time, up []bool) error {
	node := firstUp(up)
	q := r.engs[node].Queue
	for _, queue := range r.queues {
		if r.stale[queue] && !r.dirty[queue] {
			// A pass put firings on the queue, most of them due later:
			// learn when, and claim only if something is due now.
			t, err := r.st.NextAvailable(ctx, tenant, queue)
			if err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			r.stale[queue] = false
			if t.IsZero() || t.After(now) {
				r.nextAvail[queue], r.blocked[queue] = t, false
				continue
			}
			r.dirty[queue] = true
		}
		if a := r.nextAvail[queue]; !r.dirty[queue] && (a.IsZero() || now.Before(a)) {
			continue
		}
		for {
			got, err := q.Claim(ctx, engine.ClaimRequest{TenantID: tenant, Queue: queue, WorkerID: workerID,
				Limit: engine.MaxClaimBatch, Lease: r.lease()})
			if err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			for _, c := range got {
				r.start(&work{occ: c.Occurrence.OccurrenceID, attempt: c.Attempt.Attempt, queue: queue, node: node,
					finish: now.Add(r.o.workerDuration)})
			}
			if len(got) < engine.MaxClaimBatch {
				break
			}
		}
		a, blocked, err := r.nextAvailable(ctx, queue, now)
		if err != nil {
			return err
		}
		r.nextAvail[queue], r.blocked[queue], r.dirty[queue] = a, blocked, false
	}
	return nil
}

// start sets a worker on an attempt, in finish order.
func (r *run) start(w *work) {
	w.fail = r.fails(w.occ, w.attempt)
	i, _ := slices.BinarySearchFunc(r.works, w, func(a, b *work) int {
		if c := a.finish.Compare(b.finish); c != 0 {
			return c
		}
		if a.occ != b.occ {
			if a.occ < b.occ {
				return -1
			}
			return 1
		}
		return int(a.attempt - b.attempt)
	})
	r.works = slices.Insert(r.works, i, w)
}

// fails decides, from the seed, the occurrence and the attempt alone,
// whether an attempt fails: the same attempt fails in every run.
func (r *run) fails(occ string, attempt int64) bool {
	if r.o.failRate <= 0 {
		return false
	}
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(r.o.seed))
	binary.BigEndian.PutUint64(b[8:], uint64(attempt))
	h.Write(b[:])
	h.Write([]byte(occ))
	x := h.Sum64()
	x ^= x >> 30 // splitmix64's finish: fnv's bits mix poorly
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < r.o.failRate
}

// nextAvailable is when an occurrence of the queue next becomes
// claimable after now; zero when none waits. The store's answer is the
// earliest open occurrence; when that one is available already (a
// queue_one firing waiting for the one that runs), the later ones are
// read to find the next, and blocked is true.
func (r *run) nextAvailable(ctx context.Context, queue string, now time.Time) (next time.Time, blocked bool, err error) {
	t, err := r.st.NextAvailable(ctx, tenant, queue)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("simulate: %w", err)
	}
	if t.IsZero() || t.After(now) {
		return t, false, nil
	}
	var min time.Time
	for _, state := range []record.OccurrenceState{record.OccurrenceEnqueued, record.OccurrenceRetryWait} {
		p := store.ListOccurrencesParams{TenantID: tenant, Queue: queue, State: state, Limit: store.MaxListLimit}
		for {
			page, err := r.st.ListOccurrences(ctx, p)
			if err != nil {
				return time.Time{}, false, fmt.Errorf("simulate: %w", err)
			}
			for _, o := range page {
				if o.AvailableAt.After(now) && (min.IsZero() || o.AvailableAt.Before(min)) {
					min = o.AvailableAt
				}
			}
			if len(page) < p.Limit {
				break
			}
			last := page[len(page)-1]
			p.After = &store.OccurrenceKey{ScheduledFor: last.ScheduledFor, OccurrenceID: last.OccurrenceID}
		}
	}
	return min, true, nil
}

// next is the next instant anything can happen: a worker finishing, an
// outage or node-down edge, a node's pass, an occurrence becoming
// claimable. Times are whole milliseconds, as the store keeps them.
func (r *run) next(now time.Time, up []bool) time.Time {
	next := r.end.Add(time.Millisecond)
	consider := func(t time.Time) {
		if !t.IsZero() && t.After(now) && t.Before(next) {
			next = t
		}
	}
	for _, b := range r.boundaries {
		if b.After(now) {
			consider(b)
			break
		}
	}
	if firstUp(up) >= 0 {
		for _, w := range r.works {
			if w.finish.After(now) {
				consider(w.finish)
				break
			}
		}
		for i := range r.engs {
			if up[i] {
				consider(r.passDue(i))
			}
		}
		for _, a := range r.nextAvail {
			consider(a)
		}
	}
	if t := next.Truncate(time.Millisecond); !t.Equal(next) {
		next = t.Add(time.Millisecond)
	}
	return next
}
