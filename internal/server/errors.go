package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// apiError is an error answer decided by the server itself.
type apiError struct {
	status int
	code   string
	field  string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(msg string) error {
	return &apiError{status: http.StatusBadRequest, code: api.CodeBadRequest, msg: msg}
}

func invalidArg(field, msg string) error {
	return &apiError{status: http.StatusBadRequest, code: api.CodeInvalidArgument, field: field, msg: msg}
}

func notFound(msg string) error {
	return &apiError{status: http.StatusNotFound, code: api.CodeNotFound, msg: msg}
}

func unavailable(msg string) error {
	return &apiError{status: http.StatusServiceUnavailable, code: api.CodeUnavailable, msg: msg}
}

// classify is the one place where errors become answers: an HTTP status
// and an api.ErrorDetail with a stable code. notFoundMsg words a 404 for
// the route (the store's own message names tables and drivers). Anything
// unexpected is a 500 with a generic message: its text may name internals
// or, through a driver, stored data, which must never reach a client; the
// caller logs it.
func classify(err error, notFoundMsg string) (int, api.ErrorDetail) {
	var ae *apiError
	var ve *schedule.ValidationError
	var ie *timetable.InvalidError
	var qe *engine.QuotaError
	switch {
	case errors.As(err, &qe):
		return http.StatusTooManyRequests, api.ErrorDetail{Code: api.CodeQuotaExceeded, Message: qe.Error()}
	case errors.As(err, &ae):
		return ae.status, api.ErrorDetail{Code: ae.code, Message: ae.msg, Field: ae.field}
	case errors.As(err, &ve):
		return validation(ve.Field, ve.Message)
	case errors.As(err, &ie):
		return validation(ie.Field, ie.Msg)
	case errors.Is(err, store.ErrStaleAttempt):
		return http.StatusConflict, api.ErrorDetail{Code: api.CodeStaleAttempt,
			Message: "the attempt is not the occurrence's current one: its lease ran out and it was claimed again, or it already finished otherwise; stop working on it"}
	case errors.Is(err, store.ErrNotFound):
		if notFoundMsg == "" {
			notFoundMsg = "not found"
		}
		return http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: notFoundMsg}
	case errors.Is(err, store.ErrConflict):
		return http.StatusConflict, api.ErrorDetail{Code: api.CodeConflict, Message: conflictMessage(err)}
	case errors.Is(err, store.ErrBusy):
		return http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeStoreBusy,
			Message: "the store is locked by another process or transaction; nothing was written; retry"}
	case errors.Is(err, store.ErrUnavailable) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeStoreDown,
			Message: "the store cannot be reached or the connection to it was lost; a write may or may not have been applied; retry (create with an idempotency key)"}
	case errors.Is(err, store.ErrStoreFull):
		return http.StatusInsufficientStorage, api.ErrorDetail{Code: api.CodeStoreFull,
			Message: "the store is out of space; nothing was written; free space and retry"}
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable,
			Message: "the request took too long; it may or may not have been applied; retry (create with an idempotency key)"}
	case errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable,
			Message: "the request was canceled (the daemon is shutting down or the client went away)"}
	}
	return http.StatusInternalServerError, api.ErrorDetail{Code: api.CodeInternal,
		Message: "internal error; the daemon's log has the details"}
}

// validation maps the time engine's field names onto the API's (a
// schedule.ValidationError already uses the API's): the cron parser names the part of the expression ("minute field")
// where the request has one field, cron.
func validation(field, msg string) (int, api.ErrorDetail) {
	if strings.HasSuffix(field, " field") {
		field = "cron"
	}
	code := api.CodeInvalidArgument
	switch {
	case field == "time_zone":
		code = api.CodeInvalidTimeZone
	case field == "cron" && strings.Contains(msg, "can never fire"):
		code = api.CodeCronNeverFires
	case field == "payload" && strings.Contains(msg, "over the limit"):
		return http.StatusRequestEntityTooLarge, api.ErrorDetail{Code: api.CodeTooLarge, Message: msg, Field: field}
	}
	return http.StatusBadRequest, api.ErrorDetail{Code: code, Message: msg, Field: field}
}

// conflictMessage keeps the engine's sentence and drops the store's
// sentinel and driver text after it.
func conflictMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": store: "); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" || strings.HasPrefix(msg, "store:") {
		return "conflict: the record changed or a unique name or key is taken"
	}
	return msg
}

// retryAfter is the Retry-After header's value (whole seconds, rounded
// up) for an error that says when asking again may succeed (a
// QuotaError with RetryAfter > 0); "" for any other.
func retryAfter(err error) string {
	var qe *engine.QuotaError
	if !errors.As(err, &qe) || qe.RetryAfter <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((qe.RetryAfter+time.Second-1)/time.Second), 10)
}
