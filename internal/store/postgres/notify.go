package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/store"
)

// Channels of the notifications the store sends (LISTEN/NOTIFY), so that
// nodes sharing a database learn of each other's writes without waiting
// for a poll. The payload is the store's schema: several stores may share
// one database (tests use a schema each), and a subscriber passes on only
// its own schema's notifications.
const (
	// ChannelWork: occurrences may have become claimable sooner than a
	// waiting claim would know (a plan inserted occurrences, a retryable
	// nack put one in RETRY_WAIT, a lapsed claim lease re-enqueued one, a
	// DEAD one was replayed, a schedule change canceled some).
	ChannelWork = store.NotifyWork
	// ChannelPlan: a schedule was created or changed, so planners should
	// run a pass now rather than at their next tick.
	ChannelPlan = store.NotifyPlan
)

// Notification is one notification received by Subscribe.
type Notification = store.Notification

// notify sends a notification on channel within tx (delivered at commit).
func (s *Store) notify(ctx context.Context, tx pgx.Tx, channel string) error {
	if _, err := tx.Exec(ctx, qNotify, channel, s.schema); err != nil {
		return fmt.Errorf("notify %s: %w", channel, translate(err))
	}
	return nil
}

// Reconnection backoff of a subscription whose connection dropped.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
	listenTimeout    = 5 * time.Second
)

// Subscribe listens on ChannelWork and ChannelPlan on a dedicated
// connection (not the pool's) and delivers this schema's notifications on
// the returned channel until ctx ends; the channel is then closed, after
// the connection is. The first connection is made before Subscribe
// returns (an error if it cannot be), so that nothing committed after the
// call is missed; when the connection drops later (a PostgreSQL restart,
// a network cut) it reconnects with a growing backoff, and delivers a
// Notification with an empty Channel once listening again.
//
// Notifications are hints: a receiver re-reads the store. The caller must
// keep receiving until the channel is closed.
func (s *Store) Subscribe(ctx context.Context) (<-chan Notification, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	ch := make(chan Notification, 16)
	go s.receive(ctx, conn, ch)
	return ch, nil
}

// listen opens a connection and LISTENs on both channels.
// A connect and its LISTENs are bounded by listenTimeout, so that a
// database that does not answer delays neither Subscribe nor a reconnect
// for longer.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, listenTimeout)
	defer cancel()
	cfg := s.listenCfg.Copy()
	// Named, so that operators (and tests) can tell it in pg_stat_activity.
	cfg.RuntimeParams["application_name"] = listenAppName(s.schema)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, translate(err)
	}
	for _, c := range []string{ChannelWork, ChannelPlan} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{c}.Sanitize()); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return nil, translate(err)
		}
	}
	return conn, nil
}

// receive passes notifications from conn to ch until ctx ends, replacing
// conn when it fails.
func (s *Store) receive(ctx context.Context, conn *pgx.Conn, ch chan<- Notification) {
	defer close(ch)
	closeConn := func() {
		if conn != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			conn.Close(cctx)
			cancel()
			conn = nil
		}
	}
	defer closeConn()
	send := func(n Notification) bool {
		select {
		case ch <- n:
			return true
		case <-ctx.Done():
			return false
		}
	}
	backoff := listenBackoffMin
	for {
		if conn == nil {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, listenBackoffMax)
			c, err := s.listen(ctx)
			if err != nil {
				continue
			}
			conn, backoff = c, listenBackoffMin
			if !send(Notification{}) {
				return
			}
		}
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// The connection is broken (or in an unknown state): start
			// over on a new one.
			closeConn()
			continue
		}
		if n.Payload != s.schema {
			continue
		}
		if n.Channel != ChannelWork && n.Channel != ChannelPlan {
			continue
		}
		if !send(Notification{Channel: n.Channel}) {
			return
		}
	}
}

// listenAppName is the application_name of a Subscribe connection.
func listenAppName(schema string) string { return "sched-listen/" + schema }
