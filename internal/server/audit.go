package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

// audit answers GET /v1/audit: the audit log, oldest first. A caller reads
// its own tenant's rows; an admin may name another tenant, or * for every
// tenant's. schedule keeps one schedule's rows (an id, or a name in the
// caller's tenant), since those made at or after an RFC 3339 time, and
// after pages by id.
func (s *Server) audit(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r, "schedule", "since", "tenant", "after", "limit"); err != nil {
		return 0, nil, err
	}
	q := r.URL.Query()
	actor := engine.ActorOf(r.Context())
	aq := engine.AuditQuery{TenantID: actor.TenantID, NameTenant: actor.TenantID, Schedule: q.Get("schedule")}
	switch t := q.Get("tenant"); {
	case t == "" || t == actor.TenantID:
	case !actor.Admin:
		return 0, nil, forbidden("a tenant's token reads its own tenant's audit log only; tenant= needs an admin token")
	case t == "*":
		aq.TenantID = ""
	default:
		aq.TenantID, aq.NameTenant = t, t
	}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return 0, nil, invalidArg("since", "since "+strconv.Quote(clip(v))+": want an RFC 3339 time such as 2027-03-14T07:00:00Z")
		}
		aq.Since = t
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, nil, invalidArg("after", "after "+strconv.Quote(clip(v))+": want the id of the last entry of the previous page")
		}
		aq.AfterID = n
	}
	aq.Limit = store.DefaultListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxListLimit {
			return 0, nil, invalidArg("limit", "limit "+strconv.Quote(clip(v))+": want 1 to "+strconv.Itoa(store.MaxListLimit))
		}
		aq.Limit = n
	}
	rows, err := s.eng.Audit.List(r.Context(), aq)
	if err != nil {
		return 0, nil, err
	}
	out := api.AuditList{Entries: make([]api.AuditEntry, 0, len(rows))}
	for _, e := range rows {
		out.Entries = append(out.Entries, api.AuditEntry{ID: e.ID, At: e.At.UTC(), TenantID: e.TenantID,
			Actor:  api.AuditActor{Tenant: e.ActorTenant, Token: e.ActorToken, Admin: e.ActorAdmin, Local: e.ActorLocal},
			Action: e.Action, Target: e.Target, OldVersion: e.OldVersion, NewVersion: e.NewVersion, Detail: e.Detail})
	}
	if len(rows) == aq.Limit {
		out.NextAfter = rows[len(rows)-1].ID
	}
	return http.StatusOK, out, nil
}
