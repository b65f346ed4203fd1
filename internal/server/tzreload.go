package server

import (
	"net/http"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
)

// reloadTZ answers POST /v1/admin/reload-tz (admins only): the engine
// reads the tz database again and moves the firings whose zone's rules
// changed (engine.TZ.Reload), as SIGHUP does.
func (s *Server) reloadTZ(r *http.Request, w http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	var none struct{}
	if err := decodeBody(w, r, &none, true); err != nil {
		return 0, nil, err
	}
	res, err := s.eng.TZ.Reload(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, tzReloadOut(res), nil
}

func tzReloadOut(res engine.TZReloadResult) api.TZReload {
	out := api.TZReload{PreviousTZVersion: res.PreviousVersion, TZVersion: res.Version,
		PreviousTZLabel: res.PreviousLabel, TZLabel: res.Label, Zones: []api.TZZoneMoves{},
		Shards: res.Shards, ShardsPending: res.Pending, ShardsFenced: res.Fenced}
	for _, m := range res.Changed {
		out.Zones = append(out.Zones, api.TZZoneMoves{Zone: m.Zone, Schedules: m.Schedules, Moved: m.Moved,
			Canceled: m.Canceled, Kept: m.Kept, Replanned: m.Replanned})
	}
	return out
}
