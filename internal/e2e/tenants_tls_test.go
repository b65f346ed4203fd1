package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/testtls"
)

// TestTenantsOverTLS: the real schedd with TLS on its TCP listener and the
// real schedctl. The admin (the Unix socket, no token) makes two tenants;
// over TLS each tenant's token lists its own schedules alone, and the other
// tenant's schedule, by id or by name, is answered as a missing one.
func TestTenantsOverTLS(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "e2etn") // short: it holds the socket
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ca := testtls.NewCA(t, "tenants CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	certFile, keyFile := ca.Server(t, "127.0.0.1").Write(t, dir, "server")
	sock := filepath.Join(dir, "schedd.sock")
	d := &daemon{
		t: t, dir: dir, sock: sock, store: filepath.Join(dir, "sched.db"),
		args: []string{"--listen", "unix:" + sock + ",tcp:127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile},
		env:  hermeticEnv(dir),
		log:  &syncBuffer{},
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- schedd output:\n%s", d.log.String())
		}
	})
	d.start()
	m := regexp.MustCompile(`listen=\S*tcp:(127\.0\.0\.1:\d+)`).FindStringSubmatch(d.log.String())
	if m == nil {
		t.Fatalf("no TCP address in the log:\n%s", d.log.String())
	}
	tlsAddr := "tls:" + m[1]

	run := d.ctlEnv
	admin := []string{"SCHED_ADDR=unix:" + sock}
	tokens := map[string]string{}
	for _, name := range []string{"acme", "beta"} {
		r := run(admin, "tenant", "create", name, "-o", "json")
		var c api.TenantCreated
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &c) != nil || c.Token == "" {
			t.Fatalf("%s", r)
		}
		tokens[name] = c.Token
	}
	as := func(name string) []string {
		return []string{"SCHED_ADDR=" + tlsAddr, "SCHED_TLS_CA=" + caFile, "SCHED_TOKEN=" + tokens[name]}
	}
	ids := map[string]string{}
	for _, name := range []string{"acme", "beta"} {
		r := run(as(name), "create", "--name", name+"-job", "--queue", "emails", "--every", "1h", "-o", "json")
		var s api.Schedule
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil || s.ScheduleID == "" {
			t.Fatalf("%s", r)
		}
		ids[name] = s.ScheduleID
	}
	for _, c := range []struct{ me, other string }{{"acme", "beta"}, {"beta", "acme"}} {
		r := run(as(c.me), "list", "-o", "json")
		if r.code != 0 || !strings.Contains(r.stdout, ids[c.me]) || strings.Contains(r.stdout, ids[c.other]) {
			t.Errorf("%s's list: %s; want its own schedule alone", c.me, r)
		}
		// The other's id and name, each beside one that names nothing.
		for _, p := range [][2]string{{ids[c.other], "sch_0000000000000000000000000"}, {c.other + "-job", "nobody-job"}} {
			r, missing := run(as(c.me), "get", p[0]), run(as(c.me), "get", p[1])
			if r.code != 1 || missing.code != 1 || r.stdout != "" ||
				strings.ReplaceAll(r.stderr, p[0], "REF") != strings.ReplaceAll(missing.stderr, p[1], "REF") {
				t.Errorf("%s getting %s: %s\nand a missing one: %s\nwant the same refusal", c.me, p[0], r, missing)
			}
		}
	}
	// Without a token over TCP: refused.
	if r := run([]string{"SCHED_ADDR=" + tlsAddr, "SCHED_TLS_CA=" + caFile}, "list"); r.code != 1 || !strings.Contains(r.stderr, "token") {
		t.Errorf("no token over TLS: %s; want exit 1 asking for a token", r)
	}
}

// TestWorkerAllTenants: one `schedctl worker --all-tenants` over the Unix
// socket (an admin's credentials) works a queue shared by two tenants,
// each job's command told its tenant in SCHED_TENANT, and acks each under
// its own tenant: every occurrence of both ends SUCCEEDED.
func TestWorkerAllTenants(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	tokens := map[string]string{}
	for _, name := range []string{"acme", "beta"} {
		var c api.TenantCreated
		d.ctlJSON(&c, "tenant", "create", name)
		tokens[name] = c.Token
		d.ctlJSON(nil, "--token", c.Token, "create", "--name", name+"-job", "--queue", "shared", "--every", "1h")
		d.ctlJSON(nil, "--token", c.Token, "trigger", name+"-job")
		d.ctlJSON(nil, "--token", c.Token, "trigger", name+"-job", "--idempotency-key", "second")
	}
	file := filepath.Join(d.dir, "tenants.txt")
	w := d.worker("pool worker", "--queue", "shared", "--all-tenants", "--", "sh", "-c", `echo "$SCHED_TENANT" >> "$1"`, "sh", file)
	defer w.terminate()
	var got map[string]int
	for end := time.Now().Add(deadline); ; time.Sleep(pollStep) {
		b, _ := os.ReadFile(file)
		got = map[string]int{}
		for _, l := range strings.Fields(string(b)) {
			got[l]++
		}
		if got["acme"] == 2 && got["beta"] == 2 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the pool worker ran for %v; want acme and beta twice each", got)
		}
	}
	w.terminate()
	if len(got) != 2 {
		t.Errorf("tenants seen: %v", got)
	}
	for name, tok := range tokens {
		var occs []occurrence
		d.ctlJSON(&occs, "--token", tok, "occurrences", "--schedule", name+"-job")
		if len(occs) != 2 || occs[0].State != "SUCCEEDED" || occs[1].State != "SUCCEEDED" {
			t.Errorf("%s's occurrences: %+v; want both SUCCEEDED, acked under their tenant", name, occs)
		}
	}
}
