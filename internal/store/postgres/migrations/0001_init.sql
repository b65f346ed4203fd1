-- 0001_init: the three records (schedules, occurrences, attempts), shard leases, and the indexes the
-- planner and the queue need: the same tables, columns and constraints as
-- the SQLite store's 0001_init.sql, translated to PostgreSQL, so that the
-- two drivers behave identically.
--
-- This file is edited in place until the first release: nothing has been
-- released, so no installed database exists to migrate. From the first
-- release on it is frozen, and a schema change is a new numbered file.
--
-- It runs in the schema the store was opened on (the connection's
-- search_path), under a transaction-scoped advisory lock (migrate.go).
--
-- Translation notes:
--   * Every instant is a BIGINT of UTC unix milliseconds and every duration a
--     BIGINT of milliseconds (_ms), exactly as in SQLite, not timestamptz:
--     one encoding for both drivers, compared and indexed as numbers (see
--     package store). Every integer is BIGINT, as SQLite's INTEGER is.
--   * Text that is compared or ordered (ids, names, queues, keys) is
--     COLLATE "C": byte order, as SQLite's BINARY, whatever the database's
--     default collation is. ListSchedules pages by schedule_id > after.
--   * A worker's error is BYTEA, not TEXT: it must come back byte for byte,
--     and PostgreSQL text holds neither NUL nor invalid UTF-8. Every other
--     text column holds text the engine has validated.
--   * open is a generated column (SQLite keeps it by hand, under a CHECK).
--   * occurrences.seq stands in for SQLite's rowid: insertion order, the
--     tie-break of claims among occurrences available at the same instant.
--
-- Correctness rests on the UNIQUE keys and on conditional UPDATEs under READ
-- COMMITTED, never on isolation levels, so they hold whatever isolation level a
-- connection runs at.
--
-- Indexes are few on purpose: every index is written on the hot paths. The
-- queue's indexes are partial, so the history (SUCCEEDED, MISSED, CANCELED,
-- ...) costs no index space beyond the keys. A query meant to use a partial
-- index repeats the index's WHERE term (queries.go), so that the planner can
-- prove the index applies.

-- The future. schedule_id is globally unique (occurrence ids hash it without
-- the tenant); UNIQUE (tenant_id, schedule_id) serves a tenant's lookups and
-- its listing in id order.
CREATE TABLE schedules (
    schedule_id        TEXT COLLATE "C" NOT NULL PRIMARY KEY CHECK (schedule_id <> ''),
    tenant_id          TEXT COLLATE "C" NOT NULL CHECK (tenant_id <> ''),
    shard              BIGINT  NOT NULL CHECK (shard >= 0),
    name               TEXT COLLATE "C" NOT NULL CHECK (name <> ''),
    kind               TEXT    NOT NULL CHECK (kind IN ('cron', 'at', 'every')),
    expr               TEXT    NOT NULL,
    time_zone          TEXT    NOT NULL,
    anchor             BIGINT,
    dst_gap            TEXT    NOT NULL CHECK (dst_gap IN ('skip', 'shift')),
    dst_repeat         TEXT    NOT NULL CHECK (dst_repeat IN ('first', 'last', 'all')),
    version            BIGINT  NOT NULL CHECK (version >= 1),
    state              TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'CANCELED', 'COMPLETED')),
    next_run_at        BIGINT,
    queue              TEXT COLLATE "C" NOT NULL CHECK (queue <> ''),
    payload            BYTEA   NOT NULL CHECK (octet_length(payload) <= 262144),
    misfire_policy     TEXT    NOT NULL CHECK (misfire_policy IN ('skip', 'fire_once', 'catch_up')),
    max_lateness_ms    BIGINT  NOT NULL CHECK (max_lateness_ms >= 0),
    catch_up_k         BIGINT  NOT NULL CHECK (catch_up_k BETWEEN 0 AND 1000),
    overlap_policy     TEXT    NOT NULL CHECK (overlap_policy IN ('allow', 'skip_if_running', 'queue_one')),
    flexible_window_ms BIGINT  NOT NULL CHECK (flexible_window_ms >= 0),
    retry_max_attempts BIGINT  NOT NULL CHECK (retry_max_attempts >= 1),
    retry_base_ms      BIGINT  NOT NULL CHECK (retry_base_ms >= 0),
    retry_cap_ms       BIGINT  NOT NULL CHECK (retry_cap_ms >= 0),
    retry_deadline_ms  BIGINT  NOT NULL CHECK (retry_deadline_ms >= 0),
    idempotency_key    TEXT COLLATE "C",
    -- Firings the planner found too late and only counted, without a row
    -- (a recovery writes a bounded number of MISSED rows and counts the
    -- rest here).
    missed_count       BIGINT  NOT NULL DEFAULT 0 CHECK (missed_count >= 0),
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT  NOT NULL,
    UNIQUE (tenant_id, schedule_id),
    CHECK (misfire_policy <> 'catch_up' OR catch_up_k >= 1)
);

