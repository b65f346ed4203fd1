package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// Retention of finished history (store.RetentionStore).

// PurgeHistory deletes at most limit of the tenant's finished occurrences
// scheduled before before, with their attempts, in one transaction (see
// store.RetentionStore). The transaction holds the one writer for one
// batch only; the engine keeps batches to thousands of rows.
func (s *Store) PurgeHistory(ctx context.Context, tenantID string, before time.Time, limit int) (n int, err error) {
	if limit <= 0 {
		return 0, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("purge history of %q: begin: %w", tenantID, translate(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	args := []any{tenantID, ms(before), limit}
	if _, err := tx.ExecContext(ctx, qPurgeHistoryAttempts, args...); err != nil {
		return 0, fmt.Errorf("purge history of %q: attempts: %w", tenantID, translate(err))
	}
	rows, err := tx.QueryContext(ctx, qPurgeHistory, args...)
	if err != nil {
		return 0, fmt.Errorf("purge history of %q: occurrences: %w", tenantID, translate(err))
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("purge history of %q: %w", tenantID, translate(err))
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("purge history of %q: %w", tenantID, translate(err))
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("purge history of %q: commit: %w", tenantID, translate(err))
	}
	if s.ckpt != nil {
		s.ckpt.committed()
	}
	// A deleted row's number may be given again (occurrences.row is not
	// AUTOINCREMENT): no hint may point at it any more.
	s.hints.drop(slices.Values(ids))
	return len(ids), nil
}

// SetHistoryHorizon moves the tenant's horizon forward to at (see
// store.RetentionStore).
func (s *Store) SetHistoryHorizon(ctx context.Context, tenantID string, at time.Time) (time.Time, error) {
	var h int64
	if err := s.w.QueryRowContext(ctx, qSetHistoryHorizon, tenantID, ms(at)).Scan(&h); err != nil {
		return time.Time{}, fmt.Errorf("set the history horizon of %q: %w", tenantID, translate(err))
	}
	if s.ckpt != nil {
		s.ckpt.committed()
	}
	return rowcodec.FromMS(h), nil
}

// HistoryHorizons returns every tenant's horizon (see
// store.RetentionStore).
func (s *Store) HistoryHorizons(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.r.QueryContext(ctx, qHistoryHorizons)
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
	rows, err := s.r.QueryContext(ctx, qScheduleTenants)
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

// ReclaimSpace runs PRAGMA incremental_vacuum(pages), which moves the
// file's last pages into free ones and truncates the file (see
// store.RetentionStore). On a file whose auto_vacuum is not INCREMENTAL
// (made before this store set it, and too large for the one-time VACUUM,
// see setAutoVacuum) it frees nothing: the pages stay free for reuse.
func (s *Store) ReclaimSpace(ctx context.Context, pages int) (int, error) {
	if pages <= 0 || !s.incrementalVacuum {
		return 0, nil
	}
	before, err := s.freePages(ctx)
	if err != nil {
		return 0, err
	}
	if before == 0 {
		return 0, nil
	}
	// incremental_vacuum returns no row per page freed worth reading,
	// but it must be stepped to the end: Query, then drain.
	rows, err := s.w.QueryContext(ctx, qIncrementalVacuum(pages))
	if err != nil {
		return 0, fmt.Errorf("incremental vacuum: %w", translate(err))
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("incremental vacuum: %w", translate(err))
	}
	if s.ckpt != nil {
		s.ckpt.committed()
	}
	after, err := s.freePages(ctx)
	if err != nil {
		return 0, err
	}
	return max(before-after, 0), nil
}

// IncrementalVacuum reports whether the file's auto_vacuum is
// INCREMENTAL, so that ReclaimSpace gives freed pages back; false for a
// file made without it and too large to convert at open.
func (s *Store) IncrementalVacuum() bool { return s.incrementalVacuum }

// freePages is the file's free page count, on the writer (whose view is
// the newest).
func (s *Store) freePages(ctx context.Context) (int, error) {
	var n int
	if err := s.w.QueryRowContext(ctx, qFreelistCount).Scan(&n); err != nil {
		return 0, fmt.Errorf("freelist count: %w", translate(err))
	}
	return n, nil
}

// vacuumAtOpenBytes bounds the one-time VACUUM that turns an existing file
// made without auto_vacuum into one with it: VACUUM rewrites the whole
// file (and needs as much free disk again), so a larger file keeps
// auto_vacuum NONE and reuses the pages retention frees without giving
// them back (docs/retention.md).
const vacuumAtOpenBytes = 256 << 20

// setAutoVacuum makes the file's auto_vacuum INCREMENTAL, which
// ReclaimSpace needs. The mode is set by the pragma and made real by a
// VACUUM: a new file gets it before the migrations create their tables;
// an existing one made without it gets it when it is small
// (vacuumAtOpenBytes), and keeps NONE otherwise. It reports whether the
// file's mode is INCREMENTAL after it.
func setAutoVacuum(ctx context.Context, db *sql.DB) (bool, error) {
	var mode int
	if err := db.QueryRowContext(ctx, qAutoVacuum).Scan(&mode); err != nil {
		return false, fmt.Errorf("auto_vacuum: %w", translate(err))
	}
	if mode == 2 {
		return true, nil
	}
	var objects, bytes int64
	if err := db.QueryRowContext(ctx, qSchemaObjects).Scan(&objects); err != nil {
		return false, fmt.Errorf("auto_vacuum: %w", translate(err))
	}
	if err := db.QueryRowContext(ctx, qDatabaseBytes).Scan(&bytes); err != nil {
		return false, fmt.Errorf("auto_vacuum: %w", translate(err))
	}
	if objects > 0 && bytes > vacuumAtOpenBytes {
		return false, nil
	}
	if _, err := db.ExecContext(ctx, qSetAutoVacuum); err != nil {
		return false, fmt.Errorf("auto_vacuum: %w", translate(err))
	}
	// Even a new file needs the VACUUM: the connection put it in WAL
	// mode, which wrote its first page, and the mode of a file with pages
	// changes only by a VACUUM (of an empty file, instant).
	if _, err := db.ExecContext(ctx, qVacuum); err != nil {
		return false, fmt.Errorf("auto_vacuum: vacuum: %w", translate(err))
	}
	return true, nil
}

var _ store.RetentionStore = (*Store)(nil)
