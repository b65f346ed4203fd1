package engine

import (
	"errors"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/store"
)

// observer is where the engine reports what it did: the planner, the
// queue and the claim-lease sweeper share one, and Stats writes and sums
// the per-minute figures it keeps.
type observer struct {
	metrics *metrics.Metrics
	rec     recorder // this node's per-minute figures (stats.go)
}

// This file is where the engine reports what it did: every event goes to
// the Prometheus metrics (this process's counters and histograms) and to
// the node's per-minute figures (stats.go), which are written to the store
// so that any node can answer for the whole cluster. Each event is counted
// in one function here, never at its call sites.

// observePlan reports a committed planner batch. The lags and the split by
// state are read from the plan's items, which are what was written only
// when no item was stale and nothing was a duplicate (the common case);
// otherwise the store's counts are all there is, and the batch's lags are
// left out rather than guessed.
func (ob *observer) observePlan(plan *store.Plan, res store.PlanResult, latest *time.Time) {
	m := ob.metrics
	m.Duplicates.Add(float64(res.Duplicates))
	var ev events
	if res.Stale != 0 || res.Duplicates != 0 {
		ev.Materialized = int64(res.Inserted)
		m.Materialized.WithLabelValues(metrics.LaneUnknown).Add(float64(res.Inserted))
		ob.rec.add(plan.Now, func(f *minuteFigures) { f.Events.add(ev) })
		return
	}
	var lags lagBatch
	for i := range plan.Items {
		it := &plan.Items[i]
		if it.MissedCount > 0 {
			ev.Missed += it.MissedCount
			m.Missed.WithLabelValues(metrics.MissedCounted).Add(float64(it.MissedCount))
		}
		for j := range it.Occurrences {
			o := &it.Occurrences[j]
			switch o.State {
			case record.OccurrenceMissed:
				ev.Missed++
				m.Missed.WithLabelValues(metrics.MissedRow).Inc()
			case record.OccurrenceEnqueued:
				ev.Materialized++
				lags.add(m, m.ScheduleLag, o, plan.Now.Sub(o.ScheduledFor))
				if o.ScheduledFor.After(*latest) {
					*latest = o.ScheduledFor
				}
			}
		}
	}
	for lane, n := range lags.lanes {
		m.Materialized.WithLabelValues(lane).Add(float64(n))
	}
	ob.rec.add(plan.Now, func(f *minuteFigures) {
		f.Events.add(ev)
		f.addLags(scheduleLag, lags.counts)
	})
}

// lagBatch gathers a batch's lag samples, so that the batch takes the
// recorder's lock once and looks each label set up once, however many
// occurrences it has (a claim or a plan batch holds up to thousands).
type lagBatch struct {
	counts []int64        // per bucket of metrics.LagBuckets, for the recorder
	lanes  map[string]int // samples per lane
	last   *record.Occurrence
	obs    prometheus.Observer
}

func (b *lagBatch) add(m *metrics.Metrics, h *prometheus.HistogramVec, o *record.Occurrence, d time.Duration) {
	if b.counts == nil {
		b.counts = make([]int64, len(metrics.LagBuckets)+1)
		b.lanes = map[string]int{}
	}
	b.counts[metrics.Bucket(max(d, 0))]++
	b.lanes[string(o.Lane)]++
	if b.last == nil || b.last.Lane != o.Lane || b.last.TenantID != o.TenantID {
		b.obs = h.WithLabelValues(string(o.Lane), m.Tenant(o.TenantID))
	}
	b.last = o
	b.obs.Observe(max(d, 0).Seconds())
}

// observePass reports a planner pass that started at now and took took,
// on a node whose clock offset to the store is offset.
func (ob *observer) observePass(now time.Time, took time.Duration, st PlanStats, latest time.Time, offset time.Duration) {
	m := ob.metrics
	m.PlannerPass.Observe(took.Seconds())
	m.ClockOffset.Set(offset.Seconds())
	f := PassFigure{At: now, Duration: took, Shards: st.Shards, Schedules: st.Schedules, Materialized: st.Enqueued, Missed: st.Missed}
	if !latest.IsZero() {
		f.HorizonSlack = latest.Sub(now)
		m.HorizonSlack.Set(f.HorizonSlack.Seconds())
	}
	ob.rec.pass(f)
}

