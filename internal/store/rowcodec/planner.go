package rowcodec

import (
	"fmt"
	"strconv"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// InitShards is store.Store.InitShards around a driver's write: put
// stores arg (the shard count n, as the meta table keeps it) unless a
// count is stored already, and answers the stored count's text. It
// refuses n below 1, and returns the stored count.
func InitShards(n int, put func(arg string) (have string, err error)) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("init shards: %d shards: want at least 1", n)
	}
	have, err := put(strconv.Itoa(n))
	if err != nil {
		return 0, fmt.Errorf("init shards: %w", err)
	}
	stored, err := strconv.Atoi(have)
	if err != nil {
		return 0, fmt.Errorf("init shards: stored shard count %q: %w", have, err)
	}
	return stored, nil
}

// DueLimit is how many schedules a DueSchedules page returns at most:
// p.Limit, or store.DefaultListLimit when it is not positive.
func DueLimit(p store.DueSchedulesParams) int {
	if p.Limit <= 0 {
		return store.DefaultListLimit
	}
	return p.Limit
}

// PlanRuns calls apply with the indexes of items in runs, in order, such
// that no schedule appears twice in a run: a plan's items apply as if one
// after the other (an item may continue from the cursor an earlier one
// wrote), and the items of a run can be written by one statement. apply
// must not keep run: it is reused.
func PlanRuns(items []store.PlanItem, apply func(run []int) error) error {
	seen := map[string]bool{}
	var run []int
	for i := range items {
		if seen[items[i].ScheduleID] {
			if err := apply(run); err != nil {
				return err
			}
			run = run[:0]
			clear(seen)
		}
		seen[items[i].ScheduleID] = true
		run = append(run, i)
	}
	if len(run) == 0 {
		return nil
	}
	return apply(run)
}

// LeaseChecked reads the answer of a plan's lease check, the statement
// that answers a row while p.Lease is the shard's lease and live at p.Now:
// store.ErrStaleEpoch when it answered none, and the plan must write
// nothing.
func (c Codec) LeaseChecked(err error, p store.Plan) error {
	ok, err := c.Found(err)
	switch {
	case err != nil:
		return fmt.Errorf("check lease: %w", err)
	case !ok:
		return fmt.Errorf("%w: epoch %d of %s is not live at %s", store.ErrStaleEpoch,
			p.Lease.Epoch, p.Lease.Owner, p.Now.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// LeaseCheckArgs is the values a plan's lease check binds: the lease's
// shard, owner and epoch, and the plan's now.
func LeaseCheckArgs(p store.Plan) []any {
	return []any{p.Lease.Shard, p.Lease.Owner, p.Lease.Epoch, MS(p.Now)}
}
