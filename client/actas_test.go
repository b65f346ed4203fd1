package client_test

import (
	"net/http"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// TestActingTenant: WithActingTenant sends Sched-Tenant on every request;
// WithTenant's context wins over it; without either none is sent; a
// tenant that cannot be a header value is refused by New.
func TestActingTenant(t *testing.T) {
	r := newRecorder(t)
	r.on(http.MethodGet, "/v1/whoami", 200, api.Whoami{Tenant: "acme", Role: "admin"})
	cases := []struct {
		name   string
		opts   []client.Option
		acting string // WithTenant's, "" for none
		want   string
	}{
		{"none", nil, "", ""},
		{"the client's", []client.Option{client.WithActingTenant("acme")}, "", "acme"},
		{"the context's wins", []client.Option{client.WithActingTenant("acme")}, "globex", "globex"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, r, "tok", tc.opts...)
			cx := ctx
			if tc.acting != "" {
				cx = client.WithTenant(ctx, tc.acting)
			}
			if _, err := c.Whoami(cx); err != nil {
				t.Fatal(err)
			}
			if got := r.last(t).Header.Get(api.HeaderTenant); got != tc.want {
				t.Fatalf("Sched-Tenant %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := client.New(r.addr(), "tok", client.WithActingTenant("acme\r\nX: y")); err == nil {
		t.Fatal("New took a tenant with a line break")
	}
}
