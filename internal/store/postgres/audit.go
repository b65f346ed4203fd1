package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sched-dev/sched/internal/record"
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
	q, args := rowcodec.AuditListing(p, qListAudit, qListAuditTenant, qListAuditTarget)
	return readAll(ctx, s, "list audit", rowcodec.ScanAudit, q, args...)
}

// ListAuditTargets returns the audit rows of one action in a range of
// targets (see store.AuditStore).
func (s *Store) ListAuditTargets(ctx context.Context, p store.AuditTargetRange) ([]store.AuditEntry, error) {
	if !storable(p.TenantID, p.Action, p.From, p.To) {
		return nil, nil
	}
	return readAll(ctx, s, "list audit by target", rowcodec.ScanAudit, qListAuditTargetRange,
		p.Action, p.From, p.To, p.TenantID, store.ListLimit(p.Limit))
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

// InsertOccurrences inserts occurrences in the transaction (see
// store.ManualTx).
func (t *tx) InsertOccurrences(ctx context.Context, occs []record.Occurrence) (int, error) {
	if len(occs) == 0 {
		return 0, nil
	}
	ids, err := rowcodec.OccurrenceIDs(occs, checkStorable)
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	t.shared = true // the floor's trigger locks the queues of claimable ones
	n, err := insertOccurrences(ctx, t.tx, occs, ids)
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	return n, nil
}

// InsertOutage stores a simulated outage in the transaction unless one is
// in progress (see store.ManualTx).
func (t *tx) InsertOutage(ctx context.Context, o store.Outage) (int64, error) {
	args, err := rowcodec.OutageArgs(o)
	if err != nil {
		return 0, err
	}
	if !storable(o.CreatedBy) {
		return 0, fmt.Errorf("insert outage: created_by must be valid text without NUL")
	}
	var id int64
	err = t.tx.QueryRow(ctx, qInsertOutage, args...).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("insert outage: one is in progress: %w", store.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("insert outage: %w", translate(err))
	}
	return id, nil
}

// CancelOutages cancels, in the transaction, every simulated outage in
// progress at now (see store.ManualTx).
func (t *tx) CancelOutages(ctx context.Context, now time.Time) ([]store.Outage, error) {
	rows, err := t.tx.Query(ctx, qCancelOutages, rowcodec.MS(now))
	if err != nil {
		return nil, fmt.Errorf("cancel outages: %w", translate(err))
	}
	out, err := collect(rows, rowcodec.ScanOutage)
	if err != nil {
		return nil, fmt.Errorf("cancel outages: %w", err)
	}
	slices.SortFunc(out, func(a, b store.Outage) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
