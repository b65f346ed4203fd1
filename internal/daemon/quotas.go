package daemon

import (
	"cmp"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/server"
)

// maxQuota is the largest value a quota flag (and a tenant's own quota)
// takes.
const maxQuota = 1_000_000_000

// quotaFlags defines the flags of the tenants' default quotas, each a
// default for tenants that set none of their own (0 in the tenant's
// quotas), into q.
func quotaFlags(fs *pflag.FlagSet, q *record.Quotas) {
	fs.Int64Var(&q.ActiveSchedules, "quota-active-schedules", 0, "default cap on a tenant's ACTIVE or PAUSED schedules; a create past it is answered 429 quota_exceeded (0: unlimited)")
	fs.Int64Var(&q.FiringsPerSecond, "quota-firings-per-second", 0, "default rate of a tenant's firings, over scheduled time with a burst of one second's worth; firings past it are delayed, never dropped (0: unlimited)")
	fs.Int64Var(&q.Running, "quota-running", 0, "default cap on a tenant's occurrences RUNNING at once across the cluster; claims beyond it get nothing for that tenant (0: unlimited)")
	fs.Int64Var(&q.CatchUpPerSecond, "quota-catch-up-per-second", engine.DefaultCatchUpPerSecond, "default rate at which a tenant's catch-up firings after an outage are released")
}

// checkQuotas checks the quota flags' values.
func checkQuotas(q record.Quotas) error {
	for _, f := range []struct {
		name string
		v    int64
		min  int64
	}{
		{"quota-active-schedules", q.ActiveSchedules, 0},
		{"quota-firings-per-second", q.FiringsPerSecond, 0},
		{"quota-running", q.Running, 0},
		{"quota-catch-up-per-second", q.CatchUpPerSecond, 1},
	} {
		if f.v < f.min || f.v > maxQuota {
			return usage("--%s %d: must be from %d to %d", f.name, f.v, f.min, maxQuota)
		}
	}
	return nil
}

// tenantDefaults are the engine's default quotas of every tenant: the
// quota flags', the API request rate of --api-rate and --retention.
func tenantDefaults(cfg Config) record.Quotas {
	q := cfg.Quotas
	q.APIRequestsPerSecond = int64(cmp.Or(cfg.APIRate, server.DefaultAPIRate))
	q.RetentionSeconds = retentionSeconds(cfg.Retention)
	return q
}
