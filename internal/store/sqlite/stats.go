package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// Limits of the snapshot's due backlog (store.SnapshotParams).
const (
	defaultBacklogBuckets = 60
	maxBacklogBuckets     = 1440
)

// maxStatData is the largest StatMinute.Data the store keeps (the
// stat_minutes table's CHECK says the same).
const maxStatData = 64 << 10

// Snapshot reads the queue at p.Now, across all tenants, in one read
// transaction, so that its figures agree with each other (see
// store.StatsStore). Each figure is one statement over the partial indexes
// of the open, claimable and DEAD occurrences, or over the planner's
// cursors (queries.go): it costs the queue as it stands, not its history.
// The due backlog's minutes count from p.BacklogFrom when it is set, from
// p.Now otherwise; a BacklogFrom after p.Now is refused.
func (s *Store) Snapshot(ctx context.Context, p store.SnapshotParams) (_ store.Snapshot, err error) {
	buckets := p.Buckets
	if buckets == 0 {
		buckets = defaultBacklogBuckets
	}
	if buckets < 1 || buckets > maxBacklogBuckets {
		return store.Snapshot{}, fmt.Errorf("snapshot: %d buckets: want 1 to %d", p.Buckets, maxBacklogBuckets)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("snapshot: %w", err)
		}
	}()
	from, err := backlogFrom(p)
	if err != nil {
		return store.Snapshot{}, err
	}
	now := ms(p.Now)
	end := from + int64(buckets)*time.Minute.Milliseconds()

	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.Snapshot{}, translate(err)
	}
	defer tx.Rollback() // read only: nothing to commit

	snap := store.Snapshot{DueBacklog: make([]int64, buckets)}
	rows, err := tx.QueryContext(ctx, qSnapshotDepth, now)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("depth: %w", translate(err))
	}
	err = eachRow(rows, func(row scanner) error {
		var (
			d           store.DepthRow
			lane, state string
		)
		if err := row.Scan(&d.TenantID, &d.Queue, &lane, &state, &d.Count, &d.Ready); err != nil {
			return err
		}
		d.Lane, d.State = record.Lane(lane), record.OccurrenceState(state)
		snap.Depth = append(snap.Depth, d)
		return nil
	})
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("depth: %w", err)
	}

	oldest, err := scanOccurrence(tx.QueryRowContext(ctx, qSnapshotOldestReady, now))
	switch {
	case err == nil:
		snap.OldestReady = oldest
	case !errors.Is(err, sql.ErrNoRows):
		return store.Snapshot{}, fmt.Errorf("oldest ready: %w", translate(err))
	}

	for _, q := range []struct{ what, query string }{
		{"due occurrences", qSnapshotDueOccurrences},
		{"due schedules", qSnapshotDueCursors},
	} {
		rows, err := tx.QueryContext(ctx, q.query, from, end)
		if err != nil {
			return store.Snapshot{}, fmt.Errorf("%s: %w", q.what, translate(err))
		}
		err = eachRow(rows, func(row scanner) error {
			var minute, n int64
			if err := row.Scan(&minute, &n); err != nil {
				return err
			}
			if minute < 0 || minute >= int64(buckets) {
				return fmt.Errorf("minute %d outside the %d buckets", minute, buckets)
			}
			snap.DueBacklog[minute] += n
			return nil
		})
		if err != nil {
			return store.Snapshot{}, fmt.Errorf("%s: %w", q.what, err)
		}
	}
	return snap, nil
}

// backlogFrom returns, in unix milliseconds, where the due backlog of a
// snapshot counts its minutes from: p.BacklogFrom, which must not be after
// p.Now, or p.Now when it is zero.
func backlogFrom(p store.SnapshotParams) (int64, error) {
	if p.BacklogFrom.IsZero() {
		return ms(p.Now), nil
	}
	if p.BacklogFrom.After(p.Now) {
		return 0, fmt.Errorf("backlog from %s: after now, %s", p.BacklogFrom.UTC().Format(time.RFC3339Nano), p.Now.UTC().Format(time.RFC3339Nano))
	}
	return ms(p.BacklogFrom), nil
}

// WriteStatMinutes upserts rows by (NodeID, Minute) and deletes every row
// of a minute before deleteBefore, in one transaction. A row with no node
// id or more than 64 KiB of data fails the whole write.
func (s *Store) WriteStatMinutes(ctx context.Context, rows []store.StatMinute, deleteBefore time.Time) error {
	for _, r := range rows {
		if r.NodeID == "" || len(r.Data) > maxStatData {
			return fmt.Errorf("write stat minutes: bad row (node %q, minute %s, %d bytes of data; at most %d)",
				r.NodeID, r.Minute.UTC().Format(time.RFC3339), len(r.Data), maxStatData)
		}
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		if len(rows) > 0 {
			st, err := tx.PrepareContext(ctx, qUpsertStatMinute)
			if err != nil {
				return fmt.Errorf("prepare: %w", translate(err))
			}
			defer st.Close()
			for _, r := range rows {
				if _, err := st.ExecContext(ctx, r.NodeID, ms(r.Minute), payloadArg(r.Data)); err != nil {
					return fmt.Errorf("node %s minute %s: %w", r.NodeID, r.Minute.UTC().Format(time.RFC3339), translate(err))
				}
			}
		}
		if _, err := tx.ExecContext(ctx, qDeleteStatMinutes, ms(deleteBefore)); err != nil {
			return fmt.Errorf("delete before %s: %w", deleteBefore.UTC().Format(time.RFC3339), translate(err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write stat minutes: %w", err)
	}
	return nil
}

// ReadStatMinutes returns every row of a minute at or after since, by
// minute then node id.
func (s *Store) ReadStatMinutes(ctx context.Context, since time.Time) ([]store.StatMinute, error) {
	rows, err := s.r.QueryContext(ctx, qReadStatMinutes, ms(since))
	if err != nil {
		return nil, fmt.Errorf("read stat minutes: %w", translate(err))
	}
	out, err := collect(rows, scanStatMinute)
	if err != nil {
		return nil, fmt.Errorf("read stat minutes: %w", err)
	}
	return out, nil
}

// scanStatMinute reads the columns of statMinuteColumns.
func scanStatMinute(row scanner) (*store.StatMinute, error) {
	var (
		m      store.StatMinute
		minute int64
	)
	if err := row.Scan(&m.NodeID, &minute, &m.Data); err != nil {
		return nil, err
	}
	m.Minute = fromMS(minute)
	return &m, nil
}
