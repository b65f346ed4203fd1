package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/store"
)

// DefaultShards is the number of logical shards schedd gives a new
// PostgreSQL store: several nodes share one, and each plans its share of
// the shards, so there are enough to spread over a handful of nodes.
const DefaultShards = 16

// InitShards records n as the number of logical shards on the first call
// and returns the recorded number on every call, so that a node started
// with another count can refuse to run. Two nodes racing on an empty
// schema both get the number of whichever inserted first.
func (s *Store) InitShards(ctx context.Context, n int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("init shards: %d shards: want at least 1", n)
	}
	var have string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qInitShards, strconv.Itoa(n)); err != nil {
			return translate(err)
		}
		return translate(tx.QueryRow(ctx, qGetShards).Scan(&have))
	})
	if err != nil {
		return 0, fmt.Errorf("init shards: %w", err)
	}
	stored, err := strconv.Atoi(have)
	if err != nil {
		return 0, fmt.Errorf("init shards: stored shard count %q: %w", have, err)
	}
	return stored, nil
}

// AcquireShard grants the shard to p.Owner until p.Now + p.TTL: a free
// shard, an expired lease (the epoch grows) or the owner's own live lease
// (a renewal: the epoch stays). A live lease of another owner is
// store.ErrConflict.
func (s *Store) AcquireShard(ctx context.Context, p store.AcquireShardParams) (store.ShardLease, error) {
	if err := p.Check(); err != nil {
		return store.ShardLease{}, err
	}
	l, err := scanShardLease(s.pool.QueryRow(ctx, qAcquireShard, p.Shard, p.Owner, ms(p.Now.Add(p.TTL)), ms(p.Now)))
	if errors.Is(err, pgx.ErrNoRows) {
		held, err := scanShardLease(s.pool.QueryRow(ctx, qGetShardLease, p.Shard))
		if err != nil {
			return store.ShardLease{}, fmt.Errorf("acquire shard %d: %w", p.Shard, translate(err))
		}
		return store.ShardLease{}, fmt.Errorf("acquire shard %d: %w: held by %s (epoch %d) until %s",
			p.Shard, store.ErrConflict, held.Owner, held.Epoch, held.ExpiresAt.Format(time.RFC3339Nano))
	}
	if err != nil {
		return store.ShardLease{}, fmt.Errorf("acquire shard %d: %w", p.Shard, translate(err))
	}
	return *l, nil
}

// RenewShard extends a live lease to now + ttl. A lease that expired at
// now, or that another owner or a later epoch holds, is
// store.ErrStaleEpoch.
func (s *Store) RenewShard(ctx context.Context, l store.ShardLease, ttl time.Duration, now time.Time) (store.ShardLease, error) {
	if ttl <= 0 {
		return store.ShardLease{}, fmt.Errorf("renew shard %d: ttl %v: want a positive ttl", l.Shard, ttl)
	}
	got, err := scanShardLease(s.pool.QueryRow(ctx, qRenewShard, ms(now.Add(ttl)), l.Shard, l.Owner, l.Epoch, ms(now)))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ShardLease{}, fmt.Errorf("renew shard %d: %w: epoch %d of %s is no longer live", l.Shard, store.ErrStaleEpoch, l.Epoch, l.Owner)
	}
	if err != nil {
		return store.ShardLease{}, fmt.Errorf("renew shard %d: %w", l.Shard, translate(err))
	}
	return *got, nil
}

// ReleaseShard ends the lease now, so that another node may take the shard
// at once. Releasing a lease already lost (another owner or epoch holds the
// shard) does nothing and is not an error.
func (s *Store) ReleaseShard(ctx context.Context, l store.ShardLease) error {
	if _, err := s.pool.Exec(ctx, qReleaseShard, l.Shard, l.Owner, l.Epoch); err != nil {
		return fmt.Errorf("release shard %d: %w", l.Shard, translate(err))
	}
	return nil
}

// ListShardLeases returns every shard lease, live or expired, by shard.
func (s *Store) ListShardLeases(ctx context.Context) ([]store.ShardLease, error) {
	rows, err := s.pool.Query(ctx, qListShardLeases)
	if err != nil {
		return nil, fmt.Errorf("list shard leases: %w", translate(err))
	}
	out, err := collect(rows, scanShardLease)
	if err != nil {
		return nil, fmt.Errorf("list shard leases: %w", err)
	}
	return out, nil
}

// DueSchedules returns up to p.Limit (DefaultListLimit when 0) ACTIVE
// schedules of the shard whose cursor is at or before p.Until, earliest
// cursor first, ties by id, without their payloads.
func (s *Store) DueSchedules(ctx context.Context, p store.DueSchedulesParams) ([]record.Schedule, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = store.DefaultListLimit
	}
	afterAt, afterID := p.After()
	rows, err := s.pool.Query(ctx, qDueSchedules, p.Shard, ms(p.Until), limit, afterAt, afterID)
	if err != nil {
		return nil, fmt.Errorf("due schedules of shard %d: %w", p.Shard, translate(err))
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("due schedules of shard %d: %w", p.Shard, err)
	}
	return out, nil
}

