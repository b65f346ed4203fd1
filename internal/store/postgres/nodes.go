package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/store"
)

// HeartbeatNode registers or renews a node's row (store.NodeStore).
func (s *Store) HeartbeatNode(ctx context.Context, p store.NodeHeartbeat) (store.Node, error) {
	if err := p.Check(); err != nil {
		return store.Node{}, err
	}
	if !storable(p.NodeID, p.Address) {
		return store.Node{}, fmt.Errorf("heartbeat node: node id and address must be valid text without NUL")
	}
	n, err := scanNode(s.pool.QueryRow(ctx, qHeartbeatNode, p.NodeID, p.Address, ms(p.Now), ms(p.Now.Add(p.TTL)), durMS(p.ClockOffset)))
	if err != nil {
		return store.Node{}, fmt.Errorf("heartbeat node %s: %w", p.NodeID, translate(err))
	}
	return *n, nil
}

// ListNodes returns every node row, by node id.
func (s *Store) ListNodes(ctx context.Context) ([]store.Node, error) {
	rows, err := s.pool.Query(ctx, qListNodes)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", translate(err))
	}
	out, err := collect(rows, scanNode)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return out, nil
}

// RemoveNode deletes a node's row; a missing row is not an error.
func (s *Store) RemoveNode(ctx context.Context, nodeID string) error {
	if !storable(nodeID) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, qRemoveNode, nodeID); err != nil {
		return fmt.Errorf("remove node %s: %w", nodeID, translate(err))
	}
	return nil
}

func scanNode(row pgx.Row) (*store.Node, error) {
	var (
		n                          store.Node
		started, last, exp, offset int64
	)
	if err := row.Scan(&n.NodeID, &n.Address, &started, &last, &exp, &offset); err != nil {
		return nil, err
	}
	n.StartedAt, n.LastHeartbeat, n.ExpiresAt, n.ClockOffset = fromMS(started), fromMS(last), fromMS(exp), fromDurMS(offset)
	return &n, nil
}
