package daemon

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/record"
)

// The quota flags set the tenants' default quotas; out-of-range values
// are usage errors naming the flag; --help states each default.
func TestQuotaFlags(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "XDG_RUNTIME_DIR", "/run/user/7", "HOME", "/home/u")
	got, err := ParseConfig([]string{"--quota-active-schedules", "500", "--quota-firings-per-second", "20", "--quota-catch-up-per-second", "3"}, env, "v", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (record.Quotas{ActiveSchedules: 500, FiringsPerSecond: 20, CatchUpPerSecond: 3}); got.Quotas != want {
		t.Errorf("quotas %+v, want %+v", got.Quotas, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--quota-active-schedules", "-1"}, "--quota-active-schedules -1: must be from 0"},
		{[]string{"--quota-firings-per-second", "2000000000"}, "--quota-firings-per-second"},
		{[]string{"--quota-catch-up-per-second", "0"}, "--quota-catch-up-per-second 0: must be from 1"},
	} {
		_, err := ParseConfig(tc.args, env, "v", io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	var help bytes.Buffer
	if _, err := ParseConfig([]string{"--help"}, env, "v", &help); !errors.Is(err, ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"--quota-active-schedules", "(0: unlimited)", "--quota-firings-per-second", "--quota-catch-up-per-second", "(default 10)"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, help.String())
		}
	}
}
