package client

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// ForgetNode removes the node nodeID from the daemon's node registry at
// once (admins only; DELETE /v1/cluster/nodes/{id}), for a node gone for
// good that the operator does not want to wait for the live nodes to
// remove. A node that may still be running (its registration or one of
// its shard leases live) is refused (IsConflict), an unknown one is not
// found (IsNotFound). The answer is the node as it was.
func (c *Client) ForgetNode(ctx context.Context, nodeID string) (*api.ClusterNode, error) {
	return call[api.ClusterNode](ctx, c, request{method: http.MethodDelete, path: path("cluster", "nodes", nodeID)})
}
