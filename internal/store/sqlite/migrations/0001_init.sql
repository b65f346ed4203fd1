-- 0001_init: the three records (schedules, occurrences, attempts), shard leases, and the indexes the
-- planner and the queue need.
--
-- This file is edited in place until the first release: nothing has been
-- released, so no installed database exists to migrate. From the first
-- release on it is frozen, and a schema change is a new numbered file.
--
-- Every instant is an INTEGER of UTC unix milliseconds and every duration an
-- INTEGER of milliseconds (those columns end in _ms); NULL means "not yet" or
-- "none". Tables are STRICT, so a value of the wrong type is an error rather
-- than a silent conversion. The CHECK constraints mirror the Go enums in
-- package store; the conformance suite round-trips every value.
--
-- Correctness rests on the UNIQUE keys and on conditional UPDATEs, never on
-- isolation levels, so they hold whatever isolation level a
-- connection runs at.
--
-- Indexes are few on purpose: every index is written on the hot paths
-- (materializing, claiming, finishing). The queue's indexes are partial, so a
-- row is in an index only while it is in the states that index serves, and
-- the history (SUCCEEDED, MISSED, CANCELED, ...) costs no index space beyond
-- the keys. A query meant to use a partial index repeats the index's WHERE
-- term word for word (queries.go), so that SQLite can prove the index
-- applies; sqlite_test.go checks the plans.

-- The future. schedule_id is globally unique (occurrence ids hash it without
-- the tenant); UNIQUE (tenant_id, schedule_id) serves a tenant's lookups and
-- its listing in id order. A schedule's row never changes those columns, so
-- the index costs nothing after the insert.
CREATE TABLE schedules (
    -- The row's number, for the store's own references to it
    -- (occurrences.schedule_row): an INTEGER PRIMARY KEY, so VACUUM never
    -- renumbers it, assigned on insert and never changed. AUTOINCREMENT
    -- so that no number is ever given twice, even after a delete: a row
    -- number names one schedule_id forever, which is what lets the
    -- occurrences' natural key use it in place of the id.
    row                INTEGER PRIMARY KEY AUTOINCREMENT,
    schedule_id        TEXT    NOT NULL UNIQUE CHECK (schedule_id <> ''),
    tenant_id          TEXT    NOT NULL CHECK (tenant_id <> ''),
    shard              INTEGER NOT NULL CHECK (shard >= 0),
    name               TEXT    NOT NULL CHECK (name <> ''),
    kind               TEXT    NOT NULL CHECK (kind IN ('cron', 'at', 'every')),
    expr               TEXT    NOT NULL,
    time_zone          TEXT    NOT NULL,
    anchor             INTEGER,
    dst_gap            TEXT    NOT NULL CHECK (dst_gap IN ('skip', 'shift')),
    dst_repeat         TEXT    NOT NULL CHECK (dst_repeat IN ('first', 'last', 'all')),
    version            INTEGER NOT NULL CHECK (version >= 1),
    state              TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'CANCELED', 'COMPLETED')),
    -- The cursor as of the last write of this row. While the schedule is
    -- ACTIVE the planner advances its copy in schedule_cursors instead,
    -- and that copy is the one reads return (queries.go).
    next_run_at        INTEGER,
    queue              TEXT    NOT NULL CHECK (queue <> ''),
    payload            BLOB    NOT NULL CHECK (length(payload) <= 262144),
    misfire_policy     TEXT    NOT NULL CHECK (misfire_policy IN ('skip', 'fire_once', 'catch_up')),
    max_lateness_ms    INTEGER NOT NULL CHECK (max_lateness_ms >= 0),
    catch_up_k         INTEGER NOT NULL CHECK (catch_up_k BETWEEN 0 AND 1000),
    overlap_policy     TEXT    NOT NULL CHECK (overlap_policy IN ('allow', 'skip_if_running', 'queue_one')),
    flexible_window_ms INTEGER NOT NULL CHECK (flexible_window_ms >= 0),
    retry_max_attempts INTEGER NOT NULL CHECK (retry_max_attempts >= 1),
    retry_base_ms      INTEGER NOT NULL CHECK (retry_base_ms >= 0),
    retry_cap_ms       INTEGER NOT NULL CHECK (retry_cap_ms >= 0),
    retry_deadline_ms  INTEGER NOT NULL CHECK (retry_deadline_ms >= 0),
    idempotency_key    TEXT,
    -- Firings the planner found too late and only counted, without a row
    -- (a recovery writes a bounded number of MISSED rows and counts the
    -- rest here).
    missed_count       INTEGER NOT NULL DEFAULT 0 CHECK (missed_count >= 0),
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    UNIQUE (tenant_id, schedule_id),
    CHECK (misfire_policy <> 'catch_up' OR catch_up_k >= 1)
) STRICT;

