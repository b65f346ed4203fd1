package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

// TestTenantStatus: GET /v1/status as a tenant is computed from the
// tenant's rows alone. Beta has more queue rows than a status holds, all
// larger than acme's, the oldest ready occurrence and a DEAD one; acme's
// status still shows its own queues, its own dead-letter queue and oldest
// ready occurrence, its own due backlog, and none of the figures counted
// across tenants. The admin's status is the whole cluster's, as before.
func TestTenantStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	ta, tb := h.newTenant("acme"), h.newTenant("beta")

	// Beta first, every 30 s: its firings are older and its rows twice
	// acme's, so that acme's would sort after all of beta's.
	const betaQueues = api.MaxStatusQueues + 1
	var betaIDs []string
	for i := range betaQueues {
		var res api.CreateResult
		h.ok(http.StatusCreated, &res, "POST", "/v1/schedules",
			api.ScheduleRequest{Name: fmt.Sprintf("beta-%03d", i), Queue: fmt.Sprintf("bq-%03d", i), Every: "30s"}, bearer(tb)...)
		betaIDs = append(betaIDs, res.Schedule.ScheduleID)
	}
	h.plan(time.Minute)
	var acme api.CreateResult
	h.ok(http.StatusCreated, &acme, "POST", "/v1/schedules", api.ScheduleRequest{Name: "acme-jobs", Queue: "aq", Every: "1m"}, bearer(ta)...)
	h.plan(2 * time.Minute)

	// One DEAD occurrence each.
	for _, c := range []struct{ tok, queue string }{{ta, "aq"}, {tb, "bq-000"}} {
		var cl api.ClaimResult
		h.ok(http.StatusOK, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: c.queue, WorkerID: "w", Limit: 1}, bearer(c.tok)...)
		if len(cl.Claimed) != 1 {
			t.Fatalf("claim on %s: %+v", c.queue, cl.Claimed)
		}
		h.ok(http.StatusOK, nil, "POST", "/v1/occurrences/"+cl.Claimed[0].OccurrenceID+"/nack",
			api.NackRequest{Attempt: 1, Class: "permanent", Error: "boom"}, bearer(c.tok)...)
	}

	status := func(hdr ...string) (api.Status, []byte) {
		t.Helper()
		code, raw := h.do("GET", "/v1/status", nil, hdr...)
		if code != http.StatusOK {
			t.Fatalf("GET /v1/status: %d %s", code, raw)
		}
		var st api.Status
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("GET /v1/status: %v: %s", err, raw)
		}
		return st, raw
	}
	all, _ := status()
	a, rawA := status(bearer(ta)...)
	b, _ := status(bearer(tb)...)

	// The admin's: every tenant's, cut to MaxStatusQueues.
	if all.Tenant != "" || len(all.Queues) != api.MaxStatusQueues || all.QueuesOmitted == 0 || all.DLQSize != 2 {
		t.Errorf("admin: tenant %q, %d queue rows, %d omitted, dlq %d; want every tenant's, cut", all.Tenant, len(all.Queues), all.QueuesOmitted, all.DLQSize)
	}
	if o := all.OldestReady; o == nil || o.ScheduleID == acme.Schedule.ScheduleID {
		t.Errorf("admin: oldest ready %+v, want beta's", o)
	}
	if all.ScheduleLag == nil || all.DeliveryLag == nil || all.LastHour == nil || all.Throughput == nil || all.Nodes[0].LastPass == nil {
		t.Errorf("admin: the cluster's figures left out: %+v", all)
	}

	// Acme's: its own rows, all of them.
	if a.Tenant != "acme" || a.DLQSize != 1 || a.QueuesOmitted != 0 {
		t.Errorf("acme: tenant %q, dlq %d, %d omitted; want acme's 1 DEAD, none omitted", a.Tenant, a.DLQSize, a.QueuesOmitted)
	}
	var own bool
	for _, q := range a.Queues {
		if q.Tenant != "acme" {
			t.Errorf("acme's status shows a queue of %s: %+v", q.Tenant, q)
		}
		own = own || q.Queue == "aq" && q.State == "ENQUEUED" && q.Count > 0
	}
	if !own {
		t.Errorf("acme's status lacks its own queue aq: %+v", a.Queues)
	}
	if o := a.OldestReady; o == nil || o.ScheduleID != acme.Schedule.ScheduleID || o.Queue != "aq" {
		t.Errorf("acme: oldest ready %+v, want its own", o)
	}
	if a.ScheduleLag != nil || a.DeliveryLag != nil || a.LastHour != nil || a.Throughput != nil {
		t.Errorf("acme: figures counted across tenants: lags %v %v, last hour %v, throughput %v", a.ScheduleLag, a.DeliveryLag, a.LastHour, a.Throughput)
	}
	if len(a.Nodes) != len(all.Nodes) || a.ShardsOwned != all.ShardsOwned {
		t.Errorf("acme: %d nodes, %d shards owned; the cluster has %d, %d", len(a.Nodes), a.ShardsOwned, len(all.Nodes), all.ShardsOwned)
	}
	for _, n := range a.Nodes {
		if n.LastPass != nil {
			t.Errorf("acme: node %s's last pass %+v, counted across tenants", n.NodeID, n.LastPass)
		}
	}
	for _, other := range append([]string{"beta", "bq-"}, betaIDs...) {
		if bytes.Contains(rawA, []byte(other)) {
			t.Errorf("acme's status shows beta's %q: %s", other, rawA)
			break
		}
	}

	// Beta's rows are its own too, and the tenants' due backlogs add up
	// to the cluster's (the three were read at one instant).
	if b.Tenant != "beta" || b.DLQSize != 1 || len(b.Queues) != api.MaxStatusQueues || b.QueuesOmitted == 0 {
		t.Errorf("beta: tenant %q, dlq %d, %d rows, %d omitted", b.Tenant, b.DLQSize, len(b.Queues), b.QueuesOmitted)
	}
	if len(a.DueBacklog) != len(all.DueBacklog) || len(b.DueBacklog) != len(all.DueBacklog) {
		t.Fatalf("due backlogs of %d, %d and %d minutes", len(a.DueBacklog), len(b.DueBacklog), len(all.DueBacklog))
	}
	var aDue int64
	for i, m := range all.DueBacklog {
		aDue += a.DueBacklog[i].Due
		if a.DueBacklog[i].Due+b.DueBacklog[i].Due != m.Due || !a.DueBacklog[i].Minute.Equal(m.Minute) {
			t.Errorf("minute %v: acme %d + beta %d due, the cluster %d", m.Minute, a.DueBacklog[i].Due, b.DueBacklog[i].Due, m.Due)
		}
	}
	if aDue == 0 {
		t.Errorf("acme's due backlog is empty: %+v", a.DueBacklog)
	}
}
