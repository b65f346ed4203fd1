package engine

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// TestRetention drives ten days of hourly firings on the virtual clock for
// two tenants (one on the default seven days, one with its own two), acks
// them (one goes DEAD), leaves a queue nobody serves, then runs a
// retention pass in small batches: exactly the finished, not DEAD
// occurrences scheduled before each tenant's cut are gone, with their
// attempts; every other row is untouched; the horizons are the cuts; and
// the reconciler, over the ten days, finds nothing absent and says from
// when history is complete.
func TestRetention(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		start := utc("2027-01-01T00:00:00Z")
		h := open(t, start, nil)
		ctx := h.ctx
		h.e.Retention.batch = 7 // many batches

		const short = "short-lived"
		twoDays := int64(2 * 24 * 3600)
		if _, _, err := h.e.Tenants.Create(ctx, short, TenantPatch{RetentionSeconds: &twoDays}); err != nil {
			t.Fatal(err)
		}
		h.create(every("work", "1h"))
		h.create(schedSettings("idle", "idle", "1h")) // never claimed: stays ENQUEUED
		if _, _, err := h.e.Control.Create(ctx, short, "", every("work", "1h")); err != nil {
			t.Fatal(err)
		}
		var dead string
		for i := range 10 * 24 {
			h.advance(time.Hour)
			for _, tn := range []string{tenant, short} {
				got, err := h.e.Queue.Claim(ctx, ClaimRequest{TenantID: tn, Queue: "q", WorkerID: "w1", Limit: 10, Lease: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range got {
					o := c.Occurrence
					if tn == tenant && i == 30 {
						dead = o.OccurrenceID
						if _, err := h.e.Queue.Nack(ctx, tn, o.OccurrenceID, c.Attempt.Attempt, Permanent, "boom"); err != nil {
							t.Fatal(err)
						}
						continue
					}
					if _, err := h.e.Queue.Ack(ctx, tn, o.OccurrenceID, c.Attempt.Attempt); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if dead == "" {
			t.Fatal("no occurrence went DEAD")
		}
		now := h.clk.Now()
		cuts := map[string]time.Time{tenant: now.Add(-DefaultRetention), short: now.Add(-48 * time.Hour)}
		before := map[string][]record.Occurrence{tenant: listAll(t, h, tenant), short: listAll(t, h, short)}

		res, err := h.e.Retention.Run(context.WithoutCancel(ctx))
		if err != nil {
			t.Fatalf("retention: %v", err)
		}
		removed := 0
		for tn, occs := range before {
			after := map[string]bool{}
			for _, o := range listAll(t, h, tn) {
				after[o.OccurrenceID] = true
			}
			for _, o := range occs {
				old := o.ScheduledFor.Before(cuts[tn])
				finished := !isOpenState(o.State) && o.State != record.OccurrenceDead
				if gone := !after[o.OccurrenceID]; gone != (old && finished) {
					t.Errorf("tenant %s: %s %s at %s: removed %v, want %v", tn, o.ScheduleID, o.State, o.ScheduledFor, gone, old && finished)
				}
				if old && finished {
					removed++
					if as, _ := h.st.ListAttempts(ctx, store.ListAttemptsParams{TenantID: tn, OccurrenceID: o.OccurrenceID, Limit: store.MaxListLimit}); len(as) != 0 {
						t.Errorf("%s removed but %d attempts left", o.OccurrenceID, len(as))
					}
				}
			}
		}
		if removed == 0 || res.Removed != removed {
			t.Errorf("the pass says %d removed, the rows say %d (want more than 0)", res.Removed, removed)
		}
		if o, err := h.e.Queue.Occurrence(ctx, tenant, dead); err != nil || o.State != record.OccurrenceDead {
			t.Errorf("the old DEAD occurrence: %v, %v; want kept", o, err)
		}
		hs, err := h.e.Retention.Horizons(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for tn, cut := range cuts {
			if !hs[tn].Equal(cut) {
				t.Errorf("horizon of %s = %s, want %s", tn, hs[tn], cut)
			}
		}
		var m dto.Metric
		if err := h.e.Retention.metrics.Retention.Removed.WithLabelValues(h.e.Retention.metrics.Tenant(tenant)).Write(&m); err != nil ||
			m.GetCounter().GetValue() == 0 {
			t.Errorf("sched_retention_removed_total of the tenant: %v, %v; want more than 0", m.GetCounter().GetValue(), err)
		}

		// The reconciler over the ten days: nothing absent, and the
		// history complete from the latest horizon.
		opt := reconcile.Options{From: start, To: now}
		rep, err := reconcile.Report(ctx, h.st, opt)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Problem || rep.Totals.Absent != 0 || len(rep.Absent) != 0 {
			t.Errorf("reconcile after retention: problem %v, %d absent: %+v", rep.Problem, rep.Totals.Absent, rep.Absent)
		}
		if want := cuts[short].Add(reconcile.HorizonSlack); rep.CompleteFrom == nil || !rep.CompleteFrom.Equal(want) {
			t.Errorf("complete from %v, want %s", rep.CompleteFrom, want)
		}
		opt.TenantID = tenant
		want := cuts[tenant].Add(reconcile.HorizonSlack)
		if rep, err := reconcile.Report(ctx, h.st, opt); err != nil || rep.CompleteFrom == nil || !rep.CompleteFrom.Equal(want) || rep.Problem {
			t.Errorf("reconcile of %s: %+v, %v; want complete from %s, no problem", tenant, rep, err, want)
		}
		// Without the horizons, the removed rows would read as absent.
		opt.TenantID, opt.Horizons = "", map[string]time.Time{}
		if rep, err := reconcile.Report(ctx, h.st, opt); err != nil || rep.Totals.Absent == 0 {
			t.Errorf("reconcile ignoring the horizons: %v absent, %v; want the removed firings absent", rep.Totals.Absent, err)
		}

		// A second pass finds nothing more; a shorter default later moves
		// the default tenants' horizon, never back.
		if res, err := h.e.Retention.Run(ctx); err != nil || res.Removed != 0 {
			t.Errorf("a second pass: %d removed, %v; want 0", res.Removed, err)
		}
	})
}

// TestRetentionAge: a tenant's own retention over the daemon's, the
// daemon's over DefaultRetention, negative keeping history.
func TestRetentionAge(t *testing.T) {
	for _, tc := range []struct {
		own, daemon int64
		want        time.Duration
	}{
		{0, 0, DefaultRetention},
		{0, 3600, time.Hour},
		{7200, 3600, 2 * time.Hour},
		{0, -1, 0},
		{7200, -1, 2 * time.Hour},
	} {
		r := &Retention{defaults: record.Quotas{RetentionSeconds: tc.daemon}}
		if got := r.Age(record.Quotas{RetentionSeconds: tc.own}); got != tc.want {
			t.Errorf("own %d, daemon %d: %s, want %s", tc.own, tc.daemon, got, tc.want)
		}
	}
}

// TestTenantRetentionChecked: a tenant's own retention is 0 (the
// default) or MinTenantRetention or more.
func TestTenantRetentionChecked(t *testing.T) {
	for _, tc := range []struct {
		seconds int64
		ok      bool
	}{{0, true}, {3600, true}, {7 * 24 * 3600, true}, {60, false}, {-1, false}, {2e9, false}} {
		tn := record.Tenant{ID: "acme", State: record.TenantActive, Weight: 1}
		err := TenantPatch{RetentionSeconds: &tc.seconds}.Apply(&tn)
		if (err == nil) != tc.ok {
			t.Errorf("retention %d s: %v; want ok %v", tc.seconds, err, tc.ok)
		}
	}
}

// TestRetentionForever: with the daemon's retention negative and no
// tenant's own, a pass removes nothing and sets no horizon.
func TestRetentionForever(t *testing.T) {
	h := newHarness(t, utc("2027-01-01T00:00:00Z"), func(c *Config) { c.TenantDefaults.RetentionSeconds = -1 })
	h.create(every("work", "1h"))
	for range 24 * 9 {
		h.advance(time.Hour)
		for _, c := range h.claim("q", 10) {
			if _, err := h.e.Queue.Ack(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := h.e.Retention.Run(h.ctx)
	if err != nil || res.Removed != 0 {
		t.Fatalf("pass: %d removed, %v; want 0", res.Removed, err)
	}
	if hs, err := h.e.Retention.Horizons(h.ctx); err != nil || len(hs) != 0 {
		t.Errorf("horizons %v, %v; want none", hs, err)
	}
}

// TestRetentionLoop: a started engine runs a pass in the background
// every retentionEvery of its clock, and none before.
func TestRetentionLoop(t *testing.T) {
	h := newHarness(t, utc("2027-01-01T00:00:00Z"), nil)
	h.create(every("work", "1h"))
	for range 24 * 9 {
		h.advance(time.Hour)
		for _, c := range h.claim("q", 10) {
			if _, err := h.e.Queue.Ack(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := len(listAll(t, h, tenant))
	if err := h.e.Start(h.ctx); err != nil {
		t.Fatal(err)
	}
	defer h.e.Stop()
	// The loops asleep: the planner's, the flush's and retention's timers.
	for deadline := time.Now().Add(10 * time.Second); h.clk.Pending() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the engine's loops never slept")
		}
		time.Sleep(time.Millisecond)
	}
	if n := len(listAll(t, h, tenant)); n != all {
		t.Fatalf("%d occurrences before the first pass, want %d", n, all)
	}
	h.clk.Advance(retentionEvery)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		hs, err := h.e.Retention.Horizons(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := hs[tenant]; ok && len(listAll(t, h, tenant)) < all-24 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pass %s after the start: horizons %v", retentionEvery, hs)
		}
	}
}

// listAll returns every occurrence of tenant tn.
func listAll(t *testing.T, h *harness, tn string) []record.Occurrence {
	t.Helper()
	return listOccurrences(t, h.st, tn)
}

// listOccurrences returns every occurrence of tenant tn in st.
func listOccurrences(t *testing.T, st store.Store, tn string) []record.Occurrence {
	t.Helper()
	var out []record.Occurrence
	p := store.ListOccurrencesParams{TenantID: tn, Limit: store.MaxListLimit}
	for {
		page, err := st.ListOccurrences(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if len(page) < p.Limit {
			return out
		}
		last := page[len(page)-1]
		p.After = &store.OccurrenceKey{ScheduledFor: last.ScheduledFor, OccurrenceID: last.OccurrenceID}
	}
}

// isOpenState reports whether st is not finished.
func isOpenState(st record.OccurrenceState) bool {
	switch st {
	case record.OccurrenceScheduled, record.OccurrenceEnqueued, record.OccurrenceRunning, record.OccurrenceRetryWait:
		return true
	}
	return false
}

// schedSettings is every(name, interval) on queue.
func schedSettings(name, queue, interval string) schedule.Settings {
	s := every(name, interval)
	s.Queue = queue
	return s
}
