-- 0003_occurrences_scheduled: a tenant's SCHEDULED occurrences, for a
-- tenant's snapshot (store.Snapshot with a tenant; queries.go): with
-- occurrences_claim, occurrences_running and occurrences_dead it finds
-- every open and DEAD occurrence of one tenant by index, reading none of
-- another's. The engine never writes SCHEDULED (it is kept for external
-- targets), so no hot path ever writes this index.
CREATE INDEX occurrences_scheduled ON occurrences (tenant_id)
    WHERE state = 'SCHEDULED';
