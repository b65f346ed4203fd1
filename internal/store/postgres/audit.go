package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
)

// The audit log (store.AuditStore, store.AuditTx).

// AppendAudit stores an audit row in the transaction (see store.AuditTx).
func (t *tx) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	if !storable(e.TenantID, e.ActorTenant, e.ActorToken, e.Action, e.Target, e.Detail) {
		return fmt.Errorf("append audit %s: a field is not valid text", e.Action)
	}
	if _, err := t.tx.Exec(ctx, qAppendAudit, rowcodec.AuditArgs(&e)...); err != nil {
		return fmt.Errorf("append audit %s of %q: %w", e.Action, e.Target, translate(err))
	}
	return nil
}

// ListAudit returns the audit rows p selects (see store.AuditStore).
func (s *Store) ListAudit(ctx context.Context, p store.ListAuditParams) ([]store.AuditEntry, error) {
	if !storable(p.TenantID, p.Target) {
		return nil, nil
	}
	return readAll(ctx, s, "list audit", rowcodec.ScanAudit, qListAudit,
		p.TenantID, p.Target, ms(p.Since), p.AfterID, store.ListLimit(p.Limit))
}

// PurgeAudit deletes at most limit audit rows older than before (see
// store.AuditStore).
func (s *Store) PurgeAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, qPurgeAudit, ms(before), limit)
	if err != nil {
		return 0, fmt.Errorf("purge audit: %w", translate(err))
	}
	return int(tag.RowsAffected()), nil
}