-- Idempotent create: one schedule per (tenant, caller's key).
CREATE UNIQUE INDEX schedules_idempotency_key
    ON schedules (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- A live name is unique per tenant; canceled schedules keep their name as
-- history, so a name can be used again once its schedule is canceled.
CREATE UNIQUE INDEX schedules_name
    ON schedules (tenant_id, name) WHERE state <> 'CANCELED';

-- The planner: a shard's active schedules due within the horizon, earliest
-- cursor first, ties by id (DueSchedules reads it in index order).
CREATE INDEX schedules_due
    ON schedules (shard, next_run_at, schedule_id) WHERE state = 'ACTIVE';

-- One scheduled time. occurrence_id is derived from the UNIQUE natural key
-- (store.OccurrenceID; store.ManualOccurrenceID for a manual one), so a
-- second insert of the same firing is a no-op. The natural key is declared
-- as (schedule_id, scheduled_for, schedule_version, trigger_key), so that
-- its index keeps one schedule's occurrences in time order (the
-- reconciler, listing, the latest firing an update starts after, read
-- backwards).
--
-- No FOREIGN KEY to schedules, as in SQLite: CommitPlan writes occurrences
-- only for schedules whose conditional write applied in the same
-- transaction, and InsertOccurrences checks that each schedule exists for
-- the occurrence's tenant; schedules are never deleted.
CREATE TABLE occurrences (
    occurrence_id    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    -- SQLite's rowid: insertion order, the claims' tie-break.
    seq              BIGINT  GENERATED ALWAYS AS IDENTITY,
    tenant_id        TEXT COLLATE "C" NOT NULL,
    schedule_id      TEXT COLLATE "C" NOT NULL,
    schedule_version BIGINT  NOT NULL CHECK (schedule_version >= 1),
    scheduled_for    BIGINT  NOT NULL CHECK (scheduled_for % 1000 = 0),
    available_at     BIGINT  NOT NULL,
    enqueued_at      BIGINT,
    state            TEXT    NOT NULL CHECK (state IN ('SCHEDULED', 'ENQUEUED', 'RUNNING', 'SUCCEEDED',
                                 'RETRY_WAIT', 'DEAD', 'MISSED', 'CANCELED', 'SKIPPED_OVERLAP')),
    lane             TEXT    NOT NULL CHECK (lane IN ('strict', 'flexible', 'catchup')),
    queue            TEXT COLLATE "C" NOT NULL CHECK (queue <> ''),
    attempt_count    BIGINT  NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    first_claimed_at BIGINT,
    finished_at      BIGINT,
    -- The producing version's overlap policy, decided at claim time.
    overlap_policy   TEXT    NOT NULL DEFAULT 'allow'
                             CHECK (overlap_policy IN ('allow', 'skip_if_running', 'queue_one')),
    -- The planner's shard lease epoch when it wrote the row (0: not the
    -- planner): an audit trail for fencing.
    shard_epoch      BIGINT  NOT NULL DEFAULT 0 CHECK (shard_epoch >= 0),
    -- attempt_count as of the last replay: max attempts count above it.
    attempt_floor    BIGINT  NOT NULL DEFAULT 0 CHECK (attempt_floor >= 0 AND attempt_floor <= attempt_count),
    -- Where the retry deadline counts from: scheduled_for, or the last replay.
    retry_from       BIGINT  NOT NULL,
    -- A manual occurrence's trigger key (a trigger outside the timetable);
    -- '' for every firing the planner writes. Part of the natural key, so a
    -- manual occurrence never collides with the planner's firing of the
    -- same second.
    trigger_key      TEXT COLLATE "C" NOT NULL DEFAULT '',
    -- Why the occurrence went DEAD ('' otherwise): written by the finish or
    -- the lease expiry that made it DEAD, kept when a purge cancels it,
    -- cleared by a replay.
    dead_reason      TEXT    NOT NULL DEFAULT '',
    -- True while the occurrence is not finished, for the partial index
    -- occurrences_open. Generated: no statement sets it.
    open             BOOLEAN GENERATED ALWAYS AS (state IN ('SCHEDULED', 'ENQUEUED', 'RUNNING', 'RETRY_WAIT')) STORED,
    -- The latest attempt, kept in the row so that a claim and its ack write
    -- the occurrence alone: NULL claimed_at means no attempt has been
    -- recorded. Its number is attempt_count, its id
    -- store.AttemptID(occurrence_id, attempt_count). When the next attempt
    -- starts, the claim first copies this one to attempts (history).
    worker_id        TEXT,
    claimed_at       BIGINT,
    lease_expires_at BIGINT,
    att_finished_at  BIGINT,
    att_result       TEXT    CHECK (att_result IN ('SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_PERMANENT', 'LEASE_EXPIRED')),
    att_error        BYTEA   NOT NULL DEFAULT ''::bytea,
    UNIQUE (schedule_id, scheduled_for, schedule_version, trigger_key)
);

