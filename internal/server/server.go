// Package server is schedd's HTTP/JSON API: the versioned routes under
// /v1, the health probes, and the translation between the wire types of
// package api and the engine's. One Handler serves every listener (Unix
// socket or TCP); docs/api.md lists every route, body and error code.
//
// Every error answer is an api.ErrorBody with a stable code, decided in one
// place (classify). Bodies are read defensively, so that no client can hold
// a connection or memory with a huge or malformed body: a size cap, valid
// UTF-8, a nesting cap checked before decoding, unknown fields and trailing
// data refused. The tenant never comes from a request's body: it is the
// one its credentials stand for (principal.go).
package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/timetable"
)

// DefaultTenant is the operator's tenant (record.DefaultTenant).
const DefaultTenant = record.DefaultTenant

// Request time limits. Long polls are bounded by their own wait; every
// other request by RequestTimeout. The server sets a write deadline per
// request rather than a global WriteTimeout, which would cut long polls.
const (
	RequestTimeout = 30 * time.Second
	BodyTimeout    = 30 * time.Second // reading a request body
	MaxClaimWait   = 5 * time.Minute
	writeSlack     = 30 * time.Second
	// StoreFullWindow: /readyz answers 503 for this long after a write
	// (the planner's or a request's) failed with store.ErrStoreFull, even
	// though the store still answers reads: a node that cannot write is
	// not ready, and its probe must say so.
	StoreFullWindow = 5 * time.Second
)

// Config configures a Server. Engine is required.
type Config struct {
	Engine *engine.Engine
	// Version is the daemon's version, sent as the Sched-Version header
	// and in /v1/status.
	Version string
	NodeID  string
	Shards  int
	// StoreDriver names the store in /v1/status: sqlite or postgres.
	StoreDriver string
	// Token, when set, is the operator's token: sent as "Authorization:
	// Bearer TOKEN" it acts as an admin of DefaultTenant. Tenants' own
	// tokens live in the store (engine.Tenants). See principal.go.
	Token  string
	Logger *slog.Logger
	// Ready reports whether the store answers; /readyz calls it. Nil
	// means always.
	Ready func(context.Context) error
	// Metrics are served at /metrics (with the token, when one is set)
	// and count the API's requests. Nil: no /metrics and no counts.
	Metrics *metrics.Metrics
	// Reconcile serves GET /v1/reconcile; nil: the route answers 503.
	Reconcile ReconcileFunc
	// WhatIf runs POST /v1/simulate; nil answers it 503 unavailable.
	WhatIf WhatIf
	// MaxWaitingClaims caps the claims with a wait (long polls) served at
	// once, each of which holds a connection and a goroutine for up to
	// MaxClaimWait; over it a claim with a wait is answered 429
	// too_many_waiting. Claims without a wait are not counted. Zero means
	// DefaultMaxWaitingClaims.
	MaxWaitingClaims int
	// APIRate is each tenant's quota of /v1 requests per second on this
	// node, and APIBurst how many it may send at once after a quiet
	// spell (a token bucket); over it a request is answered 429
	// rate_limited with Retry-After. Zero: DefaultAPIRate, and a burst of
	// twice the rate. The health probes and /metrics are not counted.
	APIRate  float64
	APIBurst int
	// APIRateFor, when set, gives a tenant's own rate and burst (ok
	// false: APIRate and APIBurst; burst 0: twice the rate). It is called
	// on every /v1 request, so it must be cheap. Nil: the tenant's quota
	// api_requests_per_second, from the engine's cached copy.
	APIRateFor func(tenant string) (perSecond float64, burst int, ok bool)
	// MaxWaitingClaimsPerTenant caps the claims with a wait one tenant
	// has at once, within MaxWaitingClaims, so that one tenant's workers
	// cannot take every slot; over it a claim with a wait is answered 429
	// too_many_waiting. Zero: a quarter of MaxWaitingClaims
	// (WaitingClaimsShare), at least 1; more than MaxWaitingClaims:
	// MaxWaitingClaims.
	MaxWaitingClaimsPerTenant int
	// AuthFailureRate is each client address's (ClientOf) budget of
	// failed authentications per second, with a burst of twice that:
	// once it is spent, every request from the address is answered 429
	// rate_limited with Retry-After, before its token is looked up, until
	// the budget refills. Requests over the Unix socket (Local) are not
	// counted. Zero: DefaultAuthFailureRate.
	AuthFailureRate float64
}

// DefaultMaxWaitingClaims is the cap on waiting claims when
// Config.MaxWaitingClaims is not set: far more workers than one daemon
// needs, far fewer connections than it can hold.
const DefaultMaxWaitingClaims = 1000

