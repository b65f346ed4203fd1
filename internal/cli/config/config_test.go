package config_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli/config"
)

// write puts a config file holding text in a new directory, mode 0600.
func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, path string) *config.File {
	t.Helper()
	f, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRoundTrip: what Save writes, Load reads back the same; the file is
// 0600, written whole (no temporary file left), and comments on what did
// not change stay.
func TestRoundTrip(t *testing.T) {
	p := write(t, `# my contexts
current_context: local # the laptop
contexts:
  # the daemon on this machine
  local:
    addr: unix:/run/user/1000/sched/schedd.sock # its socket
  gone:
    addr: tcp:127.0.0.1:1
`)
	f := load(t, p)
	prod := config.Context{Addr: "tls:sched.example.com:7443", TLSCA: "/etc/sched/ca.pem",
		TokenCommand: []string{"secret-tool", "lookup", "service", "sched prod"}, Tenant: "billing"}
	if err := f.Set("prod", prod); err != nil {
		t.Fatal(err)
	}
	local := *f.Contexts["local"]
	local.TokenFile = "/home/u/.config/sched/local.token"
	if err := f.Set("local", local); err != nil {
		t.Fatal(err)
	}
	// Names YAML would read as something else stay strings.
	if err := f.Set("true", config.Context{Addr: "tcp:127.0.0.1:2"}); err != nil {
		t.Fatal(err)
	}
	if !f.Delete("gone") || f.Delete("gone") {
		t.Fatal("Delete: want true, then false")
	}
	f.CurrentContext = "true"
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("the directory holds %d files, want the config alone", len(ents))
	}
	b, _ := os.ReadFile(p)
	for _, want := range []string{"# my contexts", "# the laptop", "# the daemon on this machine", "# its socket",
		`current_context: "true"`, "token_command: [secret-tool, lookup, service, sched prod]"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the file lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "gone") {
		t.Errorf("a deleted context is still there:\n%s", b)
	}

	g := load(t, p)
	if g.CurrentContext != "true" {
		t.Errorf("current_context %q", g.CurrentContext)
	}
	want := map[string]config.Context{"local": local, "prod": prod, "true": {Addr: "tcp:127.0.0.1:2"}}
	if len(g.Contexts) != len(want) {
		t.Fatalf("contexts %v, want %v", g.Names(), want)
	}
	for name, w := range want {
		got, ok := g.Get(name)
		if !ok {
			t.Fatalf("context %s is missing", name)
		}
		if got.Addr != w.Addr || got.TokenFile != w.TokenFile || got.Tenant != w.Tenant || got.TLSCA != w.TLSCA ||
			!slices.Equal(got.TokenCommand, w.TokenCommand) {
			t.Errorf("context %s: %+v, want %+v", name, got, w)
		}
	}
}

// TestNewFileAndSymlink: Save makes the directory and the file; a config
// kept as a symlink stays one, its target rewritten.
func TestNewFileAndSymlink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sched", "config.yaml")
	f := load(t, p)
	if len(f.Contexts) != 0 || f.CurrentContext != "" {
		t.Fatalf("a missing file: %+v", f)
	}
	f.Set("a", config.Context{Addr: "unix:/s.sock"})
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory: %v %v", fi, err)
	}

	target := filepath.Join(dir, "dotfiles-config.yaml")
	if err := os.Rename(p, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	f = load(t, p)
	f.Set("b", config.Context{Addr: "unix:/t.sock"})
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if g := load(t, target); len(g.Contexts) != 2 {
		t.Fatalf("the target holds %v", g.Names())
	}
}

