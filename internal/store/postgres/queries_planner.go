package postgres

// The shard count and the shard leases (see queries.go for the
// conventions). The lease rule is the engine's (engine.AcquireShard and
// its neighbours): these statements read the lease row and write it under
// the condition they state.
const (
	qInitShards = `INSERT INTO meta (key, value) VALUES ('shards', $1) ON CONFLICT (key) DO NOTHING`

	qGetShards = `SELECT value FROM meta WHERE key = 'shards'`

	shardLeaseColumns = `shard, owner, epoch, expires_at`

	// FOR NO KEY UPDATE: the lock an UPDATE of the row takes, held until
	// the commit. A second node's lock waits for it and then reads the
	// row as committed, so two nodes racing for an expired lease cannot
	// both take it; a plan holding the row FOR SHARE (qCheckLease) makes a
	// takeover wait until the plan commits.
	qLockShardLease = `SELECT ` + shardLeaseColumns + ` FROM shard_leases WHERE shard = $1 FOR NO KEY UPDATE`

	// Only when the shard has no row: RETURNING answers no row otherwise
	// (a concurrent insert of the same shard waits for the first and then
	// does nothing).
	qInsertShardLease = `INSERT INTO shard_leases (` + shardLeaseColumns + `) VALUES ($1, $2, $3, $4)
ON CONFLICT (shard) DO NOTHING
RETURNING ` + shardLeaseColumns

	// Only while the row is still the lease read ($5, $6, $7).
	qWriteShardLease = `UPDATE shard_leases SET owner = $2, epoch = $3, expires_at = $4
WHERE shard = $1 AND owner = $5 AND epoch = $6 AND expires_at = $7
RETURNING ` + shardLeaseColumns

	qListShardLeases = `SELECT ` + shardLeaseColumns + ` FROM shard_leases ORDER BY shard`
)
