package server

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
)

// TestCluster: /v1/cluster lists every registered node with the live
// shards it holds, and every shard with its owner and epoch.
func TestCluster(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var c api.Cluster
	h.ok(200, &c, "GET", "/v1/cluster", nil)
	if len(c.Nodes) != 0 || len(c.Shards) != 4 || c.Shards[3].Owner != "" || c.Shards[3].ExpiresAt != nil {
		t.Fatalf("before any pass: %+v; want no node and 4 unleased shards", c)
	}

	h.plan(0)
	b, err := engine.New(t.Context(), engine.Config{Store: h.st, Clock: h.clk, Shards: 4, NodeID: "node-b", NodeAddress: "tcp:127.0.0.1:7071"})
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Second)
	if _, err := b.PlanOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.ok(200, &c, "GET", "/v1/cluster", nil)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	leaseEnd := at(engine.DefaultShardLease)
	want := api.Cluster{
		NodeID: "node-a", Now: at(time.Second),
		Nodes: []api.ClusterNode{
			{NodeID: "node-a", StartedAt: start, LastHeartbeat: start, ExpiresAt: at(engine.DefaultShardLease), Live: true, ShardsOwned: 4, ClockOffset: "0s"},
			{NodeID: "node-b", Address: "tcp:127.0.0.1:7071", StartedAt: at(time.Second), LastHeartbeat: at(time.Second),
				ExpiresAt: at(time.Second + engine.DefaultShardLease), Live: true, ShardsOwned: 0, ClockOffset: "0s"},
		},
	}
	for i := range 4 {
		want.Shards = append(want.Shards, api.ShardOwner{Shard: i, Owner: "node-a", Epoch: 1, ExpiresAt: &leaseEnd, Live: true})
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("cluster:\n got %+v\nwant %+v", c, want)
	}

	// node-a stops: its shards are released and it leaves the registry.
	h.eng.Stop()
	h.ok(200, &c, "GET", "/v1/cluster", nil)
	if len(c.Nodes) != 1 || c.Nodes[0].NodeID != "node-b" || c.Shards[0].Live || c.Shards[0].Owner != "node-a" {
		t.Fatalf("after node-a stopped: %+v", c)
	}
	h.fails(400, api.CodeInvalidArgument, "", "GET", "/v1/cluster?x=1", nil)
}

// TestForgetNode: DELETE /v1/cluster/nodes/{id} removes a dead node from
// the registry at once; a live one is 409 naming it, an unknown one 404
// naming it, and a tenant's token may not.
func TestForgetNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.plan(0)
	b, err := engine.New(t.Context(), engine.Config{Store: h.st, Clock: h.clk, Shards: 4, NodeID: "node-b", NodeAddress: "tcp:127.0.0.1:7071"})
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Second)
	if _, err := b.PlanOnce(t.Context()); err != nil {
		t.Fatal(err)
	}

	e := h.fails(409, api.CodeConflict, "", "DELETE", "/v1/cluster/nodes/node-b", nil)
	if !strings.Contains(e.Message, `"node-b"`) || !strings.Contains(e.Message, "is live") {
		t.Errorf("forget a live node: %q; want a message naming it and saying it is live", e.Message)
	}
	if e := h.fails(404, api.CodeNotFound, "", "DELETE", "/v1/cluster/nodes/node-x", nil); e.Message != `no such node "node-x"` {
		t.Errorf("forget an unknown node: %q", e.Message)
	}
	h.asTenant(DefaultTenant).fails(403, api.CodeForbidden, "", "DELETE", "/v1/cluster/nodes/node-b", nil)
	h.fails(405, api.CodeBadRequest, "", "GET", "/v1/cluster/nodes/node-b", nil) // DELETE only

	// node-b dies: once its registration has expired it may go.
	h.clk.Advance(engine.DefaultShardLease)
	var n api.ClusterNode
	h.ok(200, &n, "DELETE", "/v1/cluster/nodes/node-b", nil)
	want := api.ClusterNode{NodeID: "node-b", Address: "tcp:127.0.0.1:7071", StartedAt: start.Add(time.Second), LastHeartbeat: start.Add(time.Second),
		ExpiresAt: start.Add(time.Second + engine.DefaultShardLease), ClockOffset: "0s"}
	if n != want {
		t.Errorf("forgotten node:\n got %+v\nwant %+v", n, want)
	}
	var c api.Cluster
	h.ok(200, &c, "GET", "/v1/cluster", nil)
	if len(c.Nodes) != 1 || c.Nodes[0].NodeID != "node-a" {
		t.Errorf("cluster after forget: %+v; want node-a alone", c.Nodes)
	}
	h.fails(404, api.CodeNotFound, "", "DELETE", "/v1/cluster/nodes/node-b", nil)
}
