package server

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Tokens that authenticated lately. When a client address has spent its
// budget of failed authentications (a flood of bad tokens from it), its
// requests are refused before their token is looked up; but a worker
// behind the same address (a NAT, a proxy, the same host) whose token was
// good a moment ago is another client, and is let through to the lookup
// as usual, so a revocation is still seen at once. A flooder cannot guess
// a token that was good, so its requests cost no store read.
const (
	// maxVouched bounds the hashes kept: memory does not grow with the
	// number of tokens. Past it the least recently used are forgotten.
	maxVouched = 10_000
	// vouchedFor is how long a token stays vouched for after its last
	// success.
	vouchedFor = 10 * time.Minute
)

// vouched is the set of tokens (by SHA-256) that authenticated within
// vouchedFor.
type vouched struct {
	mu sync.Mutex
	m  map[[32]byte]time.Time // hash -> last success
}

// add vouches for token at now.
func (v *vouched) add(token string, now time.Time) {
	h := sha256.Sum256([]byte(token))
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[[32]byte]time.Time{}
	}
	if _, ok := v.m[h]; !ok && len(v.m) >= maxVouched {
		v.forget(now)
	}
	v.m[h] = now
}

// drop forgets token: it failed to authenticate.
func (v *vouched) drop(token string) {
	h := sha256.Sum256([]byte(token))
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.m, h)
}

// has reports whether token authenticated within vouchedFor of now.
func (v *vouched) has(token string, now time.Time) bool {
	h := sha256.Sum256([]byte(token))
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.m[h]
	return ok && now.Sub(at) < vouchedFor
}

// forget drops the expired hashes and, if the set is still full, the
// less recently used half: the set keeps the tokens in use. v.mu is held.
func (v *vouched) forget(now time.Time) {
	ats := make([]time.Time, 0, len(v.m))
	for h, at := range v.m {
		if now.Sub(at) >= vouchedFor {
			delete(v.m, h)
		} else {
			ats = append(ats, at)
		}
	}
	if len(v.m) < maxVouched {
		return
	}
	slices.SortFunc(ats, time.Time.Compare)
	median := ats[len(ats)/2]
	for h, at := range v.m {
		if !at.After(median) {
			delete(v.m, h)
		}
	}
}

// bearerToken is r's bearer token ("" when it sends none): the scheme in
// any case, the token trimmed.
func bearerToken(r *http.Request) (token string, ok bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}
