package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/testdaemon"
)

// tenantNode is one schedd of TestTokensAcrossNodes: its Unix socket (the
// admin's, without a token) and its TCP port (every request with a token).
type tenantNode struct {
	local *client.Client
	tcp   string
}

// TestTokensAcrossNodes: two schedd nodes on one PostgreSQL. A tenant's
// token created through one works over TCP on both; a request over TCP
// without a token is refused; a token revoked on one node, or a tenant
// disabled there, is refused by the other node at its very next request;
// one tenant's schedule is invisible to another on either node.
func TestTokensAcrossNodes(t *testing.T) {
	dsn := pgDSN(t)
	t.Parallel()
	schema := newClusterSchema(t, dsn)
	dir, err := os.MkdirTemp("", "e2e-tn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	storeURL, env := withParam(t, dsn, "search_path", schema), hermeticEnv(dir)
	ctx := context.Background()

	start := func(id string) tenantNode {
		t.Helper()
		sock := filepath.Join(dir, id+".sock")
		tcp := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		out := &syncBuffer{}
		p := startProc(t, "schedd "+id, out, false, env, scheddBin, "--store", withParam(t, storeURL, "application_name", id),
			"--listen", "unix:"+sock+",tcp:"+tcp, "--node-id", id)
		cl, err := client.New("unix:"+sock, "")
		if err != nil {
			t.Fatal(err)
		}
		testdaemon.WaitServing(t, p.watch(out), clusterWait, func() error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err := cl.Status(ctx)
			return err
		})
		return tenantNode{local: cl, tcp: "tcp:" + tcp}
	}
	n1, n2 := start("n1"), start("n2")
	as := func(n tenantNode, token string) *client.Client {
		t.Helper()
		c, err := client.New(n.tcp, token)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	created, err := n1.local.CreateTenant(ctx, api.TenantRequest{Name: "acme"})
	if err != nil {
		t.Fatalf("create a tenant over n1's Unix socket: %v", err)
	}
	second, err := n2.local.CreateToken(ctx, "acme", api.TokenRequest{Name: "second"})
	if err != nil {
		t.Fatalf("create a second token over n2's socket: %v", err)
	}
	for _, n := range []tenantNode{n1, n2} {
		for _, tok := range []string{created.Token, second.Token} {
			who, err := as(n, tok).Whoami(ctx)
			if err != nil || who.Tenant != "acme" || who.Role != "tenant" {
				t.Fatalf("whoami over %s: %+v, %v; want acme", n.tcp, who, err)
			}
		}
		if _, err := as(n, "").Status(ctx); !client.IsUnauthorized(err) {
			t.Fatalf("over %s without a token: %v; want unauthorized", n.tcp, err)
		}
	}

	// Isolation on PostgreSQL across nodes: acme's schedule, made on n1,
	// is not beta's on n2, by id or by name.
	beta, err := n1.local.CreateTenant(ctx, api.TenantRequest{Name: "beta"})
	if err != nil {
		t.Fatal(err)
	}
	made, err := as(n1, created.Token).CreateSchedule(ctx, api.ScheduleRequest{Name: "nightly", Queue: "emails", Cron: "0 3 * * *", TimeZone: "Europe/Berlin"})
	if err != nil {
		t.Fatalf("acme creates a schedule on n1: %v", err)
	}
	for _, ref := range []string{made.Schedule.ScheduleID, "nightly"} {
		if _, err := as(n2, beta.Token).GetSchedule(ctx, ref); !client.IsNotFound(err) {
			t.Errorf("beta gets acme's %s on n2: %v; want not found", ref, err)
		}
	}
	if l, err := as(n2, beta.Token).ListSchedules(ctx, client.ListSchedulesOptions{}); err != nil || len(l.Schedules) != 0 {
		t.Errorf("beta's list on n2: %+v, %v; want empty", l, err)
	}
	if _, err := as(n2, created.Token).GetSchedule(ctx, "nightly"); err != nil {
		t.Errorf("acme gets its schedule on n2: %v", err)
	}

	// Revoked through n1: n2 refuses it at its next request.
	if _, err := n1.local.RevokeToken(ctx, "acme", "initial"); err != nil {
		t.Fatal(err)
	}
	if _, err := as(n2, created.Token).Whoami(ctx); !client.IsUnauthorized(err) {
		t.Fatalf("a token revoked on n1, on n2: %v; want unauthorized at once", err)
	}
	if _, err := as(n2, second.Token).Whoami(ctx); err != nil {
		t.Fatalf("the tenant's other token on n2: %v", err)
	}
	// Disabled through n2: n1 refuses the tenant's other token at once.
	if _, err := n2.local.SetTenantEnabled(ctx, "acme", false); err != nil {
		t.Fatal(err)
	}
	if _, err := as(n1, second.Token).Whoami(ctx); !client.IsUnauthorized(err) {
		t.Fatalf("a disabled tenant's token on n1: %v; want unauthorized at once", err)
	}
}