// Server is the API. Its handler is safe for concurrent use.
type Server struct {
	cfg       Config
	eng       *engine.Engine
	log       *slog.Logger
	tokenHash [32]byte
	handler   http.Handler

	// waitSlots holds one token per claim with a wait being served; its
	// capacity is the cap on them.
	waitSlots chan struct{}
	limits    *limits  // per-tenant request rates and waiting claims (ratelimit.go)
	refusals  refusals // throttles the log lines of refused requests (logging.go)

	drainCtx  context.Context // canceled by Drain
	drain     context.CancelFunc
	drainOnce sync.Once
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("server: config needs an Engine")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.MaxWaitingClaims < 0 {
		return nil, fmt.Errorf("server: MaxWaitingClaims %d: must be positive, or 0 for the default", cfg.MaxWaitingClaims)
	}
	if cfg.MaxWaitingClaims == 0 {
		cfg.MaxWaitingClaims = DefaultMaxWaitingClaims
	}
	if cfg.APIRateFor == nil {
		cfg.APIRateFor = tenantAPIRate(cfg.Engine)
	}
	if err := setLimitDefaults(&cfg); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, eng: cfg.Engine, log: cfg.Logger, waitSlots: make(chan struct{}, cfg.MaxWaitingClaims), limits: newLimits(cfg)}
	if cfg.Token != "" {
		s.tokenHash = sha256.Sum256([]byte(cfg.Token))
	}
	s.drainCtx, s.drain = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s, nil
}

// Handler is the http.Handler to serve on every listener.
func (s *Server) Handler() http.Handler { return s.handler }

// Drain starts a shutdown: /readyz answers 503, new claims are refused with
// 503 unavailable, and claims waiting in a long poll return at once with
// what they have (usually nothing). Other requests still run, so that what
// is committing finishes; http.Server.Shutdown then waits for them. Safe
// to call more than once.
func (s *Server) Drain() { s.drainOnce.Do(s.drain) }

func (s *Server) draining() bool { return s.drainCtx.Err() != nil }

// route is one method and path pattern and its handler. A handler returns
// the status and body of a success, or an error for classify.
type route struct {
	method, path string
	h            func(r *http.Request, w http.ResponseWriter) (int, any, error)
	notFound     string // the 404 message of the route
	admin        bool   // only an admin may call it (403 for a tenant's token)
}

// routeTable is every /v1 route (docs/api.md documents each; see
// TestRoutesDocumented).
func (s *Server) routeTable() []route {
	rs := []route{
		{"GET", "/v1/status", s.status, "", false},
		{"GET", "/v1/cluster", s.cluster, "", true},
		{"DELETE", "/v1/cluster/nodes/{id}", s.forgetNode, "no such node", true},
		{"POST", "/v1/schedules", s.createSchedule, "", false},
		{"POST", "/v1/schedules:batch", s.createSchedules, "", false},
		{"GET", "/v1/schedules", s.listSchedules, "", false},
		{"GET", "/v1/schedules/{ref}", s.getSchedule, "no such schedule", false},
		{"PUT", "/v1/schedules/{ref}", s.updateSchedule, "no such schedule", false},
		{"POST", "/v1/schedules/{ref}/pause", s.pauseSchedule, "no such schedule", false},
		{"POST", "/v1/schedules/{ref}/resume", s.resumeSchedule, "no such schedule", false},
		{"POST", "/v1/schedules/{ref}/cancel", s.cancelSchedule, "no such schedule", false},
		{"GET", "/v1/occurrences", s.listOccurrences, "no such schedule", false},
		{"GET", "/v1/occurrences/{id}", s.getOccurrence, "no such occurrence", false},
		{"GET", "/v1/occurrences/{id}/attempts", s.listAttempts, "no such occurrence", false},
		{"POST", "/v1/occurrences/{id}/heartbeat", s.heartbeat, "no such occurrence", false},
		{"POST", "/v1/occurrences/{id}/ack", s.ack, "no such occurrence", false},
		{"POST", "/v1/occurrences/{id}/nack", s.nack, "no such occurrence", false},
		{"POST", "/v1/occurrences/{id}/replay", s.replay, "no such occurrence", false},
		{"POST", "/v1/schedules/{ref}/trigger", s.trigger, "no such schedule", false},
		{"POST", "/v1/claims", s.claim, "", false},
		{"GET", "/v1/dlq", s.listDead, "no such schedule", false},
		{"POST", "/v1/dlq/replay", s.replayDead, "no such schedule", false},
		{"POST", "/v1/dlq/purge", s.purgeDead, "no such schedule", false},
		{"GET", "/v1/reconcile", s.reconcile, "no such schedule", false},
		{"GET", "/v1/simulate/outage", s.getOutage, "", true},
		{"POST", "/v1/simulate/outage", s.startOutage, "", true},
		{"POST", "/v1/simulate/outage/cancel", s.cancelOutage, "", true},
		{"POST", "/v1/simulate", s.simulate, "", true},
		{"GET", "/v1/audit", s.audit, "no such schedule", false},
		{"POST", "/v1/admin/reload-tz", s.reloadTZ, "", true},
	}
	rs = append(rs, s.targetRoutes()...)
	return append(rs, s.tenantRoutes()...)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	rs := s.routeTable()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range rs {
		mux.Handle(rt.method+" "+rt.path, s.api(rt))
		if allowed[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	// The same paths without a method catch the other methods, so that a
	// wrong method gets a JSON 405 rather than the mux's plain text.
	for _, p := range paths {
		allow := strings.Join(allowed[p], ", ")
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			if _, ok := s.guard(w, r, false); !ok {
				return
			}
			w.Header().Set("Allow", allow)
			writeJSON(w, http.StatusMethodNotAllowed, api.ErrorBody{Error: api.ErrorDetail{
				Code: api.CodeBadRequest, Message: fmt.Sprintf("method %s is not allowed here; use %s", r.Method, allow)}})
		})
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	s.debugRoutes(mux)
	if s.cfg.Metrics != nil {
		// An admin's: the series name tenants and show their activity.
		// Prometheus sends the token with authorization.credentials (or
		// bearer_token_file).
		h := s.cfg.Metrics.Handler()
		mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
			if _, ok := s.guard(w, r, true); !ok {
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			if _, ok := s.guard(w, r, false); !ok {
				return
			}
		}
		writeJSON(w, http.StatusNotFound, api.ErrorBody{Error: api.ErrorDetail{
			Code: api.CodeNotFound, Message: "no such route; see docs/api.md"}})
	})
	return s.common(mux)
}

