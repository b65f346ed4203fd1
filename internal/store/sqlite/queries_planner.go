package sqlite

// The shard count and the shard leases (see queries.go for the
// conventions). The lease rule is the engine's (engine.AcquireShard and
// its neighbours): these statements read the lease row and write it under
// the condition they state. The writer transaction already holds SQLite's
// one write lock, so reading the row is enough to keep it until the
// commit.
const (
	qInitShards = `INSERT INTO meta (key, value) VALUES ('shards', ?) ON CONFLICT (key) DO NOTHING`

	qGetShards = `SELECT value FROM meta WHERE key = 'shards'`

	shardLeaseColumns = `shard, owner, epoch, expires_at`

	qLockShardLease = `SELECT ` + shardLeaseColumns + ` FROM shard_leases WHERE shard = ?`

	// Only when the shard has no row: RETURNING answers no row otherwise.
	qInsertShardLease = `INSERT INTO shard_leases (` + shardLeaseColumns + `) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (shard) DO NOTHING
RETURNING ` + shardLeaseColumns

	// Only while the row is still the lease read (?5, ?6, ?7).
	qWriteShardLease = `UPDATE shard_leases SET owner = ?2, epoch = ?3, expires_at = ?4
WHERE shard = ?1 AND owner = ?5 AND epoch = ?6 AND expires_at = ?7
RETURNING ` + shardLeaseColumns

	qListShardLeases = `SELECT ` + shardLeaseColumns + ` FROM shard_leases ORDER BY shard`
)