// CommitPlan writes one planner batch in one transaction (see store.Plan).
// It first checks that p.Lease is still the shard's lease and live at
// p.Now, holding the lease's row FOR SHARE until the commit, else it writes
// nothing and fails with store.ErrStaleEpoch. Each item then advances its
// schedule only if the schedule is still ACTIVE, at the item's version and
// cursor, and in the leased shard; otherwise the item is Stale and none of
// its occurrences is written. An occurrence must belong to its item's
// schedule, tenant and version, and carry its derived id or none; a plan
// that breaks this fails whole, before writing.
//
// Items apply as if one after the other, in runs in which no schedule
// appears twice: each run advances its schedules in one UPDATE, and all
// the applied items' occurrences go in one multi-row INSERT.
func (s *Store) CommitPlan(ctx context.Context, p store.Plan) (res store.PlanResult, err error) {
	ids := make([][]string, len(p.Items))
	for i := range p.Items {
		it := &p.Items[i]
		ids[i] = make([]string, len(it.Occurrences))
		for j := range it.Occurrences {
			o := &it.Occurrences[j]
			if o.ScheduleID != it.ScheduleID || o.TenantID != it.TenantID || o.ScheduleVersion != it.Version {
				return res, fmt.Errorf("commit plan of shard %d: item %d (%s): occurrence %d is of %s/%s version %d, not the item's",
					p.Lease.Shard, i, it.ScheduleID, j, o.TenantID, o.ScheduleID, o.ScheduleVersion)
			}
			if ids[i][j], err = occurrenceID(o); err != nil {
				return res, fmt.Errorf("commit plan of shard %d: item %d (%s): occurrence %d: %w", p.Lease.Shard, i, it.ScheduleID, j, err)
			}
		}
	}

	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, qCheckLease, p.Lease.Shard, p.Lease.Owner, p.Lease.Epoch, ms(p.Now)).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: epoch %d of %s is not live at %s", store.ErrStaleEpoch,
				p.Lease.Epoch, p.Lease.Owner, p.Now.UTC().Format(time.RFC3339Nano))
		}
		if err != nil {
			return fmt.Errorf("check lease: %w", translate(err))
		}

		ins := newOccurrenceInserter(ctx, tx)
		var (
			a         advanceArrays
			seen      = map[string]bool{}
			run       []int // items of the current run
			applied   = map[string]bool{}
			attempted = 0
		)
		apply := func() error {
			if len(run) == 0 {
				return nil
			}
			a.reset()
			for _, i := range run {
				a.add(&p.Items[i])
			}
			rows, err := tx.Query(ctx, qAdvanceSchedules, a.tenant, a.schedule, a.version, a.cursor, a.next, a.state, a.missed, p.Lease.Shard)
			if err != nil {
				return fmt.Errorf("advance schedules: %w", translate(err))
			}
			clear(applied)
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return fmt.Errorf("advance schedules: %w", translate(err))
				}
				applied[id] = true
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("advance schedules: %w", translate(err))
			}
			for _, i := range run {
				it := &p.Items[i]
				if !applied[it.ScheduleID] {
					res.Stale++
					continue
				}
				res.Applied++
				for j := range it.Occurrences {
					o := &it.Occurrences[j]
					enqueued := o.EnqueuedAt
					if o.State == record.OccurrenceEnqueued {
						enqueued = p.Now
					}
					if err := ins.add(o, ids[i][j], p.Lease.Epoch, enqueued); err != nil {
						return err
					}
					attempted++
				}
			}
			run = run[:0]
			clear(seen)
			return nil
		}
		for i := range p.Items {
			if seen[p.Items[i].ScheduleID] {
				if err := apply(); err != nil {
					return err
				}
			}
			seen[p.Items[i].ScheduleID] = true
			run = append(run, i)
		}
		if err := apply(); err != nil {
			return err
		}
		if err := ins.flush(); err != nil {
			return err
		}
		res.Inserted = ins.inserted
		res.Duplicates = attempted - ins.inserted
		if res.Inserted > 0 {
			return s.notify(ctx, tx, ChannelWork)
		}
		return nil
	})
	if err != nil {
		return store.PlanResult{}, fmt.Errorf("commit plan of shard %d: %w", p.Lease.Shard, err)
	}
	return res, nil
}

// advanceArrays holds a run of plan items column by column, in the order
// qAdvanceSchedules reads them.
type advanceArrays struct {
	tenant, schedule []string
	version, cursor  []int64
	next             []pgtype.Int8
	state            []string
	missed           []int64
}

func (a *advanceArrays) add(it *store.PlanItem) {
	a.tenant = append(a.tenant, it.TenantID)
	a.schedule = append(a.schedule, it.ScheduleID)
	a.version = append(a.version, it.Version)
	a.cursor = append(a.cursor, ms(it.Cursor))
	a.next = append(a.next, nullMS(it.NextRunAt))
	a.state = append(a.state, string(it.State))
	a.missed = append(a.missed, it.MissedCount)
}

func (a *advanceArrays) reset() {
	a.tenant, a.schedule, a.version, a.cursor = a.tenant[:0], a.schedule[:0], a.version[:0], a.cursor[:0]
	a.next, a.state, a.missed = a.next[:0], a.state[:0], a.missed[:0]
}
