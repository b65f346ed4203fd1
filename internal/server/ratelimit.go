package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/metrics"
)

// Defaults of the per-tenant API request rate (Config.APIRate,
// Config.APIBurst). They are far above what one node serves on SQLite, so
// that a daemon with one tenant is never slowed by them; they exist to
// keep one tenant from taking a shared node's whole capacity, and are
// meant to be lowered per tenant (Config.APIRateFor).
const (
	DefaultAPIRate  = 10_000 // requests per second, per tenant, per node
	DefaultAPIBurst = 20_000 // requests taken at once after an idle spell
)

// DefaultAuthFailureRate is each client address's budget of failed
// authentications (401 answers) per second when Config.AuthFailureRate is
// not set, with a burst of twice that. A client with a good token fails
// none; one with a revoked token or a typo fails a few and stops, and its
// retries are answered 429 with Retry-After rather than 401 for a second
// or two. A flood of bad tokens from one address then costs the store at
// most this many reads a second, however fast it is sent.
const DefaultAuthFailureRate = 10

// WaitingClaimsShare is the part of MaxWaitingClaims one tenant may hold
// when Config.MaxWaitingClaimsPerTenant is not set: a quarter, so that at
// least four tenants' workers are needed to fill the daemon, and a tenant
// that fills its share leaves three quarters to the others. A tenth would
// cut a tenant's workers at 100 long polls per node by default, which a
// fleet with a few queues per worker reaches; a tenant that needs more on
// one node is given them with --max-waiting-claims-per-tenant.
const WaitingClaimsShare = 4

// limitTenant is the tenant a request's limits are counted against: its
// API request rate and its claims with a wait. It is the tenant the
// request acts as (principal.go).
func (s *Server) limitTenant(r *http.Request) string { return tenantOf(r) }

// tenantAPIRate is the APIRateFor of a server whose config has none: the
// tenant's quota of API requests per second (its own, else the engine's
// default for every tenant), from the engine's cached copy of the tenant;
// not ok (the server's APIRate) when neither sets one or the store does
// not answer.
func tenantAPIRate(e *engine.Engine) func(string) (float64, int, bool) {
	return func(tenant string) (float64, int, bool) {
		_, q, err := e.Tenants.Limits(context.Background(), tenant)
		if err != nil || q.APIRequestsPerSecond <= 0 {
			return 0, 0, false
		}
		return float64(q.APIRequestsPerSecond), 0, true
	}
}

// setLimitDefaults checks the limits of cfg and fills in their defaults.
func setLimitDefaults(cfg *Config) error {
	switch {
	case math.IsNaN(cfg.APIRate) || math.IsInf(cfg.APIRate, 0) || cfg.APIRate < 0:
		return fmt.Errorf("server: APIRate %v: must be a positive number of requests per second, or 0 for the default", cfg.APIRate)
	case cfg.APIBurst < 0:
		return fmt.Errorf("server: APIBurst %d: must be positive, or 0 for twice the rate", cfg.APIBurst)
	case cfg.MaxWaitingClaimsPerTenant < 0:
		return fmt.Errorf("server: MaxWaitingClaimsPerTenant %d: must be positive, or 0 for a share of MaxWaitingClaims", cfg.MaxWaitingClaimsPerTenant)
	case math.IsNaN(cfg.AuthFailureRate) || math.IsInf(cfg.AuthFailureRate, 0) || cfg.AuthFailureRate < 0:
		return fmt.Errorf("server: AuthFailureRate %v: must be a positive number of failures per second, or 0 for the default", cfg.AuthFailureRate)
	}
	if cfg.APIRate == 0 {
		cfg.APIRate = DefaultAPIRate
	}
	if cfg.APIBurst == 0 {
		cfg.APIBurst = defaultBurst(cfg.APIRate)
	}
	if cfg.MaxWaitingClaimsPerTenant == 0 {
		cfg.MaxWaitingClaimsPerTenant = max(1, cfg.MaxWaitingClaims/WaitingClaimsShare)
	}
	cfg.MaxWaitingClaimsPerTenant = min(cfg.MaxWaitingClaimsPerTenant, cfg.MaxWaitingClaims)
	if cfg.AuthFailureRate == 0 {
		cfg.AuthFailureRate = DefaultAuthFailureRate
	}
	return nil
}

// defaultBurst is the burst of a rate given without one: two seconds'
// worth, at least one request.
func defaultBurst(rate float64) int {
	return int(max(1, math.Min(math.Ceil(2*rate), math.MaxInt32)))
}