// TestBadFiles: a file that is wrong is refused with its name, the line
// and what is wrong; an unknown field is named, with the closest known
// one.
func TestBadFiles(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		want       string
	}{
		{"unknown top-level field", "current_context: a\ncontext:\n  a:\n    addr: unix:/s\n", 2, `unknown field "context" (did you mean "contexts"?)`},
		{"unknown context field", "contexts:\n  prod:\n    addr: unix:/s\n    tokn_file: /t\n", 4, `context "prod": unknown field "tokn_file" (did you mean "token_file"?)`},
		{"token_command a string", "contexts:\n  prod:\n    addr: unix:/s\n    token_command: secret-tool lookup x\n", 4, "token_command: want a list"},
		{"both token forms", "contexts:\n  prod:\n    addr: unix:/s\n    token_file: /t\n    token_command: [x]\n", 5, "give token_file or token_command, not both"},
		{"no address", "contexts:\n  prod:\n    tenant: acme\n", 3, `context "prod": addr is missing`},
		{"bad address", "contexts:\n  prod:\n    addr: localhost:7070\n", 3, `addr "localhost:7070": want unix:PATH`},
		{"half a client pair", "contexts:\n  prod:\n    addr: tls:h:1\n    tls_client_cert: c.pem\n", 3, "tls_client_cert is given without tls_client_key"},
		{"bad tenant", "contexts:\n  prod:\n    addr: unix:/s\n    tenant: \"a b\"\n", 4, "tenant"},
		{"bad name", "contexts:\n  \"a b\":\n    addr: unix:/s\n", 2, `context name "a b"`},
		{"a context twice", "contexts:\n  a:\n    addr: unix:/s\n  a:\n    addr: unix:/t\n", 4, `context "a" is defined twice (first on line 2)`},
		{"a field twice", "contexts:\n  a:\n    addr: unix:/s\n    addr: unix:/t\n", 4, "addr is given twice"},
		{"not a mapping", "- a\n- b\n", 1, "want a mapping of current_context and contexts"},
		{"a context not a mapping", "contexts:\n  a: unix:/s\n", 2, `context "a": want a mapping`},
		{"bad YAML", "contexts:\n  a:\n    addr: [unix\n", 0, "did not find expected"},
		{"two documents", "contexts: {}\n---\ncurrent_context: a\n", 2, "more than one YAML document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.text)
			_, err := config.Load(p)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("%v does not match ErrInvalid", err)
			}
			prefix := p + ":"
			if tc.line > 0 {
				prefix = p + ":" + strconv.Itoa(tc.line) + ": "
			}
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q... saying %q", err, prefix, tc.want)
			}
		})
	}
}

// TestConfigOthersMayWrite: a config file that group or others may write
// is refused, since its token_command runs as the user; an empty file or
// one of comments only is an empty config.
func TestConfigOthersMayWrite(t *testing.T) {
	p := write(t, "contexts:\n  a:\n    addr: unix:/s\n")
	if err := os.Chmod(p, 0o664); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(p)
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "has mode 0664") || !strings.Contains(err.Error(), "chmod 600 "+p) {
		t.Fatalf("got %v", err)
	}
	for _, text := range []string{"", "# nothing yet\n", "---\n"} {
		if f := load(t, write(t, text)); len(f.Contexts) != 0 {
			t.Errorf("%q: %v", text, f.Names())
		}
	}
}

// TestPath: SCHED_CONFIG, else XDG_CONFIG_HOME, else HOME.
func TestPath(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SCHED_CONFIG": "/etc/sched.yaml", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/sched.yaml"},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/sched/config.yaml"},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/h"}, "/h/.config/sched/config.yaml"},
		{map[string]string{}, ""},
	}
	for _, tc := range cases {
		got, err := config.Path(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("%v: %q %v, want %q", tc.env, got, err, tc.want)
		}
	}
}

