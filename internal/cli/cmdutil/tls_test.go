package cmdutil_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestGlobalTLSFlags: the TLS flags fall back to their variables; half a
// client pair, or a CA file that does not load, is invalid input (exit 2)
// naming the flag or the file; a tls: address with good files is a client.
func TestGlobalTLSFlags(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		flags map[string]string
		env   map[string]string
		want  string // "" for a client
	}{
		{"no files: the system roots", nil, nil, ""},
		{"cert flag without key", map[string]string{"tls-client-cert": "c.pem"}, nil, "--tls-client-cert is given without --tls-client-key"},
		{"key from env without cert", nil, map[string]string{"SCHED_TLS_CLIENT_KEY": "k.pem"}, "--tls-client-key is given without --tls-client-cert"},
		{"CA from env that does not exist", nil, map[string]string{"SCHED_TLS_CA": dir + "/none.pem"}, dir + "/none.pem"},
		{"CA flag wins over env", map[string]string{"tls-ca": dir + "/flag.pem"}, map[string]string{"SCHED_TLS_CA": dir + "/env.pem"}, dir + "/flag.pem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := clitest.NewFactory(false)
			fl := pflag.NewFlagSet("schedctl", pflag.ContinueOnError)
			f.AddGlobalFlags(fl)
			env := map[string]string{"SCHED_ADDR": "tls:sched.example:7443"}
			for k, v := range tc.env {
				env[k] = v
			}
			f.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			for k, v := range tc.flags {
				if err := fl.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			c, err := f.Client()
			if tc.want == "" {
				if err != nil || c.Addr() != "tls:sched.example:7443" {
					t.Fatalf("%v, %v", c, err)
				}
				return
			}
			if cmdutil.ExitCode(err) != cmdutil.ExitInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v (exit %d); want invalid input saying %q", err, cmdutil.ExitCode(err), tc.want)
			}
		})
	}
}
