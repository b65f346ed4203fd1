package server

import (
	"net/http"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/engine"
)

// requestWho is who a request turned out to be, for its log line: common
// puts an empty one in the request's context before the route runs, and
// guard fills it in once the request has authenticated (the handlers see
// a request derived from common's, so the line, written after them, needs
// a pointer both share). The request's goroutine alone uses it.
type requestWho struct {
	tenant string // the tenant it acted as; "" before authentication
	token  string // the name of the token it authenticated with; "" for none
}

type requestWhoKey struct{}

// noteActor records a, the actor r authenticated as, for r's log line.
func noteActor(r *http.Request, a engine.Actor) {
	if w, ok := r.Context().Value(requestWhoKey{}).(*requestWho); ok {
		w.tenant, w.token = a.TenantID, a.Token
	}
}

// attrs are the log attributes of who: tenant and token when known.
func (w *requestWho) attrs() []any {
	var out []any
	if w.tenant != "" {
		out = append(out, "tenant", w.tenant)
	}
	if w.token != "" {
		out = append(out, "token", w.token)
	}
	return out
}

// whoOf returns the requestWho common put in r's context (an empty one
// outside common, in tests that call handlers directly).
func whoOf(r *http.Request) *requestWho {
	if w, ok := r.Context().Value(requestWhoKey{}).(*requestWho); ok {
		return w
	}
	return &requestWho{}
}

// refusalLogEvery is how often at most a refusal by one limit of one
// tenant is logged: a client that keeps hammering a spent quota gets a
// line every refusalLogEvery counting the refusals since the last one,
// not a line per request (as the listeners' refused connections, in
// internal/daemon/connlimit.go).
const refusalLogEvery = 10 * time.Second

// maxRefusalKeys bounds the (code, tenant) pairs remembered; past it they
// are all forgotten, and the next refusal of each is logged at once.
const maxRefusalKeys = 10_000

// refusals throttles the log lines of refused requests.
type refusals struct {
	mu   sync.Mutex
	last map[refusalKey]*refusalMark
}

type refusalKey struct{ code, tenant string }

// refusalMark is when a key's refusal was last logged, and how many
// refusals it has had since.
type refusalMark struct {
	at      time.Time
	refused int
}

// logRefused logs, at info, a request that a quota or limit refused (a
// 429 answer): its route pattern, the tenant and token when it had
// authenticated, the answer's code and message (which names the limit and
// its value, never a payload), and how many refusals by the same code of
// the same tenant the line stands for (see refusalLogEvery).
func (s *Server) logRefused(r *http.Request, code, msg string) {
	who := whoOf(r)
	key := refusalKey{code: code, tenant: who.tenant}
	now := s.limits.now()
	rl := &s.refusals
	rl.mu.Lock()
	if rl.last == nil || len(rl.last) >= maxRefusalKeys {
		rl.last = map[refusalKey]*refusalMark{}
	}
	m := rl.last[key]
	if m == nil {
		m = &refusalMark{}
		rl.last[key] = m
	}
	m.refused++
	if !m.at.IsZero() && now.Sub(m.at) < refusalLogEvery {
		rl.mu.Unlock()
		return
	}
	refused := m.refused
	m.at, m.refused = now, 0
	rl.mu.Unlock()
	s.log.Info("request refused by a limit", append(append([]any{"route", routeOf(r), "code", code}, who.attrs()...),
		"message", msg, "refused", refused)...)
}
