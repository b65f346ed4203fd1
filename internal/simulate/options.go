// Package simulate is the what-if simulator: it runs the real engine (the
// planner, the queue and their policies, package engine) on a virtual
// clock against a private throwaway store and reports what a set of
// schedules would have done over a range of time, with outages, slow or
// failing workers and nodes down as asked.
//
// Nothing here decides anything about scheduling: every firing, misfire,
// overlap, retry and lease move is the engine's own decision, made by the
// same code schedd runs. The simulator only plays the world around it:
// the clock (moved event by event, jumping over idle stretches), the
// daemon being up or down, and workers that take a fixed time and fail at
// a seeded rate. It drives the engines synchronously (never Start), so
// the same request gives the same answer, byte for byte.
//
// The store is a SQLite file in a private temporary directory (on
// /dev/shm, a memory file system, when the machine has one), opened
// without fsync and removed when the simulation ends: in memory in
// effect, and never the daemon's store. docs/simulate.md describes the
// model and its limits.
package simulate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/schedfile"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

// Limits bound what one simulation may cost. A request beyond one is
// refused with a *schedule.ValidationError naming the bad part (schedctl
// exits 2 on it), before anything runs when it can be told up front.
type Limits struct {
	// MaxFirings bounds the firings between From and To, estimated from
	// the timetables before the run and counted as the planner makes
	// them; it bounds the memory of the answer too.
	MaxFirings int
	// MaxSchedules bounds the schedules of one request.
	MaxSchedules int
	// MaxRange bounds To - From.
	MaxRange time.Duration
	// MaxWall bounds the wall time of one run.
	MaxWall time.Duration
	// MaxNodes bounds Nodes.
	MaxNodes int
}

// DefaultLimits are the limits schedd applies.
var DefaultLimits = Limits{
	MaxFirings:   1_000_000,
	MaxSchedules: 10_000,
	MaxRange:     31 * 24 * time.Hour,
	MaxWall:      60 * time.Second,
	MaxNodes:     16,
}

// Defaults of a request.
const (
	DefaultWorkerDuration = time.Second
	// MaxWorkerDuration keeps a virtual worker's claim lease (its
	// duration plus engine.DefaultClaimLease) within the engine's 12 h.
	MaxWorkerDuration = 11 * time.Hour
	DefaultSeed       = 1
)

// window is a span of simulated time, [start, end).
type window struct{ start, end time.Time }

func (w window) has(t time.Time) bool { return !t.Before(w.start) && t.Before(w.end) }

// nodeDown is a window in which one node (an index into the nodes) is
// stopped.
type nodeDown struct {
	node int
	window
}

// entry is one schedule to simulate.
type entry struct {
	name     string
	settings schedule.Settings // as the request gives them, for the engine
	sp       *timetable.Timetable
	flexible time.Duration
}

// Options are a checked request.
type Options struct {
	schedules      []entry
	from, to       time.Time
	outages        []window
	nodeDowns      []nodeDown
	workerDuration time.Duration
	failRate       float64
	nodes          int
	seed           int64
	estimate       int // firings between from and to, by the timetables
}

// nodeName is the NodeID of node i (0-based): node-1 to node-N.
func nodeName(i int) string { return fmt.Sprintf("node-%d", i+1) }

// FromRequest checks a request against the rules of each schedule and
// against lim, and estimates its firings. Errors are
// *schedule.ValidationError, naming the field (schedules[2].cron, from,
// outages[0].end, ...).
func FromRequest(r *api.SimulateRequest, lim Limits) (*Options, error) {
	o := &Options{workerDuration: DefaultWorkerDuration, nodes: 1, seed: DefaultSeed, failRate: r.WorkerFailRate}
	var err error
	if o.from, err = instant("from", r.From); err != nil {
		return nil, err
	}
	if o.to, err = instant("to", r.To); err != nil {
		return nil, err
	}
	if !o.from.Before(o.to) {
		return nil, schedule.Invalid("to", "%s is not after from (%s)", fmtTime(o.to), fmtTime(o.from))
	}
	if d := o.to.Sub(o.from); d > lim.MaxRange {
		return nil, schedule.Invalid("to", "the range is %s, over the limit of %s; simulate a shorter range", d, lim.MaxRange)
	}
	if r.WorkerDuration != "" {
		if o.workerDuration, err = time.ParseDuration(r.WorkerDuration); err != nil {
			return nil, schedule.Invalid("worker_duration", "%q is not a duration (like 1s, 90s, 5m)", r.WorkerDuration)
		}
		if o.workerDuration < time.Millisecond || o.workerDuration > MaxWorkerDuration {
			return nil, schedule.Invalid("worker_duration", "%s: must be from 1ms to %s", o.workerDuration, MaxWorkerDuration)
		}
		o.workerDuration = o.workerDuration.Truncate(time.Millisecond) // the store keeps milliseconds
	}
	if r.WorkerFailRate < 0 || r.WorkerFailRate > 1 {
		return nil, schedule.Invalid("worker_fail_rate", "%v: must be from 0 to 1", r.WorkerFailRate)
	}
	if r.Seed != 0 {
		o.seed = r.Seed
	}
	if r.Nodes != 0 {
		o.nodes = r.Nodes
	}
	if o.nodes < 1 || o.nodes > lim.MaxNodes {
		return nil, schedule.Invalid("nodes", "%d: must be from 1 to %d", r.Nodes, lim.MaxNodes)
	}
	for i, w := range r.Outages {
		win, err := span(fmt.Sprintf("outages[%d]", i), w.Start, w.End)
		if err != nil {
			return nil, err
		}
		o.outages = append(o.outages, win)
	}
	for i, d := range r.NodeDown {
		field := fmt.Sprintf("node_down[%d]", i)
		n := -1
		for j := range o.nodes {
			if d.Node == nodeName(j) {
				n = j
			}
		}
		if n < 0 {
			return nil, schedule.Invalid(field+".node", "%q is not a node of this simulation; the nodes are node-1 to %s", d.Node, nodeName(o.nodes-1))
		}
		win, err := span(field, d.Start, d.End)
		if err != nil {
			return nil, err
		}
		o.nodeDowns = append(o.nodeDowns, nodeDown{node: n, window: win})
	}
	if err := o.addSchedules(r.Schedules, lim); err != nil {
		return nil, err
	}
	return o, nil
}

