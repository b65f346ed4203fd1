package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// Retention of finished history (store.RetentionStore).

// PurgeHistory deletes at most limit of the tenant's finished occurrences
// scheduled before before, with their attempts, in one statement (see
// store.RetentionStore).
func (s *Store) PurgeHistory(ctx context.Context, tenantID string, before time.Time, limit int) (int, error) {
	if limit <= 0 || !storable(tenantID) {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, qPurgeHistory, tenantID, ms(before), limit)
	if err != nil {
		return 0, fmt.Errorf("purge history of %q: %w", tenantID, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// SetHistoryHorizon moves the tenant's horizon forward to at (see
// store.RetentionStore).
func (s *Store) SetHistoryHorizon(ctx context.Context, tenantID string, at time.Time) (time.Time, error) {
	if !storable(tenantID) {
		return time.Time{}, fmt.Errorf("set the history horizon: tenant %q is not valid text", tenantID)
	}
	var h int64
	if err := s.pool.QueryRow(ctx, qSetHistoryHorizon, tenantID, ms(at)).Scan(&h); err != nil {
		return time.Time{}, fmt.Errorf("set the history horizon of %q: %w", tenantID, translate(err))
	}
	return rowcodec.FromMS(h), nil
}

// HistoryHorizons returns every tenant's horizon (see
// store.RetentionStore).
func (s *Store) HistoryHorizons(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.pool.Query(ctx, qHistoryHorizons)
	if err != nil {
		return nil, fmt.Errorf("read the history horizons: %w", translate(err))
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var (
			id string
			h  int64
		)
		if err := rows.Scan(&id, &h); err != nil {
			return nil, fmt.Errorf("read the history horizons: %w", translate(err))
		}
		out[id] = rowcodec.FromMS(h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the history horizons: %w", translate(err))
	}
	return out, nil
}

// ScheduleTenants returns every tenant with a schedule (see
// store.RetentionStore).
func (s *Store) ScheduleTenants(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, qScheduleTenants)
	if err != nil {
		return nil, fmt.Errorf("schedules' tenants: %w", translate(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("schedules' tenants: %w", translate(err))
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schedules' tenants: %w", translate(err))
	}
	return out, nil
}

// ReclaimSpace returns 0: PostgreSQL's autovacuum makes the space of
// deleted rows reusable by later inserts, and gives nothing back to the
// file system short of VACUUM FULL, which locks the tables (see
// store.RetentionStore, docs/retention.md).
func (s *Store) ReclaimSpace(ctx context.Context, pages int) (int, error) { return 0, nil }

var _ store.RetentionStore = (*Store)(nil)