// TestTokenFile: read at use and trimmed; a file group or others may read
// is refused naming the file, its mode and the fix, as ssh refuses a key;
// relative paths are the config file's directory's.
func TestTokenFile(t *testing.T) {
	p := write(t, "contexts:\n  prod:\n    addr: unix:/s\n    token_file: prod.token\n")
	tok := filepath.Join(filepath.Dir(p), "prod.token")
	f := load(t, p)
	c, _ := f.Get("prod")
	if c.TokenFile != tok || c.TokenSource() != "file" {
		t.Fatalf("token_file %q (%s), want %q", c.TokenFile, c.TokenSource(), tok)
	}
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string // "" for the token sched_abc
	}{
		{"private", "  sched_abc\n", 0o600, ""},
		{"read-only", "sched_abc", 0o400, ""},
		{"readable by others", "sched_abc\n", 0o644, "has mode 0644: group or others may read it"},
		{"readable by group", "sched_abc\n", 0o640, "chmod 600 " + tok},
		{"empty", "\n", 0o600, "is empty"},
		{"two words", "sched_abc sched_def\n", 0o600, "more than one word"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(tok, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(tok, tc.mode); err != nil {
				t.Fatal(err)
			}
			got, err := c.Token(context.Background())
			if tc.want == "" {
				if err != nil || got != "sched_abc" {
					t.Fatalf("%q %v", got, err)
				}
				return
			}
			if err == nil || !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), `context "prod" (`+p+":2)") {
				t.Fatalf("%q %v, want an error saying %q", got, err, tc.want)
			}
			if strings.Contains(err.Error(), "sched_abc") {
				t.Fatalf("the error shows the token: %v", err)
			}
		})
	}
	os.Remove(tok)
	if _, err := c.Token(context.Background()); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing: %v", err)
	}
}

// TestTokenCommand: its trimmed output is the token; a failure says the
// command and the first line it printed on stderr; a program that is not
// there is invalid input; it gets no standard input.
func TestTokenCommand(t *testing.T) {
	cases := []struct {
		name    string
		argv    []string
		want    string
		invalid bool
	}{
		{"prints the token", []string{"sh", "-c", "echo '  sched_abc  '"}, "sched_abc", false},
		{"reads no input", []string{"sh", "-c", "cat; echo sched_abc"}, "sched_abc", false},
		{"fails", []string{"sh", "-c", "echo 'the keyring is locked' >&2; echo more >&2; exit 3"}, "token_command sh failed: exit status 3: the keyring is locked", false},
		{"prints nothing", []string{"true"}, "is empty", false},
		{"not there", []string{"/nonexistent/keyring-tool"}, "token_command /nonexistent/keyring-tool", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := load(t, filepath.Join(t.TempDir(), "config.yaml"))
			if err := f.Set("k", config.Context{Addr: "unix:/s", TokenCommand: tc.argv}); err != nil {
				t.Fatal(err)
			}
			c, _ := f.Get("k")
			if c.TokenSource() != "command" {
				t.Fatalf("source %s", c.TokenSource())
			}
			got, err := c.Token(context.Background())
			if !strings.HasPrefix(tc.want, "sched_") {
				if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, config.ErrInvalid) != tc.invalid {
					t.Fatalf("%q %v, want an error saying %q (invalid input: %v)", got, err, tc.want, tc.invalid)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q %v, want %q", got, err, tc.want)
			}
		})
	}
}

// TestHomeInPaths: ~/ in a path is the home directory of the environment
// Open reads.
func TestHomeInPaths(t *testing.T) {
	p := write(t, "contexts:\n  a:\n    addr: unix:/s\n    tls_ca: ~/ca.pem\n    token_command: [~/bin/tok]\n")
	f, err := config.Open(func(k string) (string, bool) {
		return map[string]string{"SCHED_CONFIG": p, "HOME": "/home/u"}[k], k == "SCHED_CONFIG" || k == "HOME"
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.Get("a")
	if c.TLSCA != "/home/u/ca.pem" || c.TokenCommand[0] != "/home/u/bin/tok" {
		t.Fatalf("%+v", c)
	}
	if f.Contexts["a"].TLSCA != "~/ca.pem" {
		t.Fatalf("Get changed the file's context: %+v", f.Contexts["a"])
	}
}