// addSchedules checks each schedule with schedd's rules and estimates the
// firings of all of them, refusing past lim.
func (o *Options) addSchedules(rs []api.ScheduleRequest, lim Limits) error {
	if len(rs) == 0 {
		return schedule.Invalid("schedules", "none given; simulate at least one schedule")
	}
	if len(rs) > lim.MaxSchedules {
		return schedule.Invalid("schedules", "%d schedules, over the limit of %d", len(rs), lim.MaxSchedules)
	}
	names := map[string]int{}
	for i, r := range rs {
		field := fmt.Sprintf("schedules[%d]", i)
		r.Payload = nil // never delivered: no worker reads it
		set, sp, err := schedfile.Check(r)
		if err != nil {
			var ve *schedule.ValidationError
			if errors.As(err, &ve) {
				return schedule.Invalid(field+"."+ve.Field, "%s", ve.Reason())
			}
			return schedule.Invalid(field, "%s", err.Error())
		}
		if j, dup := names[set.Name]; dup {
			return schedule.Invalid(field+".name", "%q is also the name of schedules[%d]; names must be unique", set.Name, j)
		}
		names[set.Name] = i
		// The engine normalizes what it is given itself, and a normal form
		// is not given again (it carries defaults that only some kinds take).
		raw, err := schedule.FromRequest(&r)
		if err != nil {
			return schedule.Invalid(field, "%s", err.Error())
		}
		o.schedules = append(o.schedules, entry{name: set.Name, settings: raw, sp: sp, flexible: set.FlexibleWindow})
		// Count this schedule's firings up to the limit left, in the
		// range and the drain after it (the planner makes those too).
		left := lim.MaxFirings - o.estimate
		n := sp.CountFirings(o.from, o.to.Add(o.drain()), left+1)
		o.estimate += n
		if o.estimate > lim.MaxFirings {
			return schedule.Invalid("schedules", "the schedules fire more than %d times between %s and %s (the limit; %q alone fires %s); simulate a shorter range or fewer schedules",
				lim.MaxFirings, fmtTime(o.from), fmtTime(o.to), set.Name, atLeast(n, left+1))
		}
	}
	return nil
}

// atLeast words a count that stopped at max.
func atLeast(n, max int) string {
	if n >= max {
		return fmt.Sprintf("at least %d times", n)
	}
	return fmt.Sprintf("%d times", n)
}

// instant parses an RFC 3339 time of the request.
func instant(field, v string) (time.Time, error) {
	if strings.TrimSpace(v) == "" {
		return time.Time{}, schedule.Invalid(field, "missing; give an RFC 3339 time such as 2027-03-14T09:00:00Z")
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, schedule.Invalid(field, "%q is not an RFC 3339 time such as 2027-03-14T09:00:00Z", v)
	}
	return t.UTC(), nil
}

// span parses a window of the request.
func span(field, start, end string) (window, error) {
	s, err := instant(field+".start", start)
	if err != nil {
		return window{}, err
	}
	e, err := instant(field+".end", end)
	if err != nil {
		return window{}, err
	}
	if !s.Before(e) {
		return window{}, schedule.Invalid(field+".end", "%s is not after its start (%s)", fmtTime(e), fmtTime(s))
	}
	return window{s, e}, nil
}

// fmtTime is the answer's time format: RFC 3339 in UTC, with the
// milliseconds when there are any.
func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.999Z07:00") }