// observeClaims reports a claim: each occurrence handed out, the delivery
// lag of first deliveries, and the occurrences the claim skipped for
// overlap.
func (ob *observer) observeClaims(now time.Time, got []store.Claimed, skipped int) {
	if len(got) == 0 && skipped == 0 {
		return
	}
	m := ob.metrics
	m.SkippedOverlap.Add(float64(skipped))
	var lags lagBatch
	lanes := map[record.Lane]int{}
	for i := range got {
		o := &got[i].Occurrence
		lanes[o.Lane]++
		if got[i].Attempt.Attempt == 1 { // a first delivery: later ones are retries
			lags.add(m, m.DeliveryLag, o, now.Sub(o.ScheduledFor))
		}
	}
	for lane, n := range lanes {
		m.Claims.WithLabelValues(string(lane)).Add(float64(n))
	}
	ev := events{Claims: int64(len(got)), SkippedOverlap: int64(skipped)}
	ob.rec.add(now, func(f *minuteFigures) {
		f.Events.add(ev)
		f.addLags(deliveryLag, lags.counts)
	})
}

// observeFinishes reports acks and nacks: one result per finish.
func (ob *observer) observeFinishes(ps []store.FinishParams, rs []store.FinishResult) {
	m := ob.metrics
	var ev events
	for i := range ps {
		if i >= len(rs) {
			break
		}
		if err := rs[i].Err; err != nil {
			if errors.Is(err, store.ErrStaleAttempt) {
				m.StaleAttempts.Inc()
			}
			continue
		}
		if rs[i].Repeated {
			continue // the same finish again: counted the first time
		}
		p := &ps[i]
		switch p.Result {
		case record.ResultSucceeded:
			ev.Acks++
			m.Acks.Inc()
		case record.ResultFailedRetryable:
			m.Nacks.WithLabelValues(string(Retryable)).Inc()
		case record.ResultFailedPermanent:
			m.Nacks.WithLabelValues(string(Permanent)).Inc()
		}
		if p.State == record.OccurrenceDead {
			ev.Dead++
			m.Dead.WithLabelValues(string(p.DeadReason)).Inc()
		}
	}
	if ev != (events{}) && len(ps) > 0 {
		now := ps[0].Now
		ob.rec.add(now, func(f *minuteFigures) { f.Events.add(ev) })
	}
}

// observeExpiry reports a sweep of lapsed claim leases.
func (ob *observer) observeExpiry(now time.Time, r store.ExpireResult) {
	if r.Expired == 0 {
		return
	}
	m := ob.metrics
	m.Redeliveries.Add(float64(r.Requeued))
	m.Dead.WithLabelValues(string(record.DeadAttemptsExhausted)).Add(float64(r.DeadAttempts))
	m.Dead.WithLabelValues(string(record.DeadDeadlinePassed)).Add(float64(r.DeadDeadline))
	ev := events{Redeliveries: int64(r.Requeued), Dead: int64(r.Dead)}
	ob.rec.add(now, func(f *minuteFigures) { f.Events.add(ev) })
}

// observeStaleErr counts err when it is a refusal of a stale attempt (a
// heartbeat's).
func (ob *observer) observeStaleErr(err error) {
	if errors.Is(err, store.ErrStaleAttempt) {
		ob.metrics.StaleAttempts.Inc()
	}
}

// storeErrorKind names the kind of a store failure for
// sched_store_errors_total (one of metrics.StoreErrorKinds, which New
// creates at 0), or "" for errors that are not the store's (a refused
// request, a canceled context).
func storeErrorKind(err error) string {
	switch {
	case errors.Is(err, store.ErrBusy):
		return "busy"
	case errors.Is(err, store.ErrStoreFull):
		return "full"
	case errors.Is(err, store.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, store.ErrStaleEpoch):
		return "stale_epoch"
	}
	return ""
}