// limits holds a server's per-tenant and per-client counts: a token
// bucket of API requests per tenant, the claims with a wait each tenant
// has, and a token bucket of failed authentications per client address.
type limits struct {
	rate      float64
	burst     int
	rateFor   func(tenant string) (float64, int, bool)
	authRate  float64
	authBurst int
	now       func() time.Time // time.Now; tests set their own

	rates     bucketSet // API requests, by tenant
	authFails bucketSet // failed authentications, by client (ClientOf)
	vouched   vouched   // tokens that authenticated lately, over TCP

	mu      sync.Mutex
	waiting map[string]int // claims with a wait, by tenant; none: absent
}

func newLimits(cfg Config) *limits {
	return &limits{rate: cfg.APIRate, burst: cfg.APIBurst, rateFor: cfg.APIRateFor,
		authRate: cfg.AuthFailureRate, authBurst: defaultBurst(cfg.AuthFailureRate), now: time.Now,
		rates: bucketSet{m: map[string]*bucket{}}, authFails: bucketSet{m: map[string]*bucket{}},
		waiting: map[string]int{}}
}

// bucket is a token bucket: it holds up to burst tokens, gains rate a
// second, and a request takes one.
type bucket struct {
	tokens float64
	last   time.Time // when tokens was last brought up to date
}

// bucketSet is a token bucket per key (a tenant, a client address), each
// under its own lock so that a flood counted in one set does not wait on
// the other.
type bucketSet struct {
	mu        sync.Mutex
	m         map[string]*bucket
	lastSweep time.Time
}

// sweepEvery is how often buckets are dropped that have refilled: a full
// bucket is what a key without one gets, so dropping it changes nothing,
// and a set holds only the keys active in the last moments, however many
// there have been.
const sweepEvery = 30 * time.Second

// sweep drops, at most every sweepEvery, the buckets that have refilled
// to the burst quota gives their key. The caller holds s.mu.
func (s *bucketSet) sweep(now time.Time, quota func(key string) (float64, int)) {
	if now.Sub(s.lastSweep) < sweepEvery {
		return
	}
	for k, b := range s.m {
		r, bu := quota(k)
		if b.refill(now, r, bu) >= float64(bu) {
			delete(s.m, k)
		}
	}
	s.lastSweep = now
}

// get returns key's bucket brought up to now; a key without one gets a
// full bucket. The caller holds s.mu.
func (s *bucketSet) get(key string, now time.Time, rate float64, burst int) *bucket {
	b := s.m[key]
	if b == nil {
		b = &bucket{tokens: float64(burst), last: now}
		s.m[key] = b
	}
	b.refill(now, rate, burst)
	return b
}

// quota is tenant's rate and burst: the hook's, else the configured ones.
func (l *limits) quota(tenant string) (float64, int) {
	if l.rateFor != nil {
		if rate, burst, ok := l.rateFor(tenant); ok && rate > 0 && !math.IsInf(rate, 0) {
			switch {
			case burst > 0:
			case rate == l.rate:
				// The daemon's rate (every tenant without one of its own
				// has it): the daemon's burst, --api-burst.
				burst = l.burst
			default:
				burst = defaultBurst(rate)
			}
			return rate, burst
		}
	}
	return l.rate, l.burst
}

// take takes a token from tenant's bucket. When there is none it returns
// how long until there is one, and the quota refused.
func (l *limits) take(tenant string) (ok bool, retry time.Duration, rate float64) {
	rate, burst := l.quota(tenant)
	now := l.now()
	s := &l.rates
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now, l.quota)
	b := s.get(tenant, now, rate, burst)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0, rate
	}
	return false, b.until(rate), rate
}

// authQuota is every client's budget of failed authentications.
func (l *limits) authQuota(string) (float64, int) { return l.authRate, l.authBurst }

// authSpent reports whether client has no failed authentication left in
// its budget, and if so how long until it has one. It only reads: a
// client that never failed holds no bucket.
func (l *limits) authSpent(client string) (spent bool, retry time.Duration) {
	now := l.now()
	s := &l.authFails
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.m[client]
	if b == nil || b.refill(now, l.authRate, l.authBurst) >= 1 {
		return false, 0
	}
	return true, b.until(l.authRate)
}

// authFailed takes a failed authentication from client's budget. Requests
// that passed authSpent together may fail together; the bucket stops at
// empty, and how many pass at once is bounded by the client's
// connections.
func (l *limits) authFailed(client string) {
	now := l.now()
	s := &l.authFails
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now, l.authQuota)
	b := s.get(client, now, l.authRate, l.authBurst)
	b.tokens = max(0, b.tokens-1)
}

// refill brings b's tokens up to now and returns them.
func (b *bucket) refill(now time.Time, rate float64, burst int) float64 {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = math.Min(float64(burst), b.tokens+d.Seconds()*rate)
		b.last = now
	}
	b.tokens = math.Min(b.tokens, float64(burst)) // the quota may have been lowered
	return b.tokens
}

