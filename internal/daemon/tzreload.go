package daemon

import (
	"context"
	"log/slog"

	"github.com/sched-dev/sched/internal/engine"
)

// reloadTZ reads the tz database again on SIGHUP and moves the firings
// whose zone's rules changed (engine.TZ.Reload, which logs what moved per
// zone); a failure is logged, and the daemon goes on with the rules it
// has.
func reloadTZ(ctx context.Context, eng *engine.Engine, log *slog.Logger) {
	res, err := eng.TZ.Reload(ctx)
	if err != nil {
		log.Error("SIGHUP: tz database reload failed", "err", err)
		return
	}
	log.Info("SIGHUP: tz database reloaded", "tz_version", res.Version, "previous_tz_version", res.PreviousVersion,
		"zones_changed", len(res.Changed), "shards", res.Shards, "shards_pending", res.Pending,
		"tz_label", res.Label, "previous_tz_label", res.PreviousLabel)
}
