-- 0005_runs: leased runs (docs/engine.md, "Leased runs"). A claim leases a
-- range of a lane with one row of runs, acks are ranges of it in run_acks,
-- and the fold writes the occurrence rows afterwards. A lane's position is
-- (available_at, rowid), the order of occurrences_claim.

-- The head of each lane: every claimable row at or before it is held by
-- an unfolded run. Every lane that ever had a claimable row has a row
-- here (the triggers below add it, at the start of the lane), so that a
-- read of the lanes' first ready rows (the snapshot's oldest ready, the
-- next available) can walk this table. Moved only forward, by the claim
-- that stores a run.
CREATE TABLE lane_heads (
    tenant_id TEXT    NOT NULL,
    queue     TEXT    NOT NULL,
    lane      TEXT    NOT NULL,
    head_at   INTEGER NOT NULL,
    head_row  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, queue, lane)
) STRICT, WITHOUT ROWID;

-- Runs not yet folded. [first, last] is a closed range of positions of
-- the lane; n counts the rows it holds, acked how many ack ranges cover.
-- An id is never given twice (AUTOINCREMENT): a node remembers the runs
-- it handed out by id, and a folded run's id must not come back as
-- another's.
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id        TEXT    NOT NULL,
    queue            TEXT    NOT NULL,
    lane             TEXT    NOT NULL,
    first_at         INTEGER NOT NULL,
    first_row        INTEGER NOT NULL,
    last_at          INTEGER NOT NULL,
    last_row         INTEGER NOT NULL,
    n                INTEGER NOT NULL CHECK (n >= 1),
    acked            INTEGER NOT NULL DEFAULT 0 CHECK (acked >= 0 AND acked <= n),
    worker_id        TEXT    NOT NULL,
    claimed_at       INTEGER NOT NULL,
    lease_expires_at INTEGER NOT NULL
) STRICT;

-- The run holding a position: the first of the lane's runs whose last is
-- at or after it (runs of a lane never overlap). Also a tenant's runs.
CREATE INDEX runs_lane ON runs (tenant_id, queue, lane, last_at, last_row);
-- The sweep's expired runs.
CREATE INDEX runs_lease ON runs (lease_expires_at);

-- Ack ranges of the runs: the run's rows in [first, last], n of them,
-- acked at acked_at. Deleted with their run by the fold.
CREATE TABLE run_acks (
    run_id    INTEGER NOT NULL,
    first_at  INTEGER NOT NULL,
    first_row INTEGER NOT NULL,
    last_at   INTEGER NOT NULL,
    last_row  INTEGER NOT NULL,
    n         INTEGER NOT NULL CHECK (n >= 1),
    acked_at  INTEGER NOT NULL,
    PRIMARY KEY (run_id, first_at, first_row)
) STRICT, WITHOUT ROWID;

-- The floor: a row that becomes claimable is written after its lane's
-- head, whatever statement writes it, so that no row lands inside a run's
-- range (a row there would count as leased). Only a row already due moves
-- (available_at at or before the head, which is never after a claim's
-- now), so nothing becomes claimable later than it would have. The
-- trigger's own UPDATE does not fire it again (recursive triggers are
-- off), and it no longer matches anyway.
CREATE TRIGGER occurrences_floor_insert AFTER INSERT ON occurrences
WHEN NEW.state IN ('ENQUEUED', 'RETRY_WAIT')
    AND NEW.available_at <= (SELECT head_at FROM lane_heads h
        WHERE h.tenant_id = NEW.tenant_id AND h.queue = NEW.queue AND h.lane = NEW.lane)
BEGIN
    UPDATE occurrences SET available_at = (SELECT head_at + 1 FROM lane_heads h
        WHERE h.tenant_id = NEW.tenant_id AND h.queue = NEW.queue AND h.lane = NEW.lane)
    WHERE rowid = NEW.rowid;
END;

CREATE TRIGGER occurrences_floor_update AFTER UPDATE OF state, available_at ON occurrences
WHEN NEW.state IN ('ENQUEUED', 'RETRY_WAIT')
    AND NEW.available_at <= (SELECT head_at FROM lane_heads h
        WHERE h.tenant_id = NEW.tenant_id AND h.queue = NEW.queue AND h.lane = NEW.lane)
BEGIN
    UPDATE occurrences SET available_at = (SELECT head_at + 1 FROM lane_heads h
        WHERE h.tenant_id = NEW.tenant_id AND h.queue = NEW.queue AND h.lane = NEW.lane)
    WHERE rowid = NEW.rowid;
END;

-- Every lane with a claimable row has a head row, from its first one on.
CREATE TRIGGER occurrences_lane_insert AFTER INSERT ON occurrences
WHEN NEW.state IN ('ENQUEUED', 'RETRY_WAIT')
    AND NOT EXISTS (SELECT 1 FROM lane_heads h
        WHERE h.tenant_id = NEW.tenant_id AND h.queue = NEW.queue AND h.lane = NEW.lane)
BEGIN
    INSERT INTO lane_heads (tenant_id, queue, lane, head_at, head_row)
    VALUES (NEW.tenant_id, NEW.queue, NEW.lane, -9223372036854775808, -9223372036854775808);
END;

CREATE TRIGGER occurrences_lane_update AFTER UPDATE OF state ON occurrences
WHEN NEW.state IN ('ENQUEUED', 'RETRY_WAIT')
    AND NOT EXISTS (SELECT 1 FROM lane_heads h
        WHERE h.tenant_id = NEW.tenant_id AND h.queue = NEW.queue AND h.lane = NEW.lane)
BEGIN
    INSERT INTO lane_heads (tenant_id, queue, lane, head_at, head_row)
    VALUES (NEW.tenant_id, NEW.queue, NEW.lane, -9223372036854775808, -9223372036854775808);
END;

-- The lanes claimable rows are in already.
INSERT OR IGNORE INTO lane_heads (tenant_id, queue, lane, head_at, head_row)
SELECT DISTINCT tenant_id, queue, lane, -9223372036854775808, -9223372036854775808
FROM occurrences INDEXED BY occurrences_claim WHERE state IN ('ENQUEUED', 'RETRY_WAIT');