// until is how long b takes to hold one token at rate.
func (b *bucket) until(rate float64) time.Duration {
	return time.Duration((1 - b.tokens) / rate * float64(time.Second))
}

// tooManyRequests answers 429 rate_limited with Retry-After: retry in
// whole seconds, at least 1, which message (given them) also says.
func tooManyRequests(w http.ResponseWriter, retry time.Duration, message func(secs int) string) {
	secs := max(1, int(math.Ceil(retry.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSON(w, http.StatusTooManyRequests, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeRateLimited, Message: message(secs)}})
}

// allowRate takes a request of r's tenant from its API request rate
// quota. Over the quota it answers 429 rate_limited with Retry-After
// (whole seconds, at least 1) and returns false. The health probes and
// /metrics never come here: only the /v1 routes are limited.
func (s *Server) allowRate(w http.ResponseWriter, r *http.Request) bool {
	ok, retry, rate := s.limits.take(s.limitTenant(r))
	if ok {
		return true
	}
	var msg string
	tooManyRequests(w, retry, func(secs int) string {
		msg = fmt.Sprintf("API request rate quota of %s requests/s exceeded; retry after %ds", strconv.FormatFloat(rate, 'f', -1, 64), secs)
		return msg
	})
	s.logRefused(r, api.CodeRateLimited, msg)
	return false
}

// authClient is the client r's failed authentications are counted
// against (ClientOf its remote address), after checking that it has some
// left: when it has none, r is answered 429 rate_limited with Retry-After
// before its token is looked up (a store read), so that a flood of bad
// tokens costs the store nothing past the budget, and counted, unless its
// token authenticated lately (vouched): a good client behind the same
// address is not locked out by a bad one. ok false:
// answered. "" (not counted): a request over the Unix socket, whose peer
// is the daemon's own user.
func (s *Server) authClient(w http.ResponseWriter, r *http.Request) (client string, ok bool) {
	if isLocal(r) {
		return "", true
	}
	client = ClientOf(r.RemoteAddr)
	if client == "" {
		return "", true
	}
	spent, retry := s.limits.authSpent(client)
	if !spent {
		return client, true
	}
	if tok, ok := bearerToken(r); ok && s.limits.vouched.has(tok, s.limits.now()) {
		return client, true // a token good a moment ago: another client behind the address
	}
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.Limits.AuthFailuresLimited.Inc()
	}
	var msg string
	tooManyRequests(w, retry, func(secs int) string {
		msg = fmt.Sprintf("too many failed authentications from this address (over %s a second, schedd --auth-failure-rate); retry after %ds with a valid token",
			strconv.FormatFloat(s.limits.authRate, 'f', -1, 64), secs)
		return msg
	})
	s.logRefused(r, api.CodeRateLimited, msg)
	return "", false
}

// takeWaitSlot admits a claim with a wait under both caps: its tenant's
// (MaxWaitingClaimsPerTenant) and the daemon's (MaxWaitingClaims). It
// returns the function that gives the slots back, or the 429
// too_many_waiting naming the cap that is reached.
func (s *Server) takeWaitSlot(w http.ResponseWriter, r *http.Request) (func(), error) {
	tenant := s.limitTenant(r)
	l := s.limits
	l.mu.Lock()
	n := l.waiting[tenant]
	if n >= s.cfg.MaxWaitingClaimsPerTenant {
		l.mu.Unlock()
		s.noteWaitRefused(metrics.CapTenant)
		w.Header().Set("Retry-After", "1")
		return nil, &apiError{status: http.StatusTooManyRequests, code: api.CodeTooManyWaiting,
			msg: fmt.Sprintf("tenant %q already has %d claims with a wait, its limit (schedd --max-waiting-claims-per-tenant); retry after a pause, or claim without a wait", clip(tenant), n)}
	}
	l.waiting[tenant] = n + 1
	l.mu.Unlock()
	untenant := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.waiting[tenant]--; l.waiting[tenant] <= 0 {
			delete(l.waiting, tenant) // the map holds only tenants with claims waiting
		}
	}
	select {
	case s.waitSlots <- struct{}{}:
		return func() { <-s.waitSlots; untenant() }, nil
	default:
		untenant()
		s.noteWaitRefused(metrics.CapDaemon)
		w.Header().Set("Retry-After", "1")
		return nil, &apiError{status: http.StatusTooManyRequests, code: api.CodeTooManyWaiting,
			msg: fmt.Sprintf("this daemon already serves %d claims with a wait, its limit (schedd --max-waiting-claims); retry after a pause, or claim without a wait", cap(s.waitSlots))}
	}
}

// noteWaitRefused counts a claim with a wait refused at capName.
func (s *Server) noteWaitRefused(capName string) {
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.Limits.WaitingClaimsRefused.WithLabelValues(capName).Inc()
	}
}