-- Idempotent create: one schedule per (tenant, caller's key).
CREATE UNIQUE INDEX schedules_idempotency_key
    ON schedules (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- A live name is unique per tenant; canceled schedules keep their name as
-- history, so a name can be used again once its schedule is canceled.
CREATE UNIQUE INDEX schedules_name
    ON schedules (tenant_id, name) WHERE state <> 'CANCELED';

-- The planner's cursor of each ACTIVE schedule that has a next run: the
-- row the planner advances at every firing, kept narrow on purpose. An
-- advance in the schedules row itself rewrote the whole wide record
-- (docs/engine.md, speed, has the figures). A row is here exactly while
-- its schedule is ACTIVE with a next run; the triggers below keep it so
-- from every write of schedules, so the control plane writes schedules
-- alone. The planner writes here alone, and then this next_run_at is the
-- schedule's cursor, newer than the one in its schedules row; every read
-- of a schedule takes it from here when there is one (queries.go). When a
-- write of the schedule (an update, a pause, the planner completing it)
-- changes its row, that write carries the cursor it read, and the trigger
-- copies it back here. tenant_id, shard and version are copies of the
-- schedule's, for the guard of the planner's conditional write.
CREATE TABLE schedule_cursors (
    row         INTEGER PRIMARY KEY, -- schedules.row
    shard       INTEGER NOT NULL,
    next_run_at INTEGER NOT NULL,
    schedule_id TEXT    NOT NULL,
    tenant_id   TEXT    NOT NULL,
    version     INTEGER NOT NULL
) STRICT;

-- The planner: a shard's active schedules due within the horizon, earliest
-- cursor first, ties by id (DueSchedules reads it in index order).
CREATE INDEX schedules_due ON schedule_cursors (shard, next_run_at, schedule_id);

CREATE TRIGGER schedule_cursor_on_insert AFTER INSERT ON schedules
WHEN new.state = 'ACTIVE' AND new.next_run_at IS NOT NULL
BEGIN
    INSERT INTO schedule_cursors (row, shard, next_run_at, schedule_id, tenant_id, version)
    VALUES (new.row, new.shard, new.next_run_at, new.schedule_id, new.tenant_id, new.version);
END;

-- Every write of schedules that may change the cursor (a write that
-- leaves these columns out, as the planner's missed count, does not fire
-- it).
CREATE TRIGGER schedule_cursor_on_update AFTER UPDATE OF shard, next_run_at, state, version ON schedules
BEGIN
    DELETE FROM schedule_cursors WHERE row = old.row;
    INSERT INTO schedule_cursors (row, shard, next_run_at, schedule_id, tenant_id, version)
    SELECT new.row, new.shard, new.next_run_at, new.schedule_id, new.tenant_id, new.version
    WHERE new.state = 'ACTIVE' AND new.next_run_at IS NOT NULL;
END;

-- One scheduled time. occurrence_id is derived from the UNIQUE natural key
-- (store.OccurrenceID; store.ManualOccurrenceID for a manual one), so a
-- second insert of the same firing is a no-op.
--
-- The natural key is declared as (schedule_row, scheduled_for,
-- schedule_version, trigger_key). schedule_row stands for schedule_id: each
-- names the other, for ever (schedules.row is never reused nor changed, and
-- schedule_id is UNIQUE there), so this is the natural key UNIQUE(schedule_id,
-- schedule_version, scheduled_for), keyed by an integer, with the manual
-- trigger's key added (see trigger_key): the index is
-- written by every occurrence, and its text keys shared long prefixes
-- (sch_...), so every comparison on the way down read them byte by byte
-- (docs/engine.md, speed, has the figures). The order keeps one
-- schedule's occurrences in time order, for listing a schedule's
-- occurrences and for the latest not-canceled firing an update starts
-- after (read backwards). Queries by a schedule's id find its row first.
--
-- No FOREIGN KEY to schedules: it cost every materialized occurrence a
-- lookup in the schedules table (the planner's hottest write), and nothing
-- needs it. Occurrences are written by CommitPlan, only for schedules whose
-- conditional write (tenant, id, version, cursor, shard) applied in the same
-- transaction, and by InsertOccurrences, which checks that each schedule
-- exists for the occurrence's tenant before it writes; schedules are never
-- deleted. Tenant isolation rests on every query naming the tenant.
CREATE TABLE occurrences (
    -- The row's number (the rowid), assigned on insert. An INTEGER PRIMARY
    -- KEY, so VACUUM never renumbers it. Only retention deletes
    -- occurrences (finished ones), and a deleted row's number may be
    -- given again (no AUTOINCREMENT). The store remembers the rows
    -- of the occurrences it hands out in claims and their acks find them
    -- by it (rowhints.go): whatever deletes occurrences must also drop
    -- those hints.
    row              INTEGER PRIMARY KEY,
    occurrence_id    TEXT    NOT NULL UNIQUE,
    tenant_id        TEXT    NOT NULL,
    schedule_id      TEXT    NOT NULL,
    -- The schedule's schedules.row, the schedule in the natural key and
    -- in occurrences_open; a claim reads the schedule's payload by it, one
    -- integer lookup where schedule_id takes two (its index, then the
    -- row). Written with the occurrence, from the row the same transaction
    -- found the schedule at, and never changed.
    schedule_row     INTEGER NOT NULL,
    schedule_version INTEGER NOT NULL CHECK (schedule_version >= 1),
    scheduled_for    INTEGER NOT NULL CHECK (scheduled_for % 1000 = 0),
    available_at     INTEGER NOT NULL,
    enqueued_at      INTEGER,
    state            TEXT    NOT NULL,
    lane             TEXT    NOT NULL,
    queue            TEXT    NOT NULL CHECK (queue <> ''),
    attempt_count    INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    first_claimed_at INTEGER,
    finished_at      INTEGER,
    -- The producing version's overlap policy, decided at claim time.
    overlap_policy   TEXT    NOT NULL DEFAULT 'allow',
    -- The planner's shard lease epoch when it wrote the row (0: not the
    -- planner): an audit trail for fencing.
    shard_epoch      INTEGER NOT NULL DEFAULT 0 CHECK (shard_epoch >= 0),
    -- attempt_count as of the last replay: max attempts count above it.
    attempt_floor    INTEGER NOT NULL DEFAULT 0 CHECK (attempt_floor >= 0 AND attempt_floor <= attempt_count),
    -- Where the retry deadline counts from: scheduled_for, or the last replay.
    retry_from       INTEGER NOT NULL,
    -- 1 while the occurrence is not finished (SCHEDULED, ENQUEUED, RUNNING,
    -- RETRY_WAIT), 0 after; kept by the store. It exists for the partial
    -- index occurrences_open: an index whose WHERE names state would be
    -- rewritten by every claim (ENQUEUED -> RUNNING changes state), one
    -- whose WHERE names open is left alone by claims and touched only when
    -- an occurrence starts or stops being open.
    open             INTEGER NOT NULL,
    -- The latest attempt, kept in the row so that a claim and its ack write
    -- the occurrence alone (and no attempts row): NULL claimed_at means no
    -- attempt has been recorded. Its number is attempt_count, its id
    -- store.AttemptID(occurrence_id, attempt_count). When the next attempt
    -- starts, the claim first copies this one to attempts (history).
    worker_id        TEXT,
    claimed_at       INTEGER,
    lease_expires_at INTEGER,
    att_finished_at  INTEGER,
    att_result       TEXT,
    att_error        TEXT    NOT NULL DEFAULT '',
    -- The key of a manual occurrence (a trigger outside the timetable):
    -- the caller's idempotency key or a random one; '' for every firing
    -- the planner writes. Last in the natural key, so a manual occurrence
    -- never takes the place of the planner's firing of the same second.
    -- Its id hashes the schedule and this key alone (not the time), so
    -- a retried trigger, a second later, names the same row: the insert
    -- finds the id taken and leaves it be (insert.go). '' costs the
    -- natural key's index one byte per entry.
    trigger_key      TEXT    NOT NULL DEFAULT '',
    -- Why the occurrence went DEAD (store.DeadReason), written with the
    -- DEAD state; '' otherwise. A replay clears it; a purge (DEAD ->
    -- CANCELED) keeps it, as history.
    dead_reason      TEXT    NOT NULL DEFAULT '',
    UNIQUE (schedule_row, scheduled_for, schedule_version, trigger_key)
) STRICT;

-- Claims: a tenant's queue's claimable occurrences per lane, oldest first.
-- Only claimable rows are in it.
CREATE INDEX occurrences_claim ON occurrences (tenant_id, queue, lane, available_at)
    WHERE state IN ('ENQUEUED', 'RETRY_WAIT');

-- A schedule's open occurrences (pending and RUNNING): overlap checks (is
-- one running?), queue_one's earliest waiting one, and an update's cancel
-- and in-flight count. A claim does not change open, so it does not touch
-- this index; a finish removes the row from it.
CREATE INDEX occurrences_open ON occurrences (schedule_row)
    WHERE open = 1;

-- The lease rescuer: RUNNING occurrences by the lease of their current
-- attempt.
CREATE INDEX occurrences_lease ON occurrences (lease_expires_at)
    WHERE state = 'RUNNING';

-- The dead-letter queue of a tenant, in its listing's order (scheduled_for,
-- occurrence_id): a page of it, either way and from any position, is a walk
-- of the index that stops at the page's end, never a sort of the whole
-- queue; the queue and schedule filters are checked on the way. It also
-- counts a tenant's DEAD ones (covering) and picks those a purge takes. Only
-- DEAD rows are in it, so it costs nothing on the hot paths but a finish
-- or an expiry that kills.
CREATE INDEX occurrences_dead ON occurrences (tenant_id, scheduled_for, occurrence_id)
    WHERE state = 'DEAD';

