package contextcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
)

// TestContextReachesTheDaemon: schedctl --context x status reaches the
// daemon x names (a real engine and API on a real Unix socket), with the
// token of x's token_file, though the file's current context is another
// and no SCHED_ADDR or SCHED_TOKEN is set; a context's tenant is sent as
// Sched-Tenant; a token file others may read is refused before anything
// is sent.
func TestContextReachesTheDaemon(t *testing.T) {
	d := clidaemon.New(t, clidaemon.Config{Start: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)})
	code, out, errOut := d.Run(t, false, "tenant", "create", "acme", "-o", "json")
	var created api.TenantCreated
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil || created.Token == "" {
		t.Fatalf("tenant create: %d %s %s", code, out, errOut)
	}

	dir := t.TempDir()
	tokFile := filepath.Join(dir, "acme.token")
	if err := os.WriteFile(tokFile, []byte(created.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SCHED_CONFIG": filepath.Join(dir, "config.yaml")}
	ok(t, env, "context", "set", "elsewhere", "--addr", "unix:"+filepath.Join(dir, "nobody.sock"))
	ok(t, env, "context", "set", "x", "--addr", d.Addr, "--token-file", tokFile)
	ok(t, env, "context", "set", "admin-as-acme", "--addr", d.Addr, "--tenant", "acme")
	if out := ok(t, env, "context", "current"); out != "elsewhere\n" {
		t.Fatalf("current: %q", out)
	}

	before := d.Requests()
	if out := ok(t, env, "--context", "x", "status"); !strings.Contains(out, clidaemon.NodeID) {
		t.Errorf("status:\n%s", out)
	}
	if d.Requests() == before {
		t.Fatal("status did not reach the daemon")
	}
	var who api.Whoami
	if err := json.Unmarshal([]byte(ok(t, env, "--context", "x", "whoami", "-o", "json")), &who); err != nil {
		t.Fatal(err)
	}
	if who.Tenant != "acme" || who.Role != "tenant" || who.Token != "initial" || who.Local {
		t.Errorf("whoami with the token of x's token_file: %+v", who)
	}
	// SCHED_CONTEXT chooses the same way.
	envX := map[string]string{"SCHED_CONFIG": env["SCHED_CONFIG"], "SCHED_CONTEXT": "x"}
	json.Unmarshal([]byte(ok(t, envX, "whoami", "-o", "json")), &who)
	if who.Tenant != "acme" || who.Token != "initial" {
		t.Errorf("whoami with SCHED_CONTEXT=x: %+v", who)
	}

	// The context's tenant: the socket's admin acting as acme.
	json.Unmarshal([]byte(ok(t, env, "--context", "admin-as-acme", "whoami", "-o", "json")), &who)
	if who.Tenant != "acme" || who.Role != "admin" {
		t.Errorf("whoami acting as acme: %+v", who)
	}

	// The token is read at each use: another one in the file is refused
	// by the daemon.
	os.WriteFile(tokFile, []byte("sched_revoked\n"), 0o600)
	if code, _, errOut := schedctl(t, env, "--context", "x", "status"); code != 1 || !strings.Contains(errOut, "unauthorized") {
		t.Errorf("a wrong token in the file: exit %d, %q", code, errOut)
	}

	// A token file group or others may read: nothing is sent.
	os.WriteFile(tokFile, []byte(created.Token+"\n"), 0o600)
	os.Chmod(tokFile, 0o644)
	before = d.Requests()
	code, out, errOut = schedctl(t, env, "--context", "x", "status")
	if code != 2 || out != "" || !strings.Contains(errOut, tokFile+" has mode 0644") || strings.Contains(errOut, created.Token) {
		t.Errorf("a token file others may read: exit %d, %q, %q", code, out, errOut)
	}
	if d.Requests() != before {
		t.Error("a request was sent with a token file others may read")
	}
}
