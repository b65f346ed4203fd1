package postgres

import (
	"context"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// The shard leases' statements (store.PlannerTx). LockShardLease holds
// the lease row until the commit (see qLockShardLease).

// LockShardLease returns the shard's lease row and locks it; ok is false
// when there is none.
func (t *tx) LockShardLease(ctx context.Context, shard int) (store.ShardLease, bool, error) {
	return codec.LockedLease(t.tx.QueryRow(ctx, qLockShardLease, shard), shard)
}

// InsertShardLease stores l as the lease of a shard that has none.
func (t *tx) InsertShardLease(ctx context.Context, l store.ShardLease) (store.ShardLease, error) {
	return codec.WrittenLease(t.tx.QueryRow(ctx, qInsertShardLease, rowcodec.LeaseArgs(l)...), l.Shard, "the shard has a lease")
}

// WriteShardLease writes l while the stored lease is prev.
func (t *tx) WriteShardLease(ctx context.Context, l, prev store.ShardLease) (store.ShardLease, error) {
	return codec.WrittenLease(t.tx.QueryRow(ctx, qWriteShardLease, rowcodec.WriteLeaseArgs(l, prev)...), l.Shard, "the lease changed since it was read")
}