-- Claims: a tenant's queue's claimable occurrences per lane, oldest first,
-- ties in insertion order. Only claimable rows are in it.
CREATE INDEX occurrences_claim ON occurrences (tenant_id, queue, lane, available_at, seq)
    WHERE state IN ('ENQUEUED', 'RETRY_WAIT');

-- A schedule's open occurrences (pending and RUNNING): overlap checks,
-- queue_one's earliest waiting one, an update's cancel and in-flight count.
CREATE INDEX occurrences_open ON occurrences (schedule_id)
    WHERE open;

-- The lease rescuer: RUNNING occurrences by the lease of their current
-- attempt.
CREATE INDEX occurrences_lease ON occurrences (lease_expires_at)
    WHERE state = 'RUNNING';

-- The dead-letter queue of a tenant, in its listing's order (scheduled_for,
-- occurrence_id): a page of it, either way and from any position, is a walk
-- of the index from the page's key that stops at the page's end, never a
-- sort of the whole queue; the queue and schedule filters are checked on
-- the way. It also counts a tenant's DEAD ones and picks those a purge
-- takes, oldest first. Only DEAD rows are in it: the hot paths never write
-- it, only a finish or an expiry that kills, and a replay or a purge.
CREATE INDEX occurrences_dead ON occurrences (tenant_id, scheduled_for, occurrence_id)
    WHERE state = 'DEAD';

-- A tenant's occurrences waiting to retry (the tenant's retry budget).
CREATE INDEX occurrences_retry_wait ON occurrences (tenant_id)
    WHERE state = 'RETRY_WAIT';

-- The history of deliveries: every attempt of an occurrence but its latest,
-- which lives in the occurrence row. A row is written once, by the claim
-- that starts the next attempt, and never changed: an attempt here has
-- always ended.
CREATE TABLE attempts (
    occurrence_id    TEXT COLLATE "C" NOT NULL REFERENCES occurrences (occurrence_id),
    attempt          BIGINT  NOT NULL CHECK (attempt >= 1),
    attempt_id       TEXT COLLATE "C" NOT NULL,
    tenant_id        TEXT COLLATE "C" NOT NULL,
    worker_id        TEXT    NOT NULL,
    claimed_at       BIGINT  NOT NULL,
    lease_expires_at BIGINT  NOT NULL,
    finished_at      BIGINT,
    result           TEXT    CHECK (result IN ('SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_PERMANENT', 'LEASE_EXPIRED')),
    error            BYTEA   NOT NULL DEFAULT ''::bytea,
    PRIMARY KEY (occurrence_id, attempt),
    CHECK ((finished_at IS NULL) = (result IS NULL))
);

