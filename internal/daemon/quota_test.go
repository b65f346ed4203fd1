package daemon

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// --quota-running sets the default running quota of tenants (0, the
// default, is unlimited); a value out of range is a usage error naming
// the flag.
func TestQuotaRunningFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := envOf("HOME", dir, "XDG_DATA_HOME", dir, "XDG_RUNTIME_DIR", dir)
	for _, tc := range []struct {
		args []string
		want int64
		err  string
	}{
		{nil, 0, ""},
		{[]string{"--quota-running", "50"}, 50, ""},
		{[]string{"--quota-running", "-1"}, 0, "--quota-running -1"},
		{[]string{"--quota-running", "2000000000"}, 0, "--quota-running 2000000000"},
	} {
		cfg, err := ParseConfig(tc.args, env, "v", io.Discard)
		if tc.err != "" {
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Quotas.Running != tc.want {
			t.Errorf("%v: QuotaRunning %d, %v; want %d", tc.args, cfg.Quotas.Running, err, tc.want)
		}
	}
}
