package tenant_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
)

// TestTenantCommandsAgainstTheDaemon runs the tenant commands against a
// real daemon (its Unix socket, where no token means the default tenant's
// admin): a tenant made and its token used, what a tenant's token may not
// do, a second token revoked and refused at once.
func TestTenantCommandsAgainstTheDaemon(t *testing.T) {
	d := clidaemon.New(t, clidaemon.Config{Start: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)})
	// run returns stdout when the exit code is want, and stderr too
	// when it is not 0.
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := d.Run(t, false, args...)
		if code != want {
			t.Fatalf("schedctl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
		}
		if want != 0 {
			return out + errOut
		}
		return out
	}

	var created api.TenantCreated
	if err := json.Unmarshal([]byte(run(0, "tenant", "create", "acme", "--weight", "2", "--quota-running", "5", "-o", "json")), &created); err != nil {
		t.Fatal(err)
	}
	if created.Tenant.Weight != 2 || created.Tenant.Quotas.Running != 5 || created.Token == "" {
		t.Fatalf("tenant create: %+v", created)
	}
	tok := created.Token

	var who api.Whoami
	json.Unmarshal([]byte(run(0, "whoami", "-o", "json")), &who)
	if who != (api.Whoami{Tenant: "default", Role: "admin", Local: true}) {
		t.Errorf("whoami without a token over the socket: %+v", who)
	}
	json.Unmarshal([]byte(run(0, "--token", tok, "whoami", "-o", "json")), &who)
	if who.Tenant != "acme" || who.Role != "tenant" || who.Token != "initial" {
		t.Errorf("whoami with acme's token: %+v", who)
	}

	// acme's schedule is acme's alone.
	run(0, "--token", tok, "create", "--name", "nightly", "--queue", "jobs", "--cron", "0 3 * * *", "--tz", "Europe/Berlin")
	if out := run(0, "list"); strings.Contains(out, "nightly") {
		t.Errorf("the default tenant lists acme's schedule:\n%s", out)
	}
	if out := run(0, "--token", tok, "list"); !strings.Contains(out, "nightly") {
		t.Errorf("acme does not list its schedule:\n%s", out)
	}

	// A tenant's token may not manage tenants.
	if out := run(1, "--token", tok, "tenant", "list"); !strings.Contains(out, "admin") {
		t.Errorf("tenant list with a tenant's token: %s; want a word about the admin role", out)
	}

	// A second token, revoked: refused at its next use.
	var ci api.TokenCreated
	json.Unmarshal([]byte(run(0, "tenant", "token", "create", "acme", "--name", "ci", "-o", "json")), &ci)
	run(0, "--token", ci.Token, "whoami")
	if out := run(0, "tenant", "token", "list", "acme"); strings.Contains(out, ci.Token) || !strings.Contains(out, "ci") {
		t.Errorf("token list:\n%s", out)
	}
	run(0, "tenant", "token", "revoke", "acme", "ci")
	run(1, "--token", ci.Token, "whoami")
	run(0, "--token", tok, "whoami")

	run(0, "tenant", "disable", "acme")
	run(1, "--token", tok, "whoami")
	run(0, "tenant", "enable", "acme")
	run(0, "--token", tok, "whoami")
}
