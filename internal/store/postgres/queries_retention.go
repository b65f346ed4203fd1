package postgres

// Retention of finished history (store.RetentionStore). One statement
// deletes a batch: the tenant's oldest finished rows by the partial index
// occurrences_history (its WHERE repeated: NOT open AND state <> 'DEAD'),
// locked with SKIP LOCKED so that two nodes purging at once take
// different rows and neither waits (a locked row's WHERE is checked again
// on its newest version), then their attempts, then the rows themselves
// by their ctid (a TID scan: the lock keeps each row where it is, and a
// lookup by occurrence_id cost three times as much). The foreign key from
// attempts is checked at the statement's end, when both deletes are done;
// that check, one probe of attempts per row, is most of a batch's time.
// Nothing changes a finished row but a DEAD one's replay or purge, and
// DEAD rows are not in the batch.
const (
	qPurgeHistory = `WITH batch AS (
    SELECT ctid, occurrence_id FROM occurrences
    WHERE tenant_id = $1 AND scheduled_for < $2 AND NOT open AND state <> 'DEAD'
    ORDER BY tenant_id, scheduled_for LIMIT $3
    FOR UPDATE SKIP LOCKED
), gone_attempts AS (
    DELETE FROM attempts WHERE occurrence_id IN (SELECT occurrence_id FROM batch)
)
DELETE FROM occurrences WHERE ctid = ANY (ARRAY(SELECT ctid FROM batch))`

	// Only forward: the larger of the stored horizon and $2.
	qSetHistoryHorizon = `INSERT INTO history_horizons (tenant_id, horizon) VALUES ($1, $2)
ON CONFLICT (tenant_id) DO UPDATE SET horizon = GREATEST(history_horizons.horizon, excluded.horizon)
RETURNING horizon`
	qHistoryHorizons = `SELECT tenant_id, horizon FROM history_horizons`

	// Every tenant with a schedule: a walk of the UNIQUE (tenant_id,
	// schedule_id) index.
	qScheduleTenants = `SELECT DISTINCT tenant_id FROM schedules ORDER BY tenant_id`
)
