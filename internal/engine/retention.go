package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/faultinject"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// DefaultRetention is how long finished occurrences are kept, by their
// scheduled time, when neither the daemon (Config.TenantDefaults'
// RetentionSeconds) nor the tenant sets it.
const DefaultRetention = 7 * 24 * time.Hour

// MinTenantRetention is the shortest retention a tenant may set: shorter
// would remove history an operator is still looking at.
const MinTenantRetention = time.Hour

// The retention pass (Retention.Run). retentionEvery is how often a node
// runs one (its own loop, see loop). retentionBatch is the rows one
// transaction deletes: on SQLite a batch of 5,000 holds the one writer for
// about a tenth of a second (docs/retention.md), so the planner and the
// acks wait no longer than that; retentionBatches bounds the batches per
// tenant per pass, so a pass that finds a backlog (a first run on a long
// history) spreads it over several passes. A pass removes up to 1,000,000
// of a tenant's rows, about 1.4 times what 200 million firings a day add
// in retentionEvery. retentionVacuumPages is
// the pages one incremental vacuum step gives back, and
// retentionVacuumSteps how many steps a pass takes at most.
const (
	retentionEvery       = 5 * time.Minute
	retentionBatch       = 5_000
	retentionBatches     = 200
	retentionVacuumPages = 4_096
	retentionVacuumSteps = 64
)

// Retention removes finished history past its age: each tenant's
// SUCCEEDED, MISSED, CANCELED and SKIPPED_OVERLAP occurrences (and their
// attempts) scheduled more than the tenant's retention ago. DEAD ones stay
// in the dead-letter queue until replayed or purged; open ones are never
// touched. Before it deletes it records the tenant's history horizon
// (store.RetentionStore), which the reconciler starts the tenant's audit
// from. Any node may run it: the deletes of two nodes take different rows
// and the horizon only moves forward. It is safe for concurrent use.
type Retention struct {
	store    store.Store
	clock    clock.Clock
	member   *member // the node's clock (now)
	log      *slog.Logger
	metrics  *metrics.Metrics
	defaults record.Quotas // the daemon's; RetentionSeconds < 0 keeps history forever

	// batch is retentionBatch; tests make it smaller.
	batch int
}

// TenantRetention is what a pass did for one tenant.
type TenantRetention struct {
	TenantID string
	// Age is the tenant's retention in force; 0: history is kept.
	Age time.Duration
	// Horizon is where the tenant's history now begins: occurrences
	// scheduled before it may have been removed. Zero when none ever was.
	Horizon time.Time
	// Removed is the occurrences this pass deleted; More is true when
	// it stopped at retentionBatches with more to delete.
	Removed int
	More    bool
}

// RetentionResult is what a pass did.
type RetentionResult struct {
	Tenants []TenantRetention
	Removed int
	// Reclaimed is the database pages given back to the file system.
	Reclaimed int
}

// Age returns the retention in force for quotas q (a tenant's own, not
// yet merged with the defaults): the tenant's own, else the daemon's,
// else DefaultRetention; 0 when history is kept forever.
func (r *Retention) Age(q record.Quotas) time.Duration {
	s := q.Or(r.defaults).RetentionSeconds
	switch {
	case s < 0:
		return 0
	case s == 0:
		return DefaultRetention
	}
	return time.Duration(s) * time.Second
}

// Run runs one retention pass now (on the engine's clock): for each
// tenant, its horizon is moved to now minus its retention, then its
// finished occurrences before that are deleted, retentionBatch to a
// transaction, at most retentionBatches batches; then freed pages are
// given back (SQLite). It returns what it did, and the first error.
func (r *Retention) Run(ctx context.Context) (RetentionResult, error) {
	var res RetentionResult
	now := r.member.now()
	tenants, err := r.tenants(ctx)
	if err != nil {
		return res, err
	}
	batch := r.batch
	if batch <= 0 {
		batch = retentionBatch
	}
	for _, tn := range tenants {
		tr, err := r.tenant(ctx, tn, now, batch)
		res.Tenants = append(res.Tenants, tr)
		res.Removed += tr.Removed
		if err != nil {
			return res, err
		}
	}
	for range retentionVacuumSteps {
		n, err := r.store.ReclaimSpace(ctx, retentionVacuumPages)
		res.Reclaimed += n
		if err != nil {
			return res, fmt.Errorf("retention: %w", err)
		}
		if n < retentionVacuumPages {
			break
		}
	}
	r.metrics.Retention.LastRun.Set(float64(now.UnixMilli()) / 1000)
	return res, nil
}

// tenants returns every tenant whose history a pass looks at: each with
// a row (its own retention), and each with schedules but no row (an
// admin acting as a tenant never created), which has the defaults.
func (r *Retention) tenants(ctx context.Context) ([]record.Tenant, error) {
	ts, err := r.store.ListTenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	ids, err := r.store.ScheduleTenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	known := make(map[string]bool, len(ts))
	for _, t := range ts {
		known[t.ID] = true
	}
	for _, id := range ids {
		if !known[id] {
			ts = append(ts, record.Tenant{ID: id})
		}
	}
	return ts, nil
}

// tenant runs the pass for one tenant. The horizon is written first, so a
// crash after it and before (or between) the deletes leaves a store whose
// horizon covers every row removed: the next pass deletes the rest.
func (r *Retention) tenant(ctx context.Context, tn record.Tenant, now time.Time, batch int) (TenantRetention, error) {
	tr := TenantRetention{TenantID: tn.ID, Age: r.Age(tn.Quotas)}
	if tr.Age == 0 {
		return tr, nil
	}
	before := now.Add(-tr.Age).Truncate(time.Second)
	h, err := r.store.SetHistoryHorizon(ctx, tn.ID, before)
	if err != nil {
		return tr, fmt.Errorf("retention of tenant %q: %w", tn.ID, err)
	}
	tr.Horizon = h
	label := r.metrics.Tenant(tn.ID)
	r.metrics.Retention.Horizon.WithLabelValues(label).Set(float64(h.UnixMilli()) / 1000)
	faultinject.Crash(faultinject.RetentionAfterHorizon)
	for i := range retentionBatches {
		n, err := r.store.PurgeHistory(ctx, tn.ID, before, batch)
		tr.Removed += n
		r.metrics.Retention.Removed.WithLabelValues(label).Add(float64(n))
		if err != nil {
			return tr, fmt.Errorf("retention of tenant %q: %w", tn.ID, err)
		}
		faultinject.Crash(faultinject.RetentionAfterBatch)
		if n < batch {
			break
		}
		tr.More = i == retentionBatches-1
	}
	return tr, nil
}

// loop runs a pass every retentionEvery of the engine's clock until ctx
// ends: a loop of its own, since a pass with a backlog may take a while,
// and it must not hold up the figures' flush.
func (r *Retention) loop(ctx context.Context) {
	for {
		t := r.clock.NewTimer(retentionEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		res, err := r.Run(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("retention of finished history", "err", err, "removed", res.Removed)
		case res.Removed > 0:
			r.log.Info("finished history past its retention removed", "occurrences", res.Removed, "pages_reclaimed", res.Reclaimed)
		}
	}
}

// Horizons returns every tenant's history horizon (see
// store.RetentionStore): occurrences scheduled before a tenant's may have
// been removed.
func (r *Retention) Horizons(ctx context.Context) (map[string]time.Time, error) {
	hs, err := r.store.HistoryHorizons(ctx)
	if err != nil {
		return nil, fmt.Errorf("history horizons: %w", err)
	}
	return hs, nil
}
