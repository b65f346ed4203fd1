package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// RefusedError is the guard's refusal of an address: connecting there
// could reach the daemon's own host or network (server-side request
// forgery). It never succeeds on a retry, so a Sender classifies it as
// permanent.
type RefusedError struct {
	// Host is the host as the URL (or a redirect) names it; empty when the
	// error comes from Check alone.
	Host string
	// Addr is the refused address.
	Addr netip.Addr
	// Reason says what kind of address it is, e.g. "a loopback address".
	Reason string
}

// Error names the host, the address and why, and how an admin allows it.
func (e *RefusedError) Error() string {
	hint := "; allow it with --webhook-allow"
	if !e.Addr.IsValid() {
		hint = ""
	}
	switch {
	case e.Host == "":
		return fmt.Sprintf("address %s: %s%s", e.Addr, e.Reason, hint)
	case isLiteral(e.Host):
		return fmt.Sprintf("webhook host %q: %s%s", e.Host, e.Reason, hint)
	default:
		return fmt.Sprintf("webhook host %q resolves to %s: %s%s", e.Host, e.Addr, e.Reason, hint)
	}
}

// isLiteral reports whether host is an IP address rather than a name.
func isLiteral(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

// refusedRange is one block of addresses the guard refuses by default.
type refusedRange struct {
	prefix netip.Prefix
	reason string
}

// refusedRanges are checked in order, so a narrower block (the metadata
// addresses) comes before the block holding it (link-local, unique local).
// IPv4-mapped IPv6 addresses are unmapped before the check; NAT64 and 6to4
// addresses are checked by the IPv4 address they embed (embedded).
var refusedRanges = func() []refusedRange {
	list := []struct{ cidr, reason string }{
		// Cloud metadata services (AWS, GCP, Azure, …; AWS's IPv6 one).
		{"169.254.169.254/32", "a link-local address (cloud metadata)"},
		{"fd00:ec2::254/128", "a unique local address (cloud metadata)"},

		{"0.0.0.0/32", "the unspecified address"},
		{"::/128", "the unspecified address"},
		{"0.0.0.0/8", "a \"this network\" address"},
		{"127.0.0.0/8", "a loopback address"},
		{"::1/128", "a loopback address"},
		{"169.254.0.0/16", "a link-local address"},
		{"fe80::/10", "a link-local address"},
		{"10.0.0.0/8", "a private address"},
		{"172.16.0.0/12", "a private address"},
		{"192.168.0.0/16", "a private address"},
		{"fc00::/7", "a unique local (private) address"},
		{"fec0::/10", "a site-local (private) address"},
		{"100.64.0.0/10", "a carrier-grade NAT address"},
		{"224.0.0.0/4", "a multicast address"},
		{"ff00::/8", "a multicast address"},
		{"255.255.255.255/32", "the broadcast address"},
		{"240.0.0.0/4", "a reserved address"},
		{"192.0.0.0/24", "an IETF protocol assignment address"},
		{"192.0.2.0/24", "a documentation address"},
		{"198.51.100.0/24", "a documentation address"},
		{"203.0.113.0/24", "a documentation address"},
		{"2001:db8::/32", "a documentation address"},
		{"3fff::/20", "a documentation address"},
		{"198.18.0.0/15", "a benchmarking address"},
		{"2001:2::/48", "a benchmarking address"},
		{"100::/64", "a discard-only address"},
		{"64:ff9b:1::/48", "a local-use NAT64 address"},
		{"2001::/32", "a Teredo tunnel address"},
		// ::/96 (IPv4-compatible, deprecated) after :: and ::1 above.
		{"::/96", "a deprecated IPv4-compatible address"},
	}
	out := make([]refusedRange, len(list))
	for i, r := range list {
		out[i] = refusedRange{netip.MustParsePrefix(r.cidr), r.reason}
	}
	return out
}()

// Embedding prefixes: an IPv6 address in one of them reaches the IPv4
// address it carries, through a NAT64 gateway or a 6to4 relay.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// Check reports whether the guard lets a webhook connect to addr: nil when
// it may, a *RefusedError saying why not otherwise. It refuses loopback,
// link-local (with the cloud metadata addresses), private, carrier-grade
// NAT, multicast, unspecified, broadcast, reserved, documentation and
// benchmarking addresses, and IPv6 forms that carry one of them
// (IPv4-mapped, NAT64, 6to4), unless addr (or the IPv4 address it maps)
// is inside a prefix of allow. A Sender checks every address it connects
// to; the daemon calls Check to refuse a target at create time too.
func Check(addr netip.Addr, allow []netip.Prefix) error {
	if !addr.IsValid() {
		return &RefusedError{Addr: addr, Reason: "not a valid IP address"}
	}
	bare := addr.WithZone("") // a Prefix never contains a zoned address
	for _, p := range allow {
		if p.Contains(bare) || p.Contains(bare.Unmap()) {
			return nil
		}
	}
	if reason := refusal(bare); reason != "" {
		return &RefusedError{Addr: addr, Reason: reason}
	}
	return nil
}

// refusal says why a is refused by default, "" when it is not.
func refusal(a netip.Addr) string {
	if a.Is4In6() {
		v4 := a.Unmap()
		if r := refusal(v4); r != "" {
			return fmt.Sprintf("an IPv4-mapped form of %s, %s", v4, r)
		}
		return ""
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		var form string
		switch {
		case nat64Prefix.Contains(a):
			v4, form = netip.AddrFrom4([4]byte(b[12:16])), "a NAT64 form"
		case sixToFour.Contains(a):
			v4, form = netip.AddrFrom4([4]byte(b[2:6])), "a 6to4 form"
		}
		if v4.IsValid() {
			if r := refusal(v4); r != "" {
				return fmt.Sprintf("%s of %s, %s", form, v4, r)
			}
		}
	}
	return ""
}

// dial is the Transport's only way to connect. It resolves host itself
// (Config.Resolver), checks every address it gets, and dials a checked IP
// literal, so the address connected to is the address checked: the
// dialer never resolves the name again, and a name that resolves
// differently the next time (DNS rebinding) is checked again on the next
// connection. One refused address refuses the name, so an answer that
// mixes a public and a private address cannot be used to reach the
// private one.
func (s *Sender) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("webhook dial %q: %w", address, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("webhook dial %q: bad port: %w", address, err)
	}
	addrs, err := s.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := Check(a, s.allow); err != nil {
			var refused *RefusedError
			if errors.As(err, &refused) {
				refused.Host = host
			}
			return nil, err
		}
	}
	var errs []error
	for _, a := range addrs {
		// Unmap: dial an IPv4-mapped answer as the IPv4 address it is.
		target := netip.AddrPortFrom(a.Unmap(), uint16(port)).String()
		conn, err := s.dialContext(ctx, network, target)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// resolve returns host's addresses: host itself when it is an IP literal,
// else the Resolver's answer.
func (s *Sender) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := s.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("webhook host %q: look up: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("webhook host %q: look up: no addresses", host)
	}
	return addrs, nil
}
