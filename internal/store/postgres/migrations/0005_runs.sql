-- 0005_runs: leased runs (docs/engine.md, "Leased runs"), as in the SQLite
-- store's 0005_runs.sql. A claim leases a range of a lane with one row of
-- runs, acks are ranges of it in run_acks, and the fold writes the
-- occurrence rows afterwards. A lane's position is (available_at, seq),
-- the order of occurrences_claim.
--
-- What SQLite gets from its one writer, this schema gets from a lock per
-- queue (a tenant's queue: its three lanes), a transaction-scoped advisory
-- lock on lane_lock_key(schema, tenant, queue):
--
--   * a claim holds it exclusively from before it reads the lane's head
--     until it commits (tx_runs.go, LaneHead): claims of a queue, on any
--     node, run one at a time;
--   * every write that makes a row claimable holds it shared from before
--     it reads the head (the triggers below) until it commits.
--
-- So a write that makes a row claimable either commits before a claim
-- takes the lock, and the claim's read of its candidates (a statement
-- after the lock, with a snapshot of its own under READ COMMITTED) sees
-- the row; or it reads the head after the claim committed, and puts the
-- row after it. No row lands inside a run's range after its claim read
-- the lane (Invariant 1), and the claim needs no row lock on what it
-- leases (Invariant 2: tx_runs.go says why nothing is delivered twice).
-- The lock is the queue's, not the lane's: a claim takes its three lanes
-- in one transaction, and one lock per claim cannot be taken in two
-- orders by two claims, nor in another order than a writer's.

-- The head of each lane: every claimable row at or before it is held by
-- an unfolded run. Every lane that ever had a claimable row has a row
-- here (the triggers below add it, at the start of the lane), so that a
-- read of the lanes' first ready rows (the snapshot's oldest ready, the
-- next available) can walk this table. Moved only forward, by the claim
-- that stores a run.
CREATE TABLE lane_heads (
    tenant_id TEXT COLLATE "C" NOT NULL,
    queue     TEXT COLLATE "C" NOT NULL,
    lane      TEXT   NOT NULL,
    head_at   BIGINT NOT NULL,
    head_seq  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, queue, lane)
);

-- Runs not yet folded. [first, last] is a closed range of positions of
-- the lane; n counts the rows it holds, acked how many ack ranges cover.
CREATE TABLE runs (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id        TEXT COLLATE "C" NOT NULL,
    queue            TEXT COLLATE "C" NOT NULL,
    lane             TEXT   NOT NULL,
    first_at         BIGINT NOT NULL,
    first_seq        BIGINT NOT NULL,
    last_at          BIGINT NOT NULL,
    last_seq         BIGINT NOT NULL,
    n                BIGINT NOT NULL CHECK (n >= 1),
    acked            BIGINT NOT NULL DEFAULT 0 CHECK (acked >= 0 AND acked <= n),
    worker_id        TEXT   NOT NULL,
    claimed_at       BIGINT NOT NULL,
    lease_expires_at BIGINT NOT NULL
);

-- The run holding a position: the first of the lane's runs whose last is
-- at or after it (runs of a lane never overlap). Also a tenant's runs.
CREATE INDEX runs_lane ON runs (tenant_id, queue, lane, last_at, last_seq);
-- The sweep's expired runs.
CREATE INDEX runs_lease ON runs (lease_expires_at);

-- Ack ranges of the runs: the run's rows in [first, last], n of them,
-- acked at acked_at. Deleted with their run by the fold.
CREATE TABLE run_acks (
    run_id    BIGINT NOT NULL,
    first_at  BIGINT NOT NULL,
    first_seq BIGINT NOT NULL,
    last_at   BIGINT NOT NULL,
    last_seq  BIGINT NOT NULL,
    n         BIGINT NOT NULL CHECK (n >= 1),
    acked_at  BIGINT NOT NULL,
    PRIMARY KEY (run_id, first_at, first_seq)
);

-- The key of a queue's lock (above). The separators are not escaped: two
-- queues whose names collide so (or whose hashes do) share a lock, which
-- only makes one wait for the other. The prefix keeps the keys apart from
-- the overlap and running keys (queries.go, queries_fair.go).
CREATE FUNCTION lane_lock_key(schema_name TEXT, tenant_id TEXT, queue TEXT) RETURNS BIGINT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN hashtextextended('sched/lane/' || schema_name || '/' || tenant_id || '/' || queue, 0);

