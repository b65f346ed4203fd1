package daemon

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sched-dev/sched/internal/metrics"
	"github.com/sched-dev/sched/internal/paths"
	"github.com/sched-dev/sched/internal/peercred"
)

// listenAll opens every listener of cfg, or none: on an error the ones
// already open are closed. With tc, every TCP listener serves TLS (over
// the cap on connections, so that a handshake holds a slot); Unix sockets
// stay plain. A TCP listener also caps each client's connections; a Unix
// socket does not, as only the daemon's own user (and, with
// --socket-group, that group's members, who are trusted as much) may
// connect to it (credListener), so a cap per peer uid would be its whole
// cap. m counts the connections refused.
func listenAll(cfg Config, env paths.Env, tc *tls.Config, log *slog.Logger, mem *memReleaser, m *metrics.Metrics) ([]net.Listener, error) {
	var ls []net.Listener
	for _, l := range cfg.Listen {
		var (
			ln  net.Listener
			err error
		)
		if l.Network == "unix" {
			ln, err = listenUnix(l, env, log)
		} else {
			ln, err = net.Listen("tcp", l.Address)
			if err == nil && cfg.Token == "" {
				log.Info("over TCP every request needs a token: create one over the Unix socket with schedctl tenant token create", "listen", "tcp:"+ln.Addr().String())
			}
		}
		if err != nil {
			for _, o := range ls {
				o.Close()
			}
			return nil, fmt.Errorf("listen on %s: %w", l, err)
		}
		perClient := 0
		if l.Network == "tcp" {
			perClient = cfg.connectionsPerClient()
		}
		ln = limitConns(ln, cfg.MaxConnections, perClient, log, mem, m)
		if tc != nil && l.Network == "tcp" {
			ln = tls.NewListener(ln, tc)
		}
		ls = append(ls, ln)
	}
	return ls, nil
}

// listenUnix listens on a Unix socket that only this user can use, since
// anyone who can connect can drive the API and read payloads: its directory is private (created 0700 and
// its owner checked, for the default socket or a directory schedd creates),
// the socket itself is 0600, a stale socket left by a dead daemon is
// removed only if it is a socket of ours that nobody answers on, and every
// connection's peer credentials are checked. A socket shared with a group
// (l.Group, --socket-group) is 0660 and group-owned by it, in a directory
// its members can enter and no one else can write (socketgroup.go), and
// the members' connections are accepted too.
func listenUnix(l Listen, env paths.Env, log *slog.Logger) (net.Listener, error) {
	dir := filepath.Dir(l.Address)
	if l.Group != nil {
		if err := prepareGroupDir(dir, l.Group, log); err != nil {
			return nil, err
		}
	} else if _, err := os.Lstat(dir); l.Default || dir == paths.SocketDir(env) || errors.Is(err, os.ErrNotExist) {
		if err := paths.EnsurePrivateDir(dir); err != nil {
			return nil, fmt.Errorf("socket directory: %w", err)
		}
	}
	if err := removeStale(l.Address, log); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: l.Address, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// The process umask (0077, set by Main) already made it private; this
	// is for callers that run the daemon with another umask.
	if err := os.Chmod(l.Address, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod 0600 %s: %w", l.Address, err)
	}
	if l.Group != nil {
		if err := shareSocket(l.Address, l.Group); err != nil {
			ln.Close()
			return nil, err
		}
		log.Info("the socket serves the members of a group too, as admins of the default tenant", "listen", l.String(), "group", l.Group.Name, "gid", l.Group.GID)
	}
	return &credListener{UnixListener: ln, uid: os.Geteuid(), group: l.Group, log: log}, nil
}

// removeStale removes a socket file left by a daemon that died without
// cleaning up. Anything else at the path is refused: a file or a symlink
// (perhaps planted), a socket of another user, or a socket that answers
// (a daemon is running there).
func removeStale(path string, log *slog.Logger) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket (%v); refusing to replace it", path, fi.Mode().Type())
	}
	if err := paths.CheckSocket(path); err != nil {
		return err
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("another process (a schedd?) is already listening on %s", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("checking the old socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	log.Info("removed a stale socket left by a daemon that did not shut down", "path", path)
	return nil
}

// credListener accepts only connections whose peer runs as this user
// (its peer credentials, see internal/peercred), or is a member of group
// when it is set; others are closed before anything is read from them.
type credListener struct {
	*net.UnixListener
	uid   int
	group *SocketGroup // --socket-group's; nil for none
	log   *slog.Logger
	warn  sync.Once
}

func (l *credListener) Accept() (net.Conn, error) {
	for {
		c, err := l.UnixListener.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peercred.UID(c)
		switch {
		case errors.Is(err, peercred.ErrUnsupported):
			// This OS cannot tell; the socket's mode still guards it.
			l.warn.Do(func() {
				l.log.Warn("cannot check peer credentials on this OS; relying on the socket's mode (0600, or 0660 with --socket-group)")
			})
			return c, nil
		case err != nil:
			l.log.Warn("refused a connection: cannot read its peer credentials", "err", err)
		case uid == l.uid:
			return c, nil
		case l.group != nil:
			if admitMember(c, l.group, l.log) {
				return c, nil
			}
		default:
			l.log.Warn("refused a connection from another user", "peer_uid", uid, "uid", l.uid)
		}
		c.Close()
	}
}
