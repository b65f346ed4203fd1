-- 0002_zone_rules: which tz rules the schedules' cursors were computed
-- under (store.ZoneStore; engine/tzreload.go).
--
-- zone_rules: a zone's rules in one tz database version, as their
-- fingerprint (timetable.ZoneFingerprint). A version's fingerprints are
-- the same on every node, so a row is written once and never changes.
CREATE TABLE zone_rules (
    zone        TEXT NOT NULL CHECK (zone <> ''),
    tz_version  TEXT NOT NULL CHECK (tz_version <> ''),
    fingerprint TEXT NOT NULL CHECK (fingerprint <> ''),
    PRIMARY KEY (zone, tz_version)
) STRICT;

-- shard_tz: the tz database version the cursors and the occurrences
-- materialized ahead of each shard's cron schedules were last computed
-- under. A node that holds a shard recorded under another version than
-- its own moves the firings of the zones whose fingerprints differ
-- between the two, then writes its version here, under the shard's lease.
CREATE TABLE shard_tz (
    shard      INTEGER NOT NULL PRIMARY KEY CHECK (shard >= 0),
    tz_version TEXT    NOT NULL CHECK (tz_version <> '')
) STRICT;
