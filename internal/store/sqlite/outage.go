package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// InsertOutage stores a simulated outage unless one is in progress
// (store.OutageStore).
func (s *Store) InsertOutage(ctx context.Context, o store.Outage) (int64, error) {
	args, err := rowcodec.OutageArgs(o)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.w.QueryRowContext(ctx, qInsertOutage, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("insert outage: one is in progress: %w", store.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("insert outage: %w", translate(err))
	}
	return id, nil
}

// CurrentOutage returns the simulated outage in progress at now, or nil.
func (s *Store) CurrentOutage(ctx context.Context, now time.Time) (*store.Outage, error) {
	out, err := readAll(ctx, s, "current outage", rowcodec.ScanOutage, qCurrentOutage, rowcodec.MS(now))
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return &out[0], nil
}

// CancelOutages cancels every simulated outage in progress at now.
func (s *Store) CancelOutages(ctx context.Context, now time.Time) ([]store.Outage, error) {
	rows, err := s.w.QueryContext(ctx, qCancelOutages, rowcodec.MS(now))
	if err != nil {
		return nil, fmt.Errorf("cancel outages: %w", translate(err))
	}
	out, err := collect(rows, rowcodec.ScanOutage)
	if err != nil {
		return nil, fmt.Errorf("cancel outages: %w", err)
	}
	slices.SortFunc(out, func(a, b store.Outage) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
