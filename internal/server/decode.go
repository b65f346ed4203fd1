package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/sched-dev/sched/api"
)

// Limits on request bodies, so that no client can hold a connection or the
// server's memory with a huge or deeply nested body. A body holds at most
// one payload of record.MaxPayload (256 KiB) plus the schedule's other
// fields; MaxBody leaves ample room for those and stops anything bigger
// before it is read into memory.
const (
	MaxBody  = 1 << 20
	MaxDepth = 64
)

// decodeBody reads r's body into v: at most MaxBody bytes, valid UTF-8,
// nested at most MaxDepth deep, exactly one JSON value with no field v does
// not know (a tenant_id in the body is refused here: the tenant never comes
// from the body). An empty body is allowed only when optional is set, and
// leaves v as it was.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	return decodeBodyMax(w, r, v, optional, MaxBody)
}

// decodeBodyMax is decodeBody with a route's own limit on the body
// (maxBodyOf).
func decodeBodyMax(w http.ResponseWriter, r *http.Request, v any, optional bool, limit int64) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	// The read deadline set for the body must not outlive it: once the body
	// is read, the server watches the connection for the client going away,
	// and a deadline there would cancel a long poll.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{status: http.StatusRequestEntityTooLarge, code: api.CodeTooLarge,
				msg: fmt.Sprintf("the request body is over the limit of %d bytes", limit)}
		}
		return badRequest("cannot read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return badRequest("the request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return badRequest("the request body is not valid UTF-8")
	}
	if d := jsonDepth(body); d > MaxDepth {
		return badRequest(fmt.Sprintf("the request body nests deeper than %d levels", MaxDepth))
	}
	return decodeJSON(body, v, "the request body")
}

// decodeJSON reads exactly one JSON value from b into v, refusing fields
// v does not know; what names b in the error (the body, or one item of
// it).
func decodeJSON(b []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest(what + " is not the JSON expected: " + jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest(what + " has data after its JSON value")
	}
	return nil
}

// jsonProblem words a decoding error without quoting the body: the
// offending value could be (part of) a payload.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("field %s must be a JSON %s", te.Field, jsonKind(te.Type.Kind().String()))
		}
		return "want a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends too early"
	}
	// DisallowUnknownFields: `json: unknown field "x"`. The name is the
	// caller's own key, short enough to echo (the body is capped).
	if msg := err.Error(); len(msg) < 200 {
		return msg
	}
	return "malformed JSON"
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "number"
	case "slice":
		return "array"
	case "struct", "map":
		return "object"
	}
	return k
}

// jsonDepth is the deepest nesting of arrays and objects in b, counted
// without decoding (so a body nested 10,000 deep costs one pass over its
// bytes, not the decoder's recursion). Brackets inside strings do not
// count.
func jsonDepth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}