-- Shard leases for the planners. epoch only grows: every planner write is
-- conditional on the epoch it holds, so a node that lost the shard cannot write.
CREATE TABLE shard_leases (
    shard      BIGINT NOT NULL PRIMARY KEY CHECK (shard >= 0),
    owner      TEXT   NOT NULL,
    epoch      BIGINT NOT NULL CHECK (epoch >= 1),
    expires_at BIGINT NOT NULL
);

-- Registered nodes (store.NodeStore): each schedd heartbeats its row; the
-- planners share the shards among the live ones (expires_at > now). Advisory
-- only: the shard epoch, not this table, fences planner writes.
CREATE TABLE nodes (
    node_id         TEXT COLLATE "C" NOT NULL PRIMARY KEY CHECK (node_id <> ''),
    address         TEXT   NOT NULL,
    started_at      BIGINT NOT NULL,
    last_heartbeat  BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    clock_offset_ms BIGINT NOT NULL DEFAULT 0
);

-- Per-minute figures (store.StatsStore): each node upserts its row for the
-- minute as it goes on, and prunes the old ones, so that any node can
-- answer for the whole cluster. data is the engine's own encoding, opaque
-- here. The key leads with the minute: every read is a range of recent
-- minutes (in minute order) and every prune a range of old ones.
CREATE TABLE stat_minutes (
    node_id TEXT COLLATE "C" NOT NULL CHECK (node_id <> ''),
    minute  BIGINT NOT NULL,
    data    BYTEA  NOT NULL CHECK (octet_length(data) <= 65536),
    PRIMARY KEY (minute, node_id)
);

-- Cluster-wide settings, written once. 'shards' is the number of logical
-- shards, fixed by the first InitShards: every node must agree on it.
CREATE TABLE meta (
    key   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

-- ---------------------------------------------------------------------
-- The schedules' version history (store.ScheduleVersion): one row per
-- version of a schedule, written in the transaction that writes the
-- schedule's row (its create, and every new version, which also closes
-- the row of the version before it). The schedules row holds only the
-- current version; these rows say, for any past firing, which version
-- should have produced it, so that an audit (internal/reconcile) can
-- compare what the timetables promised with what the occurrences record.
-- Firings of a version lie in (starts_after, ends_at] once it is
-- superseded, after starts_after while it is current; starts_after is
-- NULL when the version fires nothing (paused, canceled, completed).
-- planned_until is the schedule's cursor when the next version was
-- written, if it was ACTIVE then: every firing of the version before it
-- has a row (or was counted missed), those after ends_at canceled by the
-- change, so a row deleted at a version's end is still seen missing.
-- The key is the listing's order: a reader pages through it by
-- (schedule_id, version) and finds one schedule's rows as one range.
CREATE TABLE schedule_versions (
    schedule_id        TEXT COLLATE "C" NOT NULL CHECK (schedule_id <> ''),
    version            BIGINT NOT NULL CHECK (version >= 1),
    tenant_id          TEXT COLLATE "C" NOT NULL CHECK (tenant_id <> ''),
    kind               TEXT   NOT NULL CHECK (kind IN ('cron', 'at', 'every')),
    expr               TEXT   NOT NULL,
    time_zone          TEXT   NOT NULL,
    anchor             BIGINT,
    dst_gap            TEXT   NOT NULL CHECK (dst_gap IN ('skip', 'shift')),
    dst_repeat         TEXT   NOT NULL CHECK (dst_repeat IN ('first', 'last', 'all')),
    state              TEXT   NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'CANCELED', 'COMPLETED')),
    misfire_policy     TEXT   NOT NULL CHECK (misfire_policy IN ('skip', 'fire_once', 'catch_up')),
    max_lateness_ms    BIGINT NOT NULL CHECK (max_lateness_ms >= 0),
    catch_up_k         BIGINT NOT NULL CHECK (catch_up_k BETWEEN 0 AND 1000),
    overlap_policy     TEXT   NOT NULL CHECK (overlap_policy IN ('allow', 'skip_if_running', 'queue_one')),
    flexible_window_ms BIGINT NOT NULL CHECK (flexible_window_ms >= 0),
    written_at         BIGINT NOT NULL,
    starts_after       BIGINT,
    first_firing       BIGINT,
    superseded_at      BIGINT,
    ends_at            BIGINT,
    planned_until      BIGINT,
    PRIMARY KEY (schedule_id, version)
);

