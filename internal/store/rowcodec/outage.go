package rowcodec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sched-dev/sched/internal/store"
)

// OutageArgs checks o and returns the values an insert of it binds:
// shards, started_at, ends_at, created_by. Shards are kept as text, "0,3"
// (empty: all shards): the list is short, read whole and never searched.
func OutageArgs(o store.Outage) ([]any, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	parts := make([]string, len(o.Shards))
	for i, sh := range o.Shards {
		parts[i] = strconv.Itoa(sh)
	}
	return []any{strings.Join(parts, ","), MS(o.StartedAt), MS(o.EndsAt), o.CreatedBy}, nil
}

// ScanOutage reads a row of the simulated_outages columns outage_id,
// shards, started_at, ends_at, canceled_at, created_by.
func ScanOutage(row Scanner) (*store.Outage, error) {
	var (
		o             store.Outage
		shards        string
		started, ends int64
		canceled      *int64
	)
	if err := row.Scan(&o.ID, &shards, &started, &ends, &canceled, &o.CreatedBy); err != nil {
		return nil, err
	}
	if shards != "" {
		for _, f := range strings.Split(shards, ",") {
			sh, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("outage %d: shards %q: %w", o.ID, shards, err)
			}
			o.Shards = append(o.Shards, sh)
		}
	}
	o.StartedAt, o.EndsAt = FromMS(started), FromMS(ends)
	if canceled != nil {
		o.CanceledAt = FromMS(*canceled)
	}
	return &o, nil
}