-- A tenant's occurrences waiting to retry (the tenant's retry budget).
CREATE INDEX occurrences_retry_wait ON occurrences (tenant_id)
    WHERE state = 'RETRY_WAIT';

-- The history of deliveries: every attempt of an occurrence but its latest,
-- which lives in the occurrence row (see there). (occurrence_id, attempt) is
-- the key; the table is clustered on it (WITHOUT ROWID), so an occurrence's
-- attempts are one range. attempt_id is store.AttemptID(occurrence_id,
-- attempt). A row is written once, by the claim that starts the next
-- attempt, and never changed: an attempt here has always ended.
CREATE TABLE attempts (
    occurrence_id    TEXT    NOT NULL REFERENCES occurrences (occurrence_id),
    attempt          INTEGER NOT NULL CHECK (attempt >= 1),
    attempt_id       TEXT    NOT NULL,
    tenant_id        TEXT    NOT NULL,
    worker_id        TEXT    NOT NULL,
    claimed_at       INTEGER NOT NULL,
    lease_expires_at INTEGER NOT NULL,
    finished_at      INTEGER,
    result           TEXT    CHECK (result IN ('SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_PERMANENT', 'LEASE_EXPIRED')),
    error            TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (occurrence_id, attempt),
    CHECK ((finished_at IS NULL) = (result IS NULL))
) STRICT, WITHOUT ROWID;