-- Simulated outages (store.OutageStore): an operator's request that every
-- node behave for a while as if the engine were down. shards is a comma
-- list ('' = all); canceled_at is NULL until the outage is ended early.
CREATE TABLE simulated_outages (
    outage_id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    shards      TEXT   NOT NULL,
    started_at  BIGINT NOT NULL,
    ends_at     BIGINT NOT NULL CHECK (ends_at > started_at),
    canceled_at BIGINT,
    created_by  TEXT COLLATE "C" NOT NULL CHECK (created_by <> '')
);
CREATE INDEX simulated_outages_open ON simulated_outages (ends_at) WHERE canceled_at IS NULL;

-- Tenants: the teams sharing a daemon (record.Tenant). A deleted tenant
-- stays as a tombstone, so its name is never given to another. Quotas of
-- 0 mean the daemon's default.
CREATE TABLE tenants (
    tenant_id                 TEXT COLLATE "C" NOT NULL PRIMARY KEY CHECK (tenant_id <> ''),
    state                     TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'DISABLED', 'DELETED')),
    weight                    INTEGER NOT NULL CHECK (weight >= 1),
    q_active_schedules        BIGINT  NOT NULL DEFAULT 0 CHECK (q_active_schedules >= 0),
    q_firings_per_second      BIGINT  NOT NULL DEFAULT 0 CHECK (q_firings_per_second >= 0),
    q_running                 BIGINT  NOT NULL DEFAULT 0 CHECK (q_running >= 0),
    q_catch_up_per_second     BIGINT  NOT NULL DEFAULT 0 CHECK (q_catch_up_per_second >= 0),
    q_api_requests_per_second BIGINT  NOT NULL DEFAULT 0 CHECK (q_api_requests_per_second >= 0),
    q_retention_seconds       BIGINT  NOT NULL DEFAULT 0 CHECK (q_retention_seconds >= 0),
    created_at                BIGINT  NOT NULL,
    updated_at                BIGINT  NOT NULL,
    version                   BIGINT  NOT NULL CHECK (version >= 1)
);

-- A tenant's tokens, by the SHA-256 of the token (record.TokenHash): the
-- token itself is never stored. A revoked token keeps its row (its name,
-- creation and last use stay visible); a name is unique among a tenant's
-- unrevoked tokens.
CREATE TABLE tenant_tokens (
    token_hash   TEXT COLLATE "C" NOT NULL PRIMARY KEY CHECK (length(token_hash) = 64),
    tenant_id    TEXT COLLATE "C" NOT NULL CHECK (tenant_id <> ''),
    name         TEXT COLLATE "C" NOT NULL CHECK (name <> ''),
    role         TEXT   NOT NULL CHECK (role IN ('tenant', 'admin')),
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE UNIQUE INDEX tenant_tokens_name ON tenant_tokens (tenant_id, name) WHERE revoked_at IS NULL;

-- The audit log (store.AuditStore): who changed what, when, from which
-- version to which. Rows are only appended (in the transaction of the
-- change) and deleted by age. tenant_id is the tenant acted upon;
-- actor_flags: 1 = admin, 2 = local (the Unix socket, no token). detail is
-- a short note, never a payload or a token.
CREATE TABLE audit_log (
    audit_id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           BIGINT  NOT NULL,
    tenant_id    TEXT COLLATE "C" NOT NULL,
    actor_tenant TEXT COLLATE "C" NOT NULL,
    actor_token  TEXT COLLATE "C" NOT NULL,
    actor_flags  INTEGER NOT NULL CHECK (actor_flags BETWEEN 0 AND 3),
    action       TEXT    NOT NULL CHECK (action <> ''),
    target       TEXT COLLATE "C" NOT NULL,
    old_version  BIGINT  NOT NULL,
    new_version  BIGINT  NOT NULL,
    detail       TEXT    NOT NULL
);
CREATE INDEX audit_log_tenant ON audit_log (tenant_id, audit_id);
CREATE INDEX audit_log_target ON audit_log (target);
CREATE INDEX audit_log_at ON audit_log (at);

-- A tenant's RUNNING occurrences: the claim counts them, in its own
-- transaction, against the tenant's running quota (only when the quota is
-- finite). Only RUNNING rows are in it.
CREATE INDEX occurrences_running ON occurrences (tenant_id)
    WHERE state = 'RUNNING';

