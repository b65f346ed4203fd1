package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sched-dev/sched/internal/daemon"
)

// The systemd unit and the environment file the deb and rpm packages
// install (.goreleaser.yaml's nfpms), relative to this package.
const (
	unitFile = "../../packaging/systemd/schedd.service"
	envFile  = "../../packaging/systemd/schedd.env"
)

// unit is a systemd unit file: section -> key -> values, in order.
type unit map[string]map[string][]string

func readUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, section := unit{}, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not KEY=VALUE in a section: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// one is the single value of key in [Service], failing the test unless
// there is exactly one.
func (u unit) one(t *testing.T, key string) string {
	t.Helper()
	vs := u["Service"][key]
	if len(vs) != 1 {
		t.Fatalf("[Service] %s: %q, want one value", key, vs)
	}
	return vs[0]
}

// The unit's promises: schedd tells systemd when it serves (Type=notify),
// runs as sched, keeps its store in its state directory and its socket in
// its runtime directory, is confined, and has time to stop gracefully.
func TestServiceUnit(t *testing.T) {
	t.Parallel()
	u := readUnit(t, unitFile)
	for key, want := range map[string]string{
		"Type": "notify", "User": "sched", "Group": "sched",
		"StateDirectory": "sched", "RuntimeDirectory": "sched",
		"Restart": "on-failure", "ReadWritePaths": "/var/lib/sched",
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectKernelTunables": "yes",
		"ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
		"RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6", "RestrictNamespaces": "yes",
		"LockPersonality": "yes", "MemoryDenyWriteExecute": "yes",
		"SystemCallArchitectures": "native", "CapabilityBoundingSet": "",
	} {
		if got := u.one(t, key); got != want {
			t.Errorf("[Service] %s=%s, want %s", key, got, want)
		}
	}
	if got := u.one(t, "ExecStart"); !strings.HasPrefix(got, "/usr/bin/schedd ") && got != "/usr/bin/schedd" {
		t.Errorf("ExecStart=%s, want /usr/bin/schedd, where the packages put it", got)
	}
	if got := u["Install"]["WantedBy"]; len(got) != 1 || got[0] != "multi-user.target" {
		t.Errorf("[Install] WantedBy=%q, want multi-user.target", got)
	}

	// SIGTERM drains requests (daemon.ShutdownTimeout), then the relay
	// commits its last acks (up to 10 s) and the engine releases its shard
	// leases (up to 5 s): systemd must not kill schedd before.
	stop, err := time.ParseDuration(u.one(t, "TimeoutStopSec"))
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	if need := daemon.ShutdownTimeout + 15*time.Second; stop < need*2 {
		t.Errorf("TimeoutStopSec=%v: want at least twice schedd's longest graceful stop, %v", stop, need)
	}

	// The defaults are schedd's environment variables, and schedd takes
	// them: the store in the state directory, the socket in the runtime
	// directory.
	env := map[string]string{}
	for _, kv := range u["Service"]["Environment"] {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["SCHED_STORE"] != "sqlite:/var/lib/sched/sched.db" || env["SCHED_LISTEN"] != "unix:/run/sched/schedd.sock" {
		t.Errorf("Environment=%v, want SCHED_STORE in /var/lib/sched and SCHED_LISTEN in /run/sched", env)
	}
	cfg, err := daemon.ParseConfig(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "v", io.Discard)
	if err != nil {
		t.Fatalf("schedd refuses the unit's environment: %v", err)
	}
	if cfg.StorePath != "/var/lib/sched/sched.db" || len(cfg.Listen) != 1 || cfg.Listen[0].String() != "unix:/run/sched/schedd.sock" {
		t.Errorf("schedd takes the unit's environment as store %q, listen %v", cfg.StorePath, cfg.Listen)
	}
}

var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// The environment file names only variables that schedd (or the unit's
// ExecStart) reads, and the unit reads it where each package puts it.
func TestServiceEnvironmentFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	if _, err := daemon.ParseConfig([]string{"--help"}, func(string) (string, bool) { return "", false }, "v", &help); !errors.Is(err, daemon.ErrHelp) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		k, _, ok := strings.Cut(line, "=")
		if !ok || !envName.MatchString(k) {
			continue // prose
		}
		if k != "SCHEDD_OPTS" && !strings.Contains(help.String(), "env "+k) {
			t.Errorf("%s sets %s, which schedd --help does not name", envFile, k)
		}
	}
	u := readUnit(t, unitFile)
	if got := u.one(t, "ExecStart"); !strings.Contains(got, "$SCHEDD_OPTS") {
		t.Errorf("ExecStart=%s does not pass $SCHEDD_OPTS", got)
	}
	want := []string{"-/etc/default/schedd", "-/etc/sysconfig/schedd"}
	if got := u["Service"]["EnvironmentFile"]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("EnvironmentFile=%q, want %q", got, want)
	}
}

// The packages install the unit, the environment file and the scripts
// from this repository where the unit expects them.
func TestPackagesInstallTheService(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		NFPMs []struct {
			BindDir  string            `yaml:"bindir"`
			License  string            `yaml:"license"`
			Scripts  map[string]string `yaml:"scripts"`
			Contents []struct {
				Src, Dst, Packager string
			} `yaml:"contents"`
		} `yaml:"nfpms"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.NFPMs) != 1 {
		t.Fatalf("%d nfpms, want 1", len(cfg.NFPMs))
	}
	p := cfg.NFPMs[0]
	if p.BindDir != "/usr/bin" || p.License != "Apache-2.0" {
		t.Errorf("bindir %q license %q, want /usr/bin and Apache-2.0", p.BindDir, p.License)
	}
	installed := map[string]string{} // dst -> src
	for _, c := range p.Contents {
		installed[c.Dst] = c.Src
	}
	for dst, src := range map[string]string{
		"/usr/lib/systemd/system/schedd.service": "packaging/systemd/schedd.service",
		"/etc/default/schedd":                    "packaging/systemd/schedd.env",
		"/etc/sysconfig/schedd":                  "packaging/systemd/schedd.env",
	} {
		if installed[dst] != src {
			t.Errorf("the packages install %q as %s, want %s", installed[dst], dst, src)
		}
	}
	for _, kind := range []string{"preinstall", "postinstall", "preremove", "postremove"} {
		fi, err := os.Stat(filepath.Join("../..", p.Scripts[kind]))
		if err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s script %q: %v (want an executable file)", kind, p.Scripts[kind], err)
		}
	}
	pre, err := os.ReadFile(filepath.Join("../..", p.Scripts["preinstall"]))
	if err != nil || !bytes.Contains(pre, []byte("useradd --system")) || !bytes.Contains(pre, []byte("/var/lib/sched")) {
		t.Errorf("the preinstall script does not create the system user sched: %v", err)
	}
}

// systemd itself accepts the unit. `systemd-analyze verify` checks every
// key and value, and that ExecStart's program exists: the packages' path,
// /usr/bin/schedd, is replaced by the schedd this test built. --man=no:
// the man pages that Documentation= names are installed with the package,
// not here.
func TestServiceUnitVerifies(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze on this machine")
	}
	raw, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(schedd, " \t\"'\\%$") {
		t.Skipf("the test binary's path %q needs quoting in a unit", schedd)
	}
	text := strings.Replace(string(raw), "\nExecStart=/usr/bin/schedd", "\nExecStart="+schedd, 1)
	if text == string(raw) {
		t.Fatal("no ExecStart=/usr/bin/schedd in the unit")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "schedd.service") // verify wants the unit's own name
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", path).CombinedOutput()
	// verify exits 0 on an unknown key or a bad value, and says so: any
	// word from it is a finding.
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
