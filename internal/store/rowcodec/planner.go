package rowcodec

import (
	"fmt"
	"strconv"

	"github.com/sched-dev/sched/internal/store"
)

// CheckShards refuses a shard count below 1 (store.Store.InitShards).
func CheckShards(n int) error {
	if n < 1 {
		return fmt.Errorf("%d shards: want at least 1", n)
	}
	return nil
}

// ShardsArg is how the shard count is kept in the meta table: as text.
func ShardsArg(n int) string { return strconv.Itoa(n) }

// StoredShards reads the shard count kept in the meta table.
func StoredShards(have string) (int, error) {
	n, err := strconv.Atoi(have)
	if err != nil {
		return 0, fmt.Errorf("stored shard count %q: %w", have, err)
	}
	return n, nil
}

// DueLimit is how many schedules a DueSchedules page returns at most:
// p.Limit, or store.DefaultListLimit when it is not positive.
func DueLimit(p store.DueSchedulesParams) int {
	if p.Limit <= 0 {
		return store.DefaultListLimit
	}
	return p.Limit
}
