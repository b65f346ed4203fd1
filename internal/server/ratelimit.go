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
		return fmt.Errorf("server: MaxWaitingClaimsPerTenant %d: must be positive, or 0 for MaxWaitingClaims", cfg.MaxWaitingClaimsPerTenant)
	}
	if cfg.APIRate == 0 {
		cfg.APIRate = DefaultAPIRate
	}
	if cfg.APIBurst == 0 {
		cfg.APIBurst = defaultBurst(cfg.APIRate)
	}
	if cfg.MaxWaitingClaimsPerTenant == 0 || cfg.MaxWaitingClaimsPerTenant > cfg.MaxWaitingClaims {
		cfg.MaxWaitingClaimsPerTenant = cfg.MaxWaitingClaims
	}
	return nil
}

// defaultBurst is the burst of a rate given without one: two seconds'
// worth, at least one request.
func defaultBurst(rate float64) int {
	return int(max(1, math.Min(math.Ceil(2*rate), math.MaxInt32)))
}

// limits holds a server's per-tenant counts: a token bucket of API
// requests per tenant, and the claims with a wait each tenant has.
type limits struct {
	rate    float64
	burst   int
	rateFor func(tenant string) (float64, int, bool)
	now     func() time.Time // time.Now; tests set their own

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
	waiting   map[string]int // claims with a wait, by tenant; none: absent
}

func newLimits(cfg Config) *limits {
	return &limits{rate: cfg.APIRate, burst: cfg.APIBurst, rateFor: cfg.APIRateFor, now: time.Now,
		buckets: map[string]*bucket{}, waiting: map[string]int{}}
}

// bucket is a token bucket: it holds up to burst tokens, gains rate a
// second, and a request takes one.
type bucket struct {
	tokens float64
	last   time.Time // when tokens was last brought up to date
}

// sweepEvery is how often buckets are dropped that have refilled: a full
// bucket is what a tenant without one gets, so dropping it changes
// nothing, and the map holds only the tenants active in the last moments.
const sweepEvery = 30 * time.Second

// quota is tenant's rate and burst: the hook's, else the configured ones.
func (l *limits) quota(tenant string) (float64, int) {
	if l.rateFor != nil {
		if rate, burst, ok := l.rateFor(tenant); ok && rate > 0 && !math.IsInf(rate, 0) {
			if burst <= 0 {
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
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		for t, b := range l.buckets {
			r, bu := l.quota(t)
			if b.refill(now, r, bu) >= float64(bu) {
				delete(l.buckets, t)
			}
		}
		l.lastSweep = now
	}
	b := l.buckets[tenant]
	if b == nil {
		b = &bucket{tokens: float64(burst), last: now}
		l.buckets[tenant] = b
	}
	if b.refill(now, rate, burst) >= 1 {
		b.tokens--
		return true, 0, rate
	}
	return false, time.Duration((1 - b.tokens) / rate * float64(time.Second)), rate
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

// allowRate takes a request of r's tenant from its API request rate
// quota. Over the quota it answers 429 rate_limited with Retry-After
// (whole seconds, at least 1) and returns false. The health probes and
// /metrics never come here: only the /v1 routes are limited.
func (s *Server) allowRate(w http.ResponseWriter, r *http.Request) bool {
	ok, retry, rate := s.limits.take(s.limitTenant(r))
	if ok {
		return true
	}
	secs := max(1, int(math.Ceil(retry.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSON(w, http.StatusTooManyRequests, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeRateLimited,
		Message: fmt.Sprintf("API request rate quota of %s requests/s exceeded; retry after %ds", strconv.FormatFloat(rate, 'f', -1, 64), secs)}})
	return false
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
		w.Header().Set("Retry-After", "1")
		return nil, &apiError{status: http.StatusTooManyRequests, code: api.CodeTooManyWaiting,
			msg: fmt.Sprintf("this daemon already serves %d claims with a wait, its limit (schedd --max-waiting-claims); retry after a pause, or claim without a wait", cap(s.waitSlots))}
	}
}
