package storetest

import (
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store"
)

// testNodes pins node registration (store.NodeStore).
func testNodes(t *testing.T, open func(t *testing.T) Store) {
	t.Run("HeartbeatListRemove", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		if ns, err := s.ListNodes(ctx); err != nil || len(ns) != 0 {
			t.Fatalf("ListNodes on an empty store: %v, %v; want none", ns, err)
		}
		hb := store.NodeHeartbeat{NodeID: "node-b", Address: "unix:/tmp/b.sock", TTL: 10 * time.Second, Now: at(0), ClockOffset: -1500 * time.Millisecond}
		got, err := s.HeartbeatNode(ctx, hb)
		if err != nil {
			t.Fatalf("HeartbeatNode: %v", err)
		}
		want := store.Node{NodeID: "node-b", Address: "unix:/tmp/b.sock", StartedAt: at(0), LastHeartbeat: at(0), ExpiresAt: at(10 * time.Second), ClockOffset: -1500 * time.Millisecond}
		if got != want {
			t.Errorf("first heartbeat:\n got %+v\nwant %+v", got, want)
		}
		// A renewal keeps started_at and moves the rest.
		hb.Now, hb.Address, hb.ClockOffset = at(3*time.Second), "tcp:127.0.0.1:7070", 2*time.Millisecond
		got, err = s.HeartbeatNode(ctx, hb)
		if err != nil {
			t.Fatalf("HeartbeatNode again: %v", err)
		}
		want = store.Node{NodeID: "node-b", Address: "tcp:127.0.0.1:7070", StartedAt: at(0), LastHeartbeat: at(3 * time.Second), ExpiresAt: at(13 * time.Second), ClockOffset: 2 * time.Millisecond}
		if got != want {
			t.Errorf("renewal:\n got %+v\nwant %+v", got, want)
		}
		if _, err := s.HeartbeatNode(ctx, store.NodeHeartbeat{NodeID: "node-a", TTL: time.Second, Now: at(time.Minute)}); err != nil {
			t.Fatalf("HeartbeatNode node-a: %v", err)
		}
		ns, err := s.ListNodes(ctx)
		if err != nil {
			t.Fatalf("ListNodes: %v", err)
		}
		if len(ns) != 2 || ns[0].NodeID != "node-a" || ns[1] != want {
			t.Errorf("ListNodes = %+v; want node-a then %+v", ns, want)
		}
		if err := s.RemoveNode(ctx, "node-a"); err != nil {
			t.Fatalf("RemoveNode: %v", err)
		}
		if err := s.RemoveNode(ctx, "node-a"); err != nil {
			t.Errorf("RemoveNode twice: %v", err)
		}
		if err := s.RemoveNode(ctx, "no-such-node"); err != nil {
			t.Errorf("RemoveNode of an unknown node: %v", err)
		}
		ns, err = s.ListNodes(ctx)
		if err != nil || len(ns) != 1 || ns[0].NodeID != "node-b" {
			t.Errorf("ListNodes after remove = %+v, %v; want node-b alone", ns, err)
		}
		// A removed node that heartbeats again starts afresh.
		got, err = s.HeartbeatNode(ctx, store.NodeHeartbeat{NodeID: "node-a", TTL: time.Second, Now: at(2 * time.Minute)})
		if err != nil || !got.StartedAt.Equal(at(2*time.Minute)) {
			t.Errorf("heartbeat after remove = %+v, %v; want started_at %v", got, err, at(2*time.Minute))
		}
	})

	t.Run("BadHeartbeat", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		for _, hb := range []store.NodeHeartbeat{
			{NodeID: "", TTL: time.Second, Now: at(0)},
			{NodeID: "node-a", TTL: 0, Now: at(0)},
		} {
			if _, err := s.HeartbeatNode(ctx, hb); err == nil {
				t.Errorf("HeartbeatNode(%+v): no error", hb)
			}
		}
		if ns, err := s.ListNodes(ctx); err != nil || len(ns) != 0 {
			t.Errorf("ListNodes after refused heartbeats: %v, %v; want none", ns, err)
		}
	})
}
