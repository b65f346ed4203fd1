-- 0001_init: the three records of SPEC §2, shard leases, and the indexes the
-- planner and the queue need.
--
-- Every instant is an INTEGER of UTC unix milliseconds and every duration an
-- INTEGER of milliseconds (those columns end in _ms); NULL means "not yet" or
-- "none". Tables are STRICT, so a value of the wrong type is an error rather
-- than a silent conversion. The CHECK constraints mirror the Go enums in
-- package store; the conformance suite round-trips every value.
--
-- Correctness rests on the UNIQUE keys and on conditional UPDATEs, never on
-- isolation levels (RELIABILITY finding 11).

-- The future. schedule_id is globally unique (occurrence ids hash it without
-- the tenant); UNIQUE (tenant_id, schedule_id) is the parent key that ties
-- each occurrence to its own schedule's tenant.
CREATE TABLE schedules (
    schedule_id        TEXT    NOT NULL PRIMARY KEY CHECK (schedule_id <> ''),
    tenant_id          TEXT    NOT NULL CHECK (tenant_id <> ''),
    shard              INTEGER NOT NULL CHECK (shard >= 0),
    name               TEXT    NOT NULL,
    kind               TEXT    NOT NULL CHECK (kind IN ('cron', 'at', 'every')),
    expr               TEXT    NOT NULL,
    time_zone          TEXT    NOT NULL,
    anchor             INTEGER,
    dst_gap            TEXT    NOT NULL CHECK (dst_gap IN ('skip', 'shift')),
    dst_repeat         TEXT    NOT NULL CHECK (dst_repeat IN ('first', 'last', 'all')),
    version            INTEGER NOT NULL CHECK (version >= 1),
    state              TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'CANCELED', 'COMPLETED')),
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
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    UNIQUE (tenant_id, schedule_id),
    CHECK (misfire_policy <> 'catch_up' OR catch_up_k >= 1)
) STRICT;

-- Idempotent create: one schedule per (tenant, caller's key).
CREATE UNIQUE INDEX schedules_idempotency_key
    ON schedules (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- The planner: a shard's active schedules due within the horizon.
CREATE INDEX schedules_due ON schedules (shard, state, next_run_at);

-- One scheduled time. occurrence_id is derived from the UNIQUE triple
-- (store.OccurrenceID), so a second insert of the same firing is a no-op.
CREATE TABLE occurrences (
    occurrence_id    TEXT    NOT NULL PRIMARY KEY,
    tenant_id        TEXT    NOT NULL,
    schedule_id      TEXT    NOT NULL,
    schedule_version INTEGER NOT NULL CHECK (schedule_version >= 1),
    scheduled_for    INTEGER NOT NULL CHECK (scheduled_for % 1000 = 0),
    available_at     INTEGER NOT NULL,
    enqueued_at      INTEGER,
    state            TEXT    NOT NULL CHECK (state IN ('SCHEDULED', 'ENQUEUED', 'RUNNING', 'SUCCEEDED',
                                 'RETRY_WAIT', 'DEAD', 'MISSED', 'CANCELED', 'SKIPPED_OVERLAP')),
    lane             TEXT    NOT NULL CHECK (lane IN ('strict', 'flexible', 'catchup')),
    queue            TEXT    NOT NULL CHECK (queue <> ''),
    attempt_count    INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    first_claimed_at INTEGER,
    finished_at      INTEGER,
    UNIQUE (schedule_id, schedule_version, scheduled_for),
    FOREIGN KEY (tenant_id, schedule_id) REFERENCES schedules (tenant_id, schedule_id)
) STRICT;

-- Claims: a queue's claimable occurrences per tenant and lane, oldest first.
CREATE INDEX occurrences_claim ON occurrences (queue, tenant_id, lane, state, available_at);

-- One delivery. attempt is the fencing token; (occurrence_id, attempt) is
-- unique, so two claims can never both hold the same token. tenant_id is
-- copied from the occurrence by the claim that creates the row.
CREATE TABLE attempts (
    attempt_id       TEXT    NOT NULL PRIMARY KEY,
    tenant_id        TEXT    NOT NULL,
    occurrence_id    TEXT    NOT NULL REFERENCES occurrences (occurrence_id),
    attempt          INTEGER NOT NULL CHECK (attempt >= 1),
    worker_id        TEXT    NOT NULL,
    claimed_at       INTEGER NOT NULL,
    lease_expires_at INTEGER NOT NULL,
    finished_at      INTEGER,
    result           TEXT    CHECK (result IN ('SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_PERMANENT', 'LEASE_EXPIRED')),
    error            TEXT    NOT NULL DEFAULT '',
    UNIQUE (occurrence_id, attempt),
    CHECK ((finished_at IS NULL) = (result IS NULL))
) STRICT;

-- The lease rescuer: live attempts by lease expiry.
CREATE INDEX attempts_lease_expiry ON attempts (lease_expires_at) WHERE finished_at IS NULL;

-- Shard leases for the planners. epoch only grows: every planner write is
-- conditional on the epoch it holds (RELIABILITY finding 10). A system
-- table: shards are not any tenant's.
CREATE TABLE shard_leases (
    shard      INTEGER NOT NULL PRIMARY KEY CHECK (shard >= 0),
    owner      TEXT    NOT NULL,
    epoch      INTEGER NOT NULL CHECK (epoch >= 1),
    expires_at INTEGER NOT NULL
) STRICT;
