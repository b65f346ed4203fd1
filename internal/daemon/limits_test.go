package daemon

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// The flags of the per-tenant limits: their values reach Config, and bad
// ones are usage errors naming the flag.
func TestParseLimitFlags(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "HOME", "/home/u")
	cfg, err := ParseConfig([]string{"--api-rate", "12.5", "--api-burst", "40", "--max-waiting-claims", "100", "--max-waiting-claims-per-tenant", "25",
		"--max-connections-per-client", "30", "--auth-failure-rate", "2.5"}, env, "v", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.APIRate != 12.5 || cfg.APIBurst != 40 || cfg.MaxWaitingClaims != 100 || cfg.MaxWaitingClaimsPerTenant != 25 ||
		cfg.MaxConnectionsPerClient != 30 || cfg.connectionsPerClient() != 30 || cfg.AuthFailureRate != 2.5 {
		t.Fatalf("got rate %v burst %d waiting %d per tenant %d, connections per client %d, auth failures %v", cfg.APIRate, cfg.APIBurst,
			cfg.MaxWaitingClaims, cfg.MaxWaitingClaimsPerTenant, cfg.MaxConnectionsPerClient, cfg.AuthFailureRate)
	}
	// Without the flag a client's share follows --max-connections.
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, DefaultMaxConnections / ConnectionShare},
		{[]string{"--max-connections", "50"}, 5},
		{[]string{"--max-connections", "5"}, 1},
	} {
		cfg, err := ParseConfig(tc.args, env, "v", io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.connectionsPerClient(); got != tc.want {
			t.Errorf("%v: %d connections per client, want %d", tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--api-rate", "-1"}, "--api-rate"},
		{[]string{"--api-rate", "NaN"}, "--api-rate"},
		{[]string{"--api-rate", "2e9"}, "--api-rate"},
		{[]string{"--api-burst", "-1"}, "--api-burst"},
		{[]string{"--max-waiting-claims-per-tenant", "-3"}, "--max-waiting-claims-per-tenant"},
		{[]string{"--max-connections-per-client", "-1"}, "--max-connections-per-client"},
		{[]string{"--auth-failure-rate", "-1"}, "--auth-failure-rate"},
		{[]string{"--auth-failure-rate", "NaN"}, "--auth-failure-rate"},
	} {
		_, err := ParseConfig(tc.args, env, "v", io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// The releaser is due once the connections fall to half of a large
// peak, not after a small one, and not while they stay up.
func TestMemReleaserDue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		peak, open int64
		want       bool
	}{
		{releaseMinPeak, releaseMinPeak / 2, true},
		{5000, 0, true},
		{5000, 2501, false},
		{releaseMinPeak - 1, 0, false},
	} {
		m := newMemReleaser(nil)
		for range tc.peak {
			m.opened()
		}
		for m.open.Load() > tc.open {
			m.closed()
		}
		if got := m.due(m.open.Load()); got != tc.want {
			t.Errorf("peak %d, open %d: due %v, want %v", tc.peak, tc.open, got, tc.want)
		}
		if got := len(m.kick) == 1; got != tc.want {
			t.Errorf("peak %d, open %d: kicked %v, want %v", tc.peak, tc.open, got, tc.want)
		}
	}
}
