package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
)

// Who a request is. Every request acts as exactly one tenant:
//
//   - with "Authorization: Bearer TOKEN": the tenant of that token, with
//     its role (engine.Tenants.Authenticate reads the store on every
//     request, so a revoked token or a disabled tenant is refused at once
//     on every node); or the daemon's operator token (Config.Token), which
//     is an admin of DefaultTenant;
//   - without a token, over the daemon's Unix socket (a request Local
//     marks): the admin of DefaultTenant. The socket is the owner's alone
//     (mode 0600 in a private directory, peer credentials checked), so it
//     needs no setup;
//   - without a token over TCP: refused, 401.
//
// Every 401 takes one from its client address's budget of failed
// authentications (ratelimit.go, authClient); an address that has spent
// it is answered 429 before its token is looked up.
//
// An admin may act as another tenant with the api.HeaderTenant; a tenant's
// token may not (403).

type localKey struct{}

// Local marks every request h serves as having come over the daemon's own
// Unix socket, whose peer the listener has checked: without a token, such
// a request acts as the admin of DefaultTenant. The daemon wraps the
// handler of its Unix listeners with it, never a TCP one's.
func Local(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), localKey{}, true)))
	})
}

func isLocal(r *http.Request) bool {
	v, _ := r.Context().Value(localKey{}).(bool)
	return v
}

// errNoCredentials and engine.ErrUnauthenticated answer 401; any other
// error of authenticate is the store's (503 or 500 by classify).
var errNoCredentials = errors.New("no token")

// authenticate returns who r is (see above).
func (s *Server) authenticate(r *http.Request) (engine.Actor, error) {
	if r.Header.Get("Authorization") == "" {
		if isLocal(r) {
			return engine.Actor{TenantID: record.DefaultTenant, Admin: true, Local: true}, nil
		}
		return engine.Actor{}, errNoCredentials
	}
	// The scheme is matched in any case ("bearer", "BEARER"): HTTP treats
	// authentication scheme names as case-insensitive.
	token, ok := bearerToken(r)
	if !ok {
		return engine.Actor{}, engine.ErrUnauthenticated
	}
	if s.cfg.Token != "" {
		// Both sides hashed, so neither the length nor the content of
		// the operator token leaks through timing.
		got := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) == 1 {
			return engine.Actor{TenantID: record.DefaultTenant, Admin: true}, nil
		}
	}
	return s.eng.Tenants.Authenticate(r.Context(), token)
}

// actorFor authenticates r and applies the api.HeaderTenant: the actor the
// request runs as. A status and body to answer instead when it may not run.
func (s *Server) actorFor(r *http.Request) (engine.Actor, error) {
	a, err := s.authenticate(r)
	if err != nil {
		return a, err
	}
	if as := r.Header.Get(api.HeaderTenant); as != "" && as != a.TenantID {
		if a.TenantID, err = actAs(a, as, api.HeaderTenant); err != nil {
			return a, err
		}
	}
	return a, nil
}

// answerAuthError writes the answer of an actorFor error and reports
// whether it did (false: err is the store's, for classify).
func (s *Server) answerAuthError(w http.ResponseWriter, err error) bool {
	if isUnauthorized(err) {
		s.unauthorized(w)
		return true
	}
	var ae *apiError
	if errors.As(err, &ae) {
		writeJSON(w, ae.status, api.ErrorBody{Error: api.ErrorDetail{Code: ae.code, Message: ae.msg, Field: ae.field}})
		return true
	}
	return false
}

// isUnauthorized reports whether err of actorFor is answered 401: no
// credentials, or ones that stand for no one.
func isUnauthorized(err error) bool {
	return errors.Is(err, errNoCredentials) || errors.Is(err, engine.ErrUnauthenticated)
}

func (s *Server) unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="sched"`)
	writeJSON(w, http.StatusUnauthorized, api.ErrorBody{Error: api.ErrorDetail{
		Code: api.CodeUnauthorized, Message: "missing, unknown or revoked token (or a disabled tenant): send Authorization: Bearer TOKEN"}})
}

func forbidden(msg string) error {
	return &apiError{status: http.StatusForbidden, code: api.CodeForbidden, msg: msg}
}

// tenantOf is the tenant r acts as (set by api from actorFor).
func tenantOf(r *http.Request) string { return engine.ActorOf(r.Context()).TenantID }

// isAdmin reports whether r's actor is an admin.
func isAdmin(r *http.Request) bool { return engine.ActorOf(r.Context()).Admin }

// guard runs the authentication of a route outside the api wrapper (the
// 405 and 404 answers, /metrics): it answers and returns false when the
// request may not go on. admin asks for an admin.
func (s *Server) guard(w http.ResponseWriter, r *http.Request, admin bool) (*http.Request, bool) {
	client, ok := s.authClient(w, r)
	if !ok {
		return r, false
	}
	a, err := s.actorFor(r)
	if err == nil && client != "" {
		if tok, ok := bearerToken(r); ok {
			s.limits.vouched.add(tok, s.limits.now())
		}
	}
	if err != nil {
		if client != "" && isUnauthorized(err) {
			s.limits.authFailed(client)
			if tok, ok := bearerToken(r); ok {
				// A token good lately and refused now (revoked, its
				// tenant disabled) is vouched for no more: else its
				// holder's requests would each cost a lookup past the
				// address's budget for the rest of vouchedFor.
				s.limits.vouched.drop(tok)
			}
		}
		if !s.answerAuthError(w, err) {
			code, detail := classify(err, "")
			writeJSON(w, code, api.ErrorBody{Error: detail})
		}
		return r, false
	}
	noteActor(r, a)
	if admin && !a.Admin {
		s.answerAuthError(w, forbidden("this needs an admin token (of the default tenant); a tenant's token may not"))
		return r, false
	}
	return r.WithContext(engine.WithActor(r.Context(), a)), true
}
