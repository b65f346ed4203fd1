package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// Paging. Every list answers at most limit rows and, when there may be
// more, a next_page token: the keyset position of the page's last row, so
// that the next page starts strictly after it. Rows added while a client
// pages never make another row appear twice or go missing. A token is
// opaque to clients (base64url of JSON) and names the list and the order it
// was made for; a token of another list or order is refused.

// pageToken is what a next_page token carries.
type pageToken struct {
	List string `json:"l"`           // schedules | occurrences | dlq | attempts
	Desc bool   `json:"d,omitempty"` // listed newest first
	ID   string `json:"i,omitempty"` // the last row's id (schedule or occurrence), or attempt number
	At   int64  `json:"t,omitempty"` // occurrences: the last row's scheduled_for, unix ms
}

func (t pageToken) encode() string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

// pageParams reads limit, page and (when the list has one) order of list.
// The page's token, when given, must be one this list and order made.
func pageParams(r *http.Request, list string, ordered bool) (limit int, desc bool, tok *pageToken, err error) {
	if limit, err = limitParam(r); err != nil {
		return 0, false, nil, err
	}
	q := r.URL.Query()
	if ordered {
		switch v := q.Get("order"); v {
		case "", "asc":
		case "desc":
			desc = true
		default:
			return 0, false, nil, invalidArg("order", fmt.Sprintf("order %q: want asc or desc", clip(v)))
		}
	}
	v := q.Get("page")
	if v == "" {
		return limit, desc, nil, nil
	}
	bad := invalidArg("page", fmt.Sprintf("page %q: not a next_page token of this list; start again without page", clip(v)))
	b, derr := base64.RawURLEncoding.DecodeString(v)
	var t pageToken
	if derr != nil || json.Unmarshal(b, &t) != nil || t.List != list || t.ID == "" {
		return 0, false, nil, bad
	}
	if t.Desc != desc {
		return 0, false, nil, invalidArg("page", "page: this token was made for the other order; pass the same order as the first page")
	}
	return limit, desc, &t, nil
}

// occurrenceKey is the store's keyset position of a token.
func (t *pageToken) occurrenceKey() *store.OccurrenceKey {
	if t == nil {
		return nil
	}
	return &store.OccurrenceKey{ScheduledFor: time.UnixMilli(t.At).UTC(), OccurrenceID: t.ID}
}

// nextOccurrencePage is the token after occs, a full page of list, or ""
// when the page was not full (the list ended).
func nextOccurrencePage(list string, occs []record.Occurrence, limit int, desc bool) string {
	if len(occs) < limit || len(occs) == 0 {
		return ""
	}
	last := &occs[len(occs)-1]
	return pageToken{List: list, Desc: desc, ID: last.OccurrenceID, At: last.ScheduledFor.UnixMilli()}.encode()
}

// attemptAfter is the attempt number a token of the attempts list names.
func (t *pageToken) attemptAfter() int64 {
	if t == nil {
		return 0
	}
	n, _ := strconv.ParseInt(t.ID, 10, 64)
	return n
}
