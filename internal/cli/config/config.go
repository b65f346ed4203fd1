// Package config is schedctl's file of named contexts: which schedd to
// reach and with what credentials, so that someone who works with several
// daemons (a laptop's, staging's, production's) names one instead of
// repeating --addr, --token and the TLS flags each time.
//
// The file is $XDG_CONFIG_HOME/sched/config.yaml, else
// ~/.config/sched/config.yaml; SCHED_CONFIG names another (Path):
//
//	current_context: local
//	contexts:
//	  local:
//	    addr: unix:/run/user/1000/sched/schedd.sock
//	  prod:
//	    addr: tls:sched.example.com:7443
//	    tls_ca: /etc/sched/ca.pem
//	    token_command: [secret-tool, lookup, service, sched, context, prod]
//	    tenant: billing
//
// It holds no token: a context names a token_file (read at each use,
// refused when group or others may read it) or a token_command (run at
// each use; its standard output is the token), which is how a keyring is
// used. The file is read strictly (an unknown field is an error naming
// the file, the line and the field) and written atomically with mode 0600,
// keeping the comments of what a change leaves alone. Package cmdutil
// applies a context beneath the flags and the environment; schedctl
// context edits the file.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/suggest"
)

// ErrInvalid is matched (errors.Is) by every error that says the file, a
// context in it or a file a context names is wrong: schedctl's invalid
// input, exit status 2. A token_command that fails is not invalid input.
var ErrInvalid = errors.New("invalid schedctl config")

// invalid is an error that matches ErrInvalid without saying so in its
// message.
type invalid struct{ error }

func (e invalid) Is(target error) bool { return target == ErrInvalid }
func (e invalid) Unwrap() error        { return e.error }

func invalidf(format string, args ...any) error { return invalid{fmt.Errorf(format, args...)} }

// MaxSize bounds the config file; a bigger one is refused, not read.
const MaxSize = 1 << 20

// Env reads the environment; os.LookupEnv in production.
type Env func(string) (string, bool)

// Context is one daemon and how to reach it. Its fields are those of the
// global flags: Addr is what --addr takes, the TLS files those of
// --tls-ca, --tls-client-cert and --tls-client-key. The token is given
// by TokenFile or TokenCommand, never held here. Tenant, when set, is
// sent as the Sched-Tenant header: an admin acting as that tenant.
type Context struct {
	Addr          string   `yaml:"addr"`
	TLSCA         string   `yaml:"tls_ca,omitempty"`
	TLSClientCert string   `yaml:"tls_client_cert,omitempty"`
	TLSClientKey  string   `yaml:"tls_client_key,omitempty"`
	TokenFile     string   `yaml:"token_file,omitempty"`
	TokenCommand  []string `yaml:"token_command,omitempty,flow"`
	Tenant        string   `yaml:"tenant,omitempty"`

	name string // set by File.Get, for messages
	file string // the config file it was read from, for messages
	line int    // where it is defined in file; 0 when not read from it
}

// contextFields and topFields are the fields the file may hold, in the
// order messages list them.
var (
	contextFields = []string{"addr", "tls_ca", "tls_client_cert", "tls_client_key", "token_file", "token_command", "tenant"}
	topFields     = []string{"current_context", "contexts"}
)

// Name is the context's name (set by File.Get).
func (c Context) Name() string { return c.name }

// TokenSource says where the context's token comes from, never the token
// itself: "file", "command" or "none".
func (c Context) TokenSource() string {
	switch {
	case c.TokenFile != "":
		return "file"
	case len(c.TokenCommand) > 0:
		return "command"
	}
	return "none"
}

// Check reports what is wrong with c, and the field at fault. The address
// is checked only for its form (its scheme); the client reads the rest.
func (c Context) Check() (field string, err error) {
	switch {
	case c.Addr == "":
		return "addr", errors.New("addr is missing: give unix:PATH, tcp:HOST:PORT, tls:HOST:PORT or https://HOST:PORT")
	case !hasScheme(c.Addr):
		return "addr", fmt.Errorf("addr %q: want unix:PATH, tcp:HOST:PORT, tls:HOST:PORT or https://HOST:PORT", c.Addr)
	case c.TokenFile != "" && len(c.TokenCommand) > 0:
		return "token_command", errors.New("give token_file or token_command, not both")
	case len(c.TokenCommand) > 0 && strings.TrimSpace(c.TokenCommand[0]) == "":
		return "token_command", errors.New("token_command: the program to run (its first word) is empty")
	case c.TLSClientCert != "" && c.TLSClientKey == "":
		return "tls_client_key", errors.New("tls_client_cert is given without tls_client_key")
	case c.TLSClientKey != "" && c.TLSClientCert == "":
		return "tls_client_cert", errors.New("tls_client_key is given without tls_client_cert")
	}
	if c.Tenant != "" {
		if err := schedule.CheckTenantRef(c.Tenant); err != nil {
			return "tenant", err
		}
	}
	return "", nil
}

func hasScheme(addr string) bool {
	for _, p := range []string{"unix:", "tcp:", "tls:", "https://"} {
		if strings.HasPrefix(addr, p) {
			return true
		}
	}
	return false
}

