package engine

import (
	"context"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// subscriber is implemented by stores that tell other nodes of their
// writes (the PostgreSQL store's LISTEN/NOTIFY): a notification on
// store.NotifyWork wakes waiting claims, one on store.NotifyPlan
// wakes the planner, and one with an empty channel (the subscription
// reconnected and may have missed some) does both. The SQLite store does
// not implement it: it serves one process, whose engine already wakes its
// own claims and planner.
type subscriber interface {
	Subscribe(ctx context.Context) (<-chan store.Notification, error)
}

// Retry interval of a subscription that could not be made.
const (
	subscribeBackoffMin = 100 * time.Millisecond
	subscribeBackoffMax = 5 * time.Second
)

// startNotifications subscribes to the store's notifications, when it has
// them, and returns a function that passes them on until ctx ends; nil when
// the store has none. It subscribes before returning, so that writes other
// nodes commit after Start wake this one; when that fails (the database is
// down), the returned function retries in the background, and the claims
// and the planner meanwhile rely on their timers.
func (e *Engine) startNotifications(ctx context.Context) func() {
	sub, ok := e.store.(subscriber)
	if !ok {
		return nil
	}
	ch, err := sub.Subscribe(ctx) // bounded by the store's connect timeout
	if err != nil {
		e.log.Warn("subscribe to store notifications; retrying", "err", err)
	}
	return func() {
		late := ch == nil
		backoff := subscribeBackoffMin
		for ch == nil {
			t := time.NewTimer(backoff) // real time: the retries are about the network
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, subscribeBackoffMax)
			if ch, err = sub.Subscribe(ctx); err != nil && ctx.Err() == nil {
				e.log.Debug("subscribe to store notifications", "err", err)
			}
		}
		if late {
			// Writes may have been missed before the subscription.
			e.notify.broadcast()
			e.planner.wake()
		}
		// The channel is closed once ctx ends and the store's listener
		// has let go of its connection.
		for n := range ch {
			switch n.Channel {
			case store.NotifyWork:
				e.notify.broadcast()
			case store.NotifyPlan:
				e.planner.wake()
			default:
				e.notify.broadcast()
				e.planner.wake()
			}
		}
	}
}
