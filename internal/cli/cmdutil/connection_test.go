package cmdutil_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// contextsDir writes a config file of two contexts, a (current) and b,
// with their token files, and returns its directory.
func contextsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, tok := range map[string]string{"a.token": "tok-a\n", "b.token": "tok-b\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(t, dir, `current_context: a
contexts:
  a:
    addr: unix:/run/a.sock
    token_file: a.token
    tls_ca: a-ca.pem
    tenant: acme
  b:
    addr: tls:b.example:7443
    token_file: b.token
    tls_client_cert: /b/client.pem
    tls_client_key: /b/client.key
`)
	return dir
}

func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// connect is the Connection of a Factory with flags and env (the config
// file is dir's unless env says SCHED_CONFIG; "-" unsets a variable).
func connect(t *testing.T, dir string, flags, env map[string]string) (cmdutil.Connection, error) {
	t.Helper()
	return factory(t, dir, flags, env).Connection()
}

func factory(t *testing.T, dir string, flags, env map[string]string) *cmdutil.Factory {
	t.Helper()
	f, _, _ := clitest.NewFactory(false)
	fl := pflag.NewFlagSet("schedctl", pflag.ContinueOnError)
	f.AddGlobalFlags(fl)
	e := map[string]string{"SCHED_CONFIG": filepath.Join(dir, "config.yaml"), "XDG_RUNTIME_DIR": "/run/user/9"}
	for k, v := range env {
		e[k] = v
	}
	f.LookupEnv = func(k string) (string, bool) { v, ok := e[k]; return v, ok && v != "-" }
	for k, v := range flags {
		if err := fl.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestPrecedence: for each setting, a flag wins over its variable, which
// wins over the context (--context, else SCHED_CONTEXT, else
// current_context), which wins over the default socket and no token. A
// context only current_context chose is not used under SCHED_ADDR or
// --addr; one named is.
func TestPrecedence(t *testing.T) {
	dir := contextsDir(t)
	ca := filepath.Join(dir, "a-ca.pem")
	type want struct {
		addr, token, ca, cert, tenant, context string
	}
	cases := []struct {
		name  string
		flags map[string]string
		env   map[string]string
		want  want
	}{
		{"no config file: the default socket", nil, map[string]string{"SCHED_CONFIG": filepath.Join(dir, "none.yaml")}, want{}},
		{"no config file can be found", nil, map[string]string{"SCHED_CONFIG": "-"}, want{}},
		{"current_context", nil, nil, want{"unix:/run/a.sock", "tok-a", ca, "", "acme", "a"}},
		{"SCHED_CONTEXT wins over current_context", nil, map[string]string{"SCHED_CONTEXT": "b"},
			want{"tls:b.example:7443", "tok-b", "", "/b/client.pem", "", "b"}},
		{"--context wins over SCHED_CONTEXT", map[string]string{"context": "a"}, map[string]string{"SCHED_CONTEXT": "b"},
			want{"unix:/run/a.sock", "tok-a", ca, "", "acme", "a"}},
		{"SCHED_TOKEN wins over the context's", nil, map[string]string{"SCHED_TOKEN": "tok-env"},
			want{"unix:/run/a.sock", "tok-env", ca, "", "acme", "a"}},
		{"--token wins over SCHED_TOKEN", map[string]string{"token": "tok-flag"}, map[string]string{"SCHED_TOKEN": "tok-env"},
			want{"unix:/run/a.sock", "tok-flag", ca, "", "acme", "a"}},
		{"SCHED_TLS_CA wins over the context's", nil, map[string]string{"SCHED_TLS_CA": "/env-ca.pem"},
			want{"unix:/run/a.sock", "tok-a", "/env-ca.pem", "", "acme", "a"}},
		{"--tls-ca wins over SCHED_TLS_CA", map[string]string{"tls-ca": "/flag-ca.pem"}, map[string]string{"SCHED_TLS_CA": "/env-ca.pem"},
			want{"unix:/run/a.sock", "tok-a", "/flag-ca.pem", "", "acme", "a"}},
		{"a client pair from the environment hides the context's", nil,
			map[string]string{"SCHED_CONTEXT": "b", "SCHED_TLS_CLIENT_CERT": "/env.pem", "SCHED_TLS_CLIENT_KEY": "/env.key"},
			want{"tls:b.example:7443", "tok-b", "", "/env.pem", "", "b"}},
		{"SCHED_ADDR: current_context is not used", nil, map[string]string{"SCHED_ADDR": "tcp:127.0.0.1:7070"},
			want{"tcp:127.0.0.1:7070", "", "", "", "", ""}},
		{"--addr: current_context is not used", map[string]string{"addr": "unix:/x.sock"}, nil,
			want{"unix:/x.sock", "", "", "", "", ""}},
		{"--addr wins over a named context's address", map[string]string{"addr": "unix:/x.sock", "context": "a"}, nil,
			want{"unix:/x.sock", "tok-a", ca, "", "acme", "a"}},
		{"SCHED_ADDR wins over SCHED_CONTEXT's address", nil, map[string]string{"SCHED_ADDR": "tcp:127.0.0.1:7070", "SCHED_CONTEXT": "b"},
			want{"tcp:127.0.0.1:7070", "tok-b", "", "/b/client.pem", "", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := connect(t, dir, tc.flags, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			got := want{c.Addr, c.Token, c.TLS.CA, c.TLS.ClientCert, c.Tenant, c.Context}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestContextErrors: a context that does not exist, a broken file, or a
// token file others may read is invalid input naming what is wrong; a
// broken file does not matter when the address is given and no context
// named.
func TestContextErrors(t *testing.T) {
	cases := []struct {
		name       string
		flags, env map[string]string
		config     string // replaces the file when set
		chmod      bool   // a.token becomes 0644
		want       string
	}{
		{"--context unknown", map[string]string{"context": "c"}, nil, "", false, `--context "c": no such context in DIR/config.yaml (did you mean a?)`},
		{"SCHED_CONTEXT unknown", nil, map[string]string{"SCHED_CONTEXT": "prod"}, "", false, `SCHED_CONTEXT "prod": no such context`},
		{"current_context unknown", nil, nil, "current_context: gone\ncontexts:\n  a:\n    addr: unix:/s\n", false, `current_context "gone": no such context`},
		{"a broken file", nil, nil, "contexts:\n  a:\n    adr: unix:/s\n", false, `DIR/config.yaml:3: context "a": unknown field "adr" (did you mean "addr"?)`},
		{"a token file others may read", nil, nil, "", true, "a.token has mode 0644"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := contextsDir(t)
			if tc.config != "" {
				writeConfig(t, dir, tc.config)
			}
			if tc.chmod {
				os.Chmod(filepath.Join(dir, "a.token"), 0o644)
			}
			_, err := connect(t, dir, tc.flags, tc.env)
			clitest.WantErr(t, err, strings.Replace(tc.want, "DIR", dir, 1), cmdutil.ExitInvalid)
		})
	}

	// With the address given and no context named, the file is not read.
	dir := contextsDir(t)
	writeConfig(t, dir, "contexts: [broken\n")
	if c, err := connect(t, dir, nil, map[string]string{"SCHED_ADDR": "unix:/x.sock"}); err != nil || c.Addr != "unix:/x.sock" {
		t.Fatalf("%+v %v", c, err)
	}
}

// TestContextClient: the client of a context: its address, and an
// address the client cannot read named with the context it came from.
func TestContextClient(t *testing.T) {
	dir := contextsDir(t)
	c, err := factory(t, dir, nil, nil).Client()
	if err != nil || c.Addr() != "unix:/run/a.sock" {
		t.Fatalf("%v %v", c, err)
	}
	writeConfig(t, dir, "current_context: a\ncontexts:\n  a:\n    addr: tcp:nowhere\n")
	_, err = factory(t, dir, nil, nil).Client()
	clitest.WantErr(t, err, `context a: invalid address "tcp:nowhere"`, cmdutil.ExitInvalid)
}

// TestTokenCommandOnlyWhenNeeded: a context's token_command runs only
// when no flag or variable gives the token.
func TestTokenCommandOnlyWhenNeeded(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	writeConfig(t, dir, "current_context: k\ncontexts:\n  k:\n    addr: unix:/k.sock\n    token_command: [sh, -c, 'touch "+mark+"; echo tok-k']\n")
	c, err := connect(t, dir, nil, map[string]string{"SCHED_TOKEN": "tok-env"})
	if err != nil || c.Token != "tok-env" {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the token_command ran though SCHED_TOKEN gives the token")
	}
	c, err = connect(t, dir, nil, nil)
	if err != nil || c.Token != "tok-k" {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the token_command did not run")
	}
}
