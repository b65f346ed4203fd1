// Package tcpproxy is test support: a loopback TCP proxy put between a
// process and PostgreSQL to cut, blackhole or refuse its connections, or
// to lose the reply to a COMMIT, since the kernel's network emulation is
// not available to tests.
package tcpproxy

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy for fault tests. In front of one node's
// store it forwards, blackholes (accepts and holds connections, forwarding
// nothing either way), cuts (closes every connection), refuses (closes
// every connection and each new one at once, as a database that is down
// would), or, armed, lets one COMMIT through and drops the connection
// before the server's reply reaches the client (an ambiguous commit).
type Proxy struct {
	t        testing.TB
	ln       net.Listener
	upstream string

	mu        sync.Mutex
	blackhole bool
	refuse    bool
	armed     bool // drop the reply to the next COMMIT
	dropped   int  // COMMIT replies dropped
	conns     map[net.Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
}

// New listens on a loopback port and forwards to upstream (host:port).
// It is closed when the test ends.
func New(t testing.TB, upstream string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{t: t, ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Blackhole makes the proxy accept connections and hold them without
// forwarding a byte, and stops forwarding on the open ones.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	p.blackhole = true
	p.mu.Unlock()
}

// Heal cuts every connection (the ones held in the blackhole are broken
// anyway: their bytes were lost) and forwards again.
func (p *Proxy) Heal() {
	p.Cut()
	p.mu.Lock()
	p.blackhole, p.refuse = false, false
	p.mu.Unlock()
}

// Refuse closes every open connection and, until Heal, each new one as
// soon as it is accepted: the client sees its connection reset or ended,
// as when the database goes down under it.
func (p *Proxy) Refuse() {
	p.mu.Lock()
	p.refuse = true
	p.mu.Unlock()
	p.Cut()
}

// ForDSN returns a PostgreSQL URL (postgres://…) with its host and port
// replaced by a new proxy's in front of them, and the proxy.
func ForDSN(t testing.TB, dsn string) (string, *Proxy) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		t.Fatalf("tcpproxy: %q: the proxy needs a postgres:// URL with a host", dsn)
	}
	upstream := u.Host
	if u.Port() == "" {
		upstream = net.JoinHostPort(u.Hostname(), "5432")
	}
	p := New(t, upstream)
	u.Host = p.Addr()
	return u.String(), p
}

// Cut closes every open connection; new ones are served as before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// ArmDropCommit makes the proxy forward the next COMMIT to the server,
// wait for the server's reply (so the commit happened) and drop the
// connection instead of relaying it. One shot.
func (p *Proxy) ArmDropCommit() {
	p.mu.Lock()
	p.armed = true
	p.mu.Unlock()
}

// DroppedCommits is how many COMMIT replies were dropped.
func (p *Proxy) DroppedCommits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines. Safe to call twice.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// track registers c; false when the proxy is closed or refusing (c is
// then closed).
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.refuse {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) isBlackhole() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.blackhole
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve relays one client connection.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	if p.isBlackhole() {
		// Accept and hold: read and lose whatever comes, until cut.
		_, _ = io.Copy(io.Discard, client)
		return
	}
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)

	// dropReply is closed when the client side forwarded an armed COMMIT:
	// the server's next bytes (its reply) are then lost with the
	// connection.
	dropReply := make(chan struct{})
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 && !p.isBlackhole() {
				chunk := buf[:n]
				drop := false
				if isCommit(chunk) {
					p.mu.Lock()
					drop, p.armed = p.armed, false
					p.mu.Unlock()
				}
				if _, werr := server.Write(chunk); werr != nil {
					return
				}
				if drop {
					close(dropReply)
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := server.Read(buf)
			select {
			case <-dropReply:
				if n > 0 {
					p.mu.Lock()
					p.dropped++
					p.mu.Unlock()
				}
				return
			default:
			}
			if n > 0 && !p.isBlackhole() {
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	<-done
	ended := 1
	// Either side ended (or a COMMIT's reply is to be lost): wait a little
	// for the server's reply to a dropped COMMIT, then close both.
	select {
	case <-dropReply:
		select {
		case <-done:
			ended++
		case <-time.After(2 * time.Second):
		}
	default:
	}
	client.Close()
	server.Close()
	for ; ended < 2; ended++ {
		<-done
	}
}

// isCommit reports whether b holds a simple-protocol query message ('Q')
// whose text is COMMIT, in any case: pgx sends a transaction's commit so
// (tx.Commit is Exec("commit") without arguments, on the simple protocol).
func isCommit(b []byte) bool {
	lower := bytes.ToLower(b)
	for off := 0; ; {
		i := bytes.Index(lower[off:], []byte("commit\x00"))
		if i < 0 {
			return false
		}
		i += off
		if i >= 5 && b[i-5] == 'Q' {
			return true
		}
		off = i + 1
	}
}