// nameRE is the form of a context's name: short, printable, and the
// same in a shell, a YAML file and a table.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// CheckName reports whether name may name a context.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return invalidf("context name %q: use 1 to 64 letters, digits, '.', '_', '-' or '@', starting with a letter or digit", name)
	}
	return nil
}

// Error is a fault in the config file, at a line when known.
type Error struct {
	File string
	Line int // 0 when unknown
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Is makes every *Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// File is the config file: its contexts by name and the current one.
// Change it and Save it; what a change leaves alone keeps its comments.
type File struct {
	Path           string
	CurrentContext string
	Contexts       map[string]*Context

	home string     // for ~/ in the paths of contexts
	doc  *yaml.Node // the document as read, to keep comments; nil if none
}

// Path is the config file the environment names: SCHED_CONFIG, else
// $XDG_CONFIG_HOME/sched/config.yaml, else ~/.config/sched/config.yaml.
func Path(env Env) (string, error) {
	if p, ok := env("SCHED_CONFIG"); ok && p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", invalidf("SCHED_CONFIG %q: %v", p, err)
		}
		return abs, nil
	}
	if d, ok := env("XDG_CONFIG_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "sched", "config.yaml"), nil
	}
	if h, ok := env("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "sched", "config.yaml"), nil
	}
	return "", invalidf("cannot find schedctl's config file: set SCHED_CONFIG, XDG_CONFIG_HOME or HOME")
}

// Open reads the config file the environment names (Path). A file that
// does not exist is an empty one, which Save creates.
func Open(env Env) (*File, error) {
	p, err := Path(env)
	if err != nil {
		return nil, err
	}
	f, err := Load(p)
	if err != nil {
		return nil, err
	}
	f.home, _ = env("HOME")
	return f, nil
}

// Load reads the config file at path; one that does not exist is empty.
// A file that group or others may write, or that another user owns, is
// refused: its token_command runs as you.
func Load(path string) (*File, error) {
	home, _ := os.UserHomeDir()
	f := &File{Path: path, Contexts: map[string]*Context{}, home: home}
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("schedctl config: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("schedctl config: %w", err)
	}
	if err := checkConfigMode(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("schedctl config %s: %w", path, err)
	}
	if len(data) > MaxSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("over the limit of %d MiB", MaxSize>>20)}
	}
	if err := f.parse(data); err != nil {
		return nil, err
	}
	return f, nil
}

// checkConfigMode refuses a config file that someone else could have
// written: its token_command would run as you.
func checkConfigMode(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &Error{File: path, Msg: "not a regular file"}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return &Error{File: path, Msg: fmt.Sprintf("owned by uid %d, not by you (uid %d): its token_command would run as you; refusing to read it", st.Uid, os.Geteuid())}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &Error{File: path, Msg: fmt.Sprintf("has mode %04o: group or others may change it, and its token_command runs as you; chmod 600 %s", fi.Mode().Perm(), path)}
	}
	return nil
}

// Names are the contexts' names, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Contexts))
	for n := range f.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Get returns the context name with its file paths resolved: ~/ is the
// home directory, and a relative path is relative to the config file's
// directory (as kubectl reads its kubeconfig), so that the file means the
// same from any working directory.
func (f *File) Get(name string) (Context, bool) {
	p, ok := f.Contexts[name]
	if !ok {
		return Context{}, false
	}
	c := *p
	c.TokenCommand = slices.Clone(p.TokenCommand)
	c.name, c.file = name, f.Path
	for _, s := range []*string{&c.TLSCA, &c.TLSClientCert, &c.TLSClientKey, &c.TokenFile} {
		*s = f.resolve(*s)
	}
	if len(c.TokenCommand) > 0 && strings.ContainsRune(c.TokenCommand[0], '/') {
		c.TokenCommand[0] = f.resolve(c.TokenCommand[0])
	}
	return c, true
}

func (f *File) resolve(p string) string {
	switch {
	case p == "":
		return ""
	case (p == "~" || strings.HasPrefix(p, "~/")) && f.home != "":
		return filepath.Join(f.home, p[1:])
	case filepath.IsAbs(p):
		return p
	}
	return filepath.Join(filepath.Dir(f.Path), p)
}

// Set adds or replaces the context name.
func (f *File) Set(name string, c Context) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if field, err := c.Check(); err != nil {
		return invalidf("context %q: %s: %v", name, field, err)
	}
	c.name, c.file, c.line = "", "", 0
	if f.Contexts == nil {
		f.Contexts = map[string]*Context{}
	}
	f.Contexts[name] = &c
	return nil
}

// Delete removes the context name (and makes none current if it was),
// reporting whether it existed.
func (f *File) Delete(name string) bool {
	if _, ok := f.Contexts[name]; !ok {
		return false
	}
	delete(f.Contexts, name)
	if f.CurrentContext == name {
		f.CurrentContext = ""
	}
	return true
}

