package simulate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// report reads back what the engine did to each schedule's firings in
// [From, To] and sums it up.
func (r *run) report(ctx context.Context) (*api.SimulateResult, error) {
	o := r.o
	res := &api.SimulateResult{
		From: fmtTime(o.from), To: fmtTime(o.to), Nodes: o.nodes, WorkerDuration: o.workerDuration.String(),
		WorkerFailRate: o.failRate, Seed: o.seed, Outages: []api.SimWindow{}, NodeDown: []api.SimNodeDown{},
		Schedules: make([]api.SimSchedule, 0, len(o.schedules)), Shards: []api.SimShard{},
	}
	for _, w := range o.outages {
		res.Outages = append(res.Outages, api.SimWindow{Start: fmtTime(w.start), End: fmtTime(w.end)})
	}
	for _, d := range o.nodeDowns {
		res.NodeDown = append(res.NodeDown, api.SimNodeDown{Node: nodeName(d.node), Start: fmtTime(d.start), End: fmtTime(d.end)})
	}
	scs, err := r.schedules(ctx)
	if err != nil {
		return nil, err
	}
	var all []int64 // every delivered firing's lag
	total := newSummary()
	for i, e := range o.schedules {
		sc := scs[r.ids[i]]
		if sc == nil {
			return nil, fmt.Errorf("simulate: schedule %q (%s) is gone from the private store", e.name, r.ids[i])
		}
		s, lags, err := r.timeline(ctx, i, e, sc)
		if err != nil {
			return nil, err
		}
		res.Schedules = append(res.Schedules, s)
		all = append(all, lags...)
		total.Firings += s.Summary.Firings
		for k, v := range s.Summary.Outcomes {
			total.Outcomes[k] += v
		}
	}
	total.Lag = lagOf(all)
	res.Summary = total
	if o.nodes == 1 {
		// One node has nothing to hand over; it also skips the renewals of
		// idle stretches (passDue), so its epochs count those, not moves.
		return res, nil
	}
	leases, err := r.st.ListShardLeases(ctx)
	if err != nil {
		return nil, fmt.Errorf("simulate: shard leases: %w", err)
	}
	for _, l := range leases {
		res.Shards = append(res.Shards, api.SimShard{Shard: l.Shard, Owner: l.Owner, Epoch: l.Epoch})
	}
	slices.SortFunc(res.Shards, func(a, b api.SimShard) int { return a.Shard - b.Shard })
	return res, nil
}

func newSummary() api.SimSummary {
	s := api.SimSummary{Outcomes: map[string]int{}}
	for _, k := range api.SimOutcomes {
		s.Outcomes[k] = 0
	}
	return s
}

// schedules reads the simulation's schedules, a page at a time, by id.
func (r *run) schedules(ctx context.Context) (map[string]*record.Schedule, error) {
	by := make(map[string]*record.Schedule, len(r.ids))
	p := store.ListSchedulesParams{TenantID: tenant, Limit: store.MaxListLimit}
	for {
		page, err := r.st.ListSchedules(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("simulate: schedules: %w", err)
		}
		for j := range page {
			by[page[j].ScheduleID] = &page[j]
		}
		if len(page) < p.Limit {
			return by, nil
		}
		p.After = page[len(page)-1].ScheduleID
	}
}

// timeline is schedule i's firings in [From, To] and their lags; sc is
// the schedule as the store has it at the end. Each schedule's
// occurrences are read by their own index: a listing of the whole tenant
// in time order has none and sorts them all again for every page.
func (r *run) timeline(ctx context.Context, i int, e entry, sc *record.Schedule) (api.SimSchedule, []int64, error) {
	id := r.ids[i]
	s := api.SimSchedule{Name: e.name, ScheduleID: id, Queue: sc.Queue, OverlapPolicy: string(sc.OverlapPolicy),
		MisfirePolicy: misfireText(sc), MissedUncounted: sc.MissedCount, Firings: []api.SimFiring{}, Summary: newSummary()}
	s.DSTSkipped = []api.SimSkipped{}
	notes, skipped := dstNotes(e.sp, r.o.from, r.o.to)
	s.DSTSkipped = skipped
	fs, lags, err := readFirings(ctx, r.st, tenant, id, r.o.from, r.o.to, e.flexible, notes)
	if err != nil {
		return api.SimSchedule{}, nil, fmt.Errorf("simulate: occurrences of %q: %w", e.name, err)
	}
	for _, f := range fs {
		s.Firings = append(s.Firings, f)
		s.Summary.Firings++
		s.Summary.Outcomes[f.Outcome]++
	}
	s.Summary.Lag = lagOf(lags)
	return s, lags, nil
}

// readFirings reads what became of schedule id's firings in [from, to]
// from st, in the store's order (scheduled time, then id), classified as
// the report classifies them (classify); lags are the delivered ones'. The
// test that holds the simulator against a live engine reads the live
// store's timeline through it, so both are classified by the same code.
func readFirings(ctx context.Context, st store.Store, tenantID, id string, from, to time.Time, flexible time.Duration,
	notes map[int64]clockNote) ([]api.SimFiring, []int64, error) {
	var out []api.SimFiring
	var lags []int64
	err := eachOccurrence(ctx, st, store.ListOccurrencesParams{TenantID: tenantID, ScheduleID: id}, from, to, func(oc *record.Occurrence) {
		f, lag := classify(oc, flexible, notes)
		out = append(out, f)
		if lag != nil {
			lags = append(lags, *lag)
		}
	})
	return out, lags, err
}