-- Each node's figures per minute (store.StatMinute), written by the node as
-- the minute goes on and read by any node, so that any of them can answer
-- for the whole cluster. data is the engine's own encoding, opaque here.
-- The key is (minute, node_id), minute first: both of the table's reads go
-- by minute (the rows since a time, in minute then node order; the delete
-- of the rows before a time), and then each is one range of the key. The
-- table is small: the nodes times the minutes the engine keeps.
CREATE TABLE stat_minutes (
    node_id TEXT    NOT NULL CHECK (node_id <> ''),
    minute  INTEGER NOT NULL,
    data    BLOB    NOT NULL CHECK (length(data) <= 65536),
    PRIMARY KEY (minute, node_id)
) STRICT;

-- Shard leases for the planners. epoch only grows: every planner write is
-- conditional on the epoch it holds, so a node that lost the shard cannot write. A system
-- table: shards are not any tenant's.
CREATE TABLE shard_leases (
    shard      INTEGER NOT NULL PRIMARY KEY CHECK (shard >= 0),
    owner      TEXT    NOT NULL,
    epoch      INTEGER NOT NULL CHECK (epoch >= 1),
    expires_at INTEGER NOT NULL
) STRICT;

-- Registered nodes (store.NodeStore): each schedd heartbeats its row; the
-- planners share the shards among the live ones (expires_at > now). Advisory
-- only: the shard epoch, not this table, fences planner writes.
CREATE TABLE nodes (
    node_id         TEXT    NOT NULL PRIMARY KEY CHECK (node_id <> ''),
    address         TEXT    NOT NULL,
    started_at      INTEGER NOT NULL,
    last_heartbeat  INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    clock_offset_ms INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Cluster-wide settings, written once. 'shards' is the number of logical
-- shards, fixed by the first InitShards: every node must agree on it.
CREATE TABLE meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

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
    schedule_id        TEXT    NOT NULL CHECK (schedule_id <> ''),
    version            INTEGER NOT NULL CHECK (version >= 1),
    tenant_id          TEXT    NOT NULL CHECK (tenant_id <> ''),
    kind               TEXT    NOT NULL CHECK (kind IN ('cron', 'at', 'every')),
    expr               TEXT    NOT NULL,
    time_zone          TEXT    NOT NULL,
    anchor             INTEGER,
    dst_gap            TEXT    NOT NULL CHECK (dst_gap IN ('skip', 'shift')),
    dst_repeat         TEXT    NOT NULL CHECK (dst_repeat IN ('first', 'last', 'all')),
    state              TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'CANCELED', 'COMPLETED')),
    misfire_policy     TEXT    NOT NULL CHECK (misfire_policy IN ('skip', 'fire_once', 'catch_up')),
    max_lateness_ms    INTEGER NOT NULL CHECK (max_lateness_ms >= 0),
    catch_up_k         INTEGER NOT NULL CHECK (catch_up_k BETWEEN 0 AND 1000),
    overlap_policy     TEXT    NOT NULL CHECK (overlap_policy IN ('allow', 'skip_if_running', 'queue_one')),
    flexible_window_ms INTEGER NOT NULL CHECK (flexible_window_ms >= 0),
    written_at         INTEGER NOT NULL,
    starts_after       INTEGER,
    first_firing       INTEGER,
    superseded_at      INTEGER,
    ends_at            INTEGER,
    planned_until      INTEGER,
    PRIMARY KEY (schedule_id, version)
) STRICT, WITHOUT ROWID;