// common wraps every request: the version header, panic recovery, and a
// structured log line at debug level (route pattern, status, size,
// duration, and who: the tenant the request acted as and the name of the
// token it authenticated with; never a path, a body or a header, so
// neither ids, names, payloads nor tokens reach the log).
func (s *Server) common(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		who := &requestWho{}
		r = r.WithContext(context.WithValue(r.Context(), requestWhoKey{}, who))
		w.Header().Set("Sched-Version", s.cfg.Version)
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		// Per-request deadlines instead of the server's ReadTimeout and
		// WriteTimeout, which would cut long polls: the body must arrive
		// within BodyTimeout (decodeBody lifts it once the body is read),
		// the answer within RequestTimeout and some slack (a claim moves
		// it past its wait). Errors mean the connection cannot take
		// deadlines; the request then runs without them.
		rc := http.NewResponseController(rec)
		_ = rc.SetReadDeadline(time.Now().Add(BodyTimeout))
		_ = rc.SetWriteDeadline(time.Now().Add(RequestTimeout + writeSlack))
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic serving a request", "route", routeOf(r), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !rec.wrote {
					writeJSON(rec, http.StatusInternalServerError, api.ErrorBody{Error: api.ErrorDetail{
						Code: api.CodeInternal, Message: "internal error; the daemon's log has the details"}})
				}
			}
			code := answered(r, rec)
			s.countRequest(r, code, time.Since(start))
			if s.log.Enabled(r.Context(), slog.LevelDebug) {
				attrs := []any{"route", routeOf(r), "status", code, "bytes", rec.bytes,
					"duration", time.Since(start).Round(time.Microsecond).String()}
				s.log.Debug("request", append(attrs, who.attrs()...)...)
			}
		}()
		if limit := maxBodyOf(r); r.ContentLength > limit {
			// Refused from its headers, before a byte of the body is read:
			// waiting for a body that will be refused anyway would let a
			// client hold the connection for BodyTimeout. The connection
			// is closed after the answer, as the body is not read.
			rec.Header().Set("Connection", "close")
			writeJSON(rec, http.StatusRequestEntityTooLarge, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeTooLarge,
				Message: fmt.Sprintf("the request body (Content-Length %d) is over the limit of %d bytes", r.ContentLength, limit)}})
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// api wraps a /v1 route: authentication and the route's role, deadlines,
// and the JSON answer.
func (s *Server) api(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, ok := s.guard(w, r, rt.admin)
		if !ok {
			return
		}
		if !s.allowRate(w, r) {
			return
		}
		if r.Header.Get("Origin") != "" {
			// The API is not for web pages: a page in a browser could
			// otherwise post to a daemon on loopback (a text/plain body
			// needs no CORS preflight).
			writeJSON(w, http.StatusBadRequest, api.ErrorBody{Error: api.ErrorDetail{
				Code: api.CodeBadRequest, Message: "requests from web browsers (with an Origin header) are refused"}})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		if rt.method == "POST" && rt.path == "/v1/claims" {
			// A long poll sets its own deadlines from its wait.
			cancel()
			ctx, cancel = context.WithCancel(r.Context())
		}
		defer cancel()
		status, body, err := rt.h(r.WithContext(ctx), w)
		if err != nil {
			s.eng.Cluster.NoteStoreErr(err) // readyz: not ready while writes fail with store_full
			code, detail := classify(err, notFoundMessage(rt.notFound, r))
			if code >= 500 && r.Context().Err() == nil { // not when the client went away
				// The error's text stays in the log: it may name internals.
				s.log.Warn("request failed", "route", routeOf(r), "code", detail.Code, "err", err)
			}
			if code == http.StatusTooManyRequests {
				s.logRefused(r, detail.Code, detail.Message)
			}
			if ra := retryAfter(err); ra != "" {
				w.Header().Set("Retry-After", ra)
			}
			writeJSON(w, code, api.ErrorBody{Error: detail})
			return
		}
		writeJSON(w, status, body)
	})
}

