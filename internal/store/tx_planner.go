package store

import "context"

// PlannerTx holds the statements the engine's shard leases compose inside
// a transaction (see Tx): taking, renewing and giving back a shard is one
// transaction of these. The rule they make up (who may take a shard, when
// its epoch grows, which lease a renewal or a release must present) is the
// engine's; each statement only reads or writes what it says, under the
// condition it states.
type PlannerTx interface {
	// LockShardLease returns the shard's lease row, live or expired, and
	// keeps any other writer of it waiting until the transaction ends, so
	// the lease read stays the stored one until then. ok is false when the
	// shard has never been leased: there is no row, nothing is locked, and
	// InsertShardLease is the write that is conditional.
	LockShardLease(ctx context.Context, shard int) (l ShardLease, ok bool, err error)

	// InsertShardLease stores l as the lease of a shard that has no lease
	// row, and returns it as stored. ErrConflict when the shard has one
	// (another node took it first).
	InsertShardLease(ctx context.Context, l ShardLease) (ShardLease, error)

	// WriteShardLease writes l's owner, epoch and expiry as the lease of
	// l.Shard only while the stored lease is prev (the same owner, epoch
	// and expiry), and returns it as stored. ErrConflict otherwise.
	WriteShardLease(ctx context.Context, l, prev ShardLease) (ShardLease, error)
}
