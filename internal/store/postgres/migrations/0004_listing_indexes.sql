-- 0004_listing_indexes: a tenant's occurrences and a target's audit rows
-- in their listings' orders, as in the SQLite store's
-- 0004_listing_indexes.sql.
--
-- occurrences_tenant_time: a page of a tenant's occurrences without a
-- schedule (GET /v1/occurrences), either way and from any position, is a
-- walk of this index from the page's key that stops at the page's end,
-- where it was a scan of the whole table and a top-N sort. Its columns
-- never change once a row is written. It costs one entry per occurrence
-- inserted (the planner's materialization, a trigger), and one per update
-- that is not HOT: a change of state (a claim, an ack, a nack, an expiry)
-- changes a column of the partial indexes' predicates, so such an update
-- already writes an entry in every index of the table, this one included.
-- Vacuum removes the dead entries with the others.
CREATE INDEX occurrences_tenant_time ON occurrences (tenant_id, scheduled_for, occurrence_id);

-- audit_log_target in id order: a page of one target's rows (a
-- schedule's history, GET /v1/audit?schedule=) is a walk from the page's
-- key, where (target) alone had every row of the target read and sorted.
-- The audit log is written only by changes of the control plane.
DROP INDEX audit_log_target;
CREATE INDEX audit_log_target ON audit_log (target, audit_id);
