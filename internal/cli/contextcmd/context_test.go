package contextcmd_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/config"
	"github.com/sched-dev/sched/internal/cli/contextcmd"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// schedctl runs schedctl's root with the environment env (SCHED_CONFIG
// and the like) and returns its exit status, stdout and stderr.
func schedctl(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	f, out, errOut := clitest.NewFactory(false)
	f.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code := cli.Run(f, args)
	return code, out.String(), errOut.String()
}

// ok runs schedctl and fails unless it exits 0; it returns stdout.
func ok(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	code, out, errOut := schedctl(t, env, args...)
	if code != 0 {
		t.Fatalf("schedctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// TestContextCommands: set creates and changes, list shows where each
// token comes from and never a token, use and current choose, delete
// removes; the file is 0600 throughout.
func TestContextCommands(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sched", "config.yaml")
	env := map[string]string{"SCHED_CONFIG": path}
	tok := filepath.Join(dir, "prod.token")
	os.WriteFile(tok, []byte("sched_secret\n"), 0o600)

	if out := ok(t, env, "context", "list", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("list with no file: %q", out)
	}
	if out := ok(t, env, "context", "set", "local", "--addr", "unix:/run/user/1000/sched/schedd.sock"); !strings.Contains(out, `Context "local" created. It is the current context`) {
		t.Errorf("set local: %q", out)
	}
	ok(t, env, "context", "set", "prod", "--addr", "tls:sched.example.com:7443", "--token-file", tok, "--tenant", "billing")
	ok(t, env, "context", "set", "kr", "--addr", "tcp:127.0.0.1:7070", "--token-command", "sh -c 'echo sched_from_keyring'")
	if out := ok(t, env, "context", "set", "prod", "--tenant", ""); !strings.Contains(out, `Context "prod" changed.`) {
		t.Errorf("set prod: %q", out)
	}

	out := ok(t, env, "context", "list")
	want := "CURRENT\tNAME\tADDR\tTOKEN\tTENANT\n" +
		"-\tkr\ttcp:127.0.0.1:7070\tcommand\t-\n" +
		"*\tlocal\tunix:/run/user/1000/sched/schedd.sock\tnone\t-\n" +
		"-\tprod\ttls:sched.example.com:7443\tfile\t-\n"
	if !strings.HasSuffix(out, want[strings.Index(want, "\n")+1:]) {
		t.Errorf("list:\n%s\nwant rows:\n%s", out, want)
	}
	var cs []contextcmd.Context
	if err := json.Unmarshal([]byte(ok(t, env, "context", "list", "-o", "json")), &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[2] != (contextcmd.Context{Name: "prod", Addr: "tls:sched.example.com:7443", Token: "file", TokenFile: tok}) {
		t.Errorf("list -o json: %+v", cs)
	}
	// The JSON names are a contract: each object has these, no more.
	var raw []map[string]any
	json.Unmarshal([]byte(ok(t, env, "context", "list", "-o", "json")), &raw)
	keys := slices.Sorted(maps.Keys(raw[0]))
	if want := []string{"addr", "current", "name", "tenant", "tls_ca", "tls_client_cert", "tls_client_key", "token", "token_file"}; !slices.Equal(keys, want) {
		t.Errorf("JSON fields %v, want %v", keys, want)
	}

	// Neither the token nor a token_command's words are shown; the file
	// holds the command, never a token.
	jsonOut := ok(t, env, "context", "list", "-o", "json")
	for _, secret := range []string{"sched_secret", "sched_from_keyring"} {
		if strings.Contains(out, secret) || strings.Contains(jsonOut, secret) {
			t.Errorf("list shows %q", secret)
		}
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "sched_secret") {
		t.Errorf("the file holds the token:\n%s", b)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v %v", fi, err)
	}

	if out := ok(t, env, "context", "current"); out != "local\n" {
		t.Errorf("current: %q", out)
	}
	if out := ok(t, env, "context", "use", "prod"); out != "Switched to context \"prod\" (tls:sched.example.com:7443).\n" {
		t.Errorf("use: %q", out)
	}
	if out := ok(t, env, "context", "current"); out != "prod\n" {
		t.Errorf("current after use: %q", out)
	}
	if out := ok(t, env, "--context", "kr", "context", "current"); out != "kr\n" {
		t.Errorf("current with --context: %q", out)
	}
	env2 := map[string]string{"SCHED_CONFIG": path, "SCHED_ADDR": "unix:/x.sock"}
	if code, out, errOut := schedctl(t, env2, "context", "current"); code != 0 || out != "prod\n" || !strings.Contains(errOut, `SCHED_ADDR gives the address, so current_context "prod" is not used`) {
		t.Errorf("current under SCHED_ADDR: %d %q %q", code, out, errOut)
	}

	if out := ok(t, env, "context", "delete", "prod"); !strings.Contains(out, "It was the current context") {
		t.Errorf("delete: %q", out)
	}
	if code, _, errOut := schedctl(t, env, "context", "current"); code != 1 || !strings.Contains(errOut, "no context is in use") {
		t.Errorf("current with none: %d %q", code, errOut)
	}
	f, err := config.Load(path)
	if err != nil || len(f.Contexts) != 2 || f.CurrentContext != "" {
		t.Fatalf("the file after delete: %+v %v", f, err)
	}
}

// TestContextInvalidInput: what is wrong exits 2 naming the bad part, and
// leaves the file as it was.
func TestContextInvalidInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	env := map[string]string{"SCHED_CONFIG": path}
	ok(t, env, "context", "set", "prod", "--addr", "tcp:127.0.0.1:7070")
	before, _ := os.ReadFile(path)
	open := filepath.Join(dir, "open.token")
	os.WriteFile(open, []byte("sched_x\n"), 0o644)
	os.Chmod(open, 0o644)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"new without --addr", []string{"context", "set", "staging", "--tenant", "acme"}, `context "staging" does not exist yet: give --addr`},
		{"bad address", []string{"context", "set", "staging", "--addr", "localhost:7070"}, `--addr: invalid address "localhost:7070"`},
		{"bad name", []string{"context", "set", "my prod", "--addr", "unix:/s"}, `context name "my prod"`},
		{"both token flags", []string{"context", "set", "prod", "--token-file", open, "--token-command", "pass show x"}, "give --token-file or --token-command, not both"},
		{"token file others may read", []string{"context", "set", "prod", "--token-file", open}, "has mode 0644"},
		{"token file missing", []string{"context", "set", "prod", "--token-file", filepath.Join(dir, "none")}, "no such file"},
		{"token command not found", []string{"context", "set", "prod", "--token-command", "no-such-keyring-tool lookup"}, `"no-such-keyring-tool": executable file not found`},
		{"token command unbalanced", []string{"context", "set", "prod", "--token-command", "pass show 'x"}, "unterminated ' quote"},
		{"bad tenant", []string{"context", "set", "prod", "--tenant", "A B"}, "tenant"},
		{"nothing to change", []string{"context", "set", "prod"}, "nothing to change"},
		{"use unknown", []string{"context", "use", "prd"}, `context use "prd": no such context in ` + path + " (did you mean prod?)"},
		{"delete unknown", []string{"context", "delete", "staging"}, `context delete "staging": no such context`},
		{"--context unknown", []string{"--context", "prd", "status"}, `--context "prd": no such context`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := schedctl(t, env, tc.args...)
			if code != cmdutil.ExitInvalid || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 saying %q", code, out, errOut, tc.want)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("the file changed:\n%s", after)
			}
		})
	}
}

// TestCompleteContextNames: a shell completes the names of the contexts
// for --context and for use and delete.
func TestCompleteContextNames(t *testing.T) {
	env := map[string]string{"SCHED_CONFIG": filepath.Join(t.TempDir(), "config.yaml")}
	for _, n := range []string{"prod", "prod-eu", "staging"} {
		ok(t, env, "context", "set", n, "--addr", "unix:/s.sock")
	}
	for _, args := range [][]string{
		{"__complete", "context", "use", "pr"},
		{"__complete", "context", "delete", "pr"},
		{"__complete", "--context", "pr"},
	} {
		out := ok(t, env, args...)
		if got := strings.Fields(out); !slices.Equal(got[:len(got)-1], []string{"prod", "prod-eu"}) {
			t.Errorf("%v: %q", args, out)
		}
	}
}