// eachOccurrence calls fn on every occurrence p lists that is scheduled in
// [from, to], in the store's order, reading pages of the most rows a page
// may hold.
func eachOccurrence(ctx context.Context, st store.Store, p store.ListOccurrencesParams, from, to time.Time, fn func(*record.Occurrence)) error {
	p.Limit = store.MaxListLimit
	// The rows say where each occurrence stands once the runs holding
	// them are folded.
	if err := engine.FoldTenant(ctx, st, p.TenantID); err != nil {
		return err
	}
	for {
		page, err := st.ListOccurrences(ctx, p)
		if err != nil {
			return err
		}
		for j := range page {
			if oc := &page[j]; !oc.ScheduledFor.Before(from) && !oc.ScheduledFor.After(to) {
				fn(oc)
			}
		}
		if len(page) < p.Limit {
			return nil
		}
		last := page[len(page)-1]
		p.After = &store.OccurrenceKey{ScheduledFor: last.ScheduledFor, OccurrenceID: last.OccurrenceID}
	}
}

// classify is firing with the firing's clock-change note from notes.
func classify(oc *record.Occurrence, flexible time.Duration, notes map[int64]clockNote) (api.SimFiring, *int64) {
	f, lag := firing(oc, flexible)
	n := notes[oc.ScheduledFor.Unix()]
	f.Note, f.Cause = n.event, n.cause
	return f, lag
}

// clockNote is the time engine's note on a firing (gap_shifted, ...) and
// what moved the clock (dst, zone_change; "" for offset_changed).
type clockNote struct{ event, cause string }

// misfireText is a schedule's misfire policy as the API spells it.
func misfireText(sc *record.Schedule) string {
	if sc.MisfirePolicy == record.MisfireCatchUp {
		return fmt.Sprintf("%s:%d", sc.MisfirePolicy, sc.CatchUpK)
	}
	return string(sc.MisfirePolicy)
}

// firing is what became of one occurrence, and its delivery lag in
// milliseconds when it was delivered.
func firing(oc *record.Occurrence, flexible time.Duration) (api.SimFiring, *int64) {
	f := api.SimFiring{ScheduledFor: fmtTime(oc.ScheduledFor), Lane: string(oc.Lane), Attempts: oc.AttemptCount,
		DeadReason: string(oc.DeadReason)}
	if oc.AttemptCount > 1 {
		f.Retries = oc.AttemptCount - 1
	}
	var lag *int64
	if !oc.FirstClaimedAt.IsZero() {
		t := fmtTime(oc.FirstClaimedAt)
		f.FirstClaimedAt = &t
		l := oc.FirstClaimedAt.Sub(oc.ScheduledFor).Milliseconds()
		late := max(0, l-flexible.Milliseconds())
		lag, f.LagMS, f.LatenessMS = &l, &l, &late
	}
	if !oc.FinishedAt.IsZero() {
		t := fmtTime(oc.FinishedAt)
		f.FinishedAt = &t
	}
	switch oc.State {
	case record.OccurrenceMissed:
		f.Outcome = api.SimMissed
	case record.OccurrenceSkippedOverlap:
		f.Outcome = api.SimSkippedOverlap
	case record.OccurrenceDead:
		f.Outcome = api.SimDead
	case record.OccurrenceCanceled:
		f.Outcome = api.SimCanceled
	case record.OccurrenceSucceeded:
		switch {
		case oc.AttemptCount > 1:
			f.Outcome = api.SimRetried
		case oc.Lane == record.LaneCatchUp:
			f.Outcome = api.SimCaughtUp
		case *f.LatenessMS > 0:
			f.Outcome = api.SimLate
		default:
			f.Outcome = api.SimOnTime
		}
	default:
		f.Outcome = api.SimPending
	}
	return f, lag
}

// dstNotes are the time engine's notes on the firings in [from, to] that
// daylight saving moved or doubled, by unix second, and the wall times a
// gap swallowed.
func dstNotes(sp *timetable.Timetable, from, to time.Time) (map[int64]clockNote, []api.SimSkipped) {
	notes := map[int64]clockNote{}
	skipped := []api.SimSkipped{}
	observe := func(w timetable.SkippedWall) {
		if end := time.Unix(w.GapEnd, 0); !end.Before(from) && !end.After(to) {
			skipped = append(skipped, api.SimSkipped{Wall: timetable.FormatWall(w.Wall), GapEnd: fmtTime(end), Cause: w.Cause.String()})
		}
	}
	f, ok := sp.NextObserved(from.Add(-time.Second), observe)
	for ok && !f.At.After(to) {
		if f.Note != timetable.NoteNone {
			notes[f.At.Unix()] = clockNote{event: f.Note.String(), cause: f.Cause.String()}
		}
		f, ok = sp.NextObserved(f.At, observe)
	}
	return notes, skipped
}

// lagOf is the distribution of lags (nearest-rank percentiles).
func lagOf(lags []int64) api.SimLag {
	if len(lags) == 0 {
		return api.SimLag{}
	}
	s := slices.Clone(lags)
	slices.Sort(s)
	rank := func(p int) int64 {
		i := (p*len(s)+99)/100 - 1
		return s[max(0, i)]
	}
	return api.SimLag{P50: rank(50), P95: rank(95), P99: rank(99), Max: s[len(s)-1]}
}
