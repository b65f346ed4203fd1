package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/testtls"
)

// schedctl over TLS against the real schedd binary: the CA by flag and by
// SCHED_TLS_CA, https:// as tls:, the clear error and exit status 1
// without the CA, and a new certificate taken on a real SIGHUP.
func TestSchedctlOverTLS(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "e2etls") // short: it holds the socket
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ca1, ca2 := testtls.NewCA(t, "CA one"), testtls.NewCA(t, "CA two")
	ca1File, ca2File := ca1.WriteCA(t, dir, "ca1.pem"), ca2.WriteCA(t, dir, "ca2.pem")
	certFile, keyFile := ca1.Server(t, "127.0.0.1").Write(t, dir, "server")

	sock := filepath.Join(dir, "schedd.sock")
	d := &daemon{
		t: t, dir: dir, sock: sock, store: filepath.Join(dir, "sched.db"),
		// The later --listen wins over the harness's Unix-only one.
		args: []string{"--listen", "unix:" + sock + ",tcp:127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile},
		env:  append(hermeticEnv(dir), "SCHED_TOKEN=e2e-tls-token"),
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
	hp := m[1]

	run := func(env []string, args ...string) result {
		t.Helper()
		return d.ctlEnv(env, append([]string{"-o", "json"}, args...)...)
	}
	ok := func(r result) {
		t.Helper()
		var st struct {
			Store string `json:"store"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || st.Store != "sqlite" {
			t.Fatalf("%s; want exit 0 and the status JSON", r)
		}
	}
	refused := func(r result, want string) {
		t.Helper()
		if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Fatalf("%s; want exit 1 saying %q", r, want)
		}
	}

	ok(run(nil, "--addr", "tls:"+hp, "--tls-ca", ca1File, "status"))
	ok(run([]string{"SCHED_ADDR=https://" + hp, "SCHED_TLS_CA=" + ca1File}, "status"))
	refused(run(nil, "--addr", "tls:"+hp, "status"), "the daemon's certificate is not signed by a CA this system trusts")
	refused(run(nil, "--addr", "tls:"+hp, "--tls-ca", ca2File, "status"), "not signed by the CA in --tls-ca ("+ca2File+")")
	// Plain HTTP to the TLS port is not served, and says what to use.
	refused(run(nil, "--addr", "tcp:"+hp, "status"), "use tls:"+hp)
	// A bad --tls-ca file is invalid input.
	if r := run(nil, "--addr", "tls:"+hp, "--tls-ca", keyFile, "status"); r.code != 2 || !strings.Contains(r.stderr, keyFile) {
		t.Fatalf("%s; want exit 2 naming %s", r, keyFile)
	}

	// A pair of the second CA in place of the first, then SIGHUP: new
	// connections see it, without a restart.
	second := ca2.Server(t, "127.0.0.1")
	second.Replace(t, certFile, keyFile, time.Now())
	if err := d.proc.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(deadline); !strings.Contains(d.log.String(), `msg="reloaded TLS certificate" reason=SIGHUP`); time.Sleep(pollStep) {
		if time.Now().After(end) || d.proc.exited() {
			t.Fatalf("no reload logged after SIGHUP (exited: %v)", d.proc.exited())
		}
	}
	ok(run(nil, "--addr", "tls:"+hp, "--tls-ca", ca2File, "status"))
	refused(run(nil, "--addr", "tls:"+hp, "--tls-ca", ca1File, "status"), "not signed by the CA in --tls-ca")
	if d.runs != 1 || d.proc.exited() {
		t.Fatalf("schedd restarted or exited (runs %d)", d.runs)
	}
}
