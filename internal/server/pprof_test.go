package server

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// An admin takes a CPU profile of the running daemon through the client;
// a tenant's token is refused every profile route with 403.
func TestCPUProfileAdminOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	ta := h.newTenant("acme")
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/pprof/trace?seconds=1", "/debug/pprof/symbol"} {
		h.fails(403, api.CodeForbidden, "", "GET", p, nil, bearer(ta)...)
	}
	c, err := client.New("tcp:"+strings.TrimPrefix(h.ts.URL, "http://"), "operator-token")
	if err != nil {
		t.Fatal(err)
	}
	var prof bytes.Buffer
	if err := c.CPUProfile(t.Context(), time.Second, &prof); err != nil {
		t.Fatal(err)
	}
	// A pprof profile is gzip-compressed protobuf.
	if b := prof.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile of %d bytes does not start as gzip: % x", len(b), b[:min(len(b), 8)])
	}
}