-- The floor of inserted rows, once per statement (a planner's batch is
-- thousands of rows: a trigger per row cost a tenth of its insert). One
-- read of the transition table gives the lanes of the claimable rows the
-- statement inserted with each lane's earliest available_at; then their
-- queues are locked shared, in order; their lanes' rows of lane_heads are
-- added (at the start of the lane) where missing; and only when a lane's
-- earliest row is at or before its head are the rows at or before it
-- moved to just after it. Each statement here runs after the locks with a
-- snapshot of its own (a volatile function's statements do), so it reads
-- the head of a claim that committed while this one waited. The rows
-- moved are found from the transition table and lane_heads alone and
-- written by key, so that no plan can read occurrences whole. Only a row
-- already due moves (at or before a head, which is never after a claim's
-- now), so nothing becomes claimable later than it would have.
CREATE FUNCTION occurrences_floor_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tenants TEXT[];
    queues  TEXT[];
    lanes   TEXT[];
    earliest BIGINT[];
    ids     TEXT[];
    ats     BIGINT[];
BEGIN
    SELECT array_agg(l.tenant_id), array_agg(l.queue), array_agg(l.lane), array_agg(l.lo)
    INTO tenants, queues, lanes, earliest
    FROM (SELECT tenant_id, queue, lane, min(available_at) AS lo FROM new_rows
          WHERE state IN ('ENQUEUED', 'RETRY_WAIT') GROUP BY tenant_id, queue, lane) AS l;
    IF tenants IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(lane_lock_key(TG_TABLE_SCHEMA, q.tenant_id, q.queue))
    FROM (SELECT DISTINCT u.tenant_id, u.queue FROM unnest(tenants, queues) AS u(tenant_id, queue)
          ORDER BY u.tenant_id, u.queue) AS q;
    INSERT INTO lane_heads (tenant_id, queue, lane, head_at, head_seq)
    SELECT u.tenant_id, u.queue, u.lane, -9223372036854775808, -9223372036854775808
    FROM unnest(tenants, queues, lanes) AS u(tenant_id, queue, lane)
    ON CONFLICT (tenant_id, queue, lane) DO NOTHING;
    IF NOT EXISTS (SELECT 1 FROM unnest(tenants, queues, lanes, earliest) AS u(tenant_id, queue, lane, lo)
                   JOIN lane_heads h ON h.tenant_id = u.tenant_id AND h.queue = u.queue AND h.lane = u.lane
                   WHERE u.lo <= h.head_at) THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(n.occurrence_id), array_agg(h.head_at + 1) INTO ids, ats
    FROM new_rows n
    JOIN lane_heads h ON h.tenant_id = n.tenant_id AND h.queue = n.queue AND h.lane = n.lane
    WHERE n.state IN ('ENQUEUED', 'RETRY_WAIT') AND n.available_at <= h.head_at;
    IF ids IS NOT NULL THEN
        UPDATE occurrences o SET available_at = m.at
        FROM unnest(ids, ats) AS m(id, at)
        WHERE o.occurrence_id = m.id;
    END IF;
    RETURN NULL;
END
$$;

-- Statement-level, with the rows inserted as a transition table: COPY and
-- INSERT ... ON CONFLICT DO NOTHING included (a row the key turned away is
-- not in it).
CREATE TRIGGER occurrences_floor_insert AFTER INSERT ON occurrences
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION occurrences_floor_inserted();

-- The floor of an updated row, at the end of its statement (an AFTER row
-- trigger: a BEFORE one would lock every row an UPDATE of occurrences
-- writes, an ack's too, before its WHEN is read). Only a row an UPDATE
-- that sets its state or available_at leaves claimable gets here (the
-- column list and the WHEN are read for each row without calling the
-- function): the statements that make a row claimable again (a retry, an
-- expiry, a replay, a restore, a claim's requeue). A claim, an ack or a
-- fold leaves its rows RUNNING or finished, and costs nothing here. The
-- move is a second write of the row, which comes here again and finds it
-- after the head.
CREATE FUNCTION occurrences_floor_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(lane_lock_key(TG_TABLE_SCHEMA, NEW.tenant_id, NEW.queue));
    SELECT head_at INTO head FROM lane_heads
    WHERE tenant_id = NEW.tenant_id AND queue = NEW.queue AND lane = NEW.lane;
    IF NOT FOUND THEN
        INSERT INTO lane_heads (tenant_id, queue, lane, head_at, head_seq)
        VALUES (NEW.tenant_id, NEW.queue, NEW.lane, -9223372036854775808, -9223372036854775808)
        ON CONFLICT (tenant_id, queue, lane) DO NOTHING;
    ELSIF NEW.available_at <= head THEN
        UPDATE occurrences SET available_at = head + 1
        WHERE occurrence_id = NEW.occurrence_id AND state IN ('ENQUEUED', 'RETRY_WAIT') AND available_at <= head;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER occurrences_floor_update AFTER UPDATE OF state, available_at ON occurrences
    FOR EACH ROW
    WHEN (NEW.state IN ('ENQUEUED', 'RETRY_WAIT'))
    EXECUTE FUNCTION occurrences_floor_updated();

-- The lanes claimable rows are in already.
INSERT INTO lane_heads (tenant_id, queue, lane, head_at, head_seq)
SELECT DISTINCT tenant_id, queue, lane, -9223372036854775808, -9223372036854775808
FROM occurrences WHERE state IN ('ENQUEUED', 'RETRY_WAIT');
