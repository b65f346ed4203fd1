package daemon

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/server"
)

// DefaultMaxConnections is the cap on open connections per listener when
// --max-connections is not given: far more than workers and schedctl
// need, far fewer than the file descriptors schedd raises its limit to.
const DefaultMaxConnections = 10_000

// ConnectionShare is the part of a TCP listener's connections one client
// may hold when --max-connections-per-client is not given: a tenth (1,000
// of the default 10,000), so that ten addresses are needed to fill a
// listener, and one that fills its share leaves nine tenths to the others.
// A worker host needs one connection per long poll, and a tenant has at
// most a quarter of --max-waiting-claims (250) of those; a few hundred
// schedctl and worker connections more still fit. Clients behind one NAT
// or proxy address share it: raise the flag for them.
const ConnectionShare = 10

// connectionsPerClient is the per-client cap of cfg's TCP listeners.
func (c Config) connectionsPerClient() int {
	if c.MaxConnectionsPerClient > 0 {
		return c.MaxConnectionsPerClient
	}
	return max(1, c.MaxConnections/ConnectionShare)
}

// limitListener caps the connections open at once on a listener, and
// each client's share of them. Past either cap a new connection is
// accepted and closed at once, before anything is read from it: the
// descriptors a client can take are bounded, so a flood of idle
// connections cannot run the process out of them (after which every
// accept, and every store file the daemon opens, would fail), and one
// client's flood cannot take every slot from the others.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	perClient int // 0: clients are not counted (a Unix socket, whose peers are all the daemon's user)
	log       *slog.Logger
	mem       *memReleaser           // counts the connections of every listener; nil: none
	refusals  *prometheus.CounterVec // sched_connections_refused_total; nil: not counted

	mu       sync.Mutex
	clients  map[string]int // open connections by client (server.ClientOf); none: absent
	refused  map[string]int // by reason, since the last log line
	lastWarn time.Time      // of the last log line
}

// limitConns caps ln at max connections, and at perClient for each client
// when perClient is above 0. m counts the refusals; nil: not counted.
func limitConns(ln net.Listener, max, perClient int, log *slog.Logger, mem *memReleaser, m *metrics.Metrics) net.Listener {
	l := &limitListener{Listener: ln, slots: make(chan struct{}, max), perClient: perClient, log: log, mem: mem,
		clients: map[string]int{}, refused: map[string]int{}}
	if m != nil {
		l.refusals = m.Limits.ConnectionsRefused
	}
	return l
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client, ok := l.takeClient(c)
		if !ok {
			c.Close()
			l.noteRefused(metrics.RefusedPerClient)
			continue
		}
		select {
		case l.slots <- struct{}{}:
		default:
			l.releaseClient(client)
			c.Close()
			l.noteRefused(metrics.RefusedListenerFull)
			continue
		}
		if l.mem != nil {
			l.mem.opened()
		}
		return &limitConn{Conn: c, release: func() {
			<-l.slots
			l.releaseClient(client)
			if l.mem != nil {
				l.mem.closed()
			}
		}}, nil
	}
}

// takeClient counts c against its client's share: false when the client
// already holds it. The client is "" when clients are not counted.
func (l *limitListener) takeClient(c net.Conn) (string, bool) {
	if l.perClient == 0 {
		return "", true
	}
	client := server.ClientOf(c.RemoteAddr().String())
	if client == "" {
		return "", true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients[client] >= l.perClient {
		return "", false
	}
	l.clients[client]++
	return client, true
}

// releaseClient gives back a connection of client's share.
func (l *limitListener) releaseClient(client string) {
	if client == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients[client]--; l.clients[client] <= 0 {
		delete(l.clients, client) // the map holds only clients with connections open
	}
}

// noteRefused counts a refusal, and logs refusals at most every 10 s,
// with how many there were of each reason, so that a flood does not flood
// the log too.
func (l *limitListener) noteRefused(reason string) {
	if l.refusals != nil {
		l.refusals.WithLabelValues(reason).Inc()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused[reason]++
	if now := time.Now(); now.Sub(l.lastWarn) >= 10*time.Second {
		l.log.Warn("refused connections: the listener is at its cap (--max-connections), or their client at its share (--max-connections-per-client)",
			"listen", l.Addr().Network()+":"+l.Addr().String(), "max_connections", cap(l.slots), "max_connections_per_client", l.perClient,
			metrics.RefusedListenerFull, l.refused[metrics.RefusedListenerFull], metrics.RefusedPerClient, l.refused[metrics.RefusedPerClient])
		clear(l.refused)
		l.lastWarn = now
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
