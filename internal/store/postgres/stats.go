package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/store"
)

// Limits of the stats (store.StatsStore).
const (
	defaultBuckets = 60      // SnapshotParams.Buckets when 0: the next hour
	maxBuckets     = 1440    // a day of one-minute buckets
	maxStatData    = 1 << 16 // StatMinute.Data, in bytes (the table's CHECK)
)

// Snapshot reads the queue at p.Now across all tenants (see
// store.Snapshot): the depth by tenant, queue, lane and state, the oldest
// ready occurrence and the due backlog per minute. The three statements go
// in one round trip, in a read-only REPEATABLE READ transaction, so the
// figures agree with one another (one snapshot of the database) and take
// no row locks: a snapshot never waits for, or holds up, a claim or a plan.
// The due backlog's minutes count from p.BacklogFrom when it is set, from
// p.Now otherwise; a BacklogFrom after p.Now is refused.
func (s *Store) Snapshot(ctx context.Context, p store.SnapshotParams) (store.Snapshot, error) {
	buckets := p.Buckets
	switch {
	case buckets == 0:
		buckets = defaultBuckets
	case buckets < 0 || buckets > maxBuckets:
		return store.Snapshot{}, fmt.Errorf("snapshot: %d buckets: want 1..%d", buckets, maxBuckets)
	}
	from, err := backlogFrom(p)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	now := ms(p.Now)
	end := from + int64(buckets)*time.Minute.Milliseconds()
	snap := store.Snapshot{DueBacklog: make([]int64, buckets)}
	err = s.readTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(qSnapshotDepth, now)
		b.Queue(qSnapshotOldestReady, now)
		b.Queue(qSnapshotDueBacklog, from, end)
		br := tx.SendBatch(ctx, b)
		defer br.Close()

		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("depth: %w", translate(err))
		}
		snap.Depth, err = collect(rows, scanDepthRow)
		if err != nil {
			return fmt.Errorf("depth: %w", err)
		}

		o, err := scanOccurrence(br.QueryRow())
		switch {
		case err == nil:
			snap.OldestReady = o
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("oldest ready: %w", translate(err))
		}

		rows, err = br.Query()
		if err != nil {
			return fmt.Errorf("due backlog: %w", translate(err))
		}
		defer rows.Close()
		for rows.Next() {
			var minute, n int64
			if err := rows.Scan(&minute, &n); err != nil {
				return fmt.Errorf("due backlog: %w", translate(err))
			}
			if minute < 0 || minute >= int64(buckets) {
				return fmt.Errorf("due backlog: minute %d outside the %d buckets", minute, buckets)
			}
			snap.DueBacklog[minute] += n
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("due backlog: %w", translate(err))
		}
		rows.Close()
		return translate(br.Close())
	})
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("snapshot: %w", err)
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

// scanDepthRow reads a row of qSnapshotDepth.
func scanDepthRow(row pgx.Row) (*store.DepthRow, error) {
	var (
		d           store.DepthRow
		lane, state string
	)
	if err := row.Scan(&d.TenantID, &d.Queue, &lane, &state, &d.Count, &d.Ready); err != nil {
		return nil, err
	}
	d.Lane, d.State = record.Lane(lane), record.OccurrenceState(state)
	return &d, nil
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
		if r.NodeID == "" || !storable(r.NodeID) {
			return fmt.Errorf("write stat minutes: node id %q: want valid text, not empty", r.NodeID)
		}
		if len(r.Data) > maxStatData {
			return fmt.Errorf("write stat minutes of %s at %s: %d bytes of data is over %d", r.NodeID, r.Minute.UTC().Format(time.RFC3339), len(r.Data), maxStatData)
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
	rows, err := s.pool.Query(ctx, qReadStatMinutes, ms(since))
	if err != nil {
		return nil, fmt.Errorf("read stat minutes: %w", translate(err))
	}
	out, err := collect(rows, scanStatMinute)
	if err != nil {
		return nil, fmt.Errorf("read stat minutes: %w", err)
	}
	return out, nil
}

func scanStatMinute(row pgx.Row) (*store.StatMinute, error) {
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
