package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// Snapshot reads the queue at p.Now across all tenants, or of p.TenantID
// alone (see store.Snapshot): the depth by tenant, queue, lane and state, the oldest
// ready occurrence, of all and of each queue, and the due backlog per minute,
// with the occurrences unfolded runs hold moved to the states they stand for
// (rowcodec.SnapshotRead.AddRuns). The five statements go in one round trip, in a read-only REPEATABLE READ transaction, so the
// figures agree with one another (one snapshot of the database) and take
// no row locks: a snapshot never waits for, or holds up, a claim or a plan.
// The due backlog's minutes count from p.BacklogFrom when it is set, from
// p.Now otherwise; a BacklogFrom after p.Now is refused.
func (s *Store) Snapshot(ctx context.Context, p store.SnapshotParams) (store.Snapshot, error) {
	r, err := rowcodec.NewSnapshotRead(p)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	err = s.readTx(ctx, func(tx pgx.Tx) error {
		depth, oldest, queueOldest, due := qSnapshotDepth, qSnapshotOldestReady, qSnapshotQueueOldestReady, qSnapshotDueBacklog
		if r.Tenant != "" {
			depth, oldest, queueOldest, due = qSnapshotTenantDepth, qSnapshotTenantOldestReady, qSnapshotTenantQueueOldestReady,
				qSnapshotTenantDueBacklog
		}
		b := &pgx.Batch{}
		b.Queue(depth, r.DepthArgs()...)
		b.Queue(oldest, r.DepthArgs()...)
		b.Queue(queueOldest, r.DepthArgs()...)
		b.Queue(due, r.DueArgs()...)
		b.Queue(qRunTotals, r.Tenant)
		br := tx.SendBatch(ctx, b)
		defer br.Close()

		if err := eachRow(br, "depth", r.AddDepth); err != nil {
			return err
		}
		o, err := scanOccurrence(br.QueryRow())
		if ok, err := codec.Found(err); err != nil {
			return fmt.Errorf("oldest ready: %w", err)
		} else if ok {
			r.Snap.OldestReady = o
		}
		if err := eachRow(br, "queues' oldest ready", r.AddQueueOldest); err != nil {
			return err
		}
		if err := eachRow(br, "due backlog", r.AddDue); err != nil {
			return err
		}
		// What the runs hold, read in the same snapshot: their rows
		// still say ENQUEUED (docs/engine.md, "Leased runs").
		var totals []store.RunTotal
		err = eachRow(br, "runs", func(row scanner) error {
			t, err := scanRunTotal(row)
			if err == nil {
				totals = append(totals, *t)
			}
			return err
		})
		if err != nil {
			return err
		}
		r.AddRuns(totals)
		return translate(br.Close())
	})
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	return r.Snap, nil
}

// eachRow reads the rows of the batch's next statement with fn; what
// names the statement in errors.
func eachRow(br pgx.BatchResults, what string, fn func(scanner) error) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("%s: %w", what, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("%s: %w", what, translate(err))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, translate(err))
	}
	return nil
}

// WriteStatMinutes upserts rows by (node, minute), replacing their data,
// and deletes every row whose minute is before deleteBefore, in one
// transaction. A row for the same node and minute given twice keeps the
// later one. A row with an empty node id or more than 64 KiB of data fails
// the call, which writes nothing. The minute is kept to the millisecond as
// given (the engine passes the start of a minute), as the SQLite store
// keeps it.
func (s *Store) WriteStatMinutes(ctx context.Context, rows []store.StatMinute, deleteBefore time.Time) error {
	type key struct {
		node   string
		minute int64
	}
	var (
		nodes   []string
		minutes []int64
		data    [][]byte
		index   = make(map[key]int, len(rows))
	)
	for _, r := range rows {
		if err := rowcodec.CheckStatMinute(r); err != nil {
			return fmt.Errorf("write stat minutes: %w", err)
		}
		if !storable(r.NodeID) {
			return fmt.Errorf("write stat minutes: node id %q: not valid text", r.NodeID)
		}
		m, d := ms(r.Minute), payloadArg(r.Data) // data NOT NULL: no data is empty data
		if i, ok := index[key{r.NodeID, m}]; ok {
			data[i] = d // one row per key: the upsert cannot write a row twice
			continue
		}
		index[key{r.NodeID, m}] = len(nodes)
		nodes, minutes, data = append(nodes, r.NodeID), append(minutes, m), append(data, d)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if len(nodes) > 0 {
			if _, err := tx.Exec(ctx, qUpsertStatMinutes, nodes, minutes, data); err != nil {
				return fmt.Errorf("upsert: %w", translate(err))
			}
		}
		if _, err := tx.Exec(ctx, qPruneStatMinutes, ms(deleteBefore)); err != nil {
			return fmt.Errorf("prune: %w", translate(err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write stat minutes: %w", err)
	}
	return nil
}

// ReadStatMinutes returns every row whose minute is at or after since, by
// minute then node id.
func (s *Store) ReadStatMinutes(ctx context.Context, since time.Time) ([]store.StatMinute, error) {
	return readAll(ctx, s, "read stat minutes", rowcodec.ScanStatMinute, qReadStatMinutes, ms(since))
}
