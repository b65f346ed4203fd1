package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// TestObservedLabelsArePrecreated: every label value the observer counts
// under is one metrics.New creates at 0, so no series of the engine's
// appears only with its first event.
func TestObservedLabelsArePrecreated(t *testing.T) {
	for _, c := range []ErrorClass{Retryable, Permanent} {
		if !slices.Contains(metrics.NackClasses, string(c)) {
			t.Errorf("nack class %q is not in metrics.NackClasses %v", c, metrics.NackClasses)
		}
	}
	for _, err := range []error{store.ErrBusy, store.ErrStoreFull, store.ErrCorrupt, store.ErrStaleEpoch} {
		if k := storeErrorKind(fmt.Errorf("wrapped: %w", err)); !slices.Contains(metrics.StoreErrorKinds, k) {
			t.Errorf("store error kind %q of %v is not in metrics.StoreErrorKinds %v", k, err, metrics.StoreErrorKinds)
		}
	}
	if k := storeErrorKind(errors.New("not the store's")); k != "" {
		t.Errorf("storeErrorKind of another error = %q, want none", k)
	}
	for _, lane := range []record.Lane{record.LaneStrict, record.LaneFlexible, record.LaneCatchUp} {
		if !slices.Contains(metrics.Lanes, string(lane)) {
			t.Errorf("lane %q is not in metrics.Lanes %v", lane, metrics.Lanes)
		}
	}
}

// TestQueueGauges: the per-queue gauges are status's queue figures (the
// snapshot's depth, summed by queue) and each queue's oldest ready
// occurrence, exported with scope="store"; the oldest of the queues is
// the cluster's oldest ready.
func TestQueueGauges(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		start := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
		h := open(t, start, nil)
		inQueue := func(name, queue string) *record.Schedule {
			s := every(name, "1s")
			s.Queue = queue
			return h.create(s)
		}
		inQueue("tick", "q")
		mail := inQueue("mail", "mail")
		h.plan()
		h.clk.Advance(10 * time.Second)
		if got := h.claim("q", 4); len(got) != 4 {
			t.Fatalf("claimed %d, want 4", len(got))
		}
		// Past the gauges' cache (StatsEvery), then one snapshot for both
		// status and the gauges.
		h.clk.Advance(DefaultStatsEvery)
		st, err := h.e.Stats.Status(h.ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		g, err := h.e.Stats.gauges(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{}
		for _, d := range st.Snapshot.Depth {
			want[d.Queue] += d.Ready
		}
		got := map[string]metrics.QueueGauge{}
		for _, q := range g.Queues {
			if q.Tenant != tenant {
				t.Errorf("a queue of tenant %q", q.Tenant)
			}
			got[q.Queue] = q
		}
		if len(got) != 2 || got["q"].Ready != want["q"] || got["mail"].Ready != want["mail"] || want["mail"] < 10 {
			t.Fatalf("queues %+v, want the ready counts of status %v", g.Queues, want)
		}
		// mail's first firing has waited since its time; q's first four
		// were claimed, so its oldest ready is four firings younger.
		var first time.Time
		for _, o := range h.occurrences(mail.ScheduleID) {
			if first.IsZero() || o.AvailableAt.Before(first) {
				first = o.AvailableAt
			}
		}
		if age := got["mail"].OldestReady; age != st.StatsAt.Sub(first) {
			t.Errorf("mail's oldest ready %v, want %v", age, st.StatsAt.Sub(first))
		}
		if d := got["mail"].OldestReady - got["q"].OldestReady; d != 4*time.Second {
			t.Errorf("q's oldest ready %v, mail's %v: want 4s apart", got["q"].OldestReady, got["mail"].OldestReady)
		}
		if g.OldestReady != got["mail"].OldestReady {
			t.Errorf("the oldest ready %v, want the oldest queue's, %v", g.OldestReady, got["mail"].OldestReady)
		}

		// As scraped: labelled by tenant and queue, scope="store".
		fams, err := h.e.Stats.metrics.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		series := map[string]int{}
		for _, f := range fams {
			if f.GetName() != "sched_queue_ready" && f.GetName() != "sched_queue_oldest_ready_seconds" {
				continue
			}
			series[f.GetName()] = len(f.GetMetric())
			for _, m := range f.GetMetric() {
				l := labels(m)
				q, ok := got[l["queue"]]
				want := float64(q.Ready)
				if f.GetName() == "sched_queue_oldest_ready_seconds" {
					want = q.OldestReady.Seconds()
				}
				if !ok || l["tenant"] != tenant || l["scope"] != "store" || m.GetGauge().GetValue() != want {
					t.Errorf("%s%v = %v, want %v", f.GetName(), l, m.GetGauge().GetValue(), want)
				}
			}
		}
		if series["sched_queue_ready"] != 2 || series["sched_queue_oldest_ready_seconds"] != 2 {
			t.Errorf("series per family %v, want 2 each (q and mail)", series)
		}
	})
}

// labels are a series' labels by name.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
