package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/store/postgres/pgtest"
	"github.com/sched-dev/sched/internal/tcpproxy"
)

// TestLostStoreConnectionIs503: while PostgreSQL refuses and drops the
// daemon's connections, every route that needs the store answers 503
// store_unavailable (retry), never 500 internal; once the database is back
// the same requests succeed. The connections go through a loopback proxy
// that closes them, as a database going down would.
func TestLostStoreConnectionIs503(t *testing.T) {
	dsn := pgtest.DSN(t)
	proxied, proxy := tcpproxy.ForDSN(t, dsn)
	h := serveHarness(t, Config{StoreDriver: "postgres"}, pgtest.Open(t, proxied, pgtest.Schema(t, dsn)))
	h.create(everyMinute("job"))
	h.plan(time.Minute)
	var cl api.ClaimResult
	h.ok(http.StatusOK, &cl, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	if len(cl.Claimed) != 1 {
		t.Fatalf("claimed %d, want 1", len(cl.Claimed))
	}
	occ := "/v1/occurrences/" + cl.Claimed[0].OccurrenceID

	proxy.Refuse()
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"}},
		{"POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Wait: "5s"}},
		{"POST", occ + "/ack", api.AckRequest{Attempt: 1}},
		{"POST", occ + "/heartbeat", api.HeartbeatRequest{Attempt: 1}},
		{"GET", "/v1/schedules", nil},
		{"GET", "/v1/schedules/job", nil},
		{"POST", "/v1/schedules", everyMinute("other")},
		{"GET", "/v1/occurrences", nil},
		{"GET", "/v1/tenants", nil},
	} {
		h.fails(http.StatusServiceUnavailable, api.CodeStoreDown, "", c.method, c.path, c.body)
	}

	proxy.Heal()
	h.ok(http.StatusOK, nil, "POST", occ+"/ack", api.AckRequest{Attempt: 1})
	h.ok(http.StatusCreated, nil, "POST", "/v1/schedules", everyMinute("other"))
}
