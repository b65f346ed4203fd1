package api

// TZReload answers POST /v1/admin/reload-tz: the node read its tz database
// again, and moved the firings of the cron schedules in the zones whose
// rules changed, on the shards it holds.
type TZReload struct {
	// PreviousTZVersion is the tz database version in use before the
	// reload, TZVersion the one in use now.
	PreviousTZVersion string `json:"previous_tz_version"`
	TZVersion         string `json:"tz_version"`
	// PreviousTZLabel and TZLabel name the rules in use before and now:
	// the version, or, for a tz database rebuilt with other rules under
	// the same version line, the version and a digest of the zones whose
	// rules differ from the ones the store records under it
	// ("2026a+local.1f0c9e2b"). The store records them per shard.
	PreviousTZLabel string `json:"previous_tz_label"`
	TZLabel         string `json:"tz_label"`
	// Zones are the zones of ACTIVE cron schedules whose rules changed,
	// with what moved in each, in zone order; empty when none changed.
	Zones []TZZoneMoves `json:"zones"`
	// Shards is how many shards this node rezoned; ShardsPending how
	// many are still recorded under another tz label than this node's
	// (held by nodes that have not loaded it: each node reads its own tz
	// database, so reload every node); ShardsFenced how many a lost
	// lease stopped.
	Shards        int `json:"shards"`
	ShardsPending int `json:"shards_pending"`
	ShardsFenced  int `json:"shards_fenced"`
}

// TZZoneMoves is what a tz reload moved in one zone.
type TZZoneMoves struct {
	Zone string `json:"zone"`
	// Schedules is how many ACTIVE cron schedules of the zone were
	// examined; Moved how many had a firing move.
	Schedules int `json:"schedules"`
	Moved     int `json:"moved"`
	// Canceled are occurrences materialized ahead whose instant is no
	// longer a firing (CANCELED, kept as history); Kept those whose
	// instant still is (same ids); Replanned the new rules' firings
	// before the old cursor, which the planner materializes under new
	// ids.
	Canceled  int `json:"canceled"`
	Kept      int `json:"kept"`
	Replanned int `json:"replanned"`
}
