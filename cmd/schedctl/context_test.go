package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sched-dev/sched/api"
)

// TestContextThroughTheBinary: the real binary reads the config file
// SCHED_CONFIG names, and --context x sends x's token (from its
// token_file) and tenant to x's address, though the file's current
// context is another; context list shows where the token comes from and
// never the token.
func TestContextThroughTheBinary(t *testing.T) {
	dir, err := os.MkdirTemp("", "sc") // short: a socket path's limit
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get(api.HeaderTenant))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(api.Whoami{Tenant: "acme", Role: "admin"})
	})}
	go srv.Serve(ln)
	defer srv.Close()

	tok := filepath.Join(dir, "x.token")
	os.WriteFile(tok, []byte("sched_from_the_file\n"), 0o600)
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("current_context: elsewhere\ncontexts:\n  elsewhere:\n    addr: unix:"+filepath.Join(dir, "none.sock")+
		"\n  x:\n    addr: unix:"+sock+"\n    token_file: x.token\n    tenant: acme\n"), 0o600)
	env := []string{"SCHED_CONFIG=" + cfg, "SCHED_ADDR=", "SCHED_TOKEN="}

	r := run(t, env, "--context", "x", "whoami", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	if got != "/v1/whoami Bearer sched_from_the_file acme" {
		t.Errorf("the daemon saw %q", got)
	}

	r = run(t, env, "context", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "x\tunix:"+sock+"\tfile\tacme") || strings.Contains(r.stdout, "sched_from_the_file") {
		t.Errorf("context list: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// The current context has no daemon: the command says where it tried.
	r = run(t, append(env, "XDG_RUNTIME_DIR="+dir), "whoami")
	if r.code != 1 || !strings.Contains(r.stderr, "none.sock") {
		t.Errorf("whoami with the current context: %d %q", r.code, r.stderr)
	}
}
