package postgres

import (
	"context"
	"fmt"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
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
	return rowcodec.InitShards(n, func(arg string) (have string, err error) {
		err = s.inTx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, qInitShards, arg); err != nil {
				return translate(err)
			}
			return translate(tx.QueryRow(ctx, qGetShards).Scan(&have))
		})
		return have, err
	})
}

// ListShardLeases returns every shard lease, live or expired, by shard.
func (s *Store) ListShardLeases(ctx context.Context) ([]store.ShardLease, error) {
	return readAll(ctx, s, "list shard leases", rowcodec.ScanShardLease, qListShardLeases)
}

// DueSchedules returns up to p.Limit (DefaultListLimit when 0) ACTIVE
// schedules of the shard whose cursor is at or before p.Until, earliest
// cursor first, ties by id, without their payloads.
func (s *Store) DueSchedules(ctx context.Context, p store.DueSchedulesParams) ([]record.Schedule, error) {
	limit := rowcodec.DueLimit(p)
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
	ids, err := rowcodec.PlanIDs(p.Items, checkStorable)
	if err != nil {
		return res, fmt.Errorf("commit plan of shard %d: %w", p.Lease.Shard, err)
	}

	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		if err := codec.LeaseChecked(tx.QueryRow(ctx, qCheckLease, rowcodec.LeaseCheckArgs(p)...).Scan(&one), p); err != nil {
			return err
		}

		ins := newOccurrenceInserter(ctx, tx)
		var (
			a         advanceArrays
			applied   = map[string]bool{}
			attempted = 0
		)
		// Each run of items (rowcodec.PlanRuns) advances its schedules in
		// one UPDATE.
		err := rowcodec.PlanRuns(p.Items, func(run []int) error {
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
			return nil
		})
		if err != nil {
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
	s.noteInserted(res.Inserted)
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
