-- 0002_zone_rules: the tz rules the schedules were planned under
-- (store.ZoneStore), as in the SQLite store's 0002_zone_rules.sql. One row
-- per time zone: the tz database version its rules were read from, and
-- their fingerprint (timetable.ZoneFingerprint). A node started on, or
-- reloaded with, another tz database compares its zones' fingerprints with
-- these to find the zones whose rules changed, moves the firings of their
-- cron schedules, and writes the new rows (engine/tzreload.go).
CREATE TABLE zone_rules (
    zone        TEXT COLLATE "C" NOT NULL PRIMARY KEY CHECK (zone <> ''),
    tz_version  TEXT NOT NULL,
    fingerprint TEXT NOT NULL CHECK (fingerprint <> '')
);
