package server

import (
	"net"
	"net/netip"
)

// ClientOf is the client a remote address (HOST:PORT, as net.Conn and
// http.Request give it) counts as under the per-client limits: the
// daemon's connections per client and the server's failed
// authentications per client. An IPv4 address is a client of its own; an
// IPv6 address counts as its /64 network, since a host is commonly given
// a whole /64 and could otherwise take a fresh address for every
// connection. "" when addr holds no IP address (a Unix socket's peer),
// which no per-client limit counts.
func ClientOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return ""
	}
	return p.String()
}