-- How many of a tenant's schedules are live (ACTIVE or PAUSED), one row
-- per tenant and shard: the active_schedules quota reads the sum, a
-- tenant's few rows, where counting its schedules would read one index
-- entry per schedule. The triggers below keep it from every write of
-- schedules (a create, a change of version, the planner completing an at
-- schedule), in the transaction of that write, so no path can forget it.
-- Per shard, so that a planner completing schedules locks only rows of the
-- shard it holds, never a row another node's planner waits for. The
-- triggers are deferred to the commit, so a transaction locks its rows
-- here after every schedule row it locks: a planner's batch and a cancel
-- of one of its schedules never wait for each other in a circle.
CREATE TABLE tenant_live_schedules (
    tenant_id TEXT COLLATE "C" NOT NULL,
    shard     BIGINT NOT NULL,
    live      BIGINT NOT NULL CHECK (live >= 0),
    PRIMARY KEY (tenant_id, shard)
);

CREATE FUNCTION tenant_live_schedules_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state IN ('ACTIVE', 'PAUSED') THEN
        INSERT INTO tenant_live_schedules AS t (tenant_id, shard, live) VALUES (NEW.tenant_id, NEW.shard, 1)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET live = t.live + 1;
    ELSE
        UPDATE tenant_live_schedules SET live = live - 1 WHERE tenant_id = OLD.tenant_id AND shard = OLD.shard;
    END IF;
    RETURN NULL;
END
$$;

-- A deferred trigger's WHEN is evaluated at the write, not at the commit:
-- only the rows whose liveness changes are queued.
CREATE CONSTRAINT TRIGGER tenant_live_on_insert AFTER INSERT ON schedules
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.state IN ('ACTIVE', 'PAUSED'))
    EXECUTE FUNCTION tenant_live_schedules_keep();

-- The planner's advance sets state on every row it writes; the WHEN keeps
-- the function to the rows whose liveness changes.
CREATE CONSTRAINT TRIGGER tenant_live_on_change AFTER UPDATE OF state ON schedules
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN ((OLD.state IN ('ACTIVE', 'PAUSED')) <> (NEW.state IN ('ACTIVE', 'PAUSED')))
    EXECUTE FUNCTION tenant_live_schedules_keep();

-- ---------------------------------------------------------------------
-- Retention of finished history (store.RetentionStore, docs/retention.md).
--
-- A tenant's finished occurrences by scheduled time: the range a
-- retention pass deletes, oldest first. Partial on the generated open
-- column: a row enters it when it finishes, DEAD rows stay out (the
-- dead-letter queue is kept until replayed or purged).
CREATE INDEX occurrences_history ON occurrences (tenant_id, scheduled_for)
    WHERE NOT open AND state <> 'DEAD';

-- Where each tenant's history begins: occurrences scheduled before
-- horizon may have been removed by retention. Only moves forward; written
-- before the deletes it covers. The reconciler starts a tenant's audit
-- there.
CREATE TABLE history_horizons (
    tenant_id TEXT COLLATE "C" NOT NULL PRIMARY KEY CHECK (tenant_id <> ''),
    horizon   BIGINT NOT NULL
);
