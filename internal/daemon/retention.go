package daemon

import (
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

// minRetention is the shortest --retention (and tenant retention) taken:
// shorter would remove history an operator is still looking at.
const minRetention = engine.MinTenantRetention

// retentionFlag defines --retention, the default retention of every
// tenant's finished history (docs/retention.md), into d.
func retentionFlag(fs *pflag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "retention", engine.DefaultRetention, "how long finished occurrences (SUCCEEDED, MISSED, CANCELED, SKIPPED_OVERLAP) and their attempts are kept, by scheduled time, for a tenant that sets none of its own; DEAD ones stay until replayed or purged (0: forever)")
}

// checkRetention checks --retention.
func checkRetention(d time.Duration) error {
	if d < 0 || (d > 0 && d < minRetention) || d%time.Second != 0 {
		return usage("--retention %s: must be whole seconds, %s or more, or 0 to keep finished history forever", d, minRetention)
	}
	return nil
}

// retentionSeconds is --retention as a tenant's default quota
// (record.Quotas.RetentionSeconds): 0 (forever) is negative there, where 0
// is the engine's default.
func retentionSeconds(d time.Duration) int64 {
	if d == 0 {
		return -1
	}
	return int64(d / time.Second)
}

// noteSpaceReuse logs, for a SQLite file too large for the one-time VACUUM
// that turns on incremental vacuum at open, that the pages retention frees
// are reused but not given back (docs/retention.md says how to change it).
func noteSpaceReuse(st store.Store, log *slog.Logger) {
	if s, ok := st.(*sqlite.Store); ok && !s.IncrementalVacuum() {
		log.Warn("the database file was made without auto_vacuum and is too large to convert at start: the space retention frees is reused, not returned to the file system (see docs/retention.md)")
	}
}