-- Simulated outages (store.OutageStore): an operator's request that every
-- node behave for a while as if the engine were down. shards is a comma
-- list ('' = all); canceled_at is NULL until the outage is ended early.
CREATE TABLE simulated_outages (
    outage_id   INTEGER NOT NULL PRIMARY KEY,
    shards      TEXT    NOT NULL,
    started_at  INTEGER NOT NULL,
    ends_at     INTEGER NOT NULL CHECK (ends_at > started_at),
    canceled_at INTEGER,
    created_by  TEXT    NOT NULL CHECK (created_by <> '')
) STRICT;
CREATE INDEX simulated_outages_open ON simulated_outages (ends_at) WHERE canceled_at IS NULL;

-- Tenants: the teams sharing a daemon (record.Tenant). A deleted tenant
-- stays as a tombstone, so its name is never given to another. Quotas of
-- 0 mean the daemon's default.
CREATE TABLE tenants (
    tenant_id                 TEXT    NOT NULL PRIMARY KEY CHECK (tenant_id <> ''),
    state                     TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'DISABLED', 'DELETED')),
    weight                    INTEGER NOT NULL CHECK (weight >= 1),
    q_active_schedules        INTEGER NOT NULL DEFAULT 0 CHECK (q_active_schedules >= 0),
    q_firings_per_second      INTEGER NOT NULL DEFAULT 0 CHECK (q_firings_per_second >= 0),
    q_running                 INTEGER NOT NULL DEFAULT 0 CHECK (q_running >= 0),
    q_catch_up_per_second     INTEGER NOT NULL DEFAULT 0 CHECK (q_catch_up_per_second >= 0),
    q_api_requests_per_second INTEGER NOT NULL DEFAULT 0 CHECK (q_api_requests_per_second >= 0),
    q_retention_seconds       INTEGER NOT NULL DEFAULT 0 CHECK (q_retention_seconds >= 0),
    created_at                INTEGER NOT NULL,
    updated_at                INTEGER NOT NULL,
    version                   INTEGER NOT NULL CHECK (version >= 1)
) STRICT;

