package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
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

	// A dead node's row goes once its heartbeat is older than the bound,
	// its registration has expired and it holds no live lease; a node
	// that may still hold one stays, however old its heartbeat.
	t.Run("RemoveDeadNodes", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		now := at(time.Hour)
		bound := now.Add(-30 * time.Second) // heartbeats before it are old enough
		nodes := []struct {
			id    string
			beat  time.Duration // its last heartbeat, before now
			ttl   time.Duration
			shard int           // a lease it took at its heartbeat, when lease > 0
			lease time.Duration // that lease's length
			dead  bool          // removed at now (else the comment says why not)
		}{
			{id: "fresh", beat: time.Second, ttl: 10 * time.Second},                                                       // live
			{id: "expired-lately", beat: 15 * time.Second, ttl: 10 * time.Second},                                         // heartbeat within the bound
			{id: "at-the-bound", beat: 30 * time.Second, ttl: 10 * time.Second},                                           // at the bound, not before it
			{id: "long-registration", beat: time.Minute, ttl: 2 * time.Minute},                                            // registration still live
			{id: "dead-live-lease", beat: time.Minute, ttl: 10 * time.Second, shard: 3, lease: time.Minute + time.Second}, // holds a live lease
			{id: "dead", beat: time.Minute, ttl: 10 * time.Second, dead: true},
			{id: "dead-expired-at-now", beat: 40 * time.Second, ttl: 40 * time.Second, dead: true},
			{id: "dead-lease-ends-now", beat: time.Minute, ttl: 10 * time.Second, shard: 2, lease: time.Minute, dead: true},
			{id: "dead-old-lease", beat: time.Minute, ttl: 10 * time.Second, shard: 1, lease: 10 * time.Second, dead: true},
		}
		var dead, kept []string
		for _, n := range nodes {
			beat := now.Add(-n.beat)
			if _, err := s.HeartbeatNode(ctx, store.NodeHeartbeat{NodeID: n.id, TTL: n.ttl, Now: beat}); err != nil {
				t.Fatalf("HeartbeatNode %s: %v", n.id, err)
			}
			if n.lease > 0 {
				if _, err := engine.AcquireShard(ctx, s, store.AcquireShardParams{Shard: n.shard, Owner: n.id, TTL: n.lease, Now: beat}); err != nil {
					t.Fatalf("AcquireShard %d for %s: %v", n.shard, n.id, err)
				}
			}
			if n.dead {
				dead = append(dead, n.id)
			} else {
				kept = append(kept, n.id)
			}
		}
		slices.Sort(dead)
		slices.Sort(kept)
		remove := func(p store.RemoveDeadNodesParams) []string {
			t.Helper()
			got, err := s.RemoveDeadNodes(ctx, p)
			if err != nil {
				t.Fatalf("RemoveDeadNodes(%+v): %v", p, err)
			}
			return got
		}

		// One node alone: only that one, and only when it is dead.
		for _, id := range append([]string{"no-such-node"}, kept...) {
			if got := remove(store.RemoveDeadNodesParams{NodeID: id, HeartbeatBefore: bound, Now: now}); len(got) != 0 {
				t.Errorf("RemoveDeadNodes of %s removed %v; want none", id, got)
			}
		}
		if got := remove(store.RemoveDeadNodesParams{NodeID: dead[0], HeartbeatBefore: bound, Now: now}); !slices.Equal(got, dead[:1]) {
			t.Errorf("RemoveDeadNodes of %s removed %v; want it alone", dead[0], got)
		}
		// Every node: the other dead ones, in order, then none.
		if got := remove(store.RemoveDeadNodesParams{HeartbeatBefore: bound, Now: now}); !slices.Equal(got, dead[1:]) {
			t.Errorf("RemoveDeadNodes removed %v; want %v", got, dead[1:])
		}
		if got := remove(store.RemoveDeadNodesParams{HeartbeatBefore: bound, Now: now}); len(got) != 0 {
			t.Errorf("RemoveDeadNodes again removed %v; want none", got)
		}
		ns, err := s.ListNodes(ctx)
		if err != nil {
			t.Fatalf("ListNodes: %v", err)
		}
		var left []string
		for _, n := range ns {
			left = append(left, n.NodeID)
		}
		if !slices.Equal(left, kept) {
			t.Errorf("nodes left %v; want %v", left, kept)
		}
		// Once its lease has run out, the node that held it goes too.
		if got := remove(store.RemoveDeadNodesParams{HeartbeatBefore: bound, Now: now.Add(time.Second)}); !slices.Equal(got, []string{"dead-live-lease"}) {
			t.Errorf("RemoveDeadNodes after the lease ended removed %v; want dead-live-lease", got)
		}
		for _, p := range []store.RemoveDeadNodesParams{
			{HeartbeatBefore: bound},
			{Now: now},
			{HeartbeatBefore: now.Add(time.Second), Now: now},
		} {
			if _, err := s.RemoveDeadNodes(ctx, p); err == nil {
				t.Errorf("RemoveDeadNodes(%+v): no error", p)
			}
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
