package sqlite

import (
	"context"
	"fmt"
	"slices"

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

// RemoveDeadNodes deletes the rows of the nodes dead at p.Now and returns
// their ids, in order (store.NodeStore).
func (s *Store) RemoveDeadNodes(ctx context.Context, p store.RemoveDeadNodesParams) ([]string, error) {
	args, err := rowcodec.RemoveDeadNodesArgs(p)
	if err != nil {
		return nil, err
	}
	rows, err := s.w.QueryContext(ctx, qRemoveDeadNodes, args...)
	if err != nil {
		return nil, fmt.Errorf("remove dead nodes: %w", translate(err))
	}
	ids, err := collect(rows, rowcodec.ScanNodeID)
	if err != nil {
		return nil, fmt.Errorf("remove dead nodes: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}
