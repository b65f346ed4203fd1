package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// The shard lease rule, written once for every store. A lease is
// (shard, owner, epoch, expiry); every planner write is conditional on the
// owner and epoch it presents and on the lease being live at the write's
// time, so the epoch is the fence that keeps a node that lost a shard from
// writing to it. Each function is one transaction of small statements
// (store.PlannerTx): the lease row is read and locked, the rule decides,
// and the new lease is written conditionally on the row as read. They are
// exported so that the store conformance suite (storetest) runs the rule
// on every store.

// releasedAt is the expiry a released lease gets: long past, so that any
// node may take the shard at once.
var releasedAt = time.UnixMilli(0).UTC()

// AcquireShard grants the shard to p.Owner until p.Now + p.TTL, in one
// transaction of st:
//
//   - a shard never leased gets epoch 1;
//   - a lease that has expired at p.Now (expiry at or before it), whoever
//     held it, is taken at the next epoch;
//   - a live lease of p.Owner is renewed at the same epoch;
//   - a live lease of another owner is store.ErrConflict.
func AcquireShard(ctx context.Context, st store.Store, p store.AcquireShardParams) (store.ShardLease, error) {
	if err := p.Check(); err != nil {
		return store.ShardLease{}, err
	}
	var got store.ShardLease
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		next := store.ShardLease{Shard: p.Shard, Owner: p.Owner, Epoch: 1, ExpiresAt: p.Now.Add(p.TTL)}
		cur, ok, err := tx.LockShardLease(ctx, p.Shard)
		if err != nil {
			return err
		}
		if !ok {
			got, err = tx.InsertShardLease(ctx, next)
			return err
		}
		live := cur.ExpiresAt.After(p.Now)
		switch {
		case live && cur.Owner == p.Owner:
			next.Epoch = cur.Epoch
		case live:
			return fmt.Errorf("%w: held by %s (epoch %d) until %s",
				store.ErrConflict, cur.Owner, cur.Epoch, cur.ExpiresAt.UTC().Format(time.RFC3339Nano))
		default:
			next.Epoch = cur.Epoch + 1
		}
		got, err = tx.WriteShardLease(ctx, next, cur)
		return err
	})
	if err != nil {
		return store.ShardLease{}, fmt.Errorf("acquire shard %d: %w", p.Shard, err)
	}
	return got, nil
}

// RenewShard extends the live lease l to now + ttl, keeping its epoch. A
// lease that has expired at now (expiry at or before it), or that another
// owner or another epoch holds, is store.ErrStaleEpoch: the node lost the
// shard and must stop acting on it.
func RenewShard(ctx context.Context, st store.Store, l store.ShardLease, ttl time.Duration, now time.Time) (store.ShardLease, error) {
	if ttl <= 0 {
		return store.ShardLease{}, fmt.Errorf("renew shard %d: ttl %v: want a positive ttl", l.Shard, ttl)
	}
	var got store.ShardLease
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		cur, ok, err := tx.LockShardLease(ctx, l.Shard)
		if err != nil {
			return err
		}
		if !ok || !sameLease(cur, l) || !cur.ExpiresAt.After(now) {
			return fmt.Errorf("%w: epoch %d of %s is no longer live", store.ErrStaleEpoch, l.Epoch, l.Owner)
		}
		next := cur
		next.ExpiresAt = now.Add(ttl)
		got, err = tx.WriteShardLease(ctx, next, cur)
		return err
	})
	if err != nil {
		return store.ShardLease{}, fmt.Errorf("renew shard %d: %w", l.Shard, err)
	}
	return got, nil
}

// ReleaseShard ends the lease l at once, so that another node may take
// the shard without waiting for it to expire; the next owner's epoch
// grows. Releasing a lease already lost (another owner or epoch holds the
// shard, or it was never leased) does nothing and is not an error.
func ReleaseShard(ctx context.Context, st store.Store, l store.ShardLease) error {
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		cur, ok, err := tx.LockShardLease(ctx, l.Shard)
		if err != nil || !ok || !sameLease(cur, l) {
			return err
		}
		next := cur
		next.ExpiresAt = releasedAt
		_, err = tx.WriteShardLease(ctx, next, cur)
		return err
	})
	if err != nil {
		return fmt.Errorf("release shard %d: %w", l.Shard, err)
	}
	return nil
}

// sameLease reports whether a and b are the same grant of a shard: the
// same owner at the same epoch (a renewal keeps both).
func sameLease(a, b store.ShardLease) bool {
	return a.Shard == b.Shard && a.Owner == b.Owner && a.Epoch == b.Epoch
}
