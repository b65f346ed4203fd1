package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// Snapshot reads the queue at p.Now, across all tenants or of
// p.TenantID's alone, in one read transaction, so that its figures agree
// with each other (see store.StatsStore). Each figure is one statement
// over the partial indexes of the open, claimable and DEAD occurrences, or
// over the planner's cursors (queries.go), or a seek per lane (the oldest
// ready, of all and of each queue): it costs the queue as it
// stands, not its history; a tenant's statements read the tenant's rows
// through indexes that lead with it.
// The due backlog's minutes count from p.BacklogFrom when it is set, from
// p.Now otherwise; a BacklogFrom after p.Now is refused.
func (s *Store) Snapshot(ctx context.Context, p store.SnapshotParams) (_ store.Snapshot, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("snapshot: %w", err)
		}
	}()
	r, err := rowcodec.NewSnapshotRead(p)
	if err != nil {
		return store.Snapshot{}, err
	}

	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.Snapshot{}, translate(err)
	}
	defer tx.Rollback() // read only: nothing to commit

	q := snapshotAll
	if r.Tenant != "" {
		q = snapshotTenant
	}
	rows, err := tx.QueryContext(ctx, q.depth, r.DepthArgs()...)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("depth: %w", translate(err))
	}
	if err := eachRow(rows, r.AddDepth); err != nil {
		return store.Snapshot{}, fmt.Errorf("depth: %w", err)
	}
	totals, err := runTotals(ctx, tx, r.Tenant)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("runs: %w", err)
	}
	r.AddRuns(totals)

	oldest, err := scanOccurrence(tx.QueryRowContext(ctx, q.oldestReady, r.DepthArgs()...))
	if ok, err := codec.Found(err); err != nil {
		return store.Snapshot{}, fmt.Errorf("oldest ready: %w", err)
	} else if ok {
		r.Snap.OldestReady = oldest
	}
	rows, err = tx.QueryContext(ctx, q.queueOldestReady, r.DepthArgs()...)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("queues' oldest ready: %w", translate(err))
	}
	if err := eachRow(rows, r.AddQueueOldest); err != nil {
		return store.Snapshot{}, fmt.Errorf("queues' oldest ready: %w", err)
	}

	for _, d := range []struct{ what, query string }{
		{"due occurrences", q.dueOccurrences},
		{"due schedules", q.dueCursors},
	} {
		rows, err := tx.QueryContext(ctx, d.query, r.DueArgs()...)
		if err != nil {
			return store.Snapshot{}, fmt.Errorf("%s: %w", d.what, translate(err))
		}
		if err := eachRow(rows, r.AddDue); err != nil {
			return store.Snapshot{}, fmt.Errorf("%s: %w", d.what, err)
		}
	}
	return r.Snap, nil
}

// snapshotQueries are the statements of one kind of snapshot: every
// tenant's, or one tenant's.
type snapshotQueries struct {
	depth, oldestReady, queueOldestReady, dueOccurrences, dueCursors string
}

var (
	snapshotAll = snapshotQueries{qSnapshotDepth, qSnapshotOldestReady, qSnapshotQueueOldestReady,
		qSnapshotDueOccurrences, qSnapshotDueCursors}
	snapshotTenant = snapshotQueries{qSnapshotTenantDepth, qSnapshotTenantOldestReady, qSnapshotTenantQueueOldestReady,
		qSnapshotTenantDueOccurrences, qSnapshotTenantDueCursors}
)

// WriteStatMinutes upserts rows by (NodeID, Minute) and deletes every row
// of a minute before deleteBefore, in one transaction. A row with no node
// id or more than 64 KiB of data fails the whole write.
func (s *Store) WriteStatMinutes(ctx context.Context, rows []store.StatMinute, deleteBefore time.Time) error {
	for _, r := range rows {
		if err := rowcodec.CheckStatMinute(r); err != nil {
			return fmt.Errorf("write stat minutes: %w", err)
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
	return readAll(ctx, s, "read stat minutes", rowcodec.ScanStatMinute, qReadStatMinutes, ms(since))
}
