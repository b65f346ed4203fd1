// Package webhooktest is test support for what delivers webhooks: a
// dialer that connects to loopback only, so that no test sends a packet
// beyond this machine, even one it expects the guard to refuse.
package webhooktest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
)

// CheckLoopback returns an error unless address is an IP literal on
// loopback with a port: a name would be resolved again by the dialer,
// and anything else leaves the machine.
func CheckLoopback(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("test dialer: %q: %w", address, err)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("test dialer: %q is not an IP literal: the dialer would resolve the name again", address)
	}
	if !a.Unmap().IsLoopback() {
		return fmt.Errorf("test dialer: %q is beyond loopback", address)
	}
	return nil
}

// LoopbackDial is a webhook dialer for tb: it fails the test, and
// refuses, when asked for anything CheckLoopback refuses, and dials
// loopback for real.
func LoopbackDial(tb testing.TB) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if err := CheckLoopback(address); err != nil {
			tb.Error(err)
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
}