// notFoundMessage words a 404: the route's noun and the caller's own
// reference, so that an id of another tenant and a random one get the same
// answer and a caller cannot learn which ids exist in another tenant.
func notFoundMessage(what string, r *http.Request) string {
	ref := r.PathValue("ref")
	if ref == "" {
		ref = r.PathValue("id")
	}
	if ref == "" {
		ref = r.URL.Query().Get("schedule")
	}
	if what == "" || ref == "" {
		return what
	}
	return fmt.Sprintf("%s %q", what, clip(ref))
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	fail := func(msg string) {
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeUnavailable, Message: msg}})
	}
	if s.draining() {
		fail("shutting down")
		return
	}
	if s.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.cfg.Ready(ctx); err != nil {
			s.log.Warn("not ready", "err", err)
			fail("the store does not answer")
			return
		}
	}
	if s.eng.Cluster.StoreFullWithin(StoreFullWindow) {
		fail("the store is out of space: a write failed with store_full within the last " + StoreFullWindow.String())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok" + outageReady(s.eng.Outages.InProgress()) + "\n"))
}

// status answers GET /v1/status: this daemon, and the whole cluster's
// figures from the store (engine.Status).
func (s *Server) status(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	// An admin sees the whole cluster's figures; a tenant its own, read
	// from its rows alone (engine.Status.TenantID).
	var tenantID string
	if !isAdmin(r) {
		tenantID = tenantOf(r)
	}
	st, err := s.eng.Stats.Status(r.Context(), tenantID)
	if err != nil {
		return 0, nil, err
	}
	outage, err := s.eng.Outages.Current(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := apiStatus(st, s.cfg.Shards)
	out.Outage = apiOutage(outage, st.Now)
	out.Version, out.TZVersion, out.NodeID, out.Store = s.cfg.Version, timetable.TZVersion(), s.cfg.NodeID, s.cfg.StoreDriver
	return http.StatusOK, out, nil
}

// answered is the status a request is counted and logged with: the one
// written, except that a request whose client went away before the answer
// is 499 (client closed request), not the 5xx or the empty answer the
// server was left with. A worker that gives up a long poll is not a server
// error, in the metrics nor in the log, so alerts on either agree.
func answered(r *http.Request, rec *recorder) int {
	if r.Context().Err() != nil && (rec.status >= 500 || !rec.wrote) {
		return 499
	}
	return rec.status
}

// routeOf names a request's route by its pattern (method and path
// pattern, "POST /v1/occurrences/{id}/ack"), never by its path, which holds
// ids and names; "unmatched" for a path no route serves.
func routeOf(r *http.Request) string {
	if r.Pattern == "" || r.Pattern == "/" {
		return "unmatched"
	}
	return r.Pattern
}

// countRequest counts a request in the metrics by its route pattern (never
// its path, which holds ids) and status code (answered).
func (s *Server) countRequest(r *http.Request, code int, took time.Duration) {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	route := routeOf(r)
	m.HTTPRequests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.HTTPDuration.WithLabelValues(route).Observe(took.Seconds())
}

// cluster answers GET /v1/cluster from the store's node registry and
// shard leases, judged live at the engine's now.
func (s *Server) cluster(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	ctx := r.Context()
	nodes, err := s.eng.Cluster.Nodes(ctx)
	if err != nil {
		return 0, nil, err
	}
	leases, err := s.eng.Cluster.ShardLeases(ctx)
	if err != nil {
		return 0, nil, err
	}
	now := s.eng.Cluster.Now()
	return http.StatusOK, apiCluster(s.eng.Cluster.NodeID(), now, s.cfg.Shards, nodes, leases), nil
}

// writeJSON writes v as the JSON answer with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeInternal, Message: "cannot encode the answer"}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// recorder remembers the status and size of an answer for the log. Unwrap
// lets http.ResponseController reach the connection's deadlines.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
