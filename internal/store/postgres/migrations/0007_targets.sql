-- 0007_targets: a tenant's targets, the places outside sched its
-- schedules' firings are delivered into (record.Target).
--
-- config is the kind's settings as a JSON object, so a new kind adds no
-- column; secret is apart from it, so that no read of the settings can
-- carry it by accident. A schedule names its target through its queue
-- (record.TargetQueue: '@' and the target's name); the index below finds
-- the schedules that still name a target, for its delete, and holds only
-- those schedules.
CREATE TABLE targets (
    tenant_id  TEXT COLLATE "C" NOT NULL CHECK (tenant_id <> ''),
    name       TEXT COLLATE "C" NOT NULL CHECK (name <> ''),
    kind       TEXT   NOT NULL CHECK (kind IN ('nats', 'webhook')),
    config     TEXT   NOT NULL CHECK (config::json IS NOT NULL), -- kept as written
    secret     TEXT   NOT NULL,
    version    BIGINT NOT NULL CHECK (version >= 1),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE INDEX schedules_target ON schedules (tenant_id, queue)
    WHERE substr(queue, 1, 1) = '@' AND state IN ('ACTIVE', 'PAUSED');
