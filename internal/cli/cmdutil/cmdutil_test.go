package cmdutil_test

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestGlobalAddressAndToken: --addr and --token win over SCHED_ADDR and
// SCHED_TOKEN, which win over the default socket; a bad address is
// invalid input.
func TestGlobalAddressAndToken(t *testing.T) {
	env := map[string]string{"SCHED_ADDR": "tcp:127.0.0.1:7070", "SCHED_TOKEN": "from-env", "XDG_RUNTIME_DIR": "/run/user/9"}
	f, _, _ := clitest.NewFactory(false)
	fl := pflag.NewFlagSet("schedctl", pflag.ContinueOnError)
	f.AddGlobalFlags(fl)
	f.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := f.Client()
	if err != nil || c.Addr() != "tcp:127.0.0.1:7070" {
		t.Fatalf("env address: %v %v", c, err)
	}
	fl.Set("addr", "unix:/tmp/x.sock")
	if c, _ := f.Client(); c.Addr() != "unix:/tmp/x.sock" {
		t.Errorf("flag address %s", c.Addr())
	}
	delete(env, "SCHED_ADDR")
	fl.Set("addr", "")
	if c, _ := f.Client(); c.Addr() != "unix:/run/user/9/sched/schedd.sock" {
		t.Errorf("default address %s", c.Addr())
	}
	fl.Set("addr", "localhost:80")
	_, err = f.Client()
	clitest.WantErr(t, err, `invalid address "localhost:80"`, cmdutil.ExitInvalid)
}

// TestShortDurations: lags read at a glance, whatever precision schedd
// sends.
func TestShortDurations(t *testing.T) {
	for in, want := range map[string]string{
		"850.123456ms": "850ms", "-59.9876s": "-1m0s", "-59.94s": "-59.9s", "1.25s": "1.3s", "84.0012s": "1m24s",
		"3m0.4s": "3m0s", "26h3m31s": "26h4m", "0s": "0s", "500us": "1ms", "not a duration": "not a duration",
	} {
		if got := cmdutil.ShortDur(&in); got != want {
			t.Errorf("cmdutil.ShortDur(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cmdutil.ShortDur(nil); got != "-" {
		t.Errorf("cmdutil.ShortDur(nil) = %q", got)
	}
}
