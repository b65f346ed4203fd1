package daemon

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// DefaultMaxConnections is the cap on open connections per listener when
// --max-connections is not given: far more than workers and schedctl
// need, far fewer than the file descriptors schedd raises its limit to.
const DefaultMaxConnections = 10_000

// limitListener caps the connections open at once on a listener. Past the
// cap a new connection is accepted and closed at once, before anything is
// read from it: the descriptors a client can take are bounded, so a flood
// of idle connections cannot run the process out of them (after which
// every accept, and every store file the daemon opens, would fail).
type limitListener struct {
	net.Listener
	slots chan struct{}
	log   *slog.Logger
	mem   *memReleaser // counts the connections of every listener; nil: none

	mu       sync.Mutex
	refused  int       // since the last log line
	lastWarn time.Time // of the last log line
}

func limitConns(ln net.Listener, max int, log *slog.Logger, mem *memReleaser) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), log: log, mem: mem}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			if l.mem == nil {
				return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
			}
			l.mem.opened()
			return &limitConn{Conn: c, release: func() { <-l.slots; l.mem.closed() }}, nil
		default:
			c.Close()
			l.noteRefused()
		}
	}
}

// noteRefused logs refusals at most every 10 s, with how many there were,
// so that a flood does not flood the log too.
func (l *limitListener) noteRefused() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused++
	if now := time.Now(); now.Sub(l.lastWarn) >= 10*time.Second {
		l.log.Warn("refused connections: the listener is at its cap (--max-connections)",
			"listen", l.Addr().Network()+":"+l.Addr().String(), "max_connections", cap(l.slots), "refused", l.refused)
		l.refused, l.lastWarn = 0, now
	}
}

// limitConn gives its listener's slot back when it is closed (once, though
// the HTTP server may close it more than once).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// checkFileLimit raises the limit on open files (raiseFileLimit) and warns
// when it is still below what the listeners may hold, with room for the
// store's files and the process's own.
func checkFileLimit(cfg Config, log *slog.Logger) {
	n, err := raiseFileLimit()
	if n == 0 {
		log.Warn("cannot read the limit on open files", "err", err)
		return
	}
	if need := uint64(cfg.MaxConnections)*uint64(len(cfg.Listen)) + 256; n < need {
		log.Warn("the limit on open files is below what the listeners may hold; lower --max-connections or raise ulimit -n",
			"open_files", n, "max_connections", cfg.MaxConnections, "listeners", len(cfg.Listen))
	}
}
