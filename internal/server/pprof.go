package server

import (
	"net/http"
	"net/http/pprof"
)

// debugRoutes serves Go's runtime profiles under /debug/pprof/, to admins
// only: a CPU profile of a running daemon is how the time of a burst is
// split between HTTP, the engine and the store (schedctl bench --profile
// takes one). A profile shows the daemon's code paths and timing, never a
// payload, but it costs CPU while it runs, so a tenant's token may not
// start one.
func (s *Server) debugRoutes(mux *http.ServeMux) {
	admin := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if _, ok := s.guard(w, r, true); !ok {
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /debug/pprof/", admin(pprof.Index))
	mux.HandleFunc("GET /debug/pprof/profile", admin(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/trace", admin(pprof.Trace))
	mux.HandleFunc("GET /debug/pprof/symbol", admin(pprof.Symbol))
}
