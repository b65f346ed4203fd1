package sqlite

import (
	"context"
	"fmt"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// HeartbeatNode registers or renews a node's row (store.NodeStore).
func (s *Store) HeartbeatNode(ctx context.Context, p store.NodeHeartbeat) (store.Node, error) {
	args, err := rowcodec.HeartbeatArgs(p)
	if err != nil {
		return store.Node{}, err
	}
	n, err := rowcodec.ScanNode(s.w.QueryRowContext(ctx, qHeartbeatNode, args...))
	if err != nil {
		return store.Node{}, fmt.Errorf("heartbeat node %s: %w", p.NodeID, translate(err))
	}
	return *n, nil
}

// ListNodes returns every node row, by node id.
func (s *Store) ListNodes(ctx context.Context) ([]store.Node, error) {
	return readAll(ctx, s, "list nodes", rowcodec.ScanNode, qListNodes)
}

// RemoveNode deletes a node's row; a missing row is not an error.
func (s *Store) RemoveNode(ctx context.Context, nodeID string) error {
	if _, err := s.w.ExecContext(ctx, qRemoveNode, nodeID); err != nil {
		return fmt.Errorf("remove node %s: %w", nodeID, translate(err))
	}
	return nil
}