// Unknown is the error for a context name the file does not hold, with
// the closest name it does ("did you mean prod?"); how says where the
// name came from (--context, SCHED_CONTEXT, an argument).
func (f *File) Unknown(how, name string) error {
	msg := fmt.Sprintf("%s %q: no such context in %s", how, name, f.Path)
	if s := suggest.Closest(name, f.Names(), 2); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	} else if len(f.Contexts) == 0 {
		msg += "; create one with schedctl context set " + name + " --addr ADDR"
	} else {
		msg += "; schedctl context list shows them"
	}
	return invalidf("%s", msg)
}

// Save writes the file with mode 0600, atomically: a temporary file in
// its directory, synced, then renamed over it, so that a crash leaves the
// old file or the new one, never half of one. A symlink at Path is
// followed (a config kept with dotfiles stays a link). The directory is
// created (0700) if missing.
func (f *File) Save() error {
	data, err := f.encode()
	if err != nil {
		return fmt.Errorf("schedctl config %s: %w", f.Path, err)
	}
	target := f.Path
	if real, err := filepath.EvalSymlinks(f.Path); err == nil {
		target = real
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("schedctl config: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return fmt.Errorf("schedctl config: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("schedctl config: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("schedctl config: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("schedctl config: syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("schedctl config: %w", err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("schedctl config: %w", err)
	}
	done = true
	// The rename is durable once the directory is synced; a failure here
	// (some file systems refuse to sync a directory) loses nothing but
	// that promise.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// parse reads data into f, checking every key against the fields the
// file may hold, so that a misspelled field is an error naming its line,
// not a setting silently ignored.
func (f *File) parse(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file
		}
		return f.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return f.errAt(extra.Line, "more than one YAML document; the file is one mapping of current_context and contexts")
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return f.errAt(root.Line, "want a mapping of current_context and contexts")
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			return f.errAt(k.Line, fmt.Sprintf("%s is given twice (first on line %d)", k.Value, first))
		}
		seen[k.Value] = k.Line
		switch k.Value {
		case "current_context":
			if v.Kind != yaml.ScalarNode {
				return f.errAt(v.Line, "current_context: want the name of a context")
			}
			if v.Tag != "!!null" {
				f.CurrentContext = v.Value
			}
		case "contexts":
			if err := f.parseContexts(v); err != nil {
				return err
			}
		default:
			return f.errAt(k.Line, unknownField(k.Value, topFields, "the file holds"))
		}
	}
	f.doc = &doc
	return nil
}

func (f *File) parseContexts(m *yaml.Node) error {
	if m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		return f.errAt(m.Line, "contexts: want a mapping of names to contexts")
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := k.Value
		if err := CheckName(name); err != nil {
			return f.errAt(k.Line, err.Error())
		}
		if first, dup := seen[name]; dup {
			return f.errAt(k.Line, fmt.Sprintf("context %q is defined twice (first on line %d)", name, first))
		}
		seen[name] = k.Line
		if v.Kind != yaml.MappingNode {
			return f.errAt(v.Line, fmt.Sprintf("context %q: want a mapping of %s", name, strings.Join(contextFields, ", ")))
		}
		lines := map[string]int{}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			if first, dup := lines[fk.Value]; dup {
				return f.errAt(fk.Line, fmt.Sprintf("context %q: %s is given twice (first on line %d)", name, fk.Value, first))
			}
			lines[fk.Value] = fk.Line
			if !slices.Contains(contextFields, fk.Value) {
				return f.errAt(fk.Line, fmt.Sprintf("context %q: %s", name, unknownField(fk.Value, contextFields, "a context has")))
			}
			if fk.Value == "token_command" {
				if fv.Kind != yaml.SequenceNode {
					return f.errAt(fv.Line, fmt.Sprintf("context %q: token_command: want a list, the program and its arguments, such as [secret-tool, lookup, service, sched]", name))
				}
				for _, a := range fv.Content {
					if a.Kind != yaml.ScalarNode {
						return f.errAt(a.Line, fmt.Sprintf("context %q: token_command: want a list of words", name))
					}
				}
			} else if fv.Kind != yaml.ScalarNode {
				return f.errAt(fv.Line, fmt.Sprintf("context %q: %s: want a string", name, fk.Value))
			}
		}
		var c Context
		if err := v.Decode(&c); err != nil {
			return f.yamlError(err)
		}
		if field, err := c.Check(); err != nil {
			line := v.Line
			if l, ok := lines[field]; ok {
				line = l
			}
			return f.errAt(line, fmt.Sprintf("context %q: %v", name, err))
		}
		c.line = k.Line
		f.Contexts[name] = &c
	}
	return nil
}

func unknownField(field string, fields []string, holder string) string {
	msg := fmt.Sprintf("unknown field %q", field)
	if s := suggest.Closest(field, fields, 3); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; " + holder + " " + strings.Join(fields, ", ")
}

func (f *File) errAt(line int, msg string) error { return &Error{File: f.Path, Line: line, Msg: msg} }

// yamlLine is the line yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`line (\d+): (.*)$`)

func (f *File) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	e := &Error{File: f.Path, Msg: msg}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		fmt.Sscan(m[1], &e.Line)
		e.Msg = m[2]
	}
	return e
}