-- A tenant's tokens, by the SHA-256 of the token (record.TokenHash): the
-- token itself is never stored. A revoked token keeps its row (its name,
-- creation and last use stay visible); a name is unique among a tenant's
-- unrevoked tokens.
CREATE TABLE tenant_tokens (
    token_hash   TEXT    NOT NULL PRIMARY KEY CHECK (length(token_hash) = 64),
    tenant_id    TEXT    NOT NULL CHECK (tenant_id <> ''),
    name         TEXT    NOT NULL CHECK (name <> ''),
    role         TEXT    NOT NULL CHECK (role IN ('tenant', 'admin')),
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
) STRICT;
CREATE UNIQUE INDEX tenant_tokens_name ON tenant_tokens (tenant_id, name) WHERE revoked_at IS NULL;

-- The audit log (store.AuditStore): who changed what, when, from which
-- version to which. Rows are only appended (in the transaction of the
-- change) and deleted by age. tenant_id is the tenant acted upon;
-- actor_flags: 1 = admin, 2 = local (the Unix socket, no token). detail is
-- a short note, never a payload or a token. AUTOINCREMENT: an id is never
-- given again after the rows before it were purged.
CREATE TABLE audit_log (
    audit_id     INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    at           INTEGER NOT NULL,
    tenant_id    TEXT    NOT NULL,
    actor_tenant TEXT    NOT NULL,
    actor_token  TEXT    NOT NULL,
    actor_flags  INTEGER NOT NULL CHECK (actor_flags BETWEEN 0 AND 3),
    action       TEXT    NOT NULL CHECK (action <> ''),
    target       TEXT    NOT NULL,
    old_version  INTEGER NOT NULL,
    new_version  INTEGER NOT NULL,
    detail       TEXT    NOT NULL
) STRICT;
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
-- Per shard, so that a planner completing schedules writes only rows of
-- the shard it holds.
CREATE TABLE tenant_live_schedules (
    tenant_id TEXT    NOT NULL,
    shard     INTEGER NOT NULL,
    live      INTEGER NOT NULL CHECK (live >= 0),
    PRIMARY KEY (tenant_id, shard)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER tenant_live_on_insert AFTER INSERT ON schedules
WHEN new.state IN ('ACTIVE', 'PAUSED')
BEGIN
    INSERT INTO tenant_live_schedules (tenant_id, shard, live) VALUES (new.tenant_id, new.shard, 1)
        ON CONFLICT (tenant_id, shard) DO UPDATE SET live = live + 1;
END;

CREATE TRIGGER tenant_live_on_start AFTER UPDATE OF state ON schedules
WHEN old.state NOT IN ('ACTIVE', 'PAUSED') AND new.state IN ('ACTIVE', 'PAUSED')
BEGIN
    INSERT INTO tenant_live_schedules (tenant_id, shard, live) VALUES (new.tenant_id, new.shard, 1)
        ON CONFLICT (tenant_id, shard) DO UPDATE SET live = live + 1;
END;

CREATE TRIGGER tenant_live_on_end AFTER UPDATE OF state ON schedules
WHEN old.state IN ('ACTIVE', 'PAUSED') AND new.state NOT IN ('ACTIVE', 'PAUSED')
BEGIN
    UPDATE tenant_live_schedules SET live = live - 1 WHERE tenant_id = old.tenant_id AND shard = old.shard;
END;

-- ---------------------------------------------------------------------
-- Retention of finished history (store.RetentionStore, docs/retention.md).
--
-- A tenant's finished occurrences by scheduled time: the range a
-- retention pass deletes, oldest first. Partial: a row enters it when it
-- finishes (open goes to 0, or it is written finished: MISSED,
-- SKIPPED_OVERLAP) and never before, so claims, which leave open alone,
-- never write it; DEAD rows stay out (the dead-letter queue is kept until
-- replayed or purged), and a purge of one (DEAD -> CANCELED) brings it in.
-- The delete repeats this WHERE word for word (queries_retention.go).
CREATE INDEX occurrences_history ON occurrences (tenant_id, scheduled_for)
    WHERE open = 0 AND state <> 'DEAD';

-- Where each tenant's history begins: occurrences scheduled before
-- horizon may have been removed by retention. Only moves forward; written
-- before the deletes it covers. The reconciler starts a tenant's audit
-- there.
CREATE TABLE history_horizons (
    tenant_id TEXT    NOT NULL PRIMARY KEY CHECK (tenant_id <> ''),
    horizon   INTEGER NOT NULL
) STRICT;
